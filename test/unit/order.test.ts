import { describe, expect, it } from 'vitest';
import { atTheEdges, chronological, mostRecentFirst, orderItems, placementOf } from '../../src/core/assembly/order';
import type { WorkItem } from '../../src/core/assembly/item';

function item(id: string, index: number, at?: string): WorkItem {
  return { slot: 's', index, id, hasId: true, text: id, tokens: 1, sha256: '', meta: {}, merged: [], mergedIds: [], span: { start: 0, end: 0 }, textSpan: { start: 0, end: 0 }, ...(at ? { at } : {}) };
}

describe('ordering (seed 001)', () => {
  it('best at the edges: D8 D3 D1 D6 D4 -> D8 D1 D4 D6 D3', () => {
    expect(atTheEdges(['D8', 'D3', 'D1', 'D6', 'D4'])).toEqual(['D8', 'D1', 'D4', 'D6', 'D3']);
  });
  it('at_the_edges(a..f) -> a c e f d b', () => {
    expect(atTheEdges(['a', 'b', 'c', 'd', 'e', 'f'])).toEqual(['a', 'c', 'e', 'f', 'd', 'b']);
  });
  it('the skimming reader sees D8 and D4 best-first, D8 and D3 at the edges', () => {
    const ranked = ['D8', 'D3', 'D1', 'D6', 'D4'];
    const edges = atTheEdges(ranked);
    expect([ranked[0], ranked[ranked.length - 1]]).toEqual(['D8', 'D4']);
    expect([edges[0], edges[edges.length - 1]]).toEqual(['D8', 'D3']);
  });
  it('handles empty and single lists', () => {
    expect(atTheEdges([])).toEqual([]);
    expect(atTheEdges(['a'])).toEqual(['a']);
  });

  it('chronological sorts by time, then fixture index; an undated item follows the one before it', () => {
    const items = [item('c', 0, '2026-08-01T10:02:00Z'), item('a', 1, '2026-08-01T10:00:00Z'), item('b', 2, '2026-08-01T10:00:00Z'), item('d', 3)];
    expect(chronological(items).map((i) => i.id)).toEqual(['a', 'b', 'd', 'c']);
    expect(mostRecentFirst(items).map((i) => i.id)).toEqual(['c', 'd', 'b', 'a']);
    const undated = [item('x', 0), item('y', 1), item('z', 2)];
    expect(chronological(undated).map((i) => i.id)).toEqual(['x', 'y', 'z']);
  });

  it('reads a zoneless time as UTC, so the order is the same on every machine', () => {
    const items = [item('x', 0, '2026-08-01T10:00:00'), item('y', 1, '2026-08-01T09:30:00Z')];
    expect(chronological(items).map((i) => i.id)).toEqual(['y', 'x']);
  });

  it('orderItems applies the policy; history is always chronological', () => {
    const ranked = ['D8', 'D3', 'D1', 'D6', 'D4'].map((id, i) => item(id, 4 - i, `2026-01-0${i + 1}T00:00:00Z`));
    expect(orderItems(ranked, 'rank', false).map((i) => i.id)).toEqual(['D8', 'D3', 'D1', 'D6', 'D4']);
    expect(orderItems(ranked, 'edges', false).map((i) => i.id)).toEqual(['D8', 'D1', 'D4', 'D6', 'D3']);
    expect(orderItems(ranked, 'chronological', false).map((i) => i.id)).toEqual(['D8', 'D3', 'D1', 'D6', 'D4']);
    expect(orderItems([...ranked].reverse(), 'edges', true).map((i) => i.id)).toEqual(['D8', 'D3', 'D1', 'D6', 'D4']);
  });

  it('places items in thirds', () => {
    expect([0, 1, 2, 3, 4].map((p) => placementOf(p, 5))).toEqual(['start', 'start', 'middle', 'middle', 'end']);
    expect([0, 1, 2].map((p) => placementOf(p, 3))).toEqual(['start', 'middle', 'end']);
    expect(placementOf(0, 1)).toBe('start');
    expect([0, 1].map((p) => placementOf(p, 2))).toEqual(['start', 'end']);
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].map((p) => placementOf(p, 9))).toEqual(['start', 'start', 'start', 'middle', 'middle', 'middle', 'end', 'end', 'end']);
  });
});
