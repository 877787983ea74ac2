/**
 * Appending one list to another without spread arguments: `out.push(...items)` passes every item
 * as an argument, and past about 125,000 of them the engine's argument limit throws "Maximum call
 * stack size exceeded". Every stage that collects the items of a slot appends with this instead.
 */
export function append<T>(out: T[], items: readonly T[]): T[] {
  for (let i = 0; i < items.length; i++) out.push(items[i]);
  return out;
}
