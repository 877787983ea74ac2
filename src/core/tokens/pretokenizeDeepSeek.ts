/**
 * DeepSeek V3's pre-tokenizer, hand-written like the scanners of pretokenize.ts. Its
 * tokenizer.json chains three `Split` steps (behaviour "Isolated": matches and the gaps between
 * them both become pieces), each applied to every piece of the step before:
 *
 * 1. `\p{N}{1,3}`: numbers in chunks of up to three;
 * 2. `[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+`: runs of CJK ideographs, hiragana and katakana;
 * 3. `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *    ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+` (called A1..A6 below).
 *
 * So a piece never crosses a number, nor the edge of a CJK run, and pattern 3 sees the end of its
 * segment as the end of the text (its `(?!\S)` looks no further). The scanner finds, from any piece
 * start i, the segment's limit on the fly: the segment of i holds the characters that are not
 * numbers and are on the same side of the CJK ranges as the one at i.
 *
 * Classes are frozen at Unicode 16.0 like everything else here: letters, marks, numbers and
 * whitespace from unicodeClasses.ts, P and S from unicodeFamilies.ts. A lone surrogate is U+FFFD
 * in UTF-8, a symbol (So).
 */
import { infoAt, LL, LO, LU, MK, NL, NUM, WS } from './pretokenize';
import { PUNCT_SYMBOL_RUNS } from './unicodeFamilies';

// Classes of pattern 3.
const L = 1; // \p{L}
const M = 2; // \p{M}
const W = 3; // \s other than \r, \n
const R = 4; // \r, \n
const PS = 5; // \p{P}, \p{S}
const C = 6; // anything else (controls, format characters, private use, unassigned)
const N = 7; // \p{N}: never inside a segment
/** No character: the end of the segment. */
const END = 0;

/** P or S for each BMP code unit; astral runs by binary search. */
const PS_BMP = new Uint8Array(0x10000);
let PS_ASTRAL_START: Int32Array;
let PS_ASTRAL_VALUE: Uint8Array;
{
  const starts: number[] = [];
  const values: number[] = [];
  let cp = 0;
  for (const run of PUNCT_SYMBOL_RUNS.split(',')) {
    const v = run.charCodeAt(0) - 48;
    const len = Number.parseInt(run.slice(1), 36);
    if (cp < 0x10000) PS_BMP.fill(v, cp, Math.min(cp + len, 0x10000));
    if (cp + len > 0x10000) {
      starts.push(Math.max(cp, 0x10000));
      values.push(v);
    }
    cp += len;
  }
  PS_BMP.fill(0, 0xd800, 0xe000);
  PS_ASTRAL_START = Int32Array.from(starts);
  PS_ASTRAL_VALUE = Uint8Array.from(values);
}

/** Whether an astral code point is P or S. */
function astralPS(cp: number): boolean {
  let lo = 0;
  let hi = PS_ASTRAL_START.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (PS_ASTRAL_START[mid] <= cp) lo = mid;
    else hi = mid - 1;
  }
  return PS_ASTRAL_VALUE[lo] === 1;
}

/** Whether the code point at i (i < length) is in \p{P} or \p{S} (a lone surrogate is U+FFFD: yes). */
export function isPunctOrSymbolAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return PS_BMP[c] === 1;
  const d = s.charCodeAt(i + 1);
  if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) return true;
  return astralPS(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
}

/** Split 2's ranges. All are BMP, so one code unit decides (a surrogate is never in them). */
const isCjk = (u: number): boolean => (u >= 0x4e00 && u <= 0x9fa5) || (u >= 0x3040 && u <= 0x30ff);

/** Pattern 3's class of the code point at k, plus 8 when it takes two UTF-16 units. */
function classAt(s: string, k: number): number {
  const x = infoAt(s, k);
  const wide = x & 16 ? 8 : 0;
  switch (x & 15) {
    case LU:
    case LL:
    case LO:
      return L | wide;
    case MK:
      return M | wide;
    case NUM:
      return N | wide;
    case WS:
      return W | wide;
    case NL:
      return R;
    default:
      return (isPunctOrSymbolAt(s, k) ? PS : C) | wide;
  }
}

