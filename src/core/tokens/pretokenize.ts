/**
 * Hand-written pre-tokenizers: for each encoding family, `pieceEnd(text, i)` returns where the
 * piece starting at i ends, exactly as the encoding's regex (encodings.ts, matched from i with
 * leftmost-first backtracking) would end it.
 *
 * Why not run the regex: a RegExp match allocates a match array and a substring per piece, and
 * looking the substring up in a Map hashes it again; on a mixed corpus that alone held the count
 * at about the Rust reference's speed. These scanners walk the text once with a class table and
 * allocate nothing, so the piece can be looked up by position (see pieceCache.ts).
 *
 * Each function follows its pattern's alternatives in order; comments name the alternative and
 * show how its backtracking resolves. The regexes stay the specification: tests compare the
 * split of both on random text built from every character class that matters. Character classes
 * come from a table frozen at Unicode 16.0 (unicodeClasses.ts), the version of the reference's
 * regex tables, not from the runtime's regex engine.
 */
import { CLASS_RUNS } from './unicodeClasses';

// Character classes, by Unicode general category, at Unicode 16.0 (unicodeClasses.ts says why).
export const LU = 1; // Lu, Lt: upper/title case letters
export const LL = 2; // Ll: lower case letters
export const LO = 3; // Lm, Lo: modifier and other letters (no case)
export const MK = 4; // M: marks
export const NUM = 5; // N: numbers
export const WS = 6; // White_Space other than \r and \n
export const NL = 7; // \r, \n
export const OTHER = 8; // everything else, including unassigned code points and lone surrogates
/** Added to a class when the code point takes two UTF-16 units. */
const WIDE = 16;

const bit = (c: number): number => 1 << c;
/** o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
const SET_A = bit(LU) | bit(LO) | bit(MK);
/** o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
const SET_B = bit(LL) | bit(LO) | bit(MK);
/** [^\r\n\p{L}\p{N}]: the optional leading character of a word. */
const SET_P = bit(MK) | bit(WS) | bit(OTHER);
/** [^\s\p{L}\p{N}]: punctuation and symbols. */
const SET_Q = bit(MK) | bit(OTHER);
/** \p{L} */
const SET_L = bit(LU) | bit(LL) | bit(LO);
const SET_SPACE = bit(WS) | bit(NL);

/** Class of each BMP code unit (surrogate code units are OTHER: a lone surrogate is U+FFFD in UTF-8). */
const BMP = new Uint8Array(0x10000);
/** Astral code points: class runs starting at ASTRAL_START[k] with class ASTRAL_CLASS[k]. */
let ASTRAL_START: Int32Array;
let ASTRAL_CLASS: Uint8Array;
{
  const runs = CLASS_RUNS.split(',');
  const starts: number[] = [];
  const classes: number[] = [];
  let cp = 0;
  for (const run of runs) {
    const cls = run.charCodeAt(0) - 48;
    const len = Number.parseInt(run.slice(1), 36);
    if (cp < 0x10000) BMP.fill(cls, cp, Math.min(cp + len, 0x10000));
    if (cp + len > 0x10000) {
      starts.push(Math.max(cp, 0x10000));
      classes.push(cls);
    }
    cp += len;
  }
  BMP.fill(OTHER, 0xd800, 0xe000);
  ASTRAL_START = Int32Array.from(starts);
  ASTRAL_CLASS = Uint8Array.from(classes);
}

/** Class of an astral code point: binary search over the runs. */
function astralClass(cp: number): number {
  let lo = 0;
  let hi = ASTRAL_START.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ASTRAL_START[mid] <= cp) lo = mid;
    else hi = mid - 1;
  }
  return ASTRAL_CLASS[lo];
}

/** The class of a code point (0 <= cp <= 0x10FFFF), as the pre-tokenizers see it. */
export function classOf(cp: number): number {
  return cp < 0x10000 ? BMP[cp] : astralClass(cp);
}

/**
 * Class of the code point at i (i < text length), plus WIDE when it is a surrogate pair.
 * A lone surrogate is OTHER, one unit wide (its UTF-8 form is U+FFFD, also OTHER).
 */
export function infoAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return BMP[c];
  const d = s.charCodeAt(i + 1);
  if (!(d >= 0xdc00 && d <= 0xdfff)) return OTHER;
  return astralClass(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)) | WIDE;
}

const width = (x: number): number => (x & WIDE ? 2 : 1);

