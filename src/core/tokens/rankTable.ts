/**
 * The byte-level rank table of one BPE encoding, and the two forms its data arrives in:
 * js-tiktoken's rank modules (base64 text, used from a source checkout) and the compact rank
 * asset that the build writes next to the bundles (dist/tokenizers/<name>.ranks).
 *
 * Why not a `Map<string, number>` keyed by byte strings (what js-tiktoken does): building 200k
 * string keys takes most of js-tiktoken's 0.7 s load, and every lookup during a merge would
 * allocate a substring. Here all token bytes sit in one packed Uint8Array, an open-addressing
 * table is keyed by a polynomial hash, and the hash of any byte span of a piece comes in O(1)
 * from prefix hashes. Every hit is verified byte by byte, so a hash collision can cost time but
 * never a wrong rank.
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

/**
 * An encoding's tokens in rank order: token i has `lengths[i]` bytes, packed one after another in
 * `bytes`. `segments` lists [first rank, token count] runs (ranks have gaps where special tokens
 * sit, e.g. p50k_base's 50256).
 */
export interface TokenList {
  bytes: Uint8Array;
  lengths: Uint8Array;
  segments: Array<[number, number]>;
}

const B64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;

/** Decodes js-tiktoken's `bpe_ranks` text. */
export function parseJsTiktokenRanks(text: string): TokenList {
  // Base64 makes at most 3 bytes of 4 characters, and every token takes at least 5 characters
  // with its separator, so these bounds hold; the arrays are trimmed at the end.
  const bytes = new Uint8Array(Math.ceil((text.length * 3) / 4));
  const lengths = new Uint8Array(Math.ceil(text.length / 5) + 1);
  const segments: Array<[number, number]> = [];
  const n = text.length;
  let w = 0;
  let t = 0;
  for (let lineStart = 0; lineStart < n; ) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = n;
    const nameEnd = text.indexOf(' ', lineStart);
    if (nameEnd >= 0 && nameEnd < lineEnd) {
      let rankEnd = text.indexOf(' ', nameEnd + 1);
      if (rankEnd < 0 || rankEnd > lineEnd) rankEnd = lineEnd;
      const first = Number.parseInt(text.slice(nameEnd + 1, rankEnd), 10);
      const before = t;
      for (let i = rankEnd; i < lineEnd; ) {
        const s = i + 1;
        let e = text.indexOf(' ', s);
        if (e < 0 || e > lineEnd) e = lineEnd;
        if (e > s) {
          const start = w;
          let acc = 0;
          let accBits = 0;
          for (let k = s; k < e; k++) {
            const v = B64[text.charCodeAt(k)];
            if (!(v >= 0)) break; // '=' padding (or anything else that is not base64)
            acc = ((acc << 6) | v) & 0xffffff;
            accBits += 6;
            if (accBits >= 8) {
              accBits -= 8;
              bytes[w++] = (acc >>> accBits) & 0xff;
            }
          }
          lengths[t++] = w - start;
        }
        i = e;
      }
      if (t > before) segments.push([first, t - before]);
    }
    lineStart = lineEnd + 1;
  }
  return { bytes: bytes.slice(0, w), lengths: lengths.slice(0, t), segments };
}

const ASSET_MAGIC = 0x4b524c43; // "CLRK" little-endian
const ASSET_VERSION = 1;

/**
 * The compact rank asset: little-endian u32 magic, version, token count, byte count, segment
 * count; u32 pairs [first rank, count] per segment; one length byte per token; the token bytes.
 * Loading it is a read and a table build, with no text to scan or base64 to decode.
 */
export function encodeRankAsset(list: TokenList): Uint8Array {
  const head = 20 + 8 * list.segments.length;
  const out = new Uint8Array(head + list.lengths.length + list.bytes.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, ASSET_MAGIC, true);
  view.setUint32(4, ASSET_VERSION, true);
  view.setUint32(8, list.lengths.length, true);
  view.setUint32(12, list.bytes.length, true);
  view.setUint32(16, list.segments.length, true);
  list.segments.forEach(([first, count], i) => {
    view.setUint32(20 + 8 * i, first, true);
    view.setUint32(24 + 8 * i, count, true);
  });
  out.set(list.lengths, head);
  out.set(list.bytes, head + list.lengths.length);
  return out;
}

/** Reads a rank asset; undefined when it is not one (wrong magic, version or size). */
export function decodeRankAsset(data: Uint8Array): TokenList | undefined {
  if (data.length < 20) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint32(0, true) !== ASSET_MAGIC || view.getUint32(4, true) !== ASSET_VERSION) return undefined;
  const tokens = view.getUint32(8, true);
  const byteCount = view.getUint32(12, true);
  const segmentCount = view.getUint32(16, true);
  const head = 20 + 8 * segmentCount;
  if (data.length !== head + tokens + byteCount) return undefined;
  const segments: Array<[number, number]> = [];
  let listed = 0;
  for (let i = 0; i < segmentCount; i++) {
    const count = view.getUint32(24 + 8 * i, true);
    segments.push([view.getUint32(20 + 8 * i, true), count]);
    listed += count;
  }
  const lengths = data.subarray(head, head + tokens);
  let sum = 0;
  for (let i = 0; i < tokens; i++) sum += lengths[i];
  if (listed !== tokens || sum !== byteCount) return undefined;
  return { lengths, bytes: data.subarray(head + tokens), segments };
}

