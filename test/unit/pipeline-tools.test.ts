/**
 * Tool definitions (seed 000, 3.5): validated with ajv (JSON Schema 2020-12 and draft-07) and
 * reported at the exact node (`tool-schema-invalid`), in a `{ file }` JSON file or inline in the
 * fixture; the config's allowlist with argument formats (`tool-not-allowed`, fixture and template);
 * stale tool results (`tool-result-stale`); the valid definitions exposed on the result.
 */
import { describe, expect, it } from 'vitest';
import picomatch from 'picomatch';
import type { FileHost } from '../../src/core/host';
import type { Finding } from '../../src/core/types';
import { analyzeTemplate } from '../../src/core/analyze';
import { schemaProblems } from '../../src/core/tools/schema';
import { durationMs, formatAge } from '../../src/core/tools/results';

class Memory implements FileHost {
  readonly roots = ['/ws'];
  constructor(private readonly files: Record<string, string>) {}
  readFile(p: string) {
    return this.files[p];
  }
  size(p: string) {
    return this.files[p]?.length;
  }
  glob(dir: string, pattern: string) {
    const m = picomatch(pattern);
    return Object.keys(this.files).filter((p) => p.startsWith(dir + '/') && m(p.slice(dir.length + 1)));
  }
}

const TEMPLATE = (front = '') => `---
model: gpt-4o
${front}---
{{role "system"}}
Tools you may propose:
{{tools}}
{{role "user"}}
<results>
{{#each tool_result}}{{this}}
{{/each}}
</results>
<question>{{question}}</question>
`;

const CONFIG = (extra = '') => `window: 16000
output: 1000
slots:
  tools: { kind: tool, trust: trusted }
  tool_result: { kind: tool, trust: untrusted }
  question: { kind: user, trust: untrusted, required: true }
filters: { now: "2026-09-01T00:00:00Z" }
fixtures: [fixtures/*.fixture.yaml]
${extra}`;

const GOOD_TOOLS = `[
  {
    "type": "function",
    "function": {
      "name": "lookup_order",
      "description": "Read one order.",
      "parameters": {
        "type": "object",
        "properties": { "order_id": { "type": "string", "pattern": "^NW-[0-9]{6}$" } },
        "required": ["order_id"],
        "additionalProperties": false
      }
    }
  },
  {
    "type": "function",
    "function": {
      "name": "issue_refund",
      "description": "Propose a refund.",
      "parameters": {
        "type": "object",
        "properties": {
          "order_id": { "type": "string", "pattern": "^NW-[0-9]{6}$" },
          "amount": { "type": "number", "exclusiveMinimum": 0, "maximum": 2000 }
        },
        "required": ["order_id", "amount"]
      }
    }
  }
]
`;

const FIXTURE = (tools = '  tools: { file: ../tools.json }\n', results = '') => `template: ../agent.prompt
slots:
  question: Can you refund NW-481203?
${tools}${results}`;

function analyse(files: { tools?: string; config?: string; fixture?: string; template?: string }) {
  const host = new Memory({
    '/ws/agent.prompt': files.template ?? TEMPLATE(),
    '/ws/agent.context.yaml': files.config ?? CONFIG(),
    '/ws/fixtures/a.fixture.yaml': files.fixture ?? FIXTURE(),
    '/ws/tools.json': files.tools ?? GOOD_TOOLS,
  });
  const a = analyzeTemplate(host, '/ws/agent.prompt')!;
  const text = (f: Finding) => host.readFile(f.path)!.slice(f.span.start, f.span.end);
  const line = (f: Finding) => host.readFile(f.path)!.slice(0, f.span.start).split('\n').length;
  return { a, text, line, of: (rule: string) => a.findings.filter((f) => f.rule === rule) };
}

