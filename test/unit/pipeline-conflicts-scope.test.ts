/**
 * Conflicts with items out of scope (seed 002, "Contradictory context": one passage "applies to
 * another version" or is "outdated"): a candidate removed by the version or expiry filter is still
 * compared with the kept ones, and the disagreement is recorded as resolved by the filter, with no
 * note in any envelope and no contradiction risk. Permission and policy filters (tenant, source
 * types) never lead to a record.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../src/core/assembly';
import { detectConflicts } from '../../src/core/assembly/stages/conflicts';
import type { Omission } from '../../src/core/assembly/item';
import type { ItemSpec } from './support/assemblyBuilders';
import { chars4, config, fixture, t, template, workItem } from './support/assemblyBuilders';

const NOW = '2026-09-01T00:00:00Z';
const evidenceTemplate = () => template([t.msg('system', t.text('Answer from the evidence.')), t.msg('user', t.each('evidence', [t.v('this'), t.text('\n')]), t.text('Q: '), t.v('question'))]);

function run(evidence: ItemSpec[], filters: Record<string, unknown> = { version: '4.2' }) {
  const cfg = config({ window: 100000, output: 0, filters: { now: NOW, ...filters }, slots: { evidence: { kind: 'evidence', trust: 'untrusted', label: 'EVIDENCE' }, question: { kind: 'user', trust: 'untrusted', required: true } } });
  return assemble({ template: evidenceTemplate(), config: cfg, fixture: fixture({ question: 'Does 4.2 retry POST?', evidence }), tokenizer: chars4 });
}

const current: ItemSpec = { id: 'ev_0192', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '4.2', authority: 0.95, relevance: 0.9, text: 'POST is retried only with an Idempotency-Key.' };
const old: ItemSpec = { id: 'ev_0077', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '3.9', authority: 0.9, relevance: 0.8, text: 'POST requests are never retried in 3.x.' };

describe('conflicts with out-of-scope items', () => {
  it('records the 3.9 vs 4.2 disagreement as resolved by filtered:version; no note, no risk for the kept item', () => {
    const r = run([current, old]);
    expect(r.trace.omitted.map((o) => [o.id, o.reason])).toEqual([['ev_0077', 'filtered:version']]);
    expect(r.trace.conflicts).toEqual([{ slot: 'evidence', kind: 'version', items: ['ev_0192', 'ev_0077'], values: ['4.2', '3.9'], resolution: 'filtered', filtered: 'ev_0077', reason: 'filtered:version', retained: ['ev_0192'] }]);
    const kept = r.trace.retained.find((i) => i.id === 'ev_0192')!;
    expect(kept.conflicts_with).toBeUndefined();
    expect(Math.abs(kept.score_breakdown!.contradiction!)).toBe(0);
    expect(r.messages[1].content).not.toContain('Conflicts with');
    expect(r.findings.map((f) => f.rule)).not.toContain('contradiction-unlabelled');
  });

  it('without the filter the same pair is a labelled conflict: each envelope names the other', () => {
    const r = run([current, old], {});
    expect(r.trace.conflicts?.map((c) => [c.kind, c.resolution, c.items])).toEqual([['version', 'labelled', ['ev_0192', 'ev_0077']]]);
    expect(r.messages[1].content).toContain('Conflicts with: ev_0077 (version 3.9)');
  });

  it('an expired item that contradicts a claim: resolved by filtered:expired', () => {
    const claim = (id: string, c: string, extra: Partial<ItemSpec> = {}): ItemSpec => ({ id, source: `kb/${id}`, version: '4.2', text: `${id}: ${c}`, meta: { topic: 'post-retry', claim: c }, ...extra });
    const r = run([claim('ev_1', 'retried with a key'), claim('ev_2', 'never retried', { expires_at: '2026-01-01T00:00:00Z' })]);
    expect(r.trace.conflicts).toEqual([{ slot: 'evidence', kind: 'claim', topic: 'post-retry', items: ['ev_1', 'ev_2'], values: ['retried with a key', 'never retried'], resolution: 'filtered', filtered: 'ev_2', reason: 'filtered:expired', retained: ['ev_1'] }]);
  });

  it('stays silent: other tenants, excluded source types, other sources, the same text, nothing kept to disagree with', () => {
    // A tenant-filtered 3.9 page of the same source: not the requester's evidence, never compared.
    expect(run([{ ...current, tenant: 'acme' }, { ...old, tenant: 'globex' }], { tenant: 'acme' }).trace.conflicts).toBeUndefined();
    expect(run([current, { ...old, version: '4.2', source_type: 'internal_note' }], { exclude_source_types: ['internal_note'] }).trace.conflicts).toBeUndefined();
    // Another source's 3.9 page is not a version of this one.
    expect(run([current, { ...old, source: 'sdk-docs/v3.9/retries' }]).trace.conflicts).toBeUndefined();
    // The same text in 3.9 and 4.2 does not disagree.
    expect(run([current, { ...old, text: current.text }]).trace.conflicts).toBeUndefined();
    // Only the filtered item: nothing in the request to disagree with.
    expect(run([old]).trace.conflicts).toBeUndefined();
  });

  it('copies of one filtered text are one record; only scope filters count (the stage alone)', () => {
    const live = workItem(0, { id: 'a', source: 's', version: '4.2', text: 'new behaviour' });
    const o1 = workItem(1, { id: 'b', source: 's', version: '3.9', text: 'old behaviour' });
    const o2 = workItem(2, { id: 'c', source: 's', version: '3.9', text: 'Old behaviour.' });
    const o3 = workItem(3, { id: 'd', source: 's', version: '3.8', text: 'older behaviour' });
    const out: Omission[] = [
      { item: o1, reason: 'filtered:version' },
      { item: o2, reason: 'filtered:version' },
      { item: o3, reason: 'filtered:tenant' },
    ];
    const r = detectConflicts([live], NOW, out);
    expect(r.conflicts.map((c) => [c.resolution, c.items.map((i) => i.id), c.filtered?.id, c.reason])).toEqual([['filtered', ['a', 'b'], 'b', 'filtered:version']]);
    expect(r.kept).toEqual([live]);
    expect(r.omitted).toEqual([]);
    expect(live.conflicts).toBeUndefined();
    expect(live.risk).toBeUndefined();
  });
});
