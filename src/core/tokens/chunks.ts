/**
 * Content-defined chunking of long texts, so that an edit re-counts only the text around it.
 *
 * A text is cut only at positions where every encoding's pre-tokenizer provably breaks (see
 * isSafeCut in pretokenize.ts: a letter or number followed by whitespace or punctuation other
 * than an apostrophe). Then the count of the text is the sum of the counts of its chunks, exactly.
 * Which of those safe positions become cuts depends only on the few characters around each one
 * (a hash of them), never on where the previous cut fell, so an edit changes the chunks it
 * touches and leaves every other chunk, and its cached count, as it was.
 */
import { infoAt, LL, LO, LU, MK, NUM } from './pretokenize';

/** A safe position becomes a cut when the hash of its neighbourhood has these low bits clear. */
export const DEFAULT_CUT_MASK = 63;
/** Cut at the next safe position anyway once a chunk is this long (texts with rare cuts). */
export const DEFAULT_MAX_CHUNK = 4096;

/**
 * Positions (UTF-16 offsets, ascending, strictly inside the text) where the text is cut.
 * `mask` 0 cuts at every safe position, which the exactness tests use.
 */
export function cutPoints(text: string, mask = DEFAULT_CUT_MASK, maxChunk = DEFAULT_MAX_CHUNK, isCut?: (s: string, p: number) => boolean): number[] {
  if (isCut) return cutPointsBy(text, mask, maxChunk, isCut);
  const cuts: number[] = [];
  const n = text.length;
  let last = 0;
  let prevWord = false; // the previous code point is a letter or a number
  for (let p = 0; p < n; ) {
    const x = infoAt(text, p);
    const c = x & 15;
    const word = c === LU || c === LL || c === LO || c === NUM;
    if (prevWord && !word && c !== MK && text.charCodeAt(p) !== 0x27) {
      // Safe cut: keep it when the neighbourhood hash says so (content-defined), or when the
      // chunk has grown too long.
      let h = 0x2545f491;
      const from = p >= 8 ? p - 8 : 0;
      for (let k = from; k <= p; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x9e3779b1);
      h ^= h >>> 16;
      if ((h & mask) === 0 || p - last >= maxChunk) {
        cuts.push(p);
        last = p;
      }
    }
    prevWord = word;
    p += x & 16 ? 2 : 1;
  }
  return cuts;
}

/** cutPoints with a family's own safe-cut predicate (families.ts) in place of the inline one. */
function cutPointsBy(text: string, mask: number, maxChunk: number, isCut: (s: string, p: number) => boolean): number[] {
  const cuts: number[] = [];
  let last = 0;
  for (let p = 1; p < text.length; p++) {
    if (!isCut(text, p)) continue;
    let h = 0x2545f491;
    const from = p >= 8 ? p - 8 : 0;
    for (let k = from; k <= p; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x9e3779b1);
    h ^= h >>> 16;
    if ((h & mask) === 0 || p - last >= maxChunk) {
      cuts.push(p);
      last = p;
    }
  }
  return cuts;
}
