/**
 * Token counts of pieces seen before, looked up by position in the text being counted: the
 * piece text[start..end) is hashed and compared in place, so a lookup allocates nothing (a
 * `Map<string, number>` would need a substring per lookup).
 *
 * Layout, for few cache misses (a warm count is a stream of lookups into a table of megabytes):
 * one Int32Array of 8-int slots [hash, count + 1 (0 = empty), length, tail offset, then the
 * piece's first 8 UTF-16 units packed two to an int]. Most pieces are at most 8 units, so a
 * lookup reads one slot; longer pieces keep their remaining units in a Uint16Array arena.
 *
 * Bounded: when the table is half full it is emptied and refilled, which keeps memory flat for
 * any input while a working set of up to `capacity / 2` distinct pieces stays warm.
 */
const SLOT = 8;
const INLINE = 8;

/** Units at..at+2 of s (before end) packed into one int; missing units are 0. */
function pack2(s: string, at: number, end: number): number {
  if (at + 1 < end) return s.charCodeAt(at) | (s.charCodeAt(at + 1) << 16);
  return at < end ? s.charCodeAt(at) : 0;
}

export class PieceCache {
  private slots: Int32Array;
  private arena = new Uint16Array(1 << 16);
  private arenaUsed = 0;
  private used = 0;
  private readonly mask: number;
  private readonly shift: number;
  private readonly limit: number;

  constructor(bits = 18) {
    this.slots = new Int32Array(SLOT << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
    this.limit = 1 << (bits - 1);
  }

  get size(): number {
    return this.used;
  }

  clear(): void {
    this.slots.fill(0);
    this.used = 0;
    this.arenaUsed = 0;
    if (this.arena.length > 1 << 20) this.arena = new Uint16Array(1 << 16);
  }

  /** Hash of s[start..end), the key both lookup and store take. */
  static hash(s: string, start: number, end: number): number {
    let h = end - start;
    for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    return h;
  }

  /** Count stored for s[start..end) with hash h, or -1. */
  get(s: string, start: number, end: number, h: number): number {
    const slots = this.slots;
    const len = end - start;
    let slot = Math.imul(h, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const e = SLOT * slot;
      const v = slots[e + 1];
      if (v === 0) return -1;
      if (slots[e] === h && slots[e + 2] === len && this.matches(s, start, end, e)) return v - 1;
      slot = (slot + 1) & this.mask;
    }
  }

  private matches(s: string, start: number, end: number, e: number): boolean {
    const slots = this.slots;
    const len = end - start;
    for (let k = 0; k < INLINE && k < len; k += 2) if (slots[e + 4 + (k >> 1)] !== pack2(s, start + k, end)) return false;
    if (len <= INLINE) return true;
    const arena = this.arena;
    const off = slots[e + 3];
    for (let k = INLINE; k < len; k++) if (arena[off + k - INLINE] !== s.charCodeAt(start + k)) return false;
    return true;
  }

  /** Stores a count for s[start..end) (known to be absent) with hash h. */
  set(s: string, start: number, end: number, h: number, value: number): void {
    if (this.used >= this.limit) this.clear();
    const slots = this.slots;
    const len = end - start;
    let slot = Math.imul(h, 0x9e3779b1) >>> this.shift;
    while (slots[SLOT * slot + 1] !== 0) slot = (slot + 1) & this.mask;
    const e = SLOT * slot;
    slots[e] = h;
    slots[e + 1] = value + 1;
    slots[e + 2] = len;
    for (let k = 0; k < INLINE; k += 2) slots[e + 4 + (k >> 1)] = pack2(s, start + k, end);
    if (len > INLINE) {
      const tail = len - INLINE;
      if (this.arenaUsed + tail > this.arena.length) {
        const bigger = new Uint16Array(Math.max(this.arena.length * 2, this.arenaUsed + tail));
        bigger.set(this.arena.subarray(0, this.arenaUsed));
        this.arena = bigger;
      }
      for (let k = 0; k < tail; k++) this.arena[this.arenaUsed + k] = s.charCodeAt(start + INLINE + k);
      slots[e + 3] = this.arenaUsed;
      this.arenaUsed += tail;
    }
    this.used++;
  }
}
