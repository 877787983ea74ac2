/**
 * Token counts of pieces seen before, looked up by position in the text being counted: the
 * piece text[start..end) is hashed and compared in place, so a hit allocates nothing (a
 * `Map<string, number>` would need a substring per lookup). The piece string is created only
 * when a new piece is stored.
 *
 * Bounded: when the table is half full it is emptied and refilled, which keeps memory flat for
 * any input while a working set of up to `capacity / 2` distinct pieces stays warm.
 */
export class PieceCache {
  private keys: Array<string | undefined>;
  private hashes: Int32Array;
  private values: Int32Array;
  private used = 0;
  private readonly mask: number;
  private readonly shift: number;
  private readonly limit: number;

  constructor(bits = 18) {
    const size = 1 << bits;
    this.keys = new Array<string | undefined>(size).fill(undefined);
    this.hashes = new Int32Array(size);
    this.values = new Int32Array(size);
    this.mask = size - 1;
    this.shift = 32 - bits;
    this.limit = size >> 1;
  }

  get size(): number {
    return this.used;
  }

  clear(): void {
    this.keys.fill(undefined);
    this.used = 0;
  }

  /** Hash of s[start..end), the key both lookup and store take. */
  static hash(s: string, start: number, end: number): number {
    let h = end - start;
    for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    return h;
  }

  /** Count stored for s[start..end) with hash h, or -1. */
  get(s: string, start: number, end: number, h: number): number {
    const len = end - start;
    let slot = Math.imul(h, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const key = this.keys[slot];
      if (key === undefined) return -1;
      if (this.hashes[slot] === h && key.length === len) {
        let k = 0;
        while (k < len && key.charCodeAt(k) === s.charCodeAt(start + k)) k++;
        if (k === len) return this.values[slot];
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Stores a count for s[start..end) (known to be absent) with hash h. */
  set(s: string, start: number, end: number, h: number, value: number): void {
    if (this.used >= this.limit) this.clear();
    let slot = Math.imul(h, 0x9e3779b1) >>> this.shift;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
    this.keys[slot] = s.slice(start, end);
    this.hashes[slot] = h;
    this.values[slot] = value;
    this.used++;
  }
}
