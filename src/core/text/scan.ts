/**
 * Text scanners shared by templates and fixtures: characters that hide text from a reviewer
 * (`hidden-characters`) and credentials that would be sent to the model (`secret-in-context`).
 * Both work on any text with a `base` offset, so they can scan a slice of a file (a fixture value,
 * a template body) and still report spans in the whole file. The credential patterns live in
 * secrets.ts, shared with the redaction every finding message gets.
 */
import { finding } from '../rules/registry';
import type { Finding, Span } from '../types';
import { Coverage, findSecrets, redactSecret, redactSecrets } from './secrets';
import type { SecretHit } from './secrets';
import { isMap, isScalar, isSeq, nodeSpan } from './yaml';
import type { YamlSource } from './yaml';

// ---------------------------------------------------------------------------
// Hidden characters
// ---------------------------------------------------------------------------

const NAMES: Record<number, string> = {
  0x180e: 'mongolian vowel separator',
  0x200b: 'zero width space',
  0x200c: 'zero width non-joiner',
  0x200d: 'zero width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2061: 'function application',
  0x2062: 'invisible times',
  0x2063: 'invisible separator',
  0x2064: 'invisible plus',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero width no-break space (BOM)',
};

function isTag(cp: number): boolean {
  return cp >= 0xe0000 && cp <= 0xe007f;
}

function isHiddenCodePoint(cp: number): boolean {
  return NAMES[cp] !== undefined || isTag(cp);
}

const PICTOGRAPHIC = /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F]/u;
const NON_ASCII_LETTER = /[\p{L}\p{M}]/u;

function codePointBefore(text: string, i: number): string {
  if (i <= 0) return '';
  const lo = text.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) {
    const hi = text.charCodeAt(i - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return text.slice(i - 2, i);
  }
  return text.charAt(i - 1);
}

