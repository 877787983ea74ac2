/**
 * Deterministic mixed text for the token-count bench and the parity tests: prose with odd-case
 * contractions, code, pretty and minified JSON, non-Latin scripts (with combining marks), emoji
 * sequences, whitespace runs (tabs, CRLF, NBSP, ideographic space, U+2028), U+FEFF, literal
 * special-token text and long runs without spaces. Generated from a seeded PRNG, with invented
 * words mixed in, so the pieces are varied enough that a per-piece cache is not flattered.
 */

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];

const COMMON = (
  'the of and to in is that it for was on are as with be by this at from or have an they which one you ' +
  'had not but what all were when we there can been has more if will would about so out up into than ' +
  'them could only other new some time these two may first then do any like my now over such our man ' +
  'me even most made after also did many before must through back years where much your way well down ' +
  'should because each just those people how too little state good very make world still own see men ' +
  'work long get here between both life being under never day same another know while last might us ' +
  'great old year off come since against go came right used take three request context window budget ' +
  'token model retry policy evidence history refund customer support version document answer'
).split(' ');
const CONTRACTIONS = ["don't", "it's", "I'll", "we're", "they've", "I'm", "she'd", "DON'T", "I'Ll", "WE'RE", "You'VE", "it'S", "can't", "won't", "o'clock", "rock'n'roll", "don'ſ"];
const SYLLABLES = 'ka ri to mo lu ne sha vel dor quin zar ept ion ment ful ble str gh ph th ck oo ea ai ou ly xi zy'.split(' ');

function invented(r: Rand): string {
  let w = '';
  const n = 1 + int(r, 4);
  for (let i = 0; i < n; i++) w += pick(r, SYLLABLES);
  return w;
}

function word(r: Rand): string {
  const x = r();
  if (x < 0.62) return pick(r, COMMON);
  if (x < 0.7) return pick(r, CONTRACTIONS);
  if (x < 0.74) return String(int(r, 100000));
  if (x < 0.76) return (r() * 1000).toFixed(int(r, 4));
  return invented(r);
}

function sentence(r: Rand): string {
  const n = 4 + int(r, 18);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = word(r);
    if (i === 0 || r() < 0.05) w = w.charAt(0).toUpperCase() + w.slice(1);
    if (r() < 0.02) w = w.toUpperCase();
    if (r() < 0.06) w += pick(r, [',', ';', ':', ' -', ' —']);
    if (r() < 0.03) w = `"${w}"`;
    if (r() < 0.02) w = `(${w})`;
    words.push(w);
  }
  return words.join(' ') + pick(r, ['.', '.', '.', '?', '!', '...', '."', '?!']);
}

function prose(r: Rand): string {
  const paras: string[] = [];
  const n = 1 + int(r, 4);
  for (let p = 0; p < n; p++) {
    const s: string[] = [];
    const k = 2 + int(r, 6);
    for (let i = 0; i < k; i++) s.push(sentence(r));
    let para = s.join(r() < 0.9 ? ' ' : '  ');
    if (r() < 0.15) para = `## ${sentence(r)}\n\n${para}`;
    if (r() < 0.1) para = `- ${sentence(r)}\n- ${sentence(r)}\n  - ${sentence(r)}`;
    if (r() < 0.05) para += ` See https://example.com/${invented(r)}/${int(r, 9999)}?q=${invented(r)}&v=4.2#sec-${int(r, 9)}.`;
    paras.push(para);
  }
  return paras.join(r() < 0.8 ? '\n\n' : '\r\n\r\n');
}

function ident(r: Rand): string {
  const a = invented(r);
  const b = pick(r, COMMON);
  switch (int(r, 4)) {
    case 0:
      return a + b.charAt(0).toUpperCase() + b.slice(1);
    case 1:
      return `${a}_${b}`;
    case 2:
      return (a + '_' + b).toUpperCase();
    default:
      return a;
  }
}

