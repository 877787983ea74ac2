import { describe, expect, it } from 'vitest';
import { applyFilters, versionMatches } from '../../src/core/assembly/filters';
import { dedup, normalizeForDedup } from '../../src/core/assembly/dedup';
import { rankItems } from '../../src/core/assembly/score';
import { fingerprint, sketchOverlap, SKETCH_SIZE } from '../../src/core/assembly/fingerprint';
import { canonicalJson } from '../../src/core/canonical';
import { workItem } from './support/assemblyBuilders';

describe('hard filters', () => {
  const items = [
    workItem(0, { tenant: 'acme', version: '4.2' }),
    workItem(1, { tenant: 'globex' }),
    workItem(2, { version: '3.9' }),
    workItem(3, { expires_at: '2026-01-01T00:00:00Z' }),
    workItem(4, { source_type: 'internal_note' }),
    workItem(5, { source_type: 'forum' }),
    workItem(6, {}),
    workItem(7, { version: '4.2.1', expires_at: '2027-01-01T00:00:00Z', source_type: 'official_documentation' }),
  ];

  it('rejects by tenant, version, expiry and source type, naming the filter', () => {
    const r = applyFilters(items, { tenant: 'acme', tenant_missing: 'keep', version: '4.2', expired: true, now: '2026-08-05T00:00:00Z', source_types: ['official_documentation', 'forum'], exclude_source_types: ['forum'] }, undefined);
    expect(r.kept.map((i) => i.id)).toEqual(['ev_0', 'ev_6', 'ev_7']);
    expect(r.omitted.map((o) => [o.item.id, o.reason])).toEqual([
      ['ev_1', 'filtered:tenant'],
      ['ev_2', 'filtered:version'],
      ['ev_3', 'filtered:expired'],
      ['ev_4', 'filtered:source_types'],
      ['ev_5', 'filtered:exclude_source_types'],
    ]);
  });

  it('does not check expiry without a reference time (no clock is read) or when disabled', () => {
    expect(applyFilters(items, { expired: true }, undefined).omitted).toEqual([]);
    expect(applyFilters(items, { expired: true }, '2026-08-05T00:00:00Z').omitted.map((o) => o.reason)).toEqual(['filtered:expired']);
    expect(applyFilters(items, { expired: false, now: '2026-08-05T00:00:00Z' }, undefined).omitted).toEqual([]);
    expect(applyFilters(items, undefined, undefined).kept).toHaveLength(items.length);
  });

  it('matches versions by dot-separated prefix', () => {
    expect(versionMatches('4.2', '4.2')).toBe(true);
    expect(versionMatches('4.2.7', '4.2')).toBe(true);
    expect(versionMatches('v4.2', '4.2')).toBe(true);
    expect(versionMatches('4.20', '4.2')).toBe(false);
    expect(versionMatches('3.9', '4.2')).toBe(false);
    expect(versionMatches('4', '4.2')).toBe(false);
  });
});

describe('dedup', () => {
  it('drops exact copies and keeps every source on the survivor', () => {
    const r = dedup([workItem(0, { text: 'Retries on 429.', source: 'kb/1' }), workItem(1, { text: 'Retries on 429.', source: 'kb/2', authority: 0.9 }), workItem(2, { text: 'Other.' })]);
    expect(r.kept.map((i) => i.id)).toEqual(['ev_0', 'ev_2']);
    expect(r.omitted.map((o) => [o.item.id, o.reason])).toEqual([['ev_1', 'duplicate-of:ev_0']]);
    expect(r.kept[0].merged).toEqual(['kb/2']);
    expect(r.kept[0].mergedIds).toEqual(['ev_1']);
    expect(r.kept[0].authority).toBe(0.9);
  });

  it('merges near-duplicates (case, punctuation, whitespace) but never across versions', () => {
    const r = dedup([
      workItem(0, { text: 'POST requests are retried!', version: '4.2', source: 'a' }),
      workItem(1, { text: 'post requests   are retried', version: '4.2', source: 'b' }),
      workItem(2, { text: 'POST requests are retried.', version: '3.9', source: 'c' }),
      workItem(3, { text: 'POST requests are retried.', source: 'd' }),
    ]);
    expect(r.kept.map((i) => i.id)).toEqual(['ev_0', 'ev_2', 'ev_3']);
    expect(r.omitted.map((o) => o.reason)).toEqual(['duplicate-of:ev_0']);
    expect(r.kept[0].merged).toEqual(['b']);
  });

  it('normalizes text', () => {
    expect(normalizeForDedup('  Hello,   WORLD!\n\tAgain… ')).toBe('hello world again');
  });

  it('is linear: 20,000 items with many duplicates finish in one pass', () => {
    const items = Array.from({ length: 20_000 }, (_, i) => workItem(i, { text: `passage ${i % 500}` }));
    const r = dedup(items);
    expect(r.kept).toHaveLength(500);
    expect(r.omitted).toHaveLength(19_500);
  });
});

