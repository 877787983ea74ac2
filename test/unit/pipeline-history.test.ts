/**
 * History policies (seed 000, 3.2 and 3.4): window, summary, retrieval, hybrid; the remainder the
 * budget equation leaves for history (the 16,000-token example, to the token); summary lineage in
 * the trace and the citation map; commitments as structured records and `commitment-dropped`.
 */
import { describe, expect, it } from 'vitest';
import { assemble, remainderLines } from '../../src/core/assembly';
import { computeBudget } from '../../src/core/budget';
import { withRemainder } from '../../src/core/budget/remainder';
import { contentWords, lexicalOverlap } from '../../src/core/assembly/stages/history';
import type { ItemSpec } from './support/assemblyBuilders';
import { chars4, config, configDoc, fixture, t, template, textOfTokens } from './support/assemblyBuilders';

const NO_OVERHEAD = { message: 0, request: 0, item: 0 };

/** n turns of `tokens` each (chars4), alternating user/assistant, one minute apart, ids t01.. */
function turns(n: number, tokens: number, extra: (i: number) => Partial<ItemSpec> = () => ({})): ItemSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${String(i + 1).padStart(2, '0')}`,
    role: i % 2 ? 'assistant' : 'user',
    at: `2026-08-12T10:${String(i).padStart(2, '0')}:00Z`,
    text: textOfTokens(tokens, String.fromCharCode(97 + (i % 26)).repeat(4)),
    ...extra(i),
  })) as ItemSpec[];
}

const historyTemplate = () => template([t.msg('system', t.v('policy'), t.text('\n'), t.v('tools'), t.history()), t.msg('user', t.each('evidence', [t.v('this')]), t.text('\n'), t.v('question'))]);

/** Seed 000, 3.4: 16,000 capacity; policy + tools 2,400, evidence 5,000, request 600, output 2,000. */
const SEED_16K = (history: Record<string, unknown>) =>
  config({
    window: 16000,
    output: 2000,
    margin: 0,
    overhead: NO_OVERHEAD,
    slots: {
      policy: { kind: 'policy', trust: 'trusted', required: true, budget: 1800 },
      tools: { kind: 'tool', trust: 'trusted', budget: 600 },
      evidence: { kind: 'evidence', trust: 'untrusted', budget: 5000 },
      question: { kind: 'user', trust: 'untrusted', required: true, budget: 600 },
      history: { kind: 'history', trust: 'untrusted', ...history },
    },
  });

describe('the remainder (seed 000, 3.4: the 16,000-token example)', () => {
  const cfg = SEED_16K({ policy: 'summary', shares: { recent: '75%' } });

  it('budget report: 10,000 fixed, 6,000 left for history, split 4,500 recent + 1,500 summary', () => {
    const report = withRemainder(computeBudget(cfg, { tokenizer: { name: 'chars4', exact: false } }), cfg);
    expect(report.remainder).toEqual([
      {
        slot: 'history',
        capacity: 16000,
        fixed: 10000,
        fixedParts: [
          { name: 'policy', tokens: 1800 },
          { name: 'tools', tokens: 600 },
          { name: 'evidence', tokens: 5000 },
          { name: 'question', tokens: 600 },
          { name: 'output', tokens: 2000 },
        ],
        available: 6000,
        budget: 6000,
        shares: { recent: 4500, summary: 1500 },
      },
    ]);
    expect(remainderLines(report)).toEqual(['history: 16,000 - 10,000 fixed (policy 1,800 + tools 600 + evidence 5,000 + question 600 + output 2,000) = 6,000 available; shares recent 4,500 + summary 1,500']);
    // The equation itself is unchanged: the history slot has no budget line of its own.
    expect(report.inputAllocated).toBe(8000);
  });

  it('trace: 4,500 of recent turns leave 1,500 for the summary of the older turns', () => {
    // 20 turns of 300 tokens: the newest 15 are 4,500; the 5 older ones are summarised in 1,200.
    const fx = fixture({
      policy: 'Answer briefly.',
      tools: 'none',
      question: 'What did we agree?',
      evidence: [{ id: 'ev_1', source: 'kb/1', text: 'A fact.' }],
      history: [...turns(20, 300), { id: 's1', role: 'assistant', at: '2026-08-12T11:00:00Z', text: textOfTokens(1200, 'summ'), meta: { summary_of: ['t01', 't02', 't03', 't04', 't05'] } }],
    });
    const r = assemble({ template: historyTemplate(), config: cfg, fixture: fx, tokenizer: chars4 });
    expect(r.ok).toBe(true);
    expect(r.budget.remainder?.[0]).toMatchObject({ fixed: 10000, available: 6000 });
    expect(r.trace.history).toEqual([
      {
        slot: 'history',
        policy: 'summary',
        budget: 6000,
        remainder: { capacity: 16000, fixed: 10000, available: 6000 },
        recent: { budget: 4500, used: 4500, kept: 15 },
        summary: { budget: 1500, used: 1200, kept: 1 },
        left_after_recent: 1500,
      },
    ]);
    expect(r.trace.slots.find((s) => s.name === 'history')).toMatchObject({ budget: 6000, used: 5700, kept: 16, total: 21 });
    // Replaced turns carry their lineage; the summary sits where its turns were, before t06.
    const omitted = r.trace.omitted.filter((o) => o.slot === 'history').map((o) => [o.id, o.reason]);
    expect(omitted).toEqual(['t01', 't02', 't03', 't04', 't05'].map((id) => [id, 'summarised-by:s1']).reverse());
    const hist = r.trace.retained.filter((i) => i.slot === 'history');
    expect(hist.map((i) => i.id)).toEqual(['s1', ...Array.from({ length: 15 }, (_, i) => `t${String(i + 6).padStart(2, '0')}`)]);
    expect(hist[0]).toMatchObject({ summary_of: ['t01', 't02', 't03', 't04', 't05'], reasons: ['summary'] });
    expect(hist[1].reasons).toEqual(['recent']);
    // A citation of the summary resolves to the original turns.
    const c = r.trace.citation_map.s1;
    expect(c.summary_of).toEqual(['t01', 't02', 't03', 't04', 't05']);
    expect(c.resolves_to?.map((x) => x.id)).toEqual(['t01', 't02', 't03', 't04', 't05']);
    expect(c.resolves_to?.every((x) => /^[0-9a-f]{64}$/.test(x.sha256))).toBe(true);
    // No slot-overflow: the summary policy is the declared answer to a long history.
    expect(r.findings.map((f) => f.rule)).not.toContain('slot-overflow');
  });
});

describe('history policies', () => {
  const cfgWith = (history: Record<string, unknown>) =>
    config({ window: 100000, output: 0, overhead: NO_OVERHEAD, slots: { policy: { kind: 'policy', trust: 'trusted' }, tools: { kind: 'tool', trust: 'trusted' }, evidence: { kind: 'evidence', trust: 'untrusted' }, question: { kind: 'user', trust: 'untrusted', required: true }, history: { kind: 'history', trust: 'untrusted', ...history } } });
  const run = (history: Record<string, unknown>, hist: ItemSpec[], question = 'Q?') => assemble({ template: historyTemplate(), config: cfgWith(history), fixture: fixture({ question, history: hist }), tokenizer: chars4 });
  const keptIds = (r: ReturnType<typeof run>) => r.trace.retained.filter((i) => i.slot === 'history').map((i) => i.id);

  it('window (and no policy): the newest turns that fit, rendered in order', () => {
    const h = turns(6, 100);
    for (const policy of [undefined, 'window']) {
      const r = run({ budget: 300, ...(policy ? { policy } : {}) }, h);
      expect(keptIds(r)).toEqual(['t04', 't05', 't06']);
      expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([
        ['t03', 'over-slot-budget'],
        ['t02', 'stop-policy'],
        ['t01', 'stop-policy'],
      ]);
      expect(r.findings.map((f) => f.rule)).toContain('slot-overflow');
      expect(r.trace.history === undefined).toBe(policy === undefined);
    }
  });

  it('window ignores summaries (policy:window); without a policy they are plain turns, as before', () => {
    const h = [...turns(3, 100), { id: 's', role: 'assistant', at: '2026-08-12T09:00:00Z', text: 'sum', meta: { summary_of: ['t01'] } } as ItemSpec];
    expect(run({ budget: 1000, policy: 'window' }, h).trace.omitted.map((o) => [o.id, o.reason])).toEqual([['s', 'policy:window']]);
    expect(keptIds(run({ budget: 1000 }, h))).toEqual(['s', 't01', 't02', 't03']);
  });

  it('summary: a summary that covers only kept turns is redundant; an older turn no summary covers keeps its window reason', () => {
    const h = [
      ...turns(6, 100),
      { id: 's-old', role: 'assistant', text: textOfTokens(40), meta: { summary_of: ['t01', 't02'] } },
      { id: 's-new', role: 'assistant', text: textOfTokens(40), meta: { summary_of: ['t05', 't06'] } },
    ] as ItemSpec[];
    const r = run({ budget: 400, policy: 'summary', shares: { recent: 300 } }, h);
    expect(keptIds(r)).toEqual(['s-old', 't04', 't05', 't06']);
    expect(Object.fromEntries(r.trace.omitted.map((o) => [o.id, o.reason]))).toEqual({ t01: 'summarised-by:s-old', t02: 'summarised-by:s-old', t03: 'over-slot-budget', 's-new': 'summary-redundant' });
    expect(r.trace.history?.[0]).toMatchObject({ recent: { budget: 300, used: 300, kept: 3 }, summary: { budget: 100, used: 40, kept: 1 }, left_after_recent: 100 });
  });

  it('retrieval: turns ranked by lexical overlap with the question, not recency; irrelevant turns are not-relevant', () => {
    const h: ItemSpec[] = [
      { id: 'a', role: 'user', at: '2026-08-01T10:00:00Z', text: 'The refund needs a supervisor approval for the tent.' },
      { id: 'b', role: 'assistant', at: '2026-08-02T10:00:00Z', text: 'Delivery is on Friday.' },
      { id: 'c', role: 'user', at: '2026-08-03T10:00:00Z', text: 'Can the tent be refunded?' },
      { id: 'd', role: 'assistant', at: '2026-08-04T10:00:00Z', text: 'Parcel tracking number is PW-1.' },
    ];
    const r = run({ policy: 'retrieval', budget: 1000 }, h, 'Can you refund the tent now?');
    // a: refund + tent of {refund, tent} = 1; c: tent = 0.5; b, d: 0. Rendered chronologically.
    expect(keptIds(r)).toEqual(['a', 'c']);
    expect(r.trace.retained.filter((i) => i.slot === 'history').map((i) => [i.score, i.score_breakdown, i.reasons])).toEqual([
      [1, { lexical_overlap: 1 }, ['retrieved']],
      [0.5, { lexical_overlap: 0.5 }, ['retrieved']],
    ]);
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([
      ['d', 'not-relevant'],
      ['b', 'not-relevant'],
    ]);
  });

  it('retrieval uses the turns\' relevance metadata when they have it, ties going to the more recent turn', () => {
    const h: ItemSpec[] = [
      { id: 'a', role: 'user', at: '2026-08-01T10:00:00Z', relevance: 0.9, text: textOfTokens(100) },
      { id: 'b', role: 'user', at: '2026-08-02T10:00:00Z', relevance: 0.4, text: textOfTokens(100) },
      { id: 'c', role: 'user', at: '2026-08-03T10:00:00Z', relevance: 0.4, text: textOfTokens(100) },
    ];
    const r = run({ policy: 'retrieval', budget: 200 }, h);
    expect(keptIds(r)).toEqual(['a', 'c']);
    expect(r.trace.retained.find((i) => i.id === 'a')?.score_breakdown).toEqual({ relevance: 0.9 });
  });

  it('hybrid: recent turns, summaries and retrieved older turns, each in its share; unused tokens pass on', () => {
    const h: ItemSpec[] = [
      ...turns(10, 50, (i) => (i === 1 ? { text: `The refund needs a supervisor approval. ${textOfTokens(40)}` } : {})),
      { id: 'sum', role: 'assistant', text: textOfTokens(20), meta: { summary_of: ['t01', 't02', 't03', 't04'] } },
    ];
    // Budget 300: recent 60% = 180 (3 turns of 50 = 150), summary 25% = 75 (+30 left = 105; 20 used), retrieved 15% = 45 (+85 left = 130).
    const r = run({ policy: 'hybrid', budget: 300 }, h, 'Can you refund it without supervisor approval?');
    expect(r.trace.history?.[0]).toMatchObject({ policy: 'hybrid', budget: 300, recent: { budget: 180, used: 150, kept: 3 }, summary: { budget: 105, used: 20, kept: 1 }, retrieved: { budget: 130, kept: 1 } });
    expect(keptIds(r)).toEqual(['sum', 't02', 't08', 't09', 't10']);
    const reasons = Object.fromEntries(r.trace.retained.filter((i) => i.slot === 'history').map((i) => [i.id, i.reasons]));
    expect(reasons).toEqual({ sum: ['summary'], t02: ['retrieved'], t08: ['recent'], t09: ['recent'], t10: ['recent'] });
    // t02 is summarised and retrieved: the original wording is kept; the other summarised turns are replaced.
    expect(Object.fromEntries(r.trace.omitted.filter((o) => o.slot === 'history').map((o) => [o.id, o.reason]))).toEqual({ t01: 'summarised-by:sum', t03: 'summarised-by:sum', t04: 'summarised-by:sum', t05: 'stop-policy', t06: 'stop-policy', t07: 'over-slot-budget' });
  });

  it('content words and overlap are deterministic', () => {
    expect([...contentWords('Can you REFUND the tent, now?')]).toEqual(['refund', 'tent']);
    expect(lexicalOverlap(contentWords('refund tent'), 'the tent')).toBe(0.5);
    expect(lexicalOverlap(new Set(), 'anything')).toBe(0);
  });
});

describe('commitments and commitment-dropped', () => {
  const yaml = (history: string, commitments = '  commitments: { kind: memory, trust: trusted, required: true }\n') => `window: 100000
