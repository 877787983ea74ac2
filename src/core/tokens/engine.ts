/**
 * One exact BPE encoding at work: pre-tokenize with the encoding's pattern, look each piece up in
 * a per-piece cache, and byte-pair merge the pieces not seen before. Only counts are produced;
 * token ids are never needed by Context Lens.
 */
import { countPieceBytes } from './bpe';
import type { EncodingSpec } from './encodings';
import { RankTable } from './rankTable';

/** Pieces kept per cache generation; two generations bound the cache at twice this. */
const PIECE_CACHE_GENERATION = 100_000;
/** Pieces longer than this (UTF-16 units) are not cached: they are rare and would pin memory. */
const PIECE_CACHE_MAX_LENGTH = 256;

let utf8 = new Uint8Array(4096);

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
  private tableValue: RankTable | undefined;
  private readonly regex: RegExp;
  private young = new Map<string, number>();
  private old = new Map<string, number>();

  constructor(spec: EncodingSpec) {
    this.name = spec.name;
    this.spec = spec;
    this.regex = new RegExp(spec.pattern, 'gu');
  }

  /** True once the rank data has been loaded. */
  get loaded(): boolean {
    return this.tableValue !== undefined;
  }

  /** The rank table, loaded on first use. */
  get table(): RankTable {
    if (this.tableValue === undefined) this.tableValue = new RankTable(this.spec.load().bpe_ranks);
    return this.tableValue;
  }

  /** Forgets every cached piece (the bench uses this to measure cold runs). */
  clearCache(): void {
    this.young = new Map();
    this.old = new Map();
  }

  /** Token count of text, tokenized from scratch (pieces are still cached). */
  count(text: string): number {
    const table = this.table;
    const re = this.regex;
    re.lastIndex = 0;
    let total = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      const piece = m[0];
      const len = piece.length;
      if (len === 1) {
        const c = piece.charCodeAt(0);
        // Every single byte is a token; so is every one-unit piece below U+0080.
        if (c < 0x80) {
          total += 1;
          continue;
        }
      }
      let n = this.young.get(piece);
      if (n === undefined) {
        n = this.old.get(piece);
        if (n === undefined) {
          const start = m.index;
          const bytes = encodeUtf8(text, start, start + len);
          n = countPieceBytes(table, utf8, bytes);
        }
        if (len <= PIECE_CACHE_MAX_LENGTH) {
          if (this.young.size >= PIECE_CACHE_GENERATION) {
            this.old = this.young;
            this.young = new Map();
          }
          this.young.set(piece, n);
        }
      }
      total += n;
    }
    return total;
  }

  /** Token count of one piece given as a string (used by tests of the merge). */
  countPiece(piece: string): number {
    const bytes = encodeUtf8(piece, 0, piece.length);
    return countPieceBytes(this.table, utf8, bytes);
  }
}