describe('tool definitions', () => {
  it('valid definitions are silent and exposed on the result for the provider tools parameter', () => {
    const { a, of } = analyse({});
    expect(of('tool-schema-invalid')).toEqual([]);
    expect(a.assembly?.tools?.map((t) => t.name)).toEqual(['lookup_order', 'issue_refund']);
    expect(a.assembly?.tools?.[0]).toEqual({ name: 'lookup_order', description: 'Read one order.', parameters: { type: 'object', properties: { order_id: { type: 'string', pattern: '^NW-[0-9]{6}$' } }, required: ['order_id'], additionalProperties: false } });
    expect(a.assembly?.trace.tools).toEqual([
      { slot: 'tools', name: 'lookup_order', status: 'offered' },
      { slot: 'tools', name: 'issue_refund', status: 'offered' },
    ]);
  });

  it('tool-schema-invalid at the exact node of the JSON file (draft 2020-12)', () => {
    const broken = GOOD_TOOLS.replace('"exclusiveMinimum": 0', '"exclusiveMinimum": "zero"').replace('"required": ["order_id", "amount"]', '"required": ["order_id", "amount", "reason"]');
    const { a, of, text, line } = analyse({ tools: broken });
    const f = of('tool-schema-invalid');
    expect(f.map((x) => [x.path, line(x), text(x)])).toEqual([
      ['/ws/tools.json', 24, '"zero"'],
      ['/ws/tools.json', 26, '"reason"'],
    ]);
    expect(f[0].severity).toBe('error');
    expect(f[0].message).toBe("Tool 'issue_refund': parameters is not valid JSON Schema: /properties/amount/exclusiveMinimum must be number.");
    expect(f[1].message).toContain("required names 'reason', which is not in properties");
    // The invalid tool is withheld from the provider's tools.
    expect(a.assembly?.tools?.map((t) => t.name)).toEqual(['lookup_order']);
    expect(a.assembly?.trace.tools?.map((t) => t.status)).toEqual(['offered', 'invalid']);
  });

  it('draft-07 when $schema says so: array items is valid there, invalid in 2020-12', () => {
    const schema = (draft: string) => ({ $schema: draft, type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } });
    expect(schemaProblems(schema('http://json-schema.org/draft-07/schema#'))).toEqual([]);
    expect(schemaProblems(schema('https://json-schema.org/draft/2020-12/schema')).map((p) => p.path)).toEqual([['properties', 'pair', 'items']]);
    expect(schemaProblems({ $schema: 'http://json-schema.org/draft-04/schema#' }).map((p) => p.message)).toEqual([expect.stringContaining('not a draft Context Lens checks')]);
  });

  it('catches bad regular expressions, unresolved and remote $refs', () => {
    const p = schemaProblems({ type: 'object', properties: { a: { type: 'string', pattern: '((' }, b: { $ref: '#/$defs/missing' }, c: { $ref: 'https://example.com/s.json' } } });
    expect(p.map((x) => x.path.join('.'))).toEqual(['properties.a.pattern', 'properties.b.$ref', 'properties.c.$ref']);
  });

  it('inline YAML definitions are located in the fixture: a bad name, parameters that are not an object schema', () => {
    const tools = `  tools:
    - name: lookup order
      description: Read one order.
      parameters: { type: object, properties: {} }
    - name: escalate
      parameters: { type: array }
`;
    const { of, text, line } = analyse({ fixture: FIXTURE(tools) });
    expect(of('tool-schema-invalid').map((x) => [x.path, line(x), text(x)])).toEqual([
      ['/ws/fixtures/a.fixture.yaml', 5, 'lookup order'],
      ['/ws/fixtures/a.fixture.yaml', 9, 'array'],
    ]);
  });

  it('two definitions with one name', () => {
    const dup = GOOD_TOOLS.replace('"name": "issue_refund"', '"name": "lookup_order"');
    expect(analyse({ tools: dup }).of('tool-schema-invalid').map((x) => x.message)).toEqual(["Tool 'lookup_order' is defined twice in 'tools'; the model would see two tools of one name."]);
  });
});