describe('score and rank', () => {
  it('applies the seed weights: 0.45 relevance + 0.20 authority + 0.15 version + 0.10 recency + 0.10 novelty', () => {
    const ranked = rankItems(
      [
        workItem(0, { text: 'alpha beta', relevance: 0.5, authority: 0.5 }),
        workItem(1, { text: 'gamma delta', relevance: 0.91, authority: 0.95, version: '4.2', published_at: '2026-08-05T00:00:00Z' }),
      ],
      { version: '4.2', now: '2026-08-05T00:00:00Z' },
    );
    expect(ranked.map((i) => i.id)).toEqual(['ev_1', 'ev_0']);
    // 0.45*0.91 + 0.2*0.95 + 0.15*1 + 0.1*1 (published now) + 0.1*1 (novel)
    expect(ranked[0].score).toBe(0.9495);
    // 0.45*0.5 + 0.2*0.5 + 0.15*0.5 (no version stated) + 0 + 0.1*1 (no overlap with ev_1)
    expect(ranked[1].score).toBe(0.5);
  });

  it('halves recency per year and takes the newest item as reference without `now`', () => {
    const r = rankItems([workItem(0, { published_at: '2025-08-05T00:00:00Z' }), workItem(1, { published_at: '2026-08-05T00:00:00Z' })], { weights: { relevance: 0, authority: 0, version_match: 0, novelty: 0, recency: 1 } });
    expect(r.map((i) => [i.id, i.score])).toEqual([
      ['ev_1', 1],
      ['ev_0', 0.5],
    ]);
  });

  it('lowers the novelty of a near-copy of a higher-ranked item', () => {
    const r = rankItems([
      workItem(0, { text: 'sdk retries rate limited requests', relevance: 0.8 }),
      workItem(1, { text: 'sdk retries rate limited requests too', relevance: 0.8 }),
      workItem(2, { text: 'migration guide explains idempotency keys', relevance: 0.79 }),
    ]);
    expect(r.map((i) => i.id)).toEqual(['ev_0', 'ev_2', 'ev_1']);
    expect(r[2].score).toBeCloseTo(0.45 * 0.8 + 0.1 * (1 - 5 / 6), 4);
  });

  it('uses the config weights and a contradiction penalty', () => {
    const r = rankItems([workItem(0, { relevance: 1, meta: { contradiction_risk: 1 } }), workItem(1, { relevance: 0.9 })], { weights: { contradiction_penalty: 0.2 } });
    expect(r.map((i) => i.id)).toEqual(['ev_1', 'ev_0']);
  });

  it('keeps fixture order without metadata, and breaks score ties by index', () => {
    const plain = rankItems([workItem(2), workItem(0), workItem(1)]);
    expect(plain.map((i) => i.id)).toEqual(['ev_0', 'ev_1', 'ev_2']);
    expect(plain.every((i) => i.score === undefined)).toBe(true);
    const tied = rankItems([workItem(1, { relevance: 0.5, text: 'x y' }), workItem(0, { relevance: 0.5, text: 'p q' })], { weights: { novelty: 0 } });
    expect(tied.map((i) => i.id)).toEqual(['ev_0', 'ev_1']);
  });

  it('a sketch is the SKETCH_SIZE smallest distinct word hashes, ascending, whatever the word order', () => {
    let seed = 3;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let n = 0; n < 300; n++) {
      const words = Array.from({ length: Math.floor(rand() * 90) }, () => `w${Math.floor(rand() * 120)}`);
      // Each one-word text's sketch is that word's hash: the reference set.
      const hashes = [...new Set(words.map((w) => fingerprint(w).sketch[0]))].sort((a, b) => a - b).slice(0, SKETCH_SIZE);
      expect(fingerprint(words.join(' ')).sketch).toEqual(hashes);
      expect(fingerprint([...words].reverse().join('  ')).sketch).toEqual(hashes);
    }
  });

  it('fingerprints: one key per normalized text, word overlap from sketches', () => {
    const key = (s: string) => fingerprint(s).key;
    expect(key('Hello,   WORLD!')).toBe(key('hello world'));
    expect(key('  hello world\n')).toBe(key('hello world'));
    expect(key("don't")).toBe(key('dont'));
    expect(key('hello world')).not.toBe(key('hello worlds'));
    expect(key('Ünïcode — Text!')).toBe(key('ünïcode text'));
    expect(key('ünïcode text')).not.toBe(key('unicode text'));
    expect(fingerprint('Hello, hello WORLD 42').sketch).toHaveLength(3);
    expect(sketchOverlap(fingerprint('a b').sketch, fingerprint('b c').sketch)).toBeCloseTo(1 / 3);
    expect(sketchOverlap(fingerprint('').sketch, fingerprint('').sketch)).toBe(1);
    expect(sketchOverlap(fingerprint('a').sketch, fingerprint('').sketch)).toBe(0);
    // Beyond the sketch size the overlap is estimated from the smallest hashes of the union.
    const words = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i}`).join(' ');
    const est = sketchOverlap(fingerprint(words(0, 200)).sketch, fingerprint(words(100, 300)).sketch);
    expect(SKETCH_SIZE).toBe(32);
    expect(est).toBeGreaterThan(0.1);
    expect(est).toBeLessThan(0.65);
  });

  it('fingerprint keys agree with normalizeForDedup on random text', () => {
    const alphabet = ['a', 'B', ' ', '  ', '\t', '\n', '.', ',', '!', '-', "'", 'é', 'Ω', '—', '€', '1', 'x', 'Y'];
    let seed = 3;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const samples: string[] = [];
    for (let i = 0; i < 2000; i++) {
      let s = '';
      for (let j = Math.floor(rand() * 12); j > 0; j--) s += alphabet[Math.floor(rand() * alphabet.length)];
      samples.push(s);
    }
    for (const a of samples.slice(0, 200)) {
      for (const b of samples.slice(0, 200)) {
        expect(fingerprint(a).key === fingerprint(b).key).toBe(normalizeForDedup(a) === normalizeForDedup(b));
      }
    }
  });
});

describe('canonical JSON', () => {
  it('sorts keys and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: undefined, c: 'x' }], e: undefined })).toBe('{"a":[1,{"c":"x"}],"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
});
