/**
 * One pass over an item's text that yields what dedup and novelty need, without building the
 * normalized string: a hash of the normalized text (lowercase, punctuation and symbols removed,
 * whitespace collapsed and trimmed, as `normalizeForDedup` defines it) and a bottom-k sketch of
 * its word hashes. ASCII text (the common case) is scanned once; other text is normalized with the
 * Unicode expressions first. Hash equality is only a candidate: dedup confirms a near-duplicate by
 * comparing normalized texts, so a hash collision can never merge two different items.
 */
import { normalizeForDedup } from './normalize';

/** Word hashes kept per item: Jaccard overlap is exact up to this many distinct words in the union. */
export const SKETCH_SIZE = 32;

export interface Fingerprint {
  /** Hash of the normalized text (32 bits and the length; dedup confirms matches by comparing texts). */
  key: string;
  /** The SKETCH_SIZE smallest distinct word hashes, ascending. */
  sketch: readonly number[];
}

// `| 0` keeps every hash an int32: a constant above 2^31 would make V8 carry them as doubles.
const FNV_OFFSET = 0x811c9dc5 | 0;

/** murmur3's finalizer: FNV alone leaves similar short words with correlated low bits. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// The sketch being built: one reused buffer (scans never interleave), so a scan allocates only its result.
const SK = new Uint32Array(SKETCH_SIZE);
let skLen = 0;

function insert(w: number): void {
  if (skLen === SKETCH_SIZE && w >= SK[SKETCH_SIZE - 1]) return;
  let lo = 0;
  let hi = skLen;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (SK[mid] < w) lo = mid + 1;
    else hi = mid;
  }
  if (lo < skLen && SK[lo] === w) return;
  // Shift by hand: for 32 slots a loop is cheaper than a copyWithin call per word.
  for (let k = skLen === SKETCH_SIZE ? SKETCH_SIZE - 1 : skLen; k > lo; k--) SK[k] = SK[k - 1];
  SK[lo] = w;
  if (skLen < SKETCH_SIZE) skLen++;
}

/**
 * Scans `s`; with `ascii` set, returns undefined at the first non-ASCII character (the caller
 * then normalizes with the Unicode expressions and scans the result with `ascii` unset, where
 * every character is already a word character or a single space).
 */
function scan(s: string, ascii: boolean): Fingerprint | undefined {
  let h1 = FNV_OFFSET;
  let len = 0;
  let word = FNV_OFFSET;
  let inWord = false;
  let pendingSpace = false;
  skLen = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 128) {
      if (ascii) return undefined;
    } else {
      if (c >= 65 && c <= 90) c += 32;
      else if (c === 32 || (c >= 9 && c <= 13)) {
        if (inWord) {
          insert(mix(word));
          word = FNV_OFFSET;
          inWord = false;
        }
        if (len > 0) pendingSpace = true;
        continue;
      } else if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) continue;
    }
    if (pendingSpace) {
      h1 = Math.imul(h1 ^ 32, 0x01000193);
      len++;
      pendingSpace = false;
    }
    h1 = Math.imul(h1 ^ c, 0x01000193);
    len++;
    word = Math.imul(word ^ c, 0x01000193);
    inWord = true;
  }
  if (inWord) insert(mix(word));
  // A plain array, not SK.slice(): allocating a typed array per item costs more than the scan.
  const sketch: number[] = new Array(skLen);
  for (let i = 0; i < skLen; i++) sketch[i] = SK[i];
  return { key: `${mix(h1)}:${len}`, sketch };
}

export function fingerprint(text: string): Fingerprint {
  return scan(text, true) ?? scan(normalizeForDedup(text), false)!;
}

/**
 * Jaccard overlap of two word sets from their bottom-k sketches: among the k smallest hashes of
 * the union, the share present in both. Exact when the union has at most SKETCH_SIZE words.
 */
export function sketchOverlap(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  let i = 0;
  let j = 0;
  let inter = 0;
  let seen = 0;
  while (seen < SKETCH_SIZE && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && a[i] < b[j])) i++;
    else if (i >= a.length || b[j] < a[i]) j++;
    else {
      inter++;
      i++;
      j++;
    }
    seen++;
  }
  return inter / seen;
}
