/**
 * Reason codes in words (src/core/reasonText.ts): every code of the reason unions has a
 * sentence of its own (the sample table below is typed over the codes, so a new code without a
 * sample fails the typecheck, as the sentence table does), parametrised codes name their
 * argument, unknown codes come back as written, and each conflict resolution reads as one
 * sentence.
 */
import { describe, expect, it } from 'vitest';
import type { Reason, ReasonCode } from '../../src/core/reasonText';
import { conflictText, isKnownReason, reasonText } from '../../src/core/reasonText';
import type { FilterKey, TraceConflict } from '../../src/core/types';

const SAMPLES: Record<ReasonCode, Reason> = {
  filtered: 'filtered:version',
  'duplicate-of': 'duplicate-of:ev_0240',
  'near-duplicate-of': 'near-duplicate-of:ev_0240',
  'superseded-by': 'superseded-by:ev_0192',
  'summarised-by': 'summarised-by:sum_1',
  policy: 'policy:window',
  'summary-redundant': 'summary-redundant',
  'not-relevant': 'not-relevant',
  'max-per-source': 'max-per-source',
  'over-slot-budget': 'over-slot-budget',
  'stop-policy': 'stop-policy',
  'max-items': 'max-items',
  'trimmed-for-request': 'trimmed-for-request',
  required: 'required',
  high_relevance: 'high_relevance',
  exact_version: 'exact_version',
  version_match: 'version_match',
  official_source: 'official_source',
  high_authority: 'high_authority',
  covers: 'covers:approval',
  commitment: 'commitment',
  recent: 'recent',
  summary: 'summary',
  retrieved: 'retrieved',
  within_budget: 'within_budget',
};
const FILTERS: Record<FilterKey, true> = { tenant: true, 'tenant-missing': true, version: true, expired: true, source_types: true, exclude_source_types: true };

describe('reasonText', () => {
  it('gives every reason code a sentence of its own', () => {
    const texts = new Set<string>();
    for (const r of Object.values(SAMPLES)) {
      expect(isKnownReason(r), r).toBe(true);
      const text = reasonText(r);
      expect(text).not.toBe(r);
      expect(text).toMatch(/^[A-Z].*\.$/);
      texts.add(text);
      const arg = r.includes(':') ? r.slice(r.indexOf(':') + 1) : undefined;
      if (arg !== undefined && !r.startsWith('filtered:')) expect(text).toContain(arg);
    }
    expect(texts.size).toBe(Object.keys(SAMPLES).length);
  });

  it('says which filter rejected an item, one sentence per filter key', () => {
    const texts = Object.keys(FILTERS).map((k) => reasonText(`filtered:${k}`));
    expect(new Set(texts).size).toBe(texts.length);
    expect(reasonText('filtered:tenant-missing')).toContain('tenant_missing: keep');
    expect(reasonText('filtered:version')).toContain('filters.version');
  });

  it('returns unknown codes as written: another filter, no argument, an argument where none is taken, prototype names', () => {
    for (const r of ['filtered:product', 'duplicate-of:', 'required:yes', 'mystery', 'constructor', '__proto__', 'filtered:constructor', '']) {
      expect(isKnownReason(r), r).toBe(false);
      expect(reasonText(r)).toBe(r);
    }
  });
});

describe('conflictText', () => {
  const base = { slot: 'evidence', retained: [] as string[] };
  it('labelled claims name every item and its claim', () => {
    const c: TraceConflict = { ...base, kind: 'claim', topic: 'post-retry-safety', items: ['ev_0192', 'ev_0255'], values: ['retried with a key', 'always safe'], resolution: 'labelled' };
    expect(conflictText(c)).toBe('Claims on post-retry-safety disagree: ev_0192 ("retried with a key") and ev_0255 ("always safe"). Both stay candidates, each envelope naming the items it disagrees with (Conflicts with: …), each scored with a contradiction risk.');
  });

  it('filtered: the out-of-scope item, its filter, and that the kept ones carry no note', () => {
    const c: TraceConflict = { ...base, kind: 'version', items: ['ev_0192', 'ev_0077'], values: ['4.2', '3.9'], resolution: 'filtered', filtered: 'ev_0077', reason: 'filtered:version', retained: ['ev_0192'] };
    expect(conflictText(c)).toBe('Versions of one source disagree: ev_0192 (4.2) and ev_0077 (3.9). ev_0077 is out of scope (filtered:version, not the requested version), so the model never sees it and ev_0192 carries no conflict note.');
    expect(conflictText({ ...c, items: ['a', 'b', 'c'], values: ['1', '2', '3'], filtered: 'c', reason: 'filtered:expired' })).toBe('Versions of one source disagree: a (1), b (2) and c (3). c is out of scope (filtered:expired, expired before now), so the model never sees it and a and b carry no conflict note.');
  });

  it('superseded: by a declared link either way, or by validity at now', () => {
    const s: TraceConflict = { ...base, kind: 'supersession', items: ['new', 'old'], resolution: 'superseded', kept: 'new', superseded: 'old', basis: 'supersedes' };
    expect(conflictText(s)).toBe('new declares that it supersedes old: old is omitted (superseded-by:new).');
    expect(conflictText({ ...s, basis: 'superseded_by' })).toBe('old declares that new supersedes it: old is omitted (superseded-by:new).');
    const v: TraceConflict = { ...base, kind: 'version', items: ['old', 'new'], values: ['3.9', '4.2'], resolution: 'superseded', kept: 'new', superseded: 'old', basis: 'valid_to' };
    expect(conflictText(v)).toBe('Versions of one source disagree: old (3.9) and new (4.2). old is no longer valid at now (valid_to), so it is omitted, superseded by new.');
    expect(conflictText({ ...v, basis: 'valid_from' })).toContain('not valid yet at now (valid_from)');
  });
});
