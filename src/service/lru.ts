/**
 * A small bounded least-recently-used map. The service keeps the evidence of its recent responses
 * in one, so `/v1/validate` can take a `context_id` instead of the whole trace: a convenience of
 * one instance (nothing is shared between instances or kept across restarts), never a store.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  get size(): number {
    return this.map.size;
  }
}