describe('tool allowlist', () => {
  it('tool-not-allowed for a tool outside tools.allow, at its name', () => {
    const { a, of, text } = analyse({ config: CONFIG('tools: { allow: [lookup_order] }\n') });
    const f = of('tool-not-allowed');
    expect(f.map((x) => [x.path, text(x)])).toEqual([['/ws/tools.json', '"issue_refund"']]);
    expect(f[0].severity).toBe('error');
    expect(f[0].message).toBe("Tool 'issue_refund' in 'tools' is not on the config's allowlist (tools.allow: lookup_order); the model would be offered a tool this request may not use.");
    expect(a.assembly?.tools?.map((t) => t.name)).toEqual(['lookup_order']);
    expect(a.assembly?.trace.tools?.map((t) => t.status)).toEqual(['offered', 'not-allowed']);
  });

  it('argument formats: an argument the entry does not list, or a keyword it declares differently', () => {
    const cfg = CONFIG(`tools:
  allow:
    - lookup_order
    - name: issue_refund
      arguments:
        order_id: { pattern: "^NW-[0-9]{6}$" }
        amount: { maximum: 200 }
`);
    const f = analyse({ config: cfg }).of('tool-not-allowed');
    expect(f.map((x) => x.message)).toEqual(["Argument 'amount' of tool 'issue_refund' must declare maximum: 200, the allowlist's format; the definition has 2000."]);
    const fewer = CONFIG('tools: { allow: [lookup_order, { name: issue_refund, arguments: { order_id: {} } }] }\n');
    expect(analyse({ config: fewer }).of('tool-not-allowed').map((x) => x.message)).toEqual(["Argument 'amount' of tool 'issue_refund' is not in the allowlist's formats (allowed: order_id)."]);
    const ok = CONFIG('tools: { allow: [lookup_order, { name: issue_refund, arguments: { order_id: { pattern: "^NW-[0-9]{6}$" }, amount: { maximum: 2000 } } }] }\n');
    expect(analyse({ config: ok }).of('tool-not-allowed')).toEqual([]);
  });

  it('tools the template offers in its front matter', () => {
    const { of, text } = analyse({ template: TEMPLATE('tools: [lookup_order, delete_account]\n'), config: CONFIG('tools: { allow: [lookup_order, issue_refund] }\n') });
    expect(of('tool-not-allowed').map((x) => [x.path, text(x), x.message])).toEqual([['/ws/agent.prompt', 'delete_account', "The template offers tool 'delete_account', which is not on the config's allowlist (tools.allow: lookup_order, issue_refund)."]]);
  });

  it('no allowlist, no finding', () => {
    expect(analyse({ template: TEMPLATE('tools: [anything]\n') }).of('tool-not-allowed')).toEqual([]);
  });
});

describe('tool results', () => {
  const results = `  tool_result:
    - id: call_1
      title: get_client_config
      source: tool:get_client_config
      at: "2026-08-31T09:21:02Z"
      text: '{ "auto_retry": true }'
    - id: call_2
      source: tool:get_status
      at: "2026-08-31T23:30:00Z"
      text: '{ "ok": true }'
`;

  it('tool-result-stale (info) when older than max_age at now', () => {
    const cfg = CONFIG().replace('tool_result: { kind: tool, trust: untrusted }', 'tool_result: { kind: tool, trust: untrusted, max_age: 1h }');
    const { a, of, line } = analyse({ config: cfg, fixture: FIXTURE(undefined, results) });
    const f = of('tool-result-stale');
    expect(f.map((x) => [line(x), x.severity, x.message])).toEqual([[6, 'info', "Tool result call_1 (get_client_config) in 'tool_result' is 14h 38m old at 2026-09-01T00:00:00Z, over its max_age of 1h; the state it reports may have changed. Re-run the tool, or tell the model how old the result is."]]);
    // Results are not definitions: nothing is offered as a tool.
    expect(a.assembly?.trace.tools?.map((t) => t.slot)).toEqual(['tools', 'tools']);
  });

  it('the config-wide default, and silence without max_age', () => {
    expect(analyse({ config: CONFIG('tools: { max_age: PT12H }\n'), fixture: FIXTURE(undefined, results) }).of('tool-result-stale')).toHaveLength(1);
    expect(analyse({ fixture: FIXTURE(undefined, results) }).of('tool-result-stale')).toEqual([]);
  });

  it('durations', () => {
    expect([durationMs('90s'), durationMs('15m'), durationMs('1h'), durationMs('2d'), durationMs('PT1H30M'), durationMs('P1DT12H'), durationMs('1 hour')]).toEqual([90_000, 900_000, 3_600_000, 172_800_000, 5_400_000, 129_600_000, undefined]);
    expect([formatAge(40_000), formatAge(300_000), formatAge(52_698_000), formatAge(190_800_000)]).toEqual(['40s', '5m', '14h 38m', '2d 5h']);
  });
});
