/**
 * Ordering of a slot's kept items (seed 001, "Step 5"; seed 000, section 3.4):
 * - `rank`: best first, as packed;
 * - `edges`: best at both ends, weakest in the middle (rank 1 first, rank 2 last, rank 3 second,
 *   rank 4 second to last, ...), against lost-in-the-middle behaviour;
 * - `chronological`: by time (`at`, else `published_at`), then fixture index.
 * History slots always render chronologically: a conversation read out of order is a different
 * conversation. A history summary sits where the turns it summarises were (its `sortAt`, set by
 * stages/history.ts), not at the time it was written.
 */
import type { OrderPolicy } from '../types';
import type { WorkItem } from './item';
import { timeOf } from './item';

/** at_the_edges of seed 001: D8 D3 D1 D6 D4 -> D8 D1 D4 D6 D3; a..f -> a c e f d b. */
export function atTheEdges<T>(ranked: readonly T[]): T[] {
  const front: T[] = [];
  const back: T[] = [];
  ranked.forEach((x, i) => (i % 2 === 0 ? front : back).push(x));
  return [...front, ...back.reverse()];
}

/**
 * Sort key for time order: an item without a parsable time inherits the time of the item before it
 * in the fixture, so mixed lists keep their written order around the undated items.
 */
export function chronological(items: readonly WorkItem[]): WorkItem[] {
  const byIndex = [...items].sort((a, b) => a.index - b.index);
  const key = new Map<WorkItem, number>();
  let last = Number.NEGATIVE_INFINITY;
  for (const item of byIndex) {
    const t = item.sortAt ?? timeOf(item.at ?? item.published_at);
    if (t !== undefined) last = t;
    key.set(item, last);
  }
  return byIndex.sort((a, b) => key.get(a)! - key.get(b)! || a.index - b.index);
}

/** Most recent first: the packing order of a sliding-window history. */
export function mostRecentFirst(items: readonly WorkItem[]): WorkItem[] {
  return chronological(items).reverse();
}

/** Orders kept items (given best first) by the slot's policy. */
export function orderItems(rankedKept: readonly WorkItem[], policy: OrderPolicy, isHistory: boolean): WorkItem[] {
  if (isHistory || policy === 'chronological') return chronological(rankedKept);
  if (policy === 'edges') return atTheEdges(rankedKept);
  return [...rankedKept];
}

/** start | middle | end third of a slot with n items; the last of two or more is always at the end. */
export function placementOf(position: number, n: number): 'start' | 'middle' | 'end' {
  if (n <= 1 || position <= 0) return 'start';
  if (position >= n - 1) return 'end';
  const third = Math.floor((3 * position) / n);
  return third <= 0 ? 'start' : third === 1 ? 'middle' : 'end';
}
