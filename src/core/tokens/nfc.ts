/**
 * NFC as Qwen's reference computes it. Hugging Face `tokenizers` normalizes with the Rust crate
 * unicode-normalization-alignments, whose tables are Unicode 9.0's: a combining mark assigned later
 * is, for it, an unassigned code point, a starter that nothing composes with and that blocks
 * reordering. The runtime's `String.prototype.normalize` knows newer versions, so used as it is it
 * would reorder marks the reference leaves alone (a measured difference, e.g. "a\u1DF6\u0316").
 *
 * Unicode's normalization stability policy makes the runtime usable all the same: NFC of a string
 * of characters assigned in 9.0 is the same under every later version. So the text is normalized
 * between the code points unassigned in 9.0 (unicodeFamilies.ts), which stay as they are; the
 * pieces between them cannot interact across such a starter either way.
 */
import { ASSIGNED_9_RUNS } from './unicodeFamilies';

const ASSIGNED_BMP = new Uint8Array(0x10000);
let ASTRAL_START: Int32Array;
let ASTRAL_VALUE: Uint8Array;
{
  const starts: number[] = [];
  const values: number[] = [];
  let cp = 0;
  for (const run of ASSIGNED_9_RUNS.split(',')) {
    const v = run.charCodeAt(0) - 48;
    const len = Number.parseInt(run.slice(1), 36);
    if (cp < 0x10000) ASSIGNED_BMP.fill(v, cp, Math.min(cp + len, 0x10000));
    if (cp + len > 0x10000) {
      starts.push(Math.max(cp, 0x10000));
      values.push(v);
    }
    cp += len;
  }
  // Surrogate code units: a pair is looked up as its code point; a lone one is left alone by NFC.
  ASSIGNED_BMP.fill(1, 0xd800, 0xe000);
  ASTRAL_START = Int32Array.from(starts);
  ASTRAL_VALUE = Uint8Array.from(values);
}

function assignedAstral(cp: number): boolean {
  let lo = 0;
  let hi = ASTRAL_START.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ASTRAL_START[mid] <= cp) lo = mid;
    else hi = mid - 1;
  }
  return ASTRAL_VALUE[lo] === 1;
}

let checked = false;

/** Fails loudly on a runtime without Unicode normalization (Node built without ICU). */
function checkRuntime(): void {
  if (checked) return;
  if ('e\u0301'.normalize('NFC') !== '\u00e9' || '\u00e9'.normalize('NFD') !== 'e\u0301') {
    throw new Error('This JavaScript runtime has no Unicode normalization (String.prototype.normalize); Qwen token counts need it');
  }
  checked = true;
}

/**
 * NFC of s[start..end) with Unicode 9.0's tables (see above). Returns undefined when the slice is
 * already in that form without work: every code unit below U+0300 (no character there decomposes,
 * composes with a predecessor or has a combining class).
 */
export function nfc9(s: string, start: number, end: number): string | undefined {
  let i = start;
  while (i < end && s.charCodeAt(i) < 0x300) i++;
  if (i === end) return undefined;
  checkRuntime();
  const slice = s.slice(start, end);
  let out = '';
  let from = 0;
  const n = slice.length;
  for (let k = i - start; k < n; k++) {
    const c = slice.charCodeAt(k);
    let known: boolean;
    let width = 1;
    if (c >= 0xd800 && c <= 0xdbff && k + 1 < n) {
      const d = slice.charCodeAt(k + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        known = assignedAstral(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
        width = 2;
      } else known = true;
    } else known = ASSIGNED_BMP[c] === 1;
    if (!known) {
      out += slice.slice(from, k).normalize('NFC') + slice.slice(k, k + width);
      from = k + width;
    }
    k += width - 1;
  }
  out += from === 0 ? slice.normalize('NFC') : slice.slice(from).normalize('NFC');
  return out === slice ? undefined : out;
}
