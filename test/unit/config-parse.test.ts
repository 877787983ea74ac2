/**
 * Context config parsing: the example validates with defaults applied; YAML and schema
 * errors are config-invalid findings at the exact YAML node; invalid parts are dropped and the
 * rest is kept; inline configs in template front matter report into the template text.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { configOf, parseConfig, parseInlineConfig, suggest } from '../../src/core/config/parse';
import { parseYaml, toJs } from '../../src/core/text/yaml';
import { readYamlFast } from '../../src/core/text/yamlFast';
import { parseTemplate } from '../../src/core/language';
import type { ConfigDoc, Span } from '../../src/core/types';
import { at } from './support/spans';

const found = (doc: ConfigDoc) => doc.findings.map((f) => [f.rule, doc.text.slice(f.span.start, f.span.end), f.message]);

const SUPPORT = `# support.context.yaml
version: 3                      # policy version, recorded in traces
model: gpt-4o                   # or tokenizer: o200k_base | cl100k_base | chars4 ...
window: 8000                    # or limits: { input: N, output: N }
output: 1200                    # reserved for the answer
margin: 800                     # tokens or "10%"
overhead: { message: 3, request: 3, item: 8 }
slots:
  policy:   { kind: policy,   trust: trusted,   required: true, budget: 800 }
  history:  { kind: history,  trust: untrusted, budget: 1200, priority: 1 }
  evidence: { kind: evidence, trust: untrusted, budget: 3000, priority: 2, label: EVIDENCE, pack: skip, order: edges, max_items: 8 }
  tools:    { kind: tool,     trust: trusted,   budget: 600 }
  question: { kind: user,     trust: untrusted, required: true, budget: 400 }
fixtures: [fixtures/*.fixture.yaml]
rules: { injection-phrase: off }
`;

describe('parseConfig: valid files', () => {
  const doc = parseConfig('/w/support.context.yaml', SUPPORT);

  it('validates the example of the issue and applies defaults', () => {
    expect(doc.findings).toEqual([]);
    const c = doc.config!;
    expect(c).toMatchObject({ version: 3, model: 'gpt-4o', window: 8000, output: 1200, margin: 800, overhead: { message: 3, request: 3, item: 8 }, fixtures: ['fixtures/*.fixture.yaml'], rules: { 'injection-phrase': 'off' } });
    expect(Object.keys(c.slots)).toEqual(['policy', 'history', 'evidence', 'tools', 'question']);
    expect(c.slots.evidence).toEqual({ kind: 'evidence', trust: 'untrusted', required: false, budget: 3000, priority: 2, label: 'EVIDENCE', envelope: 'bracket', pack: 'skip', order: 'edges', max_items: 8 });
    expect(c.slots.policy).toMatchObject({ required: true, priority: 0, pack: 'stop', order: 'rank' });
    expect(c.models).toEqual({});
  });

  it('gives key and value spans at YAML paths', () => {
    expect(doc.keySpan(['slots', 'evidence'])).toEqual(at(SUPPORT, 'evidence:'.slice(0, 8)));
    expect(doc.valueSpan(['slots', 'evidence', 'budget'])).toEqual(at(SUPPORT, '3000'));
    expect(doc.keySpan(['slots', 'evidence', 'max_items'])).toEqual(at(SUPPORT, 'max_items'));
    expect(doc.valueSpan(['window'])).toEqual(at(SUPPORT, '8000'));
    expect(doc.valueSpan(['fixtures', 0])).toEqual(at(SUPPORT, 'fixtures/*.fixture.yaml'));
    expect(doc.keySpan(['nope'])).toBeUndefined();
    expect(doc.valueSpan(['slots', 'nope', 'budget'])).toBeUndefined();
  });

  it('gives defaults for an empty file', () => {
    const empty = parseConfig('/w/e.context.yaml', '# nothing yet\n');
    expect(empty.findings).toEqual([]);
    expect(empty.config).toMatchObject({ output: 0, margin: 0, slots: {}, fixtures: [] });
  });

  it('accepts percentages and separate limits', () => {
    const text = 'limits: { input: 128000, output: 16000 }\nmargin: "5%"\nslots:\n  docs: { budget: 25% }\n';
    const d = parseConfig('/w/p.context.yaml', text);
    expect(d.findings).toEqual([]);
    expect(d.config?.limits).toEqual({ input: 128000, output: 16000 });
    expect(d.config?.slots.docs.budget).toBe('25%');
  });
});

describe('parseConfig: errors at the exact node, the rest kept', () => {
  const cases: Array<{ name: string; text: string; findings: Array<[string, RegExp]>; check?: (d: ConfigDoc) => void }> = [
    {
      name: 'unknown key in a slot: at the key, with a rename fix',
      text: 'window: 8000\nslots:\n  evidence: { kind: evidence, budjet: 3000 }\n  question: { kind: user }\n',
      findings: [['budjet', /Unknown key 'budjet' in slots\.evidence: did you mean 'budget'\?/]],
      check: (d) => {
        expect(d.config?.slots.evidence).toMatchObject({ kind: 'evidence', pack: 'stop' });
        expect(d.config?.slots.evidence.budget).toBeUndefined();
        expect(d.config?.slots.question.kind).toBe('user');
        const fix = d.findings[0].fixes?.[0];
        expect(fix?.title).toBe("Rename to 'budget'");
        expect(fix?.edits[0]).toEqual({ path: '/w/c.context.yaml', span: at(d.text, 'budjet'), newText: 'budget' });
      },
    },
    {
      name: 'unknown top-level key lists what is expected when nothing is close',
      text: 'window: 8000\ncolour: blue\n',
      findings: [['colour', /Unknown key 'colour'; expected one of \$schema, version, model/]],
      check: (d) => expect(d.config?.window).toBe(8000),
    },
    {
      name: 'wrong enum value: at the value, with a change fix',
      text: 'slots:\n  evidence: { pack: skp, order: edges }\n',
      findings: [['skp', /slots\.evidence\.pack: expected one of stop, skip; got 'skp' \(did you mean 'skip'\?\)/]],
      check: (d) => {
        expect(d.config?.slots.evidence).toMatchObject({ pack: 'stop', order: 'edges' });
        expect(d.findings[0].fixes?.[0].edits[0].newText).toBe('skip');
      },
    },
    {
      name: 'wrong type at the top level is dropped',
      text: 'window: big\noutput: 1000\n',
      findings: [['big', /window: expected a number, got 'big'/]],
      check: (d) => {
        expect(d.config?.window).toBeUndefined();
        expect(d.config?.output).toBe(1000);
      },
    },
    {
      name: 'an amount that is neither tokens nor a percentage',
      text: 'margin: lots\nslots:\n  a: { budget: "ten%" }\n',
      findings: [
        ['lots', /margin: expected a token count or a percentage such as "25%"; got 'lots'/],
        ['"ten%"', /slots\.a\.budget: expected a token count or a percentage/],
      ],
      check: (d) => expect(d.config?.margin).toBe(0),
    },
    {
      name: 'a missing required key points at the mapping that lacks it',
      text: 'limits:\n  input: 5000\nwindow: 9000\n',
      findings: [['limits', /limits is missing the required key 'output' \(a number\)/]],
      check: (d) => {
        expect(d.config?.limits).toBeUndefined();
        expect(d.config?.window).toBe(9000);
      },
    },
    {
      name: 'a slot that is not a mapping is dropped, the others kept',
      text: 'slots:\n  question: 400\n  policy: { kind: policy }\n',
      findings: [['400', /slots\.question: expected a mapping, got 400/]],
      check: (d) => expect(Object.keys(d.config!.slots)).toEqual(['policy']),
    },
    {
      name: 'too small and bad label',
      text: 'slots:\n  ev: { max_items: 0, label: "1 bad" }\n',
      findings: [
        ['0', /slots\.ev\.max_items: must be > 0; got 0/],
        ['"1 bad"', /^slots\.ev\.label: a label is a word such as EVIDENCE; got '1 bad'\.$/],
      ],
    },
    {
      name: 'several problems in one slot are all reported',
      text: 'slots:\n  ev: { kind: evidense, trust: maybe, required: "yes" }\n',
      findings: [
        ['evidense', /did you mean 'evidence'/],
        ['maybe', /expected one of trusted, untrusted/],
        ['"yes"', /slots\.ev\.required: expected true or false, got 'yes'/],
      ],
      check: (d) => expect(d.config?.slots.ev).toMatchObject({ kind: 'other', required: false }),
    },
    {
      name: 'a bad entry in a list is dropped',
      text: 'fixtures: [a.fixture.yaml, 3, b.fixture.yaml]\n',
      findings: [['3', /fixtures\[1\]: expected a string, got 3/]],
      check: (d) => expect(d.config?.fixtures).toEqual(['a.fixture.yaml', 'b.fixture.yaml']),
    },
    {
      name: 'percentages over 100%',
      text: 'margin: 150%\nslots:\n  docs: { budget: 120% }\n  q: { budget: 100% }\n',
      findings: [
        ['150%', /margin: 150% is more than the whole window/],
        ['120%', /slots\.docs\.budget: 120% is more than the whole input budget/],
      ],
    },
    {
      name: 'unknown rule ids in rules',
      text: 'rules:\n  injection-phrases: off\n  budget-overflow: warning\n',
      findings: [['injection-phrases', /unknown rule 'injection-phrases': did you mean 'injection-phrase'\?/]],
      check: (d) => expect(d.config?.rules).toEqual({ 'budget-overflow': 'warning' }),
    },
    {
      name: 'invalid rule severity',
      text: 'rules: { budget-overflow: loud }\n',
      findings: [['loud', /rules\.budget-overflow: expected one of off, error, warning, info, hint/]],
    },
    {
      name: 'YAML syntax error at its position',
      text: 'window: 8000\nslots:\n  a: { kind: user\n',
      findings: [['\n', /YAML syntax error/]],
    },
    {
      name: 'tab indentation',
      text: 'slots:\n\ta: { kind: user }\n',
      findings: [['\t', /Tabs are not allowed as indentation/]],
    },
    {
      name: 'a key without a value: at the key',
      text: 'window: 8000\nslots:\n',
      findings: [['slots', /slots: expected a mapping, got nothing/]],
    },
    {
      name: 'duplicate keys',
      text: 'window: 8000\nwindow: 9000\n',
      findings: [['window', /Map keys must be unique/]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseConfig('/w/c.context.yaml', c.text);
      const got = found(d);
      expect(got.map((g) => g[0])).toEqual(c.findings.map(() => 'config-invalid'));
      c.findings.forEach(([source, message], k) => {
        expect(got[k][1]).toBe(source);
        expect(got[k][2]).toMatch(message);
      });
      for (const f of d.findings) expect(f.severity).toBe('error');
      c.check?.(d);
    });
  }

  it('reports a config that is not a mapping and gives no config', () => {
    const d = parseConfig('/w/l.context.yaml', '- a\n- b\n');
    expect(d.config).toBeUndefined();
    expect(found(d)).toEqual([['config-invalid', '- a\n- b', 'A context config must be a YAML mapping with keys such as window:, output: and slots:.']]);
  });

  it('never throws on hostile YAML (alias bomb)', () => {
    const bomb = 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n';
    const d = parseConfig('/w/bomb.context.yaml', bomb);
    expect(d.findings.length).toBeGreaterThan(0);
    expect(d.findings.every((f) => f.rule === 'config-invalid')).toBe(true);
  });
});

describe('parseInlineConfig: a config in template front matter', () => {
  const TEMPLATE = '---\nmodel: gpt-4o\ncontext:\n  window: 8000\n  output: 1000\n  slots:\n    question: { kind: user, trust: untrustd }\n    docs: { kind: evidence, budget: 2000 }\n---\n{{question}} {{#each docs}}{{this}}{{/each}}\n';

  it('validates with spans into the template text (from the front matter span)', () => {
    const tpl = parseTemplate('/w/inline.prompt', TEMPLATE);
    const d = parseInlineConfig(tpl.path, tpl.text, tpl.frontMatter!.context!.span);
    expect(d.path).toBe('/w/inline.prompt');
    expect(found(d)).toEqual([['config-invalid', 'untrustd', "slots.question.trust: expected one of trusted, untrusted; got 'untrustd' (did you mean 'untrusted'?)."]]);
    expect(d.findings[0].span).toEqual(at(TEMPLATE, 'untrustd'));
    expect(d.config?.window).toBe(8000);
    expect(d.config?.slots.docs.budget).toBe(2000);
    expect(d.keySpan(['slots', 'docs'])).toEqual(at(TEMPLATE, 'docs'));
    expect(d.valueSpan(['slots', 'docs', 'budget'])).toEqual(at(TEMPLATE, '2000'));
  });

  it('finds the context mapping itself when no node is given', () => {
    const d = parseInlineConfig('/w/inline.prompt', TEMPLATE);
    expect(d.config?.output).toBe(1000);
    expect(d.findings).toHaveLength(1);
  });

  it('reports a template without front matter', () => {
    const d = parseInlineConfig('/w/none.prompt', 'Hello {{x}}');
    expect(d.config).toBeUndefined();
    expect(d.findings[0].rule).toBe('config-invalid');
  });
});

describe('suggest', () => {
  it.each([
    ['budjet', ['budget', 'kind'], 'budget'],
    ['evidense', ['evidence', 'policy'], 'evidence'],
    ['xyz', ['budget', 'kind'], undefined],
    ['Pack', ['pack'], 'pack'],
  ])('%s -> %s', (word, known, expected) => {
    expect(suggest(word, known)).toBe(expected);
  });
});

describe('parseConfig: the fast YAML reader', () => {
  // Every key and value path of a plain value, for comparing spans.
  const paths = (v: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> => {
    if (Array.isArray(v)) return [prefix, ...v.flatMap((x, i) => paths(x, [...prefix, i]))];
    if (v && typeof v === 'object') return [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, k]))];
    return [prefix];
  };
  const examples = ['examples/refund-support/refund.context.yaml', 'examples/sdk-qa/sdk-qa.context.yaml', 'examples/defects/leaky.context.yaml', 'examples/defects/overflow.context.yaml', 'test/lsp/workspace/support.context.yaml'];
  const texts: Array<[string, string]> = [
    ['support', SUPPORT],
    // Schema problems: an unknown key with a near name, a wrong type, a bad enum value, an unknown rule id.
    ['problems', SUPPORT.replace('window: 8000', 'windw: 8000').replace('budget: 1200', 'budget: lots').replace('order: edges', 'order: edge').replace('injection-phrase: off', 'injection-phrse: off')],
    ['bench', "version: 1\nmodel: gpt-4o\nwindow: 8000\noutput: 1200\nmargin: 800\noverhead: { message: 3, request: 3, item: 8 }\nslots:\n  policy: { kind: policy, trust: trusted, required: true, budget: 800 }\n  evidence: { kind: evidence, trust: untrusted, budget: 6000, label: EVIDENCE, pack: skip }\n  question: { kind: user, trust: untrusted, required: true, budget: 400 }\nfixtures: ['fixtures/p7.fixture.yaml']\n"],
    ...examples.map((p): [string, string] => [p, readFileSync(p, 'utf8')]),
  ];

  it.each(texts)('reads %s as parseYaml does: the same config, findings and spans', (_name, text) => {
    const fast = readYamlFast(text);
    // Each of these is within the reader's subset: the test compares something.
    expect(fast).toBeDefined();
    const a = configOf('/w/c.context.yaml', text, fast!);
    const b = configOf('/w/c.context.yaml', text, parseYaml(text));
    expect(a.config).toEqual(b.config);
    expect(a.findings).toEqual(b.findings);
    if (_name === 'problems') expect(a.findings.map((f) => f.rule)).toEqual(['config-invalid', 'config-invalid', 'config-invalid', 'config-invalid']);
    for (const p of paths(toJs(parseYaml(text), parseYaml(text).doc.contents))) {
      expect(a.keySpan(p)).toEqual(b.keySpan(p));
      expect(a.valueSpan(p)).toEqual(b.valueSpan(p));
    }
  });

  it('leaves a text with a syntax problem to parseYaml, whose findings it reports', () => {
    const broken = 'window: 8000\nslots:\n  policy: { kind: policy\n';
    expect(readYamlFast(broken)).toBeUndefined();
    expect(parseConfig('/w/b.context.yaml', broken).findings.some((f) => f.rule === 'config-invalid')).toBe(true);
  });
});