output: 0
overhead: { message: 0, request: 0, item: 0 }
slots:
  question: { kind: user, trust: untrusted, required: true }
${commitments}  history: { kind: history, trust: untrusted, ${history} }
`;
  const tpl = () => template([t.msg('system', t.each('commitments', [t.v('this'), t.text('\n')]), t.history()), t.msg('user', t.v('question'))]);
  const conversation = (): ItemSpec[] => [
    { id: 'c1', role: 'user', at: '2026-08-12T14:03:00Z', text: textOfTokens(50) },
    { id: 'c2', role: 'assistant', at: '2026-08-12T14:05:00Z', text: "A refund needs a supervisor's approval.", meta: { commitment: 'refund only after supervisor approval' } },
    ...turns(4, 50).map((x, i) => ({ ...x, id: `c${i + 3}`, at: `2026-08-20T10:0${i}:00Z` })),
  ];
  const record = { id: 'CMT-1', text: 'Refund 349 USD once a supervisor approves.', meta: { promise: 'Refund 349 USD for NW-481203', party: 'Tier-2 supervisor queue', condition: 'a supervisor approves', made_at: '2026-08-12T14:05:00Z', source_turn: 'c2' } };
  const run = (history: string, slots: Record<string, string | ItemSpec[]>, commitments?: string) => {
    const doc = configDoc(yaml(history, commitments));
    return assemble({ template: tpl(), config: doc.config!, configDoc: doc, fixture: fixture({ question: 'Can you refund now?', ...slots }), tokenizer: chars4 });
  };

  it('fires when the window drops a turn that made a commitment no record keeps (seed 000)', () => {
    const r = run('budget: 200, policy: window', { history: conversation(), commitments: 'Free-text notes, not a record.' });
    const f = r.findings.filter((x) => x.rule === 'commitment-dropped');
    expect(f).toHaveLength(1);
    expect(f[0].severity).toBe('error');
    expect(f[0].message).toContain('History turn c2 (assistant, 2026-08-12T14:05:00Z) makes a commitment: "refund only after supervisor approval", and it is dropped by the window policy (over-slot-budget)');
    expect(f[0].message).toContain('source_turn: c2');
    expect(f[0].related?.[0].message).toBe("history slot 'history'");
  });

  it('stays silent when a kept commitment record names the turn, or the turn is kept', () => {
    expect(run('budget: 200, policy: window', { history: conversation(), commitments: [record] }).findings.map((x) => x.rule)).not.toContain('commitment-dropped');
    expect(run('budget: 2000, policy: window', { history: conversation() }).findings.map((x) => x.rule)).not.toContain('commitment-dropped');
  });

  it('fires when a summary replaces the turn, since a summary can drop the condition', () => {
    const h = [...conversation(), { id: 'sum', role: 'assistant', text: 'Earlier: a pole broke.', meta: { summary_of: ['c1', 'c2'] } } as ItemSpec];
    const f = run('budget: 220, policy: summary, shares: { recent: 200 }', { history: h }).findings.filter((x) => x.rule === 'commitment-dropped');
    expect(f).toHaveLength(1);
    expect(f[0].message).toContain('History turn c2 (assistant, 2026-08-12T14:05:00Z) makes a commitment: "refund only after supervisor approval", and it is replaced');
    expect(f[0].message).toContain('replaced by summary sum (a summary can drop the condition)');
  });

  it('hybrid keeps it: the record survives whatever the history keeps', () => {
    const r = run('budget: 200, policy: hybrid', { history: conversation(), commitments: [record] });
    expect(r.findings.map((x) => x.rule)).not.toContain('commitment-dropped');
    expect(r.trace.retained.find((i) => i.id === 'CMT-1')?.reasons).toEqual(['required', 'commitment']);
  });

  it('fires when a commitment record itself is dropped', () => {
    const r = run('budget: 2000', { history: conversation(), commitments: [record] }, '  commitments: { kind: memory, trust: trusted, budget: 5 }\n');
    const f = r.findings.filter((x) => x.rule === 'commitment-dropped');
    expect(f.map((x) => x.message)).toEqual([expect.stringContaining('Commitment record CMT-1 ("Refund 349 USD for NW-481203") is not in the request (over-slot-budget)')]);
  });
});
