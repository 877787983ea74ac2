/**
 * The counting engine of the merge-list families (Qwen, DeepSeek, Gemma): the pipeline of a
 * Hugging Face tokenizer, as `encode(text, add_special_tokens=False)` with special-token text
 * counted as plain text:
 *
 *   added tokens (addedTokens.ts) -> normalizer (NFC for Qwen) -> pre-tokenizer -> merge-list BPE
 *
 * Like BpeEngine, it counts and never builds token ids for output, and keeps the count of every
 * piece seen before (pieceCache.ts). Its data (familyData.ts) is loaded on the first count.
 *
 * Gemma has no pre-tokenizer that splits (its normalizer turns spaces into "▁" and its Split step
 * then finds no space), so the BPE runs on the whole text between added tokens. It is cut all the
 * same, exactly: at every position where no merge joins the two characters around it (no merge
 * has a left part ending with the one and a right part starting with the other) and no added
 * token holds them side by side, no merge can ever cross, so the parts count independently. Those
 * positions are Gemma's piece boundaries and its safe cuts for chunked counting.
 */
import { AddedTokenMatcher } from './addedTokens';
import type { MergeData } from './familyData';
import { countMerged, MergeTable } from './mergeBpe';
import { nfc9 } from './nfc';
import { PieceCache } from './pieceCache';
import { isSafeCut as defaultSafeCut, type PieceEnd } from './pretokenize';

/** Pieces longer than this (UTF-16 units) are not cached. */
const PIECE_CACHE_MAX_LENGTH = 256;

export interface FamilyEngineSpec {
  name: string;
  /** The pre-tokenizer of a byte-level family; Gemma's comes from its data. */
  pieceEnd?: PieceEnd;
  normalize?: 'nfc9';
  load: () => MergeData;
}

/** A set of code point pairs (open addressing over two ints a slot). */
class PairSet {
  private slots: Int32Array;
  private mask: number;
  private used = 0;

  constructor(capacity: number) {
    let bits = 4;
    while (1 << bits < capacity * 2) bits++;
    this.slots = new Int32Array(2 << bits).fill(-1);
    this.mask = (1 << bits) - 1;
  }

  private slot(x: number, y: number): number {
    return (Math.imul(x, 0x9e3779b1) ^ Math.imul(y + 0x632be5ab, 0x85ebca77)) & this.mask;
  }

  add(x: number, y: number): void {
    if ((this.used + 1) * 2 > this.mask + 1) this.grow();
    let s = this.slot(x, y);
    while (this.slots[2 * s] !== -1) {
      if (this.slots[2 * s] === x && this.slots[2 * s + 1] === y) return;
      s = (s + 1) & this.mask;
    }
    this.slots[2 * s] = x;
    this.slots[2 * s + 1] = y;
    this.used++;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2).fill(-1);
    this.mask = this.mask * 2 + 1;
    this.used = 0;
    for (let k = 0; k < old.length; k += 2) if (old[k] !== -1) this.add(old[k], old[k + 1]);
  }

  has(x: number, y: number): boolean {
    let s = this.slot(x, y);
    for (;;) {
      const v = this.slots[2 * s];
      if (v === -1) return false;
      if (v === x && this.slots[2 * s + 1] === y) return true;
      s = (s + 1) & this.mask;
    }
  }

  get size(): number {
    return this.used;
  }
}

const SPACE_SYMBOL = 0x2581; // "▁", what Gemma's normalizer makes of " "

/** Code point of Gemma's normalized text at i (spaces are "▁", lone surrogates U+FFFD), plus its width in bits 21+. */
function gemmaCodeAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x20) return SPACE_SYMBOL | (1 << 21);
  if (c < 0xd800 || c > 0xdfff) return c | (1 << 21);
  const d = s.charCodeAt(i + 1);
  if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) return (0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)) | (2 << 21);
  return 0xfffd | (1 << 21);
}