function codePointAfter(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/**
 * Whether the code point at `i` is one a reviewer cannot see and should be told about. Joiners
 * that do visible work are left alone: ZWJ inside emoji sequences (👨‍👩‍👧), and ZWJ / ZWNJ between
 * letters of scripts that need them (Persian, Indic). A BOM at the very start of a file is normal.
 */
function isFlagged(text: string, i: number, cp: number, base: number): boolean {
  if (!isHiddenCodePoint(cp)) return false;
  if (cp === 0xfeff && base + i === 0) return false;
  if (cp === 0x200d || cp === 0x200c) {
    const before = codePointBefore(text, i);
    const after = codePointAfter(text, i + 1);
    if (cp === 0x200d && PICTOGRAPHIC.test(before) && PICTOGRAPHIC.test(after)) return false;
    const letter = (s: string) => s !== '' && s.charCodeAt(0) > 0x7f && NON_ASCII_LETTER.test(s);
    if (letter(before) && letter(after)) return false;
  }
  return true;
}

function hex(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function describeRun(cps: number[]): string {
  const parts: string[] = [];
  const tags = cps.filter(isTag);
  if (tags.length > 0) {
    let decoded = '';
    for (const cp of tags) {
      const ascii = cp - 0xe0000;
      if (ascii >= 0x20 && ascii <= 0x7e) decoded += String.fromCharCode(ascii);
    }
    // Redacted before it is cut: hidden text can be a credential, and one cut short is not recognised.
    const clean = redactSecrets(decoded);
    const shown = clean.length > 60 ? `${clean.slice(0, 60)}…` : clean;
    parts.push(`hidden tag text: '${shown}' (${tags.length} Unicode tag character${tags.length === 1 ? '' : 's'}, ${hex(tags.reduce((a, b) => Math.min(a, b)))}–${hex(tags.reduce((a, b) => Math.max(a, b)))})`);
  }
  const counts = new Map<number, number>();
  for (const cp of cps) if (!isTag(cp)) counts.set(cp, (counts.get(cp) ?? 0) + 1);
  if (counts.size > 0) {
    const list = [...counts].map(([cp, n]) => `${hex(cp)} ${NAMES[cp]}${n > 1 ? ` ×${n}` : ''}`).join(', ');
    const bidi = [...counts.keys()].some((cp) => (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f);
    parts.push(`${tags.length > 0 ? 'and ' : ''}${bidi ? 'invisible/bidirectional control characters' : 'invisible characters'}: ${list}`);
  }
  return parts.join(' ');
}

/** Candidates only; `isFlagged` decides. Searching with a regex skips ordinary text fast. */
const CANDIDATE = /[\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/g;

/** Offsets (and code points) of flagged characters, in order. */
function flaggedPositions(text: string, base: number): Array<{ at: number; cp: number; width: number }> {
  const out: Array<{ at: number; cp: number; width: number }> = [];
  const re = new RegExp(CANDIDATE.source, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const cp = text.codePointAt(m.index) as number;
    if (isFlagged(text, m.index, cp, base)) out.push({ at: m.index, cp, width: m[0].length });
  }
  return out;
}

/** One `hidden-characters` finding per run of adjacent hidden characters. */
export function scanHiddenCharacters(path: string, text: string, base = 0): Finding[] {
  const out: Finding[] = [];
  const hits = flaggedPositions(text, base);
  // A text pasted with hidden characters tends to repeat the same runs; describe each once.
  const messages = new Map<string, string>();
  for (let k = 0; k < hits.length; ) {
    const start = hits[k].at;
    let end = start + hits[k].width;
    const run = [hits[k].cp];
    k++;
    while (k < hits.length && hits[k].at === end) {
      run.push(hits[k].cp);
      end += hits[k].width;
      k++;
    }
    const key = run.join(',');
    let message = messages.get(key);
    if (message === undefined) {
      message = describeRun(run);
      messages.set(key, message);
    }
    if (out.length === MAX_HIDDEN_FINDINGS) {
      // One located summary instead of a finding per run: a text of 150,000 hidden characters
      // would otherwise publish tens of megabytes of diagnostics.
      const last = hits[hits.length - 1];
      let more = 1;
      for (let j = k; j < hits.length; j++) if (hits[j].at !== hits[j - 1].at + hits[j - 1].width) more++;
      out.push(finding('hidden-characters', path, { start: base + start, end: base + last.at + last.width }, `${more} more run${more === 1 ? '' : 's'} of hidden characters from here on (only the first ${MAX_HIDDEN_FINDINGS} are listed one by one).`));
      break;
    }
    out.push(finding('hidden-characters', path, { start: base + start, end: base + end }, message));
  }
  return out;
}

/** Hidden-character findings listed one by one in one text; the rest are one summary finding. */
export const MAX_HIDDEN_FINDINGS = 100;

/** Replaces every flagged character with a visible `⟨U+200B⟩` marker, for views and hovers. */
export function visibleHiddenCharacters(text: string, base = 0): string {
  const hits = flaggedPositions(text, base);
  if (hits.length === 0) return text;
  let out = '';
  let last = 0;
  for (const h of hits) {
    out += `${text.slice(last, h.at)}⟨${hex(h.cp)}⟩`;
    last = h.at + h.width;
  }
  return out + text.slice(last);
}

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------

export { redactSecret, redactSecrets } from './secrets';

/** A backslash escape that can spell key characters (`\x73`, `\u0073`, `\/`) or join lines. */
const ESCAPE = /\\(?:[xuU/]|\r\n?|\n)/;

/**
 * The text with the escapes of YAML double-quoted (and JSON) strings decoded, and for each
 * decoded UTF-16 unit the source range it came from. Decoded everywhere, not only inside quotes:
 * pairing quotes needs a parse, and decoding an escape outside a string can only find a secret
 * that the escapes spell. Other escapes (`\n`, `\t`, ...) are kept as written: they stand for
 * characters no key contains, so they end a key either way.
 */
function decodeEscapes(text: string): { text: string; from: number[]; to: number[] } {
  let out = '';
  const from: number[] = [];
  const to: number[] = [];
  const put = (s: string, start: number, end: number) => {
    for (let k = 0; k < s.length; k++) {
      from.push(start);
      to.push(end);
    }
    out += s;
  };
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === '\\' && i + 1 < text.length) {
      const n = text.charAt(i + 1);
      const hexLen = n === 'x' ? 2 : n === 'u' ? 4 : n === 'U' ? 8 : 0;
      if (hexLen) {
        const hex = text.slice(i + 2, i + 2 + hexLen);
        const cp = /^[0-9A-Fa-f]+$/.test(hex) && hex.length === hexLen ? Number.parseInt(hex, 16) : NaN;
        if (cp <= 0x10ffff) {
          put(String.fromCodePoint(cp), i, i + 2 + hexLen);
          i += 2 + hexLen;
          continue;
        }
      } else if (n === '\\') {
        // An escaped backslash: the character after it starts no escape.
        put('\\\\', i, i + 2);
        i += 2;
        continue;
      } else if (n === '/') {
        put('/', i, i + 2);
        i += 2;
        continue;
      } else if (n === '\r' || n === '\n') {
        // An escaped line break continues the string on the next line, without its indentation.
        let j = i + 2;
        if (n === '\r' && text.charAt(j) === '\n') j++;
        while (text.charAt(j) === ' ' || text.charAt(j) === '\t') j++;
        i = j;
        continue;
      }
    }
    put(c, i, i + 1);
    i++;
  }
  from.push(text.length);
  to.push(text.length);
  return { text: out, from, to };
}

function secretMessage(hit: SecretHit, escaped: boolean): string {
  if (hit.pattern.block) return `A private key block (${hit.secret}) would be sent to the model; remove it and rotate the key.`;
  const article = /^[AEIOU]/.test(hit.pattern.name) ? 'an' : 'a';
  return `Looks like ${article} ${hit.pattern.name} (${redactSecret(hit.secret)})${escaped ? ', written with escape sequences' : ''}; it would be sent to the model. Remove it and rotate the credential.`;
}

/**
 * `secret-in-context` findings for API keys, tokens and private key blocks in `text`, also when
 * they are spelled with escapes (`"\x73k-…"`, `"\u0073k-…"`, a `\` line continuation, JSON's
 * `\/`): those are reported over the escaped source.
 */
export function scanSecrets(path: string, text: string, base = 0): Finding[] {
  const hits: Array<{ start: number; end: number; message: string }> = findSecrets(text).map((h) => ({ start: h.start, end: h.end, message: secretMessage(h, false) }));
  if (ESCAPE.test(text)) {
    const taken = new Coverage(text.length);
    for (const h of hits) taken.mark(h.start, h.end);
    const decoded = decodeEscapes(text);
    for (const h of findSecrets(decoded.text)) {
      const start = decoded.from[h.start];
      const end = decoded.to[h.end - 1];
      if (taken.overlaps(start, end)) continue;
      taken.mark(start, end);
      hits.push({ start, end, message: secretMessage(h, true) });
    }
    hits.sort((a, b) => a.start - b.start);
  }
  return hits.map((h) => finding('secret-in-context', path, { start: base + h.start, end: base + h.end }, h.message));
}

/**
 * `scanSecrets` of a parsed YAML text, plus the secrets only its parsed string values show (a
 * scalar folded or escaped in a way the text scan does not undo), each reported over the whole
 * scalar. Use it instead of `scanSecrets` where the YAML document is at hand.
 */
export function scanYamlSecrets(path: string, src: YamlSource): Finding[] {
  const out = scanSecrets(path, src.text, src.base);
  const taken = new Coverage(src.text.length);
  for (const f of out) taken.mark(f.span.start - src.base, f.span.end - src.base);
  const covered = (span: Span) => taken.overlaps(span.start - src.base, span.end - src.base);
  const stack: unknown[] = [src.doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isMap(node)) {
      for (const pair of node.items) stack.push(pair.key, pair.value);
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    } else if (isScalar(node) && typeof node.value === 'string') {
      const span = nodeSpan(src, node);
      if (!span || covered(span)) continue;
      const hit = findSecrets(node.value)[0];
      if (hit) out.push(finding('secret-in-context', path, span, secretMessage(hit, true)));
    }
  }
  return out.sort((a, b) => a.span.start - b.span.start);
}