/**
 * The scanner's view of one segment: `at(k)` is the class (plus width bit) of the code point at k,
 * or END when k is past the segment (the end n, a number, or the other side of the CJK ranges).
 */
let segText = '';
let segEnd = 0;
let segCjk = false;

function at(k: number): number {
  if (k >= segEnd) return END;
  const u = segText.charCodeAt(k);
  if (isCjk(u) !== segCjk) return END;
  const x = classAt(segText, k);
  return (x & 7) === N ? END : x;
}

const w = (x: number): number => (x & 8 ? 2 : 1);

/** End of the run from k of code points whose class is in `set` (a bit set of classes). */
function runEnd(k: number, set: number): number {
  for (;;) {
    const x = at(k);
    if (x === END || !(set & (1 << (x & 7)))) return k;
    k += w(x);
  }
}

const LM = (1 << L) | (1 << M);
const ASCII_LETTER = (u: number): boolean => (u >= 0x41 && u <= 0x5a) || (u >= 0x61 && u <= 0x7a);
const ASCII_PUNCT = (u: number): boolean => (u >= 0x21 && u <= 0x2f) || (u >= 0x3a && u <= 0x40) || (u >= 0x5b && u <= 0x60) || (u >= 0x7b && u <= 0x7e);

/** End of the piece pattern 3 matches at j (whose class is x), or -1 when no alternative matches there. */
function matchAt(j: number, x: number): number {
  const s = segText;
  const u = s.charCodeAt(j);
  const cls = x & 7;
  const next = at(j + w(x));
  // A1: an ASCII punctuation character and ASCII letters.
  if (ASCII_PUNCT(u) && next !== END && ASCII_LETTER(s.charCodeAt(j + 1))) {
    let e = j + 2;
    while (e < segEnd && ASCII_LETTER(s.charCodeAt(e))) e++;
    return e; // ASCII letters are never CJK nor numbers: all inside the segment
  }
  // A2: `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`. A leading mark is both the optional character and
  // the start of the run: either way the piece is the run from j.
  if (cls === L || cls === M) return runEnd(j, LM);
  if (cls !== R && cls !== PS && next !== END && LM & (1 << (next & 7))) return runEnd(j + w(x), LM);
  // A3: ` ?[\p{P}\p{S}]+[\r\n]*`
  let p = -1;
  if (u === 0x20 && next !== END && (next & 7) === PS) p = j + 1;
  else if (cls === PS) p = j;
  if (p >= 0) {
    let e = runEnd(p, 1 << PS);
    while (e < segEnd && at(e) === R) e++;
    return e;
  }
  // A4..A6: `\s*[\r\n]+|\s+(?!\S)|\s+`, with the segment's end as the end of the text.
  if (cls === W || cls === R) {
    let k = j;
    let lastNl = -1;
    let lastStart = j;
    let cps = 0;
    for (;;) {
      const y = at(k);
      if (y === END) break;
      const c = y & 7;
      if (c === R) lastNl = k;
      else if (c !== W) break;
      lastStart = k;
      cps++;
      k += w(y);
    }
    if (lastNl >= 0) return lastNl + 1;
    if (at(k) === END) return k;
    return cps >= 2 ? lastStart : k;
  }
  return -1;
}

/** Where the DeepSeek V3 piece starting at i ends (i < n). */
export function pieceEndDeepSeek(s: string, i: number, n: number): number {
  const x0 = classAt(s, i);
  if ((x0 & 7) === N) {
    // Split 1: up to three numbers.
    let e = i + w(x0);
    for (let k = 1; k < 3 && e < n; k++) {
      const y = classAt(s, e);
      if ((y & 7) !== N) break;
      e += w(y);
    }
    return e;
  }
  segText = s;
  segEnd = n;
  segCjk = isCjk(s.charCodeAt(i));
  const e = matchAt(i, x0);
  if (e >= 0) return e;
  // A gap: up to where the next match starts, or the segment ends.
  let k = i + w(x0);
  for (;;) {
    const y = at(k);
    if (y === END || matchAt(k, y) >= 0) return k;
    k += w(y);
  }
}
