/**
 * Evidence stages (seed 002): contradictions (supersession, claims, versions of one source) with
 * their conflict notes, risk and `contradiction-unlabelled`; near-duplicates by word shingles;
 * selection by marginal value per token, coverage rules and `coverage-missing`, `max_per_source`;
 * tenant isolation; the reasons and score breakdown of kept items.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../src/core/assembly';
import { detectConflicts } from '../../src/core/assembly/stages/conflicts';
import { jaccard, nearDedup, shingles } from '../../src/core/assembly/dedup';
import { selectItems } from '../../src/core/assembly/stages/select';
import { rankItems } from '../../src/core/assembly/score';
import { applyFilters } from '../../src/core/assembly/filters';
import type { ItemSpec } from './support/assemblyBuilders';
import { chars4, config, configDoc, fixture, t, template, textOfTokens, workItem } from './support/assemblyBuilders';

const NOW = '2026-09-01T00:00:00Z';
const evidenceTemplate = (body = [t.v('this'), t.text('\n')]) => template([t.msg('system', t.text('Answer from the evidence.')), t.msg('user', t.each('evidence', body), t.text('Q: '), t.v('question'))], { delimiters: { evidence: 'docs' } });

function run(slot: Record<string, unknown>, evidence: ItemSpec[], extra: Record<string, unknown> = {}, body?: Parameters<typeof evidenceTemplate>[0]) {
  const cfg = config({ window: 100000, output: 0, filters: { now: NOW }, ...extra, slots: { evidence: { kind: 'evidence', trust: 'untrusted', ...slot }, question: { kind: 'user', trust: 'untrusted', required: true } } });
  return assemble({ template: evidenceTemplate(body), config: cfg, fixture: fixture({ question: 'Does 4.2 retry POST?', evidence }), tokenizer: chars4 });
}
const rules = (r: ReturnType<typeof run>) => r.findings.map((f) => f.rule);

describe('contradictions', () => {
  const retryDocs = (): ItemSpec[] => [
    { id: 'ev_0192', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '4.2', authority: 0.95, relevance: 0.9, text: 'POST is retried only with an Idempotency-Key.', meta: { topic: 'post-retry', claim: 'retried with an idempotency key' } },
    { id: 'ev_0255', source: 'forum/77', source_type: 'customer_comment', version: '4.2', authority: 0.2, relevance: 0.6, text: 'All POST requests are idempotent, so retries are safe.', meta: { topic: 'post-retry', claim: 'always safe to retry' } },
  ];

  it('labels claims on one topic that disagree: a conflict note in each envelope, both kept, recorded in the trace', () => {
    const r = run({ label: 'EVIDENCE' }, retryDocs());
    const user = r.messages[1].content;
    expect(user).toContain('[EVIDENCE ev_0192]\nVersion: 4.2\nAuthority: Official documentation (0.95)\nSource: sdk-docs/retries\nConflicts with: ev_0255 (customer comment)\nContent:\n');
    expect(user).toContain('Source: forum/77\nConflicts with: ev_0192 (official documentation)\nContent:\n');
    expect(r.trace.conflicts).toEqual([{ slot: 'evidence', kind: 'claim', topic: 'post-retry', items: ['ev_0192', 'ev_0255'], values: ['retried with an idempotency key', 'always safe to retry'], resolution: 'labelled', retained: ['ev_0192', 'ev_0255'] }]);
    expect(r.trace.retained.find((i) => i.id === 'ev_0192')?.conflicts_with).toEqual(['ev_0255']);
    expect(rules(r)).not.toContain('contradiction-unlabelled');
  });

  it('names the other version in the note (seed 002: Conflicts with: ev_0201 (version 3.9))', () => {
    const r = run({ label: 'EVIDENCE' }, [
      { id: 'ev_0192', source: 'sdk-docs/retries', version: '4.2', text: 'POST is retried with an Idempotency-Key.' },
      { id: 'ev_0201', source: 'sdk-docs/retries', version: '3.9', text: 'POST is never retried.' },
    ]);
    expect(r.messages[1].content).toContain('Conflicts with: ev_0201 (version 3.9)');
    expect(r.trace.conflicts?.[0]).toMatchObject({ kind: 'version', items: ['ev_0192', 'ev_0201'], values: ['4.2', '3.9'], resolution: 'labelled' });
  });

  it('same claim in other words is no conflict; same text in two versions is no conflict', () => {
    const docs = retryDocs();
    docs[1].meta = { topic: 'Post-Retry', claim: 'Retried, with an idempotency key!' };
    expect(run({ label: 'EVIDENCE' }, docs).trace.conflicts).toBeUndefined();
    expect(
      run({ label: 'EVIDENCE' }, [
        { id: 'a', source: 's', version: '1', text: 'Same words.' },
        { id: 'b', source: 's', version: '2', text: 'same words' },
      ]).trace.conflicts,
    ).toBeUndefined();
  });

  it('supersession resolves by declared links and by validity at now: superseded-by:<id>', () => {
    const r = run({ label: 'EVIDENCE' }, [
      { id: 'old', source: 'kb/a', text: 'Old rule.', meta: { superseded_by: 'new' } },
      { id: 'new', source: 'kb/a2', text: 'New rule.' },
      { id: 'v1', source: 'kb/p', text: 'Limit 100.', meta: { topic: 'limit', claim: '100', valid_to: '2026-06-30' } },
      { id: 'v2', source: 'kb/p2', text: 'Limit 200.', meta: { topic: 'limit', claim: '200', valid_from: '2026-07-01' } },
      { id: 'x', source: 'kb/x', text: 'X.', meta: { supersedes: ['y'] } },
      { id: 'y', source: 'kb/y', text: 'Y.' },
    ]);
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([
      ['old', 'superseded-by:new'],
      ['v1', 'superseded-by:v2'],
      ['y', 'superseded-by:x'],
    ]);
    expect(r.trace.conflicts?.map((c) => [c.kind, c.resolution, c.kept, c.superseded, c.basis])).toEqual([
      ['supersession', 'superseded', 'new', 'old', 'superseded_by'],
      ['supersession', 'superseded', 'x', 'y', 'supersedes'],
      ['claim', 'superseded', 'v2', 'v1', 'valid_to'],
    ]);
    expect(r.messages[1].content).not.toContain('Conflicts with');
  });

  it('without now, validity is not judged (no clock): the conflict is labelled', () => {
    const items = [workItem(0, { id: 'v1', meta: { topic: 'l', claim: '1', valid_to: '2020-01-01' } }), workItem(1, { id: 'v2', meta: { topic: 'l', claim: '2' } })];
    expect(detectConflicts(items, undefined).conflicts.map((c) => c.resolution)).toEqual(['labelled']);
    expect(detectConflicts(items, NOW).omitted.map((o) => o.reason)).toEqual(['superseded-by:v2']);
  });

  it('mutual supersession links cancel out', () => {
    const items = [workItem(0, { id: 'a', meta: { supersedes: 'b' } }), workItem(1, { id: 'b', meta: { supersedes: 'a' } })];
    expect(detectConflicts(items, NOW).omitted).toEqual([]);
  });

  it('computes the contradiction risk: 1 against an equal or stronger source, 0.5 against a weaker one; the penalty lowers the score', () => {
    const [a, b] = [workItem(0, { id: 'a', authority: 0.9, relevance: 0.9, meta: { topic: 't', claim: 'x' } }), workItem(1, { id: 'b', authority: 0.2, relevance: 0.9, meta: { topic: 't', claim: 'y' } })];
    detectConflicts([a, b], NOW);
    expect([a.risk, b.risk]).toEqual([0.5, 1]);
    rankItems([a, b], { weights: { contradiction_penalty: 0.1 } });
    expect(a.breakdown?.contradiction).toBe(-0.05);
    expect(b.breakdown?.contradiction).toBe(-0.1);
  });

  it('contradiction-unlabelled: conflicting items rendered with no envelope to carry the note', () => {
    const r = run({}, retryDocs());
    const f = r.findings.filter((x) => x.rule === 'contradiction-unlabelled');
    expect(f).toHaveLength(1);
    expect(f[0].severity).toBe('warning');
    expect(f[0].message).toContain("'evidence' renders items that contradict each other without their conflict note: ev_0192 (conflicts with ev_0255), ev_0255 (conflicts with ev_0192)");
    expect(f[0].message).toContain('Give \'evidence\' a label');
    // Labelled, but the template prints only the text: the envelope is never rendered.
    const textOnly = run({ label: 'EVIDENCE' }, retryDocs(), {}, [t.v('this', 'text'), t.text('\n')]);
    expect(rules(textOnly)).toContain('contradiction-unlabelled');
    // One side out of the request: nothing contradicts in the request.
    expect(rules(run({ max_items: 1 }, retryDocs()))).not.toContain('contradiction-unlabelled');
  });
});

describe('near-duplicates (dedup: { near })', () => {
  const base = 'The client retries idempotent requests up to three times with exponential backoff and respects Retry-After headers from the server.';
  const near = 'The client retries idempotent requests up to three times with exponential backoff and respects Retry-After headers from the server today.';

  it('merges texts whose word 5-gram Jaccard is at or above the threshold, keeping every source', () => {
    // 19 normalized words (Retry-After is one word) -> 15 shingles, all shared with the 16 of the longer text.
    expect(jaccard(shingles(base), shingles(near))).toBe(15 / 16);
    const r = run({ label: 'EVIDENCE' }, [
      { id: 'a', source: 'docs/a', text: base },
      { id: 'b', source: 'mirror/b', text: near },
      { id: 'c', source: 'docs/c', text: 'Something else entirely about authentication tokens and scopes.' },
    ], { dedup: { near: 0.8 } });
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([['b', 'near-duplicate-of:a']]);
    expect(r.trace.retained.find((i) => i.id === 'a')?.merged).toEqual(['mirror/b']);
    expect(r.messages[1].content).toContain('Source: docs/a; mirror/b');
  });

  it('never merges different versions, and does nothing without the setting or below the threshold', () => {
    const items = () => [workItem(0, { text: base, version: '4.2' }), workItem(1, { text: near, version: '3.9' })];
    expect(nearDedup(items(), 0.8).omitted).toEqual([]);
    expect(run({}, [{ id: 'a', source: 's', text: base }, { id: 'b', source: 't', text: near }]).trace.omitted).toEqual([]);
    expect(nearDedup([workItem(0, { text: base }), workItem(1, { text: near })], 0.99).omitted).toEqual([]);
  });
});

describe('selection: value per token, coverage, diversity', () => {
  it('value-per-token prefers a short useful item over a long slightly better one', () => {
    const ev: ItemSpec[] = [
      { id: 'long', source: 'a', relevance: 0.9, text: textOfTokens(400) },
      { id: 'short1', source: 'b', relevance: 0.8, text: textOfTokens(100, 'wxyz') },
      { id: 'short2', source: 'c', relevance: 0.7, text: textOfTokens(100, 'mnop') },
    ];
    expect(run({ budget: 400, pack: 'skip' }, ev).trace.retained.filter((i) => i.slot === 'evidence').map((i) => i.id)).toEqual(['long']);
    const r = run({ budget: 400, pack: 'skip', select: 'value-per-token' }, ev);
    const kept = r.trace.retained.filter((i) => i.slot === 'evidence');
    expect(kept.map((i) => i.id)).toEqual(['short1', 'short2']);
    expect(kept[0].value_per_token).toBeGreaterThan(kept[1].value_per_token!);
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([['long', 'over-slot-budget']]);
  });

  it('marginal value: a copy of a selected item loses its novelty, so a less relevant new item goes first', () => {
    const items = [
      workItem(0, { id: 'a', relevance: 0.9, text: 'alpha beta gamma delta!' }),
      workItem(1, { id: 'b', relevance: 0.89, text: 'alpha beta gamma delta?' }),
      workItem(2, { id: 'c', relevance: 0.85, text: 'other words here now' }),
      workItem(3, { id: 'd', relevance: 0.5, text: 'fresh unique text ok!!' }),
    ];
    const ranked = rankItems(items, { weights: { novelty: 0.5 } });
    const s = selectItems(ranked, { budget: 17, overhead: 0, cfg: { select: 'value-per-token', pack: 'skip' } as never, novelty: 0.5 });
    // c (0.8825 / 5), a (0.905 / 6), then d (0.725 / 6) over b, whose novelty against a is 0 (0.4005 / 6).
    expect(s.picked?.kept.map((i) => i.id)).toEqual(['c', 'a', 'd']);
    expect(s.picked?.omitted.map((o) => [o.item.id, o.reason])).toEqual([['b', 'over-slot-budget']]);
  });

  it('keeps one item per required subtopic before filling the rest; coverage-missing when none is kept', () => {
    const ev: ItemSpec[] = [
      { id: 'd1', source: 'a', relevance: 0.9, text: textOfTokens(100), meta: { covers: ['defaults'] } },
      { id: 'd2', source: 'b', relevance: 0.85, text: textOfTokens(100, 'efgh'), meta: { covers: ['defaults'] } },
      { id: 'c1', source: 'c', relevance: 0.3, text: textOfTokens(100, 'ijkl'), meta: { covers: ['config'] } },
    ];
    const plain = run({ budget: 200 }, ev);
    expect(plain.trace.retained.filter((i) => i.slot === 'evidence').map((i) => i.id)).toEqual(['d1', 'd2']);
    const r = run({ budget: 200, requires: ['defaults', 'config', 'limits'] }, ev);
    const kept = r.trace.retained.filter((i) => i.slot === 'evidence');
    expect(kept.map((i) => [i.id, i.reasons])).toEqual([
      ['d1', ['high_relevance', 'covers:defaults']],
      ['c1', ['covers:config']],
    ]);
    expect(r.trace.coverage).toEqual([
      { slot: 'evidence', subtopic: 'defaults', covered_by: ['d1'] },
      { slot: 'evidence', subtopic: 'config', covered_by: ['c1'] },
      { slot: 'evidence', subtopic: 'limits', covered_by: [] },
    ]);
    const f = r.findings.filter((x) => x.rule === 'coverage-missing');
    expect(f.map((x) => x.message)).toEqual(["'evidence' requires the subtopic 'limits', but no item in the request covers it: no item of fixture 'retry' declares covers: [limits]. The answer will be incomplete on 'limits'."]);
    expect(rules(run({ budget: 200, requires: ['defaults', 'config'] }, ev))).not.toContain('coverage-missing');
    // A covering item that does not fit is named with its reason.
    expect(run({ budget: 50, requires: ['config'] }, ev).findings.find((x) => x.rule === 'coverage-missing')?.message).toContain('its candidates c1 (stop-policy) were dropped');
  });

  it('max_per_source keeps at most n items of one source', () => {
    const ev: ItemSpec[] = [0, 1, 2].map((i) => ({ id: `s${i}`, source: 'same/page', relevance: 0.9 - i / 10, text: `Passage ${i}.` }));
    const r = run({ max_per_source: 2 }, [...ev, { id: 'o', source: 'other', relevance: 0.1, text: 'Other.' }]);
    expect(r.trace.retained.filter((i) => i.slot === 'evidence').map((i) => i.id)).toEqual(['s0', 's1', 'o']);
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([['s2', 'max-per-source']]);
  });
});

describe('tenant isolation', () => {
  it('under a tenant filter, an item without a tenant is excluded (filtered:tenant-missing) unless tenant_missing: keep', () => {
    const items = [workItem(0, { tenant: 'acme' }), workItem(1, { tenant: 'globex' }), workItem(2, {})];
    expect(applyFilters(items, { tenant: 'acme', expired: true }, undefined).omitted.map((o) => [o.item.id, o.reason])).toEqual([
      ['ev_1', 'filtered:tenant'],
      ['ev_2', 'filtered:tenant-missing'],
    ]);
    expect(applyFilters(items, { tenant: 'acme', tenant_missing: 'keep', expired: true }, undefined).kept.map((i) => i.id)).toEqual(['ev_0', 'ev_2']);
  });

  it('history turns are never filtered by tenant', () => {
    const cfg = config({ window: 10000, filters: { tenant: 'acme' }, slots: { history: { kind: 'history', trust: 'untrusted' }, evidence: { kind: 'evidence', trust: 'untrusted' } } });
    const tpl = template([t.msg('system', t.text('S'), t.history()), t.msg('user', t.each('evidence', [t.v('this')]))]);
    const r = assemble({ template: tpl, config: cfg, fixture: fixture({ history: [{ role: 'user', text: 'hi' }], evidence: [{ id: 'e', source: 's', text: 'E' }] }), tokenizer: chars4 });
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([['e', 'filtered:tenant-missing']]);
    expect(r.trace.retained.map((i) => i.id)).toEqual(['history_1']);
  });
});

describe('reasons and score breakdown of kept items (seed 002 selection log)', () => {
  it('records why each item is kept and the weighted parts of its score', () => {
    const doc = configDoc(`window: 100000
filters: { version: "4.2", now: "${NOW}" }
slots:
  evidence: { kind: evidence, trust: untrusted, label: EVIDENCE }
  question: { kind: user, trust: untrusted, required: true }
`);
    const r = assemble({
      template: evidenceTemplate(),
      config: doc.config!,
      configDoc: doc,
      fixture: fixture({ question: 'Q', evidence: [{ id: 'ev_0192', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '4.2', authority: 0.95, relevance: 0.91, published_at: '2026-06-10T00:00:00Z', text: 'SDK 4.2 retries 429.' }] }),
      tokenizer: chars4,
    });
    const ev = r.trace.retained.find((i) => i.id === 'ev_0192')!;
    expect(ev.reasons).toEqual(['high_relevance', 'exact_version', 'official_source', 'high_authority']);
    expect(ev.score_breakdown).toEqual({ relevance: 0.4095, authority: 0.19, version_match: 0.15, recency: 0.0854, novelty: 0.1, contradiction: -0 });
    // 0.45 x 0.91 + 0.20 x 0.95 + 0.15 x 1 + 0.10 x 0.5^(83 / 365) + 0.10 x 1
    expect(ev.score).toBe(0.9349);
    expect(r.trace.retained.find((i) => i.slot === 'question')?.reasons).toEqual(['required']);
  });
});
