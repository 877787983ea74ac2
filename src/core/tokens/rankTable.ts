/**
 * The byte-level rank table of one BPE encoding, built from js-tiktoken's rank data.
 *
 * Why not a `Map<string, number>` keyed by byte strings (what js-tiktoken does): building 200k
 * string keys takes most of js-tiktoken's 0.7 s load, and every lookup during a merge would
 * allocate a substring. Here all token bytes sit in one packed Uint8Array, an open-addressing
 * table of token indices is keyed by a polynomial hash, and the hash of any byte span of a piece
 * comes in O(1) from prefix hashes. Every hit is verified byte by byte, so a hash collision can
 * cost time but never a wrong rank.
 */

/** Rank of a byte span that is not a token. Larger than every real rank. */
export const NO_RANK = 0x7fffffff;

/** Multiplier of the polynomial hash (FNV's prime; any odd number is correct). */
export const HASH_MUL = 0x01000193;

/** The rank data format of js-tiktoken's `ranks/*` modules. */
export interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  /** Lines `<name> <first rank> <base64 token> <base64 token> ...`, ranks consecutive per line. */
  bpe_ranks: string;
  explicit_n_vocab?: number;
}

const B64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;

/** Spreads a 32-bit hash over the high bits, which index the table (polynomial hashes have weak low bits). */
function slotOf(h: number, shift: number): number {
  return Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> shift;
}

export class RankTable {
  /** Every token's bytes, packed in table order. */
  readonly bytes: Uint8Array;
  /** Token i occupies bytes[starts[i] .. starts[i + 1]). */
  readonly starts: Uint32Array;
  readonly ranks: Uint32Array;
  /** Open addressing: token index + 1, or 0 for an empty slot. */
  private readonly slots: Int32Array;
  /** The full hash of the token in each slot, to skip most byte comparisons. */
  private readonly slotHash: Int32Array;
  private readonly mask: number;
  private readonly shift: number;
  /** Rank of every two-byte span (the first round of every merge), NO_RANK when none. */
  readonly pair: Int32Array;
  /** Rank of every single byte (all 256 are tokens in the tiktoken encodings). */
  readonly single: Int32Array;
  /** Longest token in bytes: longer spans are never looked up. */
  readonly maxLen: number;
  /** HASH_MUL^k for k <= maxLen, for span hashes from prefix hashes. */
  readonly pow: Int32Array;
  readonly size: number;