/** Spreads a 32-bit hash over the high bits, which index the table (polynomial hashes have weak low bits). */
function slotOf(h: number, shift: number): number {
  return Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> shift;
}

/** Ints per table slot (16 bytes: four slots per cache line). */
const SLOT = 4;
/** Token bytes kept inline in a slot, packed four to an int. */
const INLINE = 4;

/** Bytes buf[at .. at+4) that lie before `end`, packed little-endian; missing bytes are 0. */
function word(buf: Uint8Array, at: number, end: number): number {
  if (at + 4 <= end) return buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24);
  let w = 0;
  for (let k = 0; at + k < end; k++) w |= buf[at + k] << (8 * k);
  return w;
}

export class RankTable {
  /** Every token's bytes, packed in rank order. */
  readonly bytes: Uint8Array;
  /**
   * Open addressing, four ints per slot: [hash, rank, byte start << 8 | byte length (0 when
   * empty), the token's first four bytes packed]. Lookups during merges are random accesses
   * into a table of megabytes, so cache misses, not instructions, are their cost: a probe reads
   * one slot, and a token of up to four bytes is verified from the slot alone.
   */
  private readonly entries: Int32Array;
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

  constructor(list: TokenList) {
    const { bytes, lengths } = list;
    const tokens = lengths.length;
    this.bytes = bytes;
    this.size = tokens;
    let bits = 1;
    while (1 << bits < tokens * 2) bits++;
    const entries = new Int32Array(SLOT << bits);
    const mask = (1 << bits) - 1;
    const shift = 32 - bits;
    this.entries = entries;
    this.mask = mask;
    this.shift = shift;
    const pair = new Int32Array(65536).fill(NO_RANK);
    const single = new Int32Array(256).fill(NO_RANK);
    this.pair = pair;
    this.single = single;

    let t = 0;
    let at = 0;
    let maxLen = 0;
    for (const [first, count] of list.segments) {
      for (let rank = first; rank < first + count; rank++, t++) {
        const len = lengths[t];
        const start = at;
        at += len;
        if (len > maxLen) maxLen = len;
        if (len === 1) single[bytes[start]] = rank;
        else if (len === 2) pair[(bytes[start] << 8) | bytes[start + 1]] = rank;
        let h = 0;
        for (let k = start; k < at; k++) h = (Math.imul(h, HASH_MUL) + bytes[k]) | 0;
        let slot = slotOf(h, shift);
        while (entries[SLOT * slot + 2] !== 0) slot = (slot + 1) & mask;
        if (start >= 1 << 23) throw new Error('rank data too large for the table layout');
        const e = SLOT * slot;
        entries[e] = h;
        entries[e + 1] = rank;
        entries[e + 2] = (start << 8) | len;
        entries[e + 3] = word(bytes, start, Math.min(at, start + INLINE));
      }
    }
    this.maxLen = maxLen;
    this.pow = new Int32Array(maxLen + 1);
    this.pow[0] = 1;
    for (let k = 1; k <= maxLen; k++) this.pow[k] = Math.imul(this.pow[k - 1], HASH_MUL);
  }

  /**
   * Rank of buf[a..c) whose polynomial hash is h, or NO_RANK when that span is not a token.
   * Callers keep c - a <= maxLen.
   */
  lookup(buf: Uint8Array, a: number, c: number, h: number): number {
    const len = c - a;
    const entries = this.entries;
    let slot = slotOf(h, this.shift);
    for (;;) {
      const e = SLOT * slot;
      const sl = entries[e + 2];
      if (sl === 0) return NO_RANK;
      if ((sl & 0xff) === len && entries[e] === h && this.matches(buf, a, c, e)) return entries[e + 1];
      slot = (slot + 1) & this.mask;
    }
  }

  /** Whether buf[a..c) equals the token in the slot at e (same length): inline words, then bytes. */
  private matches(buf: Uint8Array, a: number, c: number, e: number): boolean {
    const entries = this.entries;
    const len = c - a;
    if (entries[e + 3] !== word(buf, a, Math.min(c, a + INLINE))) return false;
    if (len <= INLINE) return true;
    const bytes = this.bytes;
    const s = entries[e + 2] >>> 8;
    for (let k = INLINE; k < len; k++) if (bytes[s + k] !== buf[a + k]) return false;
    return true;
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

  /** Approximate memory held by the table, for the bench and the docs. */
  byteSize(): number {
    return this.bytes.byteLength + this.entries.byteLength + this.pair.byteLength + this.single.byteLength;
  }
}