/** Code point ending right before p (spaces as "▁", lone surrogates U+FFFD). */
function gemmaCodeBefore(s: string, p: number): number {
  const c = s.charCodeAt(p - 1);
  if (c >= 0xdc00 && c <= 0xdfff && p >= 2) {
    const h = s.charCodeAt(p - 2);
    if (h >= 0xd800 && h <= 0xdbff) return 0x10000 + ((h - 0xd800) << 10) + (c - 0xdc00);
  }
  if (c === 0x20) return SPACE_SYMBOL;
  return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

interface Loaded {
  table: MergeTable;
  data: MergeData;
  added: AddedTokenMatcher | undefined;
  /** 'chars': id of each BMP code point (-1: not a token), astral ones in a map. */
  bmpIds: Int32Array | undefined;
  astralIds: Map<number, number> | undefined;
  /** Gemma's boundary pairs (see the top of the file). */
  joins: PairSet | undefined;
  pieceEnd: PieceEnd;
  safeCut: (s: string, p: number) => boolean;
}

let ids = new Int32Array(4096);

export class FamilyEngine {
  readonly name: string;
  private readonly spec: FamilyEngineSpec;
  private state: Loaded | undefined;
  private readonly cache = new PieceCache();

  constructor(spec: FamilyEngineSpec) {
    this.name = spec.name;
    this.spec = spec;
  }

  get loaded(): boolean {
    return this.state !== undefined;
  }

  /** The loaded data (loads it on first use). */
  get data(): Loaded {
    if (this.state === undefined) this.state = this.build(this.spec.load());
    return this.state;
  }

  private build(data: MergeData): Loaded {
    const table = new MergeTable(data.a, data.b, data.result);
    const added = data.added.length > 0 ? new AddedTokenMatcher(data.added) : undefined;
    if (data.kind === 'bytes') {
      const pieceEnd = this.spec.pieceEnd;
      if (!pieceEnd) throw new Error(`${this.name}: a byte-level family needs a pre-tokenizer`);
      const safeCut = added ? (s: string, p: number) => defaultSafeCut(s, p) && !added.spans(s, p) : defaultSafeCut;
      return { table, data, added, bmpIds: undefined, astralIds: undefined, joins: undefined, pieceEnd, safeCut };
    }
    const bmpIds = new Int32Array(0x10000).fill(-1);
    const astralIds = new Map<number, number>();
    let vocab = 0;
    for (let k = 0; k < data.charCps.length; k++) {
      const cp = data.charCps[k];
      if (cp < 0x10000) bmpIds[cp] = data.charIds[k];
      else astralIds.set(cp, data.charIds[k]);
    }
    for (let k = 0; k < data.result.length; k++) vocab = Math.max(vocab, data.result[k] + 1, data.a[k] + 1, data.b[k] + 1);
    for (let k = 0; k < data.charIds.length; k++) vocab = Math.max(vocab, data.charIds[k] + 1);
    // First and last character of every token a merge can make, from the characters up.
    const firstCp = new Int32Array(vocab).fill(-1);
    const lastCp = new Int32Array(vocab).fill(-1);
    for (let k = 0; k < data.charCps.length; k++) {
      firstCp[data.charIds[k]] = data.charCps[k];
      lastCp[data.charIds[k]] = data.charCps[k];
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (let k = 0; k < data.a.length; k++) {
        const r = data.result[k];
        if (firstCp[r] >= 0) continue;
        const f = firstCp[data.a[k]];
        const l = lastCp[data.b[k]];
        if (f >= 0 && l >= 0) {
          firstCp[r] = f;
          lastCp[r] = l;
          changed = true;
        }
      }
    }
    const joins = new PairSet(1 << 15);
    for (let k = 0; k < data.a.length; k++) {
      const x = lastCp[data.a[k]];
      const y = firstCp[data.b[k]];
      if (x >= 0 && y >= 0) joins.add(x, y);
    }
    for (const t of data.added) {
      const cps = Array.from(t.content, (ch) => ch.codePointAt(0)!);
      for (let k = 1; k < cps.length; k++) joins.add(cps[k - 1] === 0x20 ? SPACE_SYMBOL : cps[k - 1], cps[k] === 0x20 ? SPACE_SYMBOL : cps[k]);
    }
    const safeCut = (s: string, p: number): boolean => {
      if (p <= 0 || p >= s.length) return false;
      const at = s.charCodeAt(p);
      if (at >= 0xdc00 && at <= 0xdfff) {
        const h = s.charCodeAt(p - 1);
        if (h >= 0xd800 && h <= 0xdbff) return false; // inside a surrogate pair
      }
      return !joins.has(gemmaCodeBefore(s, p), gemmaCodeAt(s, p) & 0x1fffff);
    };
    const pieceEnd: PieceEnd = (s, i, n) => {
      let prev = gemmaCodeAt(s, i);
      let p = i + (prev >>> 21);
      while (p < n) {
        const cur = gemmaCodeAt(s, p);
        if (!joins.has(prev & 0x1fffff, cur & 0x1fffff)) return p;
        prev = cur;
        p += cur >>> 21;
      }
      return n;
    };
    return { table, data, added, bmpIds, astralIds, joins, pieceEnd, safeCut };
  }

  /** Whether a cut at p leaves the count of the two sides' sum exact (see BpeTokenizer). */
  isSafeCut(s: string, p: number): boolean {
    return this.data.safeCut(s, p);
  }

  /** The chunking predicate (always the family's own). */
  get cutPredicate(): (s: string, p: number) => boolean {
    return this.data.safeCut;
  }

  clearCache(): void {
    this.cache.clear();
  }

  /** Token count of text[start..end). */
  count(text: string, start = 0, end = text.length): number {
    const st = this.data;
    if (!st.added) return this.countPlain(text, start, end);
    let total = 0;
    const plainTokens = st.added.scan(text, start, end, (a, b) => {
      if (b > a) total += this.countPlain(text, a, b);
    });
    return total + plainTokens;
  }

  /** A stretch without added tokens: normalize, then count its pieces. */
  private countPlain(text: string, start: number, end: number): number {
    if (this.spec.normalize === 'nfc9') {
      const normalized = nfc9(text, start, end);
      if (normalized !== undefined) return this.countPieces(normalized, 0, normalized.length);
    }
    return this.countPieces(text, start, end);
  }

  private countPieces(text: string, start: number, end: number): number {
    const st = this.data;
    const cache = this.cache;
    const pieceEnd = st.pieceEnd;
    let total = 0;
    let i = start;
    while (i < end) {
      const e = pieceEnd(text, i, end);
      if (e - i === 1 && text.charCodeAt(i) < 0x80) {
        total += 1; // one symbol, whatever it is, is one token
      } else if (e - i <= PIECE_CACHE_MAX_LENGTH) {
        const h = PieceCache.hash(text, i, e);
        let n = cache.get(text, i, e, h);
        if (n < 0) {
          n = this.countPiece(text, i, e);
          cache.set(text, i, e, h, n);
        }
        total += n;
      } else {
        total += this.countPiece(text, i, e);
      }
      i = e;
    }
    return total;
  }

  /** Token count of one piece, text[i..e), by the merge list. */
  countPiece(text: string, i: number, e: number): number {
    const st = this.data;
    if (ids.length < (e - i) * 4 + 4) ids = new Int32Array((e - i) * 4 + 1024);
    const n = st.data.kind === 'bytes' ? byteSymbols(text, i, e, st.data.byteIds) : charSymbols(text, i, e, st);
    const count = countMerged(st.table, ids, n);
    if (ids.length > 1 << 16) ids = new Int32Array(4096);
    return count;
  }

  /** The pieces of a text without added tokens, as the pre-tokenizer splits it (tests). */
  split(text: string): string[] {
    const st = this.data;
    const out: string[] = [];
    for (let i = 0; i < text.length; ) {
      const e = st.pieceEnd(text, i, text.length);
      out.push(text.slice(i, e));
      i = e;
    }
    return out;
  }
}

/** The UTF-8 bytes of text[i..e) as byte-token ids into `ids`; returns their count. Lone surrogates are U+FFFD. */
function byteSymbols(text: string, i: number, e: number, byteIds: Int32Array): number {
  const out = ids;
  let w = 0;
  for (let k = i; k < e; k++) {
    let c = text.charCodeAt(k);
    if (c < 0x80) out[w++] = byteIds[c];
    else if (c < 0x800) {
      out[w++] = byteIds[0xc0 | (c >> 6)];
      out[w++] = byteIds[0x80 | (c & 0x3f)];
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const d = k + 1 < e ? text.charCodeAt(k + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        k++;
        out[w++] = byteIds[0xf0 | (c >> 18)];
        out[w++] = byteIds[0x80 | ((c >> 12) & 0x3f)];
        out[w++] = byteIds[0x80 | ((c >> 6) & 0x3f)];
        out[w++] = byteIds[0x80 | (c & 0x3f)];
      } else {
        out[w++] = byteIds[0xef];
        out[w++] = byteIds[0xbf];
        out[w++] = byteIds[0xbd];
      }
    } else {
      out[w++] = byteIds[0xe0 | (c >> 12)];
      out[w++] = byteIds[0x80 | ((c >> 6) & 0x3f)];
      out[w++] = byteIds[0x80 | (c & 0x3f)];
    }
  }
  return w;
}

/** Gemma's symbols for text[i..e): each character's token, or its UTF-8 bytes' fallback tokens. */
function charSymbols(text: string, i: number, e: number, st: Loaded): number {
  const out = ids;
  const bmp = st.bmpIds!;
  const byteIds = st.data.byteIds;
  let w = 0;
  for (let k = i; k < e; ) {
    const x = gemmaCodeAt(text, k);
    const cp = x & 0x1fffff;
    k += x >>> 21;
    const id = cp < 0x10000 ? bmp[cp] : (st.astralIds!.get(cp) ?? -1);
    if (id >= 0) {
      out[w++] = id;
    } else if (cp < 0x80) {
      out[w++] = byteIds[cp];
    } else if (cp < 0x800) {
      out[w++] = byteIds[0xc0 | (cp >> 6)];
      out[w++] = byteIds[0x80 | (cp & 0x3f)];
    } else if (cp < 0x10000) {
      out[w++] = byteIds[0xe0 | (cp >> 12)];
      out[w++] = byteIds[0x80 | ((cp >> 6) & 0x3f)];
      out[w++] = byteIds[0x80 | (cp & 0x3f)];
    } else {
      out[w++] = byteIds[0xf0 | (cp >> 18)];
      out[w++] = byteIds[0x80 | ((cp >> 12) & 0x3f)];
      out[w++] = byteIds[0x80 | ((cp >> 6) & 0x3f)];
      out[w++] = byteIds[0x80 | (cp & 0x3f)];
    }
  }
  return w;
}
