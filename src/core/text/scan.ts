/**
 * Text scanners shared by templates and fixtures: characters that hide text from a reviewer
 * (`hidden-characters`) and credentials that would be sent to the model (`secret-in-context`).
 * Both work on any text with a `base` offset, so they can scan a slice of a file (a fixture value,
 * a template body) and still report spans in the whole file.
 */
import { finding } from '../rules/registry';
import type { Finding } from '../types';

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
    const shown = decoded.length > 60 ? `${decoded.slice(0, 60)}…` : decoded;
    parts.push(`hidden tag text: '${shown}' (${tags.length} Unicode tag character${tags.length === 1 ? '' : 's'}, ${hex(Math.min(...tags))}–${hex(Math.max(...tags))})`);
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
    out.push(finding('hidden-characters', path, { start: base + start, end: base + end }, message));
  }
  return out;
}

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

interface SecretPattern {
  name: string;
  re: RegExp;
  /** Placeholders such as `sk-your-key-here` are not secrets: require some randomness. */
  random?: boolean;
}

// Order matters: the more specific prefix wins when two patterns match the same text. Each
// pattern starts with its literal prefix and checks the character before it with a lookbehind
// placed after the prefix, so the regex engine can jump from prefix to prefix through long text.
const W = 'A-Za-z0-9_-';
const prefixed = (prefix: string, rest: string, before = W) => new RegExp(`${prefix}(?<![${before}]${prefix})${rest}`, 'g');
const SECRET_PATTERNS: SecretPattern[] = [
  { name: 'private key', re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g },
  { name: 'Anthropic API key', re: prefixed('sk-ant-', `[${W}]{20,}`), random: true },
  { name: 'OpenAI API key', re: prefixed('sk-', `(?:proj-|svcacct-|admin-)?[${W}]{20,}`), random: true },
  { name: 'AWS access key id', re: /(?:AKIA|ASIA)(?<![A-Z0-9](?:AKIA|ASIA))[0-9A-Z]{16}(?![A-Z0-9])/g },
  { name: 'GitHub token', re: prefixed('gh[pousr]_', '[A-Za-z0-9]{36,}'), random: true },
  { name: 'GitHub token', re: prefixed('github_pat_', '[A-Za-z0-9_]{22,}'), random: true },
  { name: 'Google API key', re: prefixed('AIza', `[0-9A-Za-z_-]{35}`), random: true },
  { name: 'Slack token', re: prefixed('xox[abpr]-', '[A-Za-z0-9-]{10,}'), random: true },
  { name: 'JSON Web Token', re: prefixed('eyJ', `[${W}]{8,}\\.[${W}]{8,}\\.[${W}]{8,}`) },
];

function looksRandom(s: string): boolean {
  return /[0-9]/.test(s) && /[A-Za-z]/.test(s) && new Set(s).size >= 8;
}

/** Shows enough of a secret to find it (`sk-pro…9f2`), never the whole. */
export function redactSecret(s: string): string {
  if (s.length <= 12) return `${s.slice(0, 3)}…`;
  return `${s.slice(0, 6)}…${s.slice(-3)}`;
}

/** `secret-in-context` findings for API keys, tokens and private key blocks in `text`. */
export function scanSecrets(path: string, text: string, base = 0): Finding[] {
  const hits: Array<{ start: number; end: number; message: string }> = [];
  const overlaps = (s: number, e: number) => hits.some((h) => s < h.end && h.start < e);
  for (const p of SECRET_PATTERNS) {
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m; m = p.re.exec(text)) {
      const start = m.index;
      let end = start + m[0].length;
      if (p.random && !looksRandom(m[0])) continue;
      let message: string;
      if (p.name === 'private key') {
        // Cover the whole block when its END line is there, so the squiggle shows what to remove.
        const endMarker = `-----END ${m[1] ?? ''}PRIVATE KEY${m[2] ?? ''}-----`;
        const close = text.indexOf(endMarker, end);
        if (close >= 0 && close - end < 100_000) end = close + endMarker.length;
        message = `A private key block (${m[0]}) would be sent to the model; remove it and rotate the key.`;
      } else {
        const article = /^[AEIOU]/.test(p.name) ? 'an' : 'a';
        message = `Looks like ${article} ${p.name} (${redactSecret(m[0])}); it would be sent to the model. Remove it and rotate the credential.`;
      }
      if (overlaps(start, end)) continue;
      hits.push({ start, end, message });
    }
  }
  hits.sort((a, b) => a.start - b.start);
  return hits.map((h) => finding('secret-in-context', path, { start: base + h.start, end: base + h.end }, h.message));
}
