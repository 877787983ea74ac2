/**
 * Cost where the request is shown: the trace of the analysis (`trace.cost`, what `ctxlens
 * assemble --trace` writes), the request code lens (the existing text with ` · $0.0012` appended)
 * and the hover on the template's `context:` key (the arithmetic, the price's date and source).
 */
import { describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import type { FileHost } from '../../src/core/host';
import { requestTitle } from '../../src/server/codeLens';
import { costSuffix } from '../../src/server/format';
import { formatUsd } from '../../src/core/cost';
import { templateHover } from '../../src/server/hover';

const TEMPLATE = '---\nmodel: MODEL\ncontext: t.context.yaml\n---\n{{role "system"}}\n{{policy}}\n{{role "user"}}\n<question>\n{{question}}\n</question>\n';
const CONFIG = 'window: 8000\noutput: 1000\nslots:\n  policy: { kind: policy, trust: trusted, required: true }\n  question: { kind: user, trust: untrusted, required: true }\nfixtures: [fixtures/*.fixture.yaml]\n';
const FIXTURE = 'slots:\n  policy: Answer briefly.\n  question: Does SDK 4.2 retry after a 429?\n';

function analysis(model: string, config = CONFIG) {
  const files: Record<string, string> = {
    '/ws/t.prompt': TEMPLATE.replace('MODEL', model),
    '/ws/t.context.yaml': config,
    '/ws/fixtures/a.fixture.yaml': FIXTURE,
  };
  const host: FileHost = {
    roots: ['/ws'],
    readFile: (p) => files[p],
    size: (p) => files[p]?.length,
    glob: (dir, pattern) => (pattern.includes('fixture') ? Object.keys(files).filter((p) => p.startsWith(dir + '/') && /\.fixture\.yaml$/.test(p)) : []),
  };
  return analyzeTemplate(host, '/ws/t.prompt')!;
}

describe('cost on the trace of the analysis', () => {
  it('prices the assembled request at its model', () => {
    const a = analysis('gpt-4o');
    const t = a.assembly!.trace;
    expect(t.cost).toMatchObject({ currency: 'USD', model: 'gpt-4o', input_tokens: t.input_tokens, output_reserved: 1000 });
    expect(t.cost!.input).toBeCloseTo((t.input_tokens * 2.5) / 1e6, 12);
    expect(t.cost!.output_max).toBe(0.01);
  });

  it('has no cost for a model without a price', () => {
    const a = analysis('my-model', CONFIG + 'models: { my-model: { window: 8000, tokenizer: o200k_base } }\n');
    expect(a.assembly!.trace.cost).toBeUndefined();
    expect(costSuffix(a)).toBe('');
  });

  it("uses the config's prices and request rate", () => {
    const a = analysis('my-model', CONFIG + 'models: { my-model: { window: 8000, tokenizer: o200k_base } }\nprices: { my-model: { input: 0.5, output: 1.5, as_of: "2026-11-01" } }\nrequests_per_day: 100000\n');
    const c = a.assembly!.trace.cost!;
    expect(c.price).toMatchObject({ input: 0.5, origin: 'config', source: '/ws/t.context.yaml', as_of: '2026-11-01' });
    expect(c.per_day!.input).toBeCloseTo(c.input_tokens * 0.05, 8);
  });
});

describe('request lens and hover', () => {
  it('keeps the lens text and appends the cost at the end', () => {
    const a = analysis('gpt-4o');
    const title = requestTitle(a);
    const cost = a.assembly!.trace.cost!;
    expect(title).toMatch(/^input [\d,]+ tok · \+ output 1,000 \+ margin 0 = [\d,]+ \/ 8,000 · fixture a · o200k_base · \$0\.000\d+$/);
    expect(title.endsWith(` · ${formatUsd(cost.input)}`)).toBe(true);
  });

  it('appends the per-day figure when the config sets a request rate', () => {
    const a = analysis('gpt-4o', CONFIG + 'requests_per_day: 100000\n');
    expect(requestTitle(a)).toMatch(/ · o200k_base · \$0\.\d+ · \$\d+(\.\d+)?\/day$/);
  });

  it('shows the arithmetic, the price date and its source in the hover of the context key', () => {
    const a = analysis('gpt-4o');
    const offset = a.template.text.indexOf('t.context.yaml');
    const h = templateHover(a, offset, () => ({ start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }))!;
    const value = (h.contents as { value: string }).value;
    expect(value).toContain('**Cost**');
    expect(value).toMatch(/[\d,]+ input tok × \$2\.5 per million = \$0\.\d+ per request/);
    expect(value).toMatch(/up to 1,000 output tok × \$10 per million = \$0\.01 more/);
    expect(value).toContain('2026-09-23, @pydantic/genai-prices 0.1.8 (openai/gpt-4o, https://developers.openai.com/api/docs/pricing)');
  });
});