  constructor(bpeRanks: string) {
    // Pass 1: count tokens and bytes so every array is allocated once.
    let tokens = 0;
    let byteCount = 0;
    const text = bpeRanks;
    const n = text.length;
    for (let lineStart = 0; lineStart < n; ) {
      let lineEnd = text.indexOf('\n', lineStart);
      if (lineEnd < 0) lineEnd = n;
      let i = text.indexOf(' ', lineStart); // after the line's name
      i = i < 0 || i > lineEnd ? lineEnd : text.indexOf(' ', i + 1); // after the first rank
      if (i < 0 || i > lineEnd) i = lineEnd;
      while (i < lineEnd) {
        const s = i + 1;
        let e = text.indexOf(' ', s);
        if (e < 0 || e > lineEnd) e = lineEnd;
        if (e > s) {
          let pad = 0;
          if (text.charCodeAt(e - 1) === 61 /* = */) pad = text.charCodeAt(e - 2) === 61 ? 2 : 1;
          byteCount += ((e - s) >> 2) * 3 - pad;
          tokens++;
        }
        i = e;
      }
      lineStart = lineEnd + 1;
    }

    this.size = tokens;
    this.bytes = new Uint8Array(byteCount);
    this.starts = new Uint32Array(tokens + 1);
    this.ranks = new Uint32Array(tokens);
    let bits = 1;
    while (1 << bits < tokens * 2) bits++;
    this.slots = new Int32Array(1 << bits);
    this.slotHash = new Int32Array(1 << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
    this.pair = new Int32Array(65536).fill(NO_RANK);
    this.single = new Int32Array(256).fill(NO_RANK);

    // Pass 2: decode base64 straight into the packed bytes and index each token.
    const bytes = this.bytes;
    let t = 0;
    let w = 0;
    let maxLen = 0;
    for (let lineStart = 0; lineStart < n; ) {
      let lineEnd = text.indexOf('\n', lineStart);
      if (lineEnd < 0) lineEnd = n;
      const nameEnd = text.indexOf(' ', lineStart);
      if (nameEnd < 0 || nameEnd >= lineEnd) {
        lineStart = lineEnd + 1;
        continue;
      }
      let rankEnd = text.indexOf(' ', nameEnd + 1);
      if (rankEnd < 0 || rankEnd > lineEnd) rankEnd = lineEnd;
      let rank = Number.parseInt(text.slice(nameEnd + 1, rankEnd), 10);
      let i = rankEnd;
      while (i < lineEnd) {
        const s = i + 1;
        let e = text.indexOf(' ', s);
        if (e < 0 || e > lineEnd) e = lineEnd;
        if (e > s) {
          const start = w;
          let acc = 0;
          let accBits = 0;
          for (let k = s; k < e; k++) {
            const v = B64[text.charCodeAt(k)];
            if (v < 0) break; // '=' padding
            acc = ((acc << 6) | v) & 0xffffff;
            accBits += 6;
            if (accBits >= 8) {
              accBits -= 8;
              bytes[w++] = (acc >>> accBits) & 0xff;
            }
          }
          this.starts[t] = start;
          this.ranks[t] = rank;
          this.insert(t, start, w);
          const len = w - start;
          if (len > maxLen) maxLen = len;
          if (len === 1) this.single[bytes[start]] = rank;
          else if (len === 2) this.pair[(bytes[start] << 8) | bytes[start + 1]] = rank;
          t++;
          rank++;
        }
        i = e;
      }
      lineStart = lineEnd + 1;
    }
    this.starts[tokens] = w;
    this.maxLen = maxLen;
    this.pow = new Int32Array(maxLen + 1);
    this.pow[0] = 1;
    for (let k = 1; k <= maxLen; k++) this.pow[k] = Math.imul(this.pow[k - 1], HASH_MUL);
  }

  private insert(token: number, start: number, end: number): void {
    let h = 0;
    for (let k = start; k < end; k++) h = (Math.imul(h, HASH_MUL) + this.bytes[k]) | 0;
    let slot = slotOf(h, this.shift);
    while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
    this.slots[slot] = token + 1;
    this.slotHash[slot] = h;
  }

  /**
   * Rank of buf[a..c) whose polynomial hash is h, or NO_RANK when that span is not a token.
   * Callers keep c - a <= maxLen.
   */
  lookup(buf: Uint8Array, a: number, c: number, h: number): number {
    const len = c - a;
    const slots = this.slots;
    const slotHash = this.slotHash;
    const starts = this.starts;
    const bytes = this.bytes;
    let slot = slotOf(h, this.shift);
    for (;;) {
      const entry = slots[slot];
      if (entry === 0) return NO_RANK;
      if (slotHash[slot] === h) {
        const tok = entry - 1;
        const s = starts[tok];
        if (starts[tok + 1] - s === len) {
          let k = 0;
          while (k < len && bytes[s + k] === buf[a + k]) k++;
          if (k === len) return this.ranks[tok];
        }
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Rank of buf[a..c), hashing the span on the spot (for one-off lookups such as a whole piece). */
  lookupSpan(buf: Uint8Array, a: number, c: number): number {
    if (c - a > this.maxLen) return NO_RANK;
    if (c - a === 1) return this.single[buf[a]];
    if (c - a === 2) return this.pair[(buf[a] << 8) | buf[a + 1]];
    let h = 0;
    for (let k = a; k < c; k++) h = (Math.imul(h, HASH_MUL) + buf[k]) | 0;
    return this.lookup(buf, a, c, h);
  }

  /** Approximate heap footprint of the table, for the bench and the docs. */
  byteSize(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.ranks.byteLength + this.slots.byteLength * 2 + this.pair.byteLength;
  }
}
