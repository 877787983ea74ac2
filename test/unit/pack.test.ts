import { describe, expect, it } from 'vitest';
import { pack } from '../../src/core/assembly/pack';

const est = (text: string) => Math.floor((text.length + 3) / 4);

// Seed 001: D1 31, D3 31, D12 30, D9 16 tokens by the 4-characters rule, 8 tokens of overhead each.
const hits = [
  { id: 'D1', tokens: est('x'.repeat(124)) },
  { id: 'D3', tokens: est('x'.repeat(121)) },
  { id: 'D12', tokens: est('x'.repeat(120)) },
  { id: 'D9', tokens: est('x'.repeat(63)) },
];

describe('pack (seed 001)', () => {
  it('has the seed token counts', () => {
    expect(hits.map((h) => h.tokens)).toEqual([31, 31, 30, 16]);
  });

  it('stop keeps D1, D3 (78 of 105)', () => {
    const r = pack(hits, 105, 8, 'stop');
    expect(r.kept.map((h) => h.id)).toEqual(['D1', 'D3']);
    expect(r.used).toBe(78);
    expect(r.omitted.map((o) => [o.item.id, o.reason])).toEqual([
      ['D12', 'over-slot-budget'],
      ['D9', 'stop-policy'],
    ]);
  });

  it('skip keeps D1, D3, D9 (102 of 105)', () => {
    const r = pack(hits, 105, 8, 'skip');
    expect(r.kept.map((h) => h.id)).toEqual(['D1', 'D3', 'D9']);
    expect(r.used).toBe(102);
    expect(r.omitted.map((o) => [o.item.id, o.reason])).toEqual([['D12', 'over-slot-budget']]);
  });

  it('without overhead the budget is a lie: all four fit', () => {
    expect(pack(hits, 105, 0, 'stop').kept).toHaveLength(3);
    expect(pack(hits, 105, 0, 'stop').used).toBe(92);
  });

  it('budget 80 (the practice question) keeps D1 and D9 with skip', () => {
    expect(pack(hits, 80, 8, 'skip').kept.map((h) => h.id)).toEqual(['D1', 'D3']);
    expect(pack(hits, 70, 8, 'skip').kept.map((h) => h.id)).toEqual(['D1', 'D9']);
  });

  it('caps the count with max-items and takes no budget as unbounded', () => {
    const r = pack(hits, undefined, 8, 'stop', 2);
    expect(r.kept.map((h) => h.id)).toEqual(['D1', 'D3']);
    expect(r.omitted.map((o) => o.reason)).toEqual(['max-items', 'max-items']);
  });

  it('an item exactly filling the budget fits', () => {
    expect(pack([{ id: 'a', tokens: 92 }], 100, 8, 'stop').kept).toHaveLength(1);
    expect(pack([{ id: 'a', tokens: 93 }], 100, 8, 'stop').kept).toHaveLength(0);
  });
});
