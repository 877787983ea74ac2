/**
 * The pure part of `ctxlens report` (src/core/report): limits as the gates read them, findings
 * matched across revisions with their figures left out, the gates on requests built here by hand,
 * and the Markdown's quoting of untrusted text (code spans that survive backticks and table pipes,
 * escaped HTML in summaries, no mention). The command itself is tested in report.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import type { AssemblyResult } from '../../src/core/types';
import type { ReportFinding, TemplateRun } from '../../src/core/report';
import { REPORT_MARKER, ReportSchema, buildReport, parseLimit, reportMarkdown } from '../../src/core/report';

/** An assembled request with what the comparison reads of it. */
function request(opts: { tokens: number; cost?: number; perDay?: number; kept?: string[]; dropped?: Array<[string, string]>; text?: string; ok?: boolean }): AssemblyResult {
  const kept = opts.kept ?? [];
  return {
    ok: opts.ok ?? true,
    messages: [{ role: 'user', content: opts.text ?? 'question', parts: [] }],
    budget: { fits: true },
    findings: [],
    trace: {
      model: 'gpt-4o',
      input_tokens: opts.tokens,
      reserved_output: 500,
      slots: [{ name: 'evidence', kind: 'evidence', used: kept.length * 10, kept: kept.length, omitted: opts.dropped?.length ?? 0, total: kept.length + (opts.dropped?.length ?? 0) }],
      retained: kept.map((id, position) => ({ slot: 'evidence', id, tokens: 10, position, placement: 'start', sha256: '' })),
      omitted: (opts.dropped ?? []).map(([id, reason]) => ({ slot: 'evidence', id, tokens: 10, reason })),
      ...(opts.cost !== undefined ? { cost: { input: opts.cost, ...(opts.perDay !== undefined ? { requests_per_day: 1000, per_day: { input: opts.perDay } } : {}) } } : {}),
    },
  } as unknown as AssemblyResult;
}

function run(requests: Array<[string, AssemblyResult]>, findings: ReportFinding[] = [], requiredSlots: string[] = []): TemplateRun {
  return { requests: requests.map(([fixture, result]) => ({ fixture, result })), requiredSlots, cachePrefixTokens: 0, findings, evals: [] };
}

const META = { baseRef: 'main', baseCommit: 'a'.repeat(40) };

describe('parseLimit', () => {
  it('reads numbers, percentages and dollars, and refuses the rest', () => {
    expect(parseLimit('500')).toEqual({ value: 500, percent: false, text: '500' });
    expect(parseLimit('12.5%')).toEqual({ value: 12.5, percent: true, text: '12.5%' });
    expect(parseLimit('$0.25')).toEqual({ value: 0.25, percent: false, text: '$0.25' });
    for (const bad of ['', 'ten', '-5', '5%%', '1e3', '%']) expect(parseLimit(bad), bad).toBeUndefined();
  });
});

describe('buildReport', () => {
  it('matches findings across revisions without their figures, and counts repeats', () => {
    const f = (message: string, severity: ReportFinding['severity'] = 'error'): ReportFinding => ({ path: 'a.context.yaml', rule: 'budget-overflow', severity, message });
    const r = buildReport(
      [{ path: 'a.prompt', base: run([['x', request({ tokens: 10 })]], [f('Budgets add up to 9,400 > 8,000.')]), head: run([['x', request({ tokens: 10 })]], [f('Budgets add up to 9,600 > 8,000.'), f('Budgets add up to 9,600 > 8,000.')]) }],
      META,
      { failOn: ['new-errors'] },
    );
    expect(r.templates[0].findings.fixed).toEqual([]);
    expect(r.templates[0].findings.new).toHaveLength(1);
    expect(r.gates[0]).toMatchObject({ gate: 'new-errors', passed: false });
    expect(ReportSchema.safeParse(r).success).toBe(true);
  });

  it('the token gate skips new requests and reads a percentage of the base; the cost gate reads the cost per day', () => {
    const pairs = [
      { path: 'a.prompt', base: run([['x', request({ tokens: 100, cost: 0.001, perDay: 1 })]]), head: run([['x', request({ tokens: 120, cost: 0.0012, perDay: 1.2 })], ['new', request({ tokens: 5000, cost: 0.05, perDay: 50 })]]) },
    ];
    const pass = buildReport(pairs, META, { maxTokenIncrease: parseLimit('20%')! });
    expect(pass.passed).toBe(true);
    expect(pass.summary).toMatchObject({ requests: 2, requests_changed: 2, input_tokens: { base: 100, head: 5120, delta: 5020 }, cost_per_day: { base: 1, head: 51.2, delta: 50.2 } });
    const fail = buildReport(pairs, META, { maxTokenIncrease: parseLimit('19%')!, maxCostIncrease: parseLimit('50')! });
    expect(fail.gates.map((g) => [g.gate, g.passed])).toEqual([
      ['max-token-increase', false],
      ['max-cost-increase', false],
    ]);
    expect(fail.gates[0].reasons).toEqual(['a.prompt × x: +20 input tokens (20.0%), more than 19%']);
    expect(fail.gates[1].reasons[0]).toMatch(/^cost per day rises by \$50\.2 \(5020\.0%\)/);
  });

  it('dropped-required: an item of a required slot that the base kept and the change drops', () => {
    const base = run([['x', request({ tokens: 50, kept: ['ev_1', 'ev_2'] })]], [], ['evidence']);
    const head = run([['x', request({ tokens: 40, kept: ['ev_1'], dropped: [['ev_2', 'over-slot-budget']] })]], [], ['evidence']);
    const r = buildReport([{ path: 'a.prompt', base, head }], META, { failOn: ['dropped-required'] });
    expect(r.templates[0].requests[0].slots[0]).toMatchObject({ slot: 'evidence', required: true, dropped: [{ id: 'ev_2', base: 'kept #2', head: 'over-slot-budget' }] });
    expect(r.gates[0].reasons).toEqual(['a.prompt × x: ev_2 of required slot evidence is dropped (over-slot-budget)']);
  });
});

describe('reportMarkdown', () => {
  it('quotes untrusted text so that GFM renders it as text', () => {
    const hostile = 'a | b ``` `c` </summary><b>x</b> @someone';
    const r = buildReport([{ path: 'a.prompt', base: run([['f|1', request({ tokens: 10, text: 'plain' })]]), head: run([['f|1', request({ tokens: 12, text: hostile })]]) }], META);
    const md = reportMarkdown(r);
    expect(md.startsWith(REPORT_MARKER + '\n')).toBe(true);
    const html = micromark(md, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    expect(html).not.toContain('<b>x</b>');
    expect(html).toContain('&lt;/summary&gt;&lt;b&gt;x&lt;/b&gt;');
    // GitHub links no mention inside code: outside code elements the text never holds one.
    expect(html).toContain('@someone');
    expect(html.replace(/<pre><code[^>]*>[\s\S]*?<\/code><\/pre>/g, '').replace(/<code>[\s\S]*?<\/code>/g, '')).not.toContain('@');
    // One section, closed, whose summary names the request.
    expect(html.match(/<details>/g)).toHaveLength(1);
    expect(html).toContain('<summary><code>a.prompt</code> × <code>f|1</code>: +2 tokens (10 → 12)</summary>');
  });
});