function code(r: Rand): string {
  const indent = pick(r, ['  ', '    ', '\t']);
  const lines: string[] = [];
  const fn = ident(r);
  if (r() < 0.5) {
    lines.push(`export function ${fn}(${ident(r)}: string, ${ident(r)}?: number): Promise<${pick(r, ['void', 'string[]', 'Record<string, number>'])}> {`);
    for (let i = 0; i < 3 + int(r, 10); i++) {
      const d = indent.repeat(1 + int(r, 3));
      switch (int(r, 6)) {
        case 0:
          lines.push(`${d}const ${ident(r)} = await ${ident(r)}.${ident(r)}(${int(r, 1000)}, '${sentence(r).slice(0, 30)}');`);
          break;
        case 1:
          lines.push(`${d}if (${ident(r)} >= ${int(r, 64)} && !${ident(r)}) { return ${ident(r)}; }`);
          break;
        case 2:
          lines.push(`${d}// ${sentence(r)}`);
          break;
        case 3:
          lines.push(`${d}for (let i = 0; i < ${ident(r)}.length; i++) ${ident(r)}[i] += ${ident(r)}[i - 1] ?? 0;`);
          break;
        case 4:
          lines.push('');
          break;
        default:
          lines.push(`${d}${ident(r)} = \`\${${ident(r)}}/${invented(r)}\`;   `);
      }
    }
    lines.push('}');
  } else {
    lines.push(`def ${fn.toLowerCase()}(self, ${ident(r).toLowerCase()}, retries=${int(r, 9)}):`);
    lines.push(`    """${sentence(r)}"""`);
    for (let i = 0; i < 2 + int(r, 8); i++) {
      const d = '    '.repeat(1 + int(r, 3));
      switch (int(r, 4)) {
        case 0:
          lines.push(`${d}${ident(r).toLowerCase()} = self.${ident(r).toLowerCase()}[${int(r, 10)}:${int(r, 99)}]`);
          break;
        case 1:
          lines.push(`${d}if not ${ident(r).toLowerCase()}:  # ${sentence(r)}`);
          break;
        case 2:
          lines.push(`${d}raise ValueError(f"bad {${ident(r).toLowerCase()}!r}")`);
          break;
        default:
          lines.push(`${d}return {k: v for k, v in ${ident(r).toLowerCase()}.items() if v is not None}`);
      }
    }
  }
  return lines.join(r() < 0.9 ? '\n' : '\r\n');
}

function jsonValue(r: Rand, depth: number): unknown {
  const x = r();
  if (depth > 3 || x < 0.3) {
    switch (int(r, 6)) {
      case 0:
        return int(r, 1e6);
      case 1:
        return Math.round(r() * 1e6) / 1e3;
      case 2:
        return r() < 0.5;
      case 3:
        return null;
      case 4:
        return nonLatinWords(r, 1 + int(r, 4));
      default:
        return sentence(r);
    }
  }
  if (x < 0.55) return Array.from({ length: 1 + int(r, 5) }, () => jsonValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = 0; i < 1 + int(r, 6); i++) o[ident(r)] = jsonValue(r, depth + 1);
  return o;
}

function json(r: Rand): string {
  const v = { id: `ev_${int(r, 9999).toString().padStart(4, '0')}`, source: `${invented(r)}/${invented(r)}`, data: jsonValue(r, 0) };
  const x = r();
  if (x < 0.4) return JSON.stringify(v);
  if (x < 0.8) return JSON.stringify(v, null, 2);
  return JSON.stringify(v, null, '\t');
}

const SCRIPTS: Array<[number, number]> = [
  [0x0410, 0x044f], // Cyrillic
  [0x03b1, 0x03c9], // Greek
  [0x0627, 0x064a], // Arabic
  [0x05d0, 0x05ea], // Hebrew
  [0x0905, 0x0939], // Devanagari letters
  [0x0e01, 0x0e2e], // Thai
  [0x4e00, 0x4fff], // CJK ideographs
  [0x3041, 0x3096], // Hiragana
  [0x30a1, 0x30fa], // Katakana
  [0xac00, 0xad00], // Hangul syllables
  [0x00c0, 0x00ff], // Latin-1 letters
  [0x0100, 0x017f], // Latin Extended-A (includes U+017F long s)
];
const MARKS = [0x0301, 0x0308, 0x093e, 0x093f, 0x094d, 0x0e31, 0x0e34, 0x0e48, 0x064b, 0x05b8, 0x0323];

function nonLatinWords(r: Rand, n: number): string {
  const [lo, hi] = pick(r, SCRIPTS);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = '';
    const len = 1 + int(r, 7);
    for (let k = 0; k < len; k++) {
      w += String.fromCodePoint(lo + int(r, hi - lo + 1));
      if (r() < 0.15) w += String.fromCodePoint(pick(r, MARKS));
    }
    out.push(w);
  }
  const sep = lo >= 0x3041 && lo < 0xac00 ? '' : ' ';
  return out.join(sep) + pick(r, ['.', '。', '،', '!', '', '?', '।']);
}