/** End of the run of code points from i whose class is in `set`. */
function runEnd(s: string, i: number, n: number, set: number): number {
  while (i < n) {
    const x = infoAt(s, i);
    if (!(set & bit(x & 15))) break;
    i += x & WIDE ? 2 : 1;
  }
  return i;
}

/** `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at e: the end after an optional contraction (within n). */
function contractionCI(s: string, e: number, n: number): number {
  if (e + 1 >= n || s.charCodeAt(e) !== 0x27) return e;
  const c = s.charCodeAt(e + 1);
  switch (c) {
    case 0x73: case 0x53: case 0x17f: // s S ſ
    case 0x74: case 0x54: // t T
    case 0x6d: case 0x4d: // m M
    case 0x64: case 0x44: // d D
      return e + 2;
    case 0x72: case 0x52: // r R + e E
    case 0x76: case 0x56: { // v V + e E
      const d = e + 2 < n ? s.charCodeAt(e + 2) : 0;
      return d === 0x65 || d === 0x45 ? e + 3 : e;
    }
    case 0x6c: case 0x4c: { // l L + l L
      const d = e + 2 < n ? s.charCodeAt(e + 2) : 0;
      return d === 0x6c || d === 0x4c ? e + 3 : e;
    }
    default:
      return e;
  }
}

/** GPT-2's case-sensitive `'s|'t|'re|'ve|'m|'ll|'d` at i (within n), or -1. */
function contractionCS(s: string, i: number, n: number): number {
  if (i + 1 >= n || s.charCodeAt(i) !== 0x27) return -1;
  const c = s.charCodeAt(i + 1);
  if (c === 0x73 || c === 0x74 || c === 0x6d || c === 0x64) return i + 2;
  const d = i + 2 < n ? s.charCodeAt(i + 2) : 0;
  if ((c === 0x72 || c === 0x76) && d === 0x65) return i + 3;
  if (c === 0x6c && d === 0x6c) return i + 3;
  return -1;
}

/**
 * The whitespace alternatives shared by all encodings, at i where a White_Space run starts:
 * `\s*[\r\n]+` (o200k, cl100k only: withNewline) ends right after the run's last \r or \n;
 * `\s+(?!\S)` takes the whole run at the end of the text, else all of it but its last code point
 * (when that leaves at least one); `\s+` takes the whole run.
 */
function whitespaceEnd(s: string, i: number, n: number, withNewline: boolean): number {
  let w = i;
  let lastNl = -1;
  let lastStart = i;
  let cps = 0;
  while (w < n) {
    const x = infoAt(s, w);
    const c = x & 15;
    if (c === NL) lastNl = w;
    else if (c !== WS) break;
    lastStart = w;
    cps++;
    w += x & WIDE ? 2 : 1;
  }
  if (withNewline && lastNl >= 0) return lastNl + 1;
  if (w === n) return w;
  return cps >= 2 ? lastStart : w;
}

/**
 * o200k letters, first alternative at j: `[A]*[B]+(?i:contraction)?`, or -1. Without `contractions`
 * (Tekken's pattern) the contraction group is absent.
 */
function o200kAlt1(s: string, j: number, n: number, contractions = true): number {
  // A* is greedy; it backtracks until B+ can start. Past the maximal A-run [j, k), the first
  // start that works is k itself when the char there is in B (it is not in A, so it is Ll), and
  // then B+ runs on; otherwise the last char inside the run that is also in B (Lm, Lo, M), after
  // which B+ stops at once (what follows is Lu/Lt or the non-B char at k).
  let k = j;
  let lastBEnd = -1;
  while (k < n) {
    const x = infoAt(s, k);
    const c = x & 15;
    if (!(SET_A & bit(c))) break;
    k += x & WIDE ? 2 : 1;
    if (SET_B & bit(c)) lastBEnd = k;
  }
  let e: number;
  if (k < n && (infoAt(s, k) & 15) === LL) e = runEnd(s, k, n, SET_B);
  else if (lastBEnd >= 0) e = lastBEnd;
  else return -1;
  return contractions ? contractionCI(s, e, n) : e;
}

/** o200k letters, second alternative at j: `[A]+[B]*(?i:contraction)?`, or -1 (see o200kAlt1). */
function o200kAlt2(s: string, j: number, n: number, contractions = true): number {
  if (j >= n || !(SET_A & bit(infoAt(s, j) & 15))) return -1;
  const k = runEnd(s, j, n, SET_A);
  const e = runEnd(s, k, n, SET_B);
  return contractions ? contractionCI(s, e, n) : e;
}

