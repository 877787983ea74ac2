/**
 * The one bounded cache of the project: least recently used first out, bounded by entries and by a
 * weight (characters, bytes — whatever the caller measures its values in). Every cache that keeps
 * user data between calls uses it, so none of them grows without bound on a hostile workspace or
 * request stream.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, { value: V; weight: number }>();
  private total = 0;
  /**
   * An iterator kept over the map's keys, at the oldest entry. A Map iterator is live (it sees
   * entries added after it and skips deleted ones), so eviction walks the map once; a fresh
   * `keys().next()` per eviction would step over every entry deleted before it since the map
   * last compacted, which made a full cache's every insertion slow.
   */
  private oldest: Iterator<K> | undefined;

  /**
   * @param maxEntries Entries kept at most.
   * @param maxWeight Sum of the entries' weights kept at most. The newest entry stays whatever its
   *   weight, so a single oversized value is still served once.
   */
  constructor(
    readonly maxEntries: number,
    readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  /** The value, made most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  /** The value without changing its place in the eviction order. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V, weight = 0): void {
    if (this.maxEntries <= 0) return;
    this.delete(key);
    this.map.set(key, { value, weight });
    this.total += weight;
    while (this.map.size > 1 && (this.map.size > this.maxEntries || this.total > this.maxWeight)) this.evictOldest();
  }

  private evictOldest(): void {
    let next = this.oldest?.next();
    if (next === undefined || next.done) {
      this.oldest = this.map.keys();
      next = this.oldest.next();
    }
    if (!next.done) this.delete(next.value);
  }

  delete(key: K): void {
    const hit = this.map.get(key);
    if (hit === undefined) return;
    this.total -= hit.weight;
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
    this.oldest = undefined;
  }

  get size(): number {
    return this.map.size;
  }

  /** The sum of the kept entries' weights. */
  get weight(): number {
    return this.total;
  }
}

/**
 * What `compute` gives for `key`, computed once while the entry is cached: its value, or the error
 * it threw, thrown again (a parse that fails fails the same way for every reader of that text).
 */
export function cachedOrThrow<K, V>(cache: BoundedCache<K, { value: V } | { error: unknown }>, key: K, compute: () => V, weight = 0): V {
  let hit = cache.get(key);
  if (!hit) {
    try {
      hit = { value: compute() };
    } catch (error) {
      hit = { error };
    }
    cache.set(key, hit, weight);
  }
  if ('error' in hit) throw hit.error;
  return hit.value;
}
