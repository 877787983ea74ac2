/**
 * Greedy packing of one slot (seed 001, "Walk down the ranking"): items come best first; each
 * costs its tokens plus the per-item overhead (the envelope around it); an item is kept while the
 * running total stays within the budget. When one does not fit, the policy decides: `stop` ends
 * packing there (rank order stays honest), `skip` passes over it and tries the next (the budget is
 * used more fully). `maxItems` caps the number kept.
 */

export type PackOmitReason = 'over-slot-budget' | 'stop-policy' | 'max-items';

export interface PackInput {
  id: string;
  tokens: number;
}

export interface PackResult<T extends PackInput> {
  kept: T[];
  omitted: Array<{ item: T; reason: PackOmitReason }>;
  /** Tokens used by the kept items, overhead included. */
  used: number;
}

/**
 * Packs `items` (in priority order) into `budget` tokens. An undefined budget means the slot is
 * not capped (only `maxItems` applies). Reasons: the item that did not fit is `over-slot-budget`
 * under both policies; under `stop` every later item is `stop-policy`; items past `maxItems` are
 * `max-items`.
 */
export function pack<T extends PackInput>(items: readonly T[], budget: number | undefined, overhead: number, policy: 'stop' | 'skip', maxItems?: number): PackResult<T> {
  const kept: T[] = [];
  const omitted: PackResult<T>['omitted'] = [];
  const cap = budget ?? Number.POSITIVE_INFINITY;
  let used = 0;
  let stopped = false;
  for (const item of items) {
    if (stopped) {
      omitted.push({ item, reason: 'stop-policy' });
      continue;
    }
    if (maxItems !== undefined && kept.length >= maxItems) {
      omitted.push({ item, reason: 'max-items' });
      continue;
    }
    const cost = item.tokens + overhead;
    if (used + cost <= cap) {
      kept.push(item);
      used += cost;
      continue;
    }
    omitted.push({ item, reason: 'over-slot-budget' });
    if (policy === 'stop') stopped = true;
  }
  return { kept, omitted, used };
}
