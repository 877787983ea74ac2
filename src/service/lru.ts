/**
 * A small bounded least-recently-used map, bounded by entries and by bytes. The service keeps the
 * evidence of its recent responses in one, so `/v1/validate` can take a `context_id` instead of the
 * whole trace, and its response cache in another: conveniences of one instance (nothing is shared
 * between instances or kept across restarts), never stores. A count of entries alone does not bound
 * memory when one entry can be megabytes, so every entry is weighed (by the caller's `weigh`) and
 * the least recently used ones are dropped until both limits hold; an entry heavier than the whole
 * byte budget is not kept at all.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; bytes: number }>();
  private total = 0;
  constructor(
    readonly capacity: number,
    readonly maxBytes: number = Number.POSITIVE_INFINITY,
    private readonly weigh: (value: V) => number = () => 0,
  ) {}

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  set(key: K, value: V): void {
    if (this.capacity <= 0 || this.maxBytes <= 0) return;
    this.delete(key);
    const bytes = this.weigh(value);
    if (bytes > this.maxBytes) return;
    this.map.set(key, { value, bytes });
    this.total += bytes;
    while (this.map.size > this.capacity || this.total > this.maxBytes) this.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    this.total -= e.bytes;
  }

  get size(): number {
    return this.map.size;
  }

  /** The weight of the entries kept. */
  get bytes(): number {
    return this.total;
  }
}