function nonLatin(r: Rand): string {
  const lines: string[] = [];
  for (let i = 0; i < 1 + int(r, 5); i++) lines.push(nonLatinWords(r, 3 + int(r, 20)));
  return lines.join('\n');
}

const EMOJI = ['😀', '🚀', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '🏳️‍🌈', '❤️', '1️⃣', '🧑🏿‍💻', '✅', '🔥', '🙂', '☕', '🤖', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𐍈', '🀄'];

function emoji(r: Rand): string {
  let s = '';
  for (let i = 0; i < 1 + int(r, 12); i++) s += pick(r, EMOJI) + (r() < 0.5 ? ' ' : '') + (r() < 0.2 ? pick(r, COMMON) + ' ' : '');
  return s;
}

const SPACES = [' ', '  ', '   ', '\t', '\t\t', '\n', '\r\n', '\n\n\n', ' \n', '\u00a0', '\u3000', '\u2028', '\u0085', '\u2003', '\u200b', '\ufeff', '\u000b', '\f'];

function whitespace(r: Rand): string {
  let s = '';
  for (let i = 0; i < 2 + int(r, 10); i++) s += pick(r, SPACES).repeat(1 + int(r, 3)) + (r() < 0.6 ? word(r) : pick(r, ['.', '/', '//', '-', '*', '#', '']));
  return s;
}

function edge(r: Rand): string {
  switch (int(r, 10)) {
    case 0:
      return '\ufeff' + sentence(r);
    case 1:
      return `${sentence(r)} <|endoftext|> ${sentence(r)}<|endofprompt|><|fim_prefix|>`;
    case 2:
      return pick(r, ['a', 'x', '=', '-', '0', ' ', '.', 'é', '我', '\t']).repeat(50 + int(r, 400));
    case 3: {
      let b = '';
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      for (let i = 0; i < 100 + int(r, 600); i++) b += alphabet[int(r, 64)];
      return b + '==';
    }
    case 4: {
      let h = '';
      for (let i = 0; i < 64; i++) h += '0123456789abcdef'[int(r, 16)];
      return `sha256:${h}`;
    }
    case 5:
      return `${invented(r)}${invented(r)}${invented(r)}${invented(r)}${invented(r)}${invented(r)}`.repeat(1 + int(r, 5));
    case 6:
      return "'s 'S 'ſ 'LL 'Ll 're 'RE 'Ve X's x'S Ü'd 123'm";
    case 7:
      return '\u202e\u2066hidden\u2069 \u{e0041}\u{e0042} zero\u200dwidth';
    case 8:
      return String.fromCharCode(0xd800) + 'lone' + String.fromCharCode(0xdc00) + ' surrogates';
    default:
      return `${'/'.repeat(1 + int(r, 5))}\n${'/'.repeat(1 + int(r, 3))}\r\n/\n\n/ ./ \n/`;
  }
}

/** One block of a given kind; kinds are weighted towards prose and code, as prompts are. */
export function block(r: Rand): string {
  const x = r();
  if (x < 0.34) return prose(r);
  if (x < 0.56) return code(r);
  if (x < 0.7) return json(r);
  if (x < 0.82) return nonLatin(r);
  if (x < 0.88) return emoji(r);
  if (x < 0.95) return whitespace(r);
  return edge(r);
}

/** Mixed text of at least `minBytes` UTF-8 bytes, the same for the same seed. */
export function mixedCorpus(minBytes: number, seed = 1): string {
  const r = prng(seed);
  const parts: string[] = [];
  let bytes = 0;
  const enc = new TextEncoder();
  while (bytes < minBytes) {
    const b = block(r);
    parts.push(b);
    bytes += enc.encode(b).length + 2;
  }
  return parts.join(pick(r, ['\n\n', '\n', ' ', '\n\n\n']));
}

/** Short mixed documents (one to a few blocks each), for per-document parity checks. */
export function mixedDocuments(count: number, seed = 2): string[] {
  const r = prng(seed);
  const docs: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + int(r, 3);
    const parts: string[] = [];
    for (let k = 0; k < n; k++) parts.push(block(r));
    docs.push(parts.join(pick(r, ['\n', '\n\n', ' ', '', '\r\n'])));
  }
  return docs;
}
