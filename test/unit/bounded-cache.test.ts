/**
 * The project's one bounded cache (src/core/cache.ts): least recently used first out, by entries
 * and by weight. Checked against a plain list kept in use order, over long random sequences of
 * reads, writes and deletions (eviction walks the map with one live iterator; the order must stay
 * exact across the map's own compactions).
 */
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/core/cache';

/** The reference: keys in use order, oldest first. */
class ListCache {
  readonly list: Array<{ key: string; value: number; weight: number }> = [];
  constructor(
    readonly maxEntries: number,
    readonly maxWeight: number,
  ) {}
  get(key: string): number | undefined {
    const i = this.list.findIndex((e) => e.key === key);
    if (i < 0) return undefined;
    const [e] = this.list.splice(i, 1);
    this.list.push(e);
    return e.value;
  }
  set(key: string, value: number, weight: number): void {
    this.delete(key);
    this.list.push({ key, value, weight });
    const total = () => this.list.reduce((s, e) => s + e.weight, 0);
    while (this.list.length > 1 && (this.list.length > this.maxEntries || total() > this.maxWeight)) this.list.shift();
  }
  delete(key: string): void {
    const i = this.list.findIndex((e) => e.key === key);
    if (i >= 0) this.list.splice(i, 1);
  }
}

describe('BoundedCache', () => {
  for (const [entries, weight] of [
    [16, Infinity],
    [64, 300],
    [1, Infinity],
  ] as const) {
    it(`evicts the least recently used entry first (${entries} entries, weight ${weight})`, () => {
      let seed = entries * 7919 + 1;
      const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
      const cache = new BoundedCache<string, number>(entries, weight);
      const ref = new ListCache(entries, weight);
      for (let step = 0; step < 20_000; step++) {
        const key = `k${rnd(entries * 3)}`;
        const op = rnd(10);
        if (op < 5) expect(cache.get(key)).toBe(ref.get(key));
        else if (op < 9) {
          const w = rnd(20);
          cache.set(key, step, w);
          ref.set(key, step, w);
        } else {
          cache.delete(key);
          ref.delete(key);
        }
        if (step % 97 === 0) {
          expect(cache.size).toBe(ref.list.length);
          for (const e of ref.list) expect(cache.peek(e.key)).toBe(e.value);
        }
        if (step === 10_000) {
          cache.clear();
          ref.list.length = 0;
        }
      }
      expect(cache.weight).toBe(ref.list.reduce((s, e) => s + e.weight, 0));
    });
  }
});