/** Where the o200k_base piece starting at i ends (i < n). */
export function pieceEndO200k(s: string, i: number, n: number): number {
  const x0 = infoAt(s, i);
  const c0 = x0 & 15;
  const b0 = bit(c0);
  let e: number;
  if (b0 & SET_P) {
    // `[^\r\n\p{L}\p{N}]?` is greedy: each letter alternative is tried with the leading char
    // consumed, then without it (which can only work when that char is a mark).
    const j = i + width(x0);
    if ((e = o200kAlt1(s, j, n)) >= 0) return e;
    if (c0 === MK && (e = o200kAlt1(s, i, n)) >= 0) return e;
    if ((e = o200kAlt2(s, j, n)) >= 0) return e;
    if (c0 === MK && (e = o200kAlt2(s, i, n)) >= 0) return e;
  } else if (b0 & SET_L) {
    if ((e = o200kAlt1(s, i, n)) >= 0) return e;
    if ((e = o200kAlt2(s, i, n)) >= 0) return e;
  }
  // `\p{N}{1,3}`
  if (c0 === NUM) return digitsEnd(s, i, n, x0);
  // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
  e = punctuationEnd(s, i, n, true);
  if (e >= 0) return e;
  if (b0 & SET_SPACE) return whitespaceEnd(s, i, n, true);
  return i + width(x0); // unreachable: every class is covered above
}

/** Where the cl100k_base piece starting at i ends (i < n). */
export function pieceEndCl100k(s: string, i: number, n: number): number {
  // `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
  let e = contractionCI(s, i, n);
  if (e !== i) return e;
  const x0 = infoAt(s, i);
  const c0 = x0 & 15;
  const b0 = bit(c0);
  // `[^\r\n\p{L}\p{N}]?\p{L}+`: with the leading char when a letter follows it; without it only
  // when the first char is itself a letter.
  if (b0 & SET_P) {
    const j = i + width(x0);
    if (j < n && SET_L & bit(infoAt(s, j) & 15)) return runEnd(s, j, n, SET_L);
  } else if (b0 & SET_L) {
    return runEnd(s, i, n, SET_L);
  }
  // `\p{N}{1,3}`
  if (c0 === NUM) return digitsEnd(s, i, n, x0);
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  e = punctuationEnd(s, i, n, false);
  if (e >= 0) return e;
  if (b0 & SET_SPACE) return whitespaceEnd(s, i, n, true);
  return i + width(x0);
}

