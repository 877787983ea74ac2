/**
 * One exact BPE encoding at work: split text into pieces with the encoding's scanner, look each
 * piece up in the per-piece cache, and byte-pair merge the pieces not seen before. Only counts
 * are produced; token ids are never needed by Context Lens.
 */
import { countPieceBytes } from './bpe';
import type { EncodingSpec } from './encodings';
import { PieceCache } from './pieceCache';
import { isSafeCut, type PieceEnd } from './pretokenize';
import { loadTokenList } from './rankData';
import { RankTable, type TokenList } from './rankTable';

/** Pieces longer than this (UTF-16 units) are not cached: they are rare and would pin memory. */
const PIECE_CACHE_MAX_LENGTH = 256;

let utf8 = new Uint8Array(4096);
/** The UTF-8 buffer is shrunk back after a piece made it larger than this. */
const UTF8_KEEP = 1 << 16;

/**
 * Writes the UTF-8 bytes of text[start..end) into the shared buffer and returns their count.
 * Lone surrogates become U+FFFD, as TextEncoder (and so tiktoken's bindings) encode them.
 */
function encodeUtf8(text: string, start: number, end: number): number {
  if (utf8.length < (end - start) * 3) utf8 = new Uint8Array((end - start) * 3 + 1024);
  const buf = utf8;
  let w = 0;
  for (let i = start; i < end; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      buf[w++] = c;
    } else if (c < 0x800) {
      buf[w++] = 0xc0 | (c >> 6);
      buf[w++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < end ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        buf[w++] = 0xf0 | (c >> 18);
        buf[w++] = 0x80 | ((c >> 12) & 0x3f);
        buf[w++] = 0x80 | ((c >> 6) & 0x3f);
        buf[w++] = 0x80 | (c & 0x3f);
      } else {
        buf[w++] = 0xef;
        buf[w++] = 0xbf;
        buf[w++] = 0xbd;
      }
    } else {
      buf[w++] = 0xe0 | (c >> 12);
      buf[w++] = 0x80 | ((c >> 6) & 0x3f);
      buf[w++] = 0x80 | (c & 0x3f);
    }
  }
  return w;
}

export class BpeEngine {
  readonly name: string;
  private readonly spec: EncodingSpec;
  private readonly pieceEnd: PieceEnd;
  private tableValue: RankTable | undefined;
  private readonly cache = new PieceCache();
  private readonly load: (name: string) => TokenList;

  /** `load` supplies the rank data on first use (tests pass one to load from a given source). */
  constructor(spec: EncodingSpec, load: (name: string) => TokenList = loadTokenList) {
    this.name = spec.name;
    this.spec = spec;
    this.pieceEnd = spec.pieceEnd;
    this.load = load;
  }

  /** True once the rank data has been loaded. */
  get loaded(): boolean {
    return this.tableValue !== undefined;
  }

  /** The rank table, loaded on first use. */
  get table(): RankTable {
    if (this.tableValue === undefined) this.tableValue = new RankTable(this.load(this.spec.name));
    return this.tableValue;
  }

  /** Forgets every cached piece (the bench uses this to measure cold runs). */
  clearCache(): void {
    this.cache.clear();
  }

  /** Whether a cut at p splits the count exactly (pretokenize.ts, isSafeCut: the same for every pattern here). */
  isSafeCut(s: string, p: number): boolean {
    return isSafeCut(s, p);
  }

  /** The chunking predicate, when it is not the inline default of chunks.ts (never, here). */
  readonly cutPredicate: ((s: string, p: number) => boolean) | undefined = undefined;

  /** Token count of text[start..end) (pieces seen before come from the piece cache). */
  count(text: string, start = 0, end = text.length): number {
    if (this.tableValue === undefined) void this.table;
    const cache = this.cache;
    const pieceEnd = this.pieceEnd;
    let total = 0;
    let i = start;
    // The loop stays small and allocation-free; everything rare (a piece not seen before, a very
    // long piece) is in miss(), which keeps the optimizing compiler's view of this loop simple.
    while (i < end) {
      const e = pieceEnd(text, i, end);
      if (e - i === 1 && text.charCodeAt(i) < 0x80) {
        total += 1; // every byte is a token, so a one-unit ASCII piece is one token
      } else {
        const n = e - i <= PIECE_CACHE_MAX_LENGTH ? cache.get(text, i, e, PieceCache.hash(text, i, e)) : -1;
        total += n >= 0 ? n : this.miss(text, i, e);
      }
      i = e;
    }
    return total;
  }

  /** Counts a piece that is not in the cache, and caches it unless it is very long. */
  private miss(text: string, i: number, e: number): number {
    const bytes = encodeUtf8(text, i, e); // may grow the buffer: read utf8 after
    const n = countPieceBytes(this.table, utf8, bytes);
    if (e - i <= PIECE_CACHE_MAX_LENGTH) this.cache.set(text, i, e, PieceCache.hash(text, i, e), n);
    else if (utf8.length > UTF8_KEEP) utf8 = new Uint8Array(4096); // do not hold a pasted blob's bytes
    return n;
  }

  /** The pieces of text, as the scanner splits it (for tests against the reference regex). */
  split(text: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < text.length; ) {
      const e = this.pieceEnd(text, i, text.length);
      out.push(text.slice(i, e));
      i = e;
    }
    return out;
  }

  /** Token count of one piece given as a string (used by tests of the merge). */
  countPiece(piece: string): number {
    const bytes = encodeUtf8(piece, 0, piece.length);
    return countPieceBytes(this.table, utf8, bytes);
  }
}