/** Where the r50k_base / p50k_base (GPT-2) piece starting at i ends (i < n). */
export function pieceEndR50k(s: string, i: number, n: number): number {
  const e = contractionCS(s, i, n);
  if (e >= 0) return e;
  const x0 = infoAt(s, i);
  const c0 = x0 & 15;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`, each with the optional space first.
  const space = s.charCodeAt(i) === 0x20 && i + 1 < n;
  const c1 = space ? infoAt(s, i + 1) & 15 : 0;
  if (space && SET_L & bit(c1)) return runEnd(s, i + 1, n, SET_L);
  if (SET_L & bit(c0)) return runEnd(s, i, n, SET_L);
  if (space && c1 === NUM) return runEnd(s, i + 1, n, bit(NUM));
  if (c0 === NUM) return runEnd(s, i, n, bit(NUM));
  if (space && SET_Q & bit(c1)) return runEnd(s, i + 1, n, SET_Q);
  if (SET_Q & bit(c0)) return runEnd(s, i, n, SET_Q);
  // `\s+(?!\S)|\s+`
  if (SET_SPACE & bit(c0)) return whitespaceEnd(s, i, n, false);
  return i + width(x0);
}

/**
 * Where the Tekken (Mistral) piece starting at i ends (i < n). Its pattern is o200k_base's without
 * the contraction groups and with single digits:
 * `[^\r\n\p{L}\p{N}]?[A]*[B]+|[^\r\n\p{L}\p{N}]?[A]+[B]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
 */
export function pieceEndTekken(s: string, i: number, n: number): number {
  const x0 = infoAt(s, i);
  const c0 = x0 & 15;
  const b0 = bit(c0);
  let e: number;
  if (b0 & SET_P) {
    const j = i + width(x0);
    if ((e = o200kAlt1(s, j, n, false)) >= 0) return e;
    if (c0 === MK && (e = o200kAlt1(s, i, n, false)) >= 0) return e;
    if ((e = o200kAlt2(s, j, n, false)) >= 0) return e;
    if (c0 === MK && (e = o200kAlt2(s, i, n, false)) >= 0) return e;
  } else if (b0 & SET_L) {
    if ((e = o200kAlt1(s, i, n, false)) >= 0) return e;
    if ((e = o200kAlt2(s, i, n, false)) >= 0) return e;
  }
  // `\p{N}`
  if (c0 === NUM) return i + width(x0);
  e = punctuationEnd(s, i, n, true);
  if (e >= 0) return e;
  if (b0 & SET_SPACE) return whitespaceEnd(s, i, n, true);
  return i + width(x0);
}

/**
 * Where the Qwen2.5 / Qwen3 piece starting at i ends (i < n): cl100k_base's pattern with single
 * digits, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
 */
export function pieceEndQwen(s: string, i: number, n: number): number {
  let e = contractionCI(s, i, n);
  if (e !== i) return e;
  const x0 = infoAt(s, i);
  const c0 = x0 & 15;
  const b0 = bit(c0);
  if (b0 & SET_P) {
    const j = i + width(x0);
    if (j < n && SET_L & bit(infoAt(s, j) & 15)) return runEnd(s, j, n, SET_L);
  } else if (b0 & SET_L) {
    return runEnd(s, i, n, SET_L);
  }
  // `\p{N}`
  if (c0 === NUM) return i + width(x0);
  e = punctuationEnd(s, i, n, false);
  if (e >= 0) return e;
  if (b0 & SET_SPACE) return whitespaceEnd(s, i, n, true);
  return i + width(x0);
}

export type PieceEnd = (s: string, i: number, n: number) => number;

/**
 * Is a cut at p exact for every encoding here: does no piece span p, and do the pieces before p
 * come out the same when the text ends at p? True when the code point before p is a letter or a
 * number and the one at p is none of letter, number, mark or apostrophe. Why: no alternative of
 * any pattern matches a letter or number followed by such a character (letters continue only
 * into letters/marks or a contraction's apostrophe, numbers only into numbers), so a piece ends
 * at p; and the only construct that looks past a match, `\s+(?!\S)`, cannot end at p because the
 * character before p is not whitespace. Surrogate pairs are never split.
 */
export function isSafeCut(s: string, p: number): boolean {
  if (p <= 0 || p >= s.length) return false;
  const at = s.charCodeAt(p);
  if (at >= 0xdc00 && at <= 0xdfff) {
    const hi = s.charCodeAt(p - 1);
    if (hi >= 0xd800 && hi <= 0xdbff) return false; // inside a surrogate pair
  }
  const here = infoAt(s, p) & 15;
  if (here === LU || here === LL || here === LO || here === MK || here === NUM) return false;
  if (at === 0x27) return false;
  const lo = s.charCodeAt(p - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && p >= 2) {
    const hi = s.charCodeAt(p - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) {
      const before = infoAt(s, p - 2) & 15;
      return before === LU || before === LL || before === LO || before === NUM;
    }
  }
  const before = infoAt(s, p - 1) & 15;
  return before === LU || before === LL || before === LO || before === NUM;
}

/** End of `\p{N}{1,3}` starting at i, whose first character's info is x0. */
function digitsEnd(s: string, i: number, n: number, x0: number): number {
  let e = i + width(x0);
  for (let k = 1; k < 3 && e < n; k++) {
    const x = infoAt(s, e);
    if ((x & 15) !== NUM) break;
    e += width(x);
  }
  return e;
}

/**
 * End of ` ?[^\s\p{L}\p{N}]+[\r\n]*` starting at i (o200k_base also takes `/` in the trailing
 * class), or -1 when the pattern does not match there.
 */
function punctuationEnd(s: string, i: number, n: number, slash: boolean): number {
  const j = s.charCodeAt(i) === 0x20 ? i + 1 : i;
  if (j >= n || !(SET_Q & bit(infoAt(s, j) & 15))) return -1;
  let e = runEnd(s, j, n, SET_Q);
  while (e < n) {
    const c = s.charCodeAt(e);
    if (c !== 10 && c !== 13 && !(slash && c === 0x2f)) break;
    e++;
  }
  return e;
}
