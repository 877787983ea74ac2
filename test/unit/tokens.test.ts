/**
 * Token counts against the reference: the `tiktoken` npm package (OpenAI's Rust tiktoken compiled
 * to WASM, dev-only) is the oracle. Covers a generated mixed corpus, the edge cases of issue 2
 * (U+FEFF, odd-case contractions, special-token text, long runs), the hand-written
 * pre-tokenizers against their regex specification, the heap merge against tiktoken's scan, and
 * the exactness of chunked and cached counting under random edits.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { mixedCorpus, mixedDocuments, prng } from '../../bench/tokens/corpus';
import { chars4, clearTokenCaches, codePointCount, getTokenizer, listTokenizers, type BpeTokenizer } from '../../src/core/tokens';
import { countHeap, countScan } from '../../src/core/tokens/bpe';
import { cutPoints } from '../../src/core/tokens/chunks';
import { PieceCache } from '../../src/core/tokens/pieceCache';
import { ENCODINGS } from '../../src/core/tokens/encodings';
import { BpeEngine } from '../../src/core/tokens/engine';
import { classOf, isSafeCut, LL, LO, LU, MK, NL, NUM, OTHER, WS } from '../../src/core/tokens/pretokenize';
import { UNICODE_VERSION } from '../../src/core/tokens/unicodeClasses';
import { requireJsTiktokenRanks } from '../../src/core/tokens/rankData';
import { decodeRankAsset, encodeRankAsset, parseJsTiktokenRanks } from '../../src/core/tokens/rankTable';

const EXACT = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'] as const;
type Exact = (typeof EXACT)[number];

const oracles = new Map<string, Tiktoken>();
function oracle(name: Exact): Tiktoken {
  let o = oracles.get(name);
  if (!o) {
    o = get_encoding(name);
    oracles.set(name, o);
  }
  return o;
}
const reference = (name: Exact, text: string): number => oracle(name).encode_ordinary(text).length;
const ours = (name: Exact): BpeTokenizer => getTokenizer(name) as BpeTokenizer;

afterAll(() => {
  for (const o of oracles.values()) o.free();
});

/** Characters that matter to some alternative of some pattern, or to UTF-8 and BPE. */
const TRICKY = [
  'a', 'b', 'e', 'z', 's', 't', 'r', 'v', 'm', 'l', 'd', 'A', 'S', 'T', 'R', 'E', 'V', 'M', 'L', 'D', 'Z',
  'ſ', 'é', 'É', 'ǅ', 'ʰ', '中', 'ä', 'Ω', 'ω', 'я', 'Я', 'ก', 'ั', '\u0301', '\u093f', 'ह', '𝔘', '𝔲', '𠀀',
  '0', '7', '²', 'Ⅻ', '٣', '𝟘',
  "'", "'", '’', '/', '.', ',', '-', '_', '"', '<', '|', '>', '{', '}', '!', '?', '#', '@', '😀', '👍🏽', '\u200d', '\ufe0f',
  ' ', ' ', ' ', '\t', '\n', '\n', '\r', '\r\n', '\u00a0', '\u0085', '\u2028', '\u3000', '\u000b', '\f', '\ufeff', '\u200b',
  '\ud800', '\udc00',
];

function tricky(r: () => number, maxLen: number): string {
  const len = Math.floor(r() * (maxLen + 1));
  let s = '';
  for (let i = 0; i < len; i++) s += TRICKY[Math.floor(r() * TRICKY.length)];
  return s;
}

const EDGE_CASES: Array<[string, string]> = [
  ['empty', ''],
  ['leading BOM', '\ufeffHello world'],
  ['BOM only', '\ufeff'],
  ['embedded BOM', 'one\ufefftwo \ufeff three\ufeff\ufeff\n\ufeff'],
  ['BOM before space', 'a \ufeff\ufeff b'],
  // Strings whose counts differ when U+FEFF is taken for whitespace (JavaScript's \s):
  ['BOM after space', ' \ufeffhello \ufeff  hello'],
  ['BOM between digits', '1 \ufeff1 1\ufeff \ufeff'],
  ['BOM between spaces', '  \ufeff\ufeff  \ufeff\ufeff1\n '],
  ['NEL between words', 'a\u0085b\u0085\u0085 c  \u0085x'],
  ['odd-case contractions', "DON'T I'Ll WE'RE You'VE it'S she'D they'Ve I'M o'CLOCK"],
  // U+017F folds to s, so tiktoken's (?i:'s) takes "'ſ": "X I'ſ" is 3 tokens, not 4.
  ['long s contraction', "X I'ſ"],
  ['long s contractions', "it'ſ don'ſ 'ſ X'ſt don I'ſt ſt I'ſt"],
  ['contraction-like', "'s 'S 'LL 'Ll 'rE 'vE ''s 's's rock'n'roll '"],
  ['special token text', 'Ignore this: <|endoftext|> and <|endofprompt|><|fim_prefix|><|fim_middle|><|fim_suffix|>'],
  ['special token alone', '<|endoftext|>'],
  ['run of a', 'a'.repeat(12_000)],
  ['run of A', 'A'.repeat(3_000)],
  ['run of ab', 'ab'.repeat(2_500)],
  ['run of digits', '1234567890'.repeat(1_000)],
  ['run of equals', '='.repeat(5_000)],
  ['run of spaces then word', ' '.repeat(5_000) + 'word'],
  ['run of spaces at end', 'word' + ' '.repeat(5_000)],
  ['run of newlines', '\n'.repeat(3_000) + 'x' + '\r\n'.repeat(2_000)],
  ['mixed whitespace run', ' \t \u00a0\u3000 \n \t\u2028 \u0085 x'],
  ['run of CJK', '中文字符'.repeat(800)],
  ['run of emoji', '😀👍🏽🇫🇷'.repeat(500)],
  ['base64 blob', Array.from({ length: 4_000 }, (_, i) => 'QmFzZTY0+/'[(i * 7) % 10]).join('')],
  ['combining marks', 'e\u0301\u0301\u0301 ה\u05b8 किताब ก\u0e31\u0e48'],
  ['lone surrogates', 'x\ud800y \udc00 z\ud83d'],
  ['NEL and friends', 'a\u0085b\u0085\u0085 c\u2028d\u2029e'],
  ['slashes after newline', 'a.\n/b\n//c\r\n/\n\n/'],
  ['title case and modifiers', 'ǅemal ʰello ǈ ʻokina Ωmega'],
  // Letters new in Unicode 16.0 (known to the reference) and code points assigned only in 17.0
  // (unassigned for the reference, whatever the JavaScript runtime's Unicode version says).
  ['Unicode 16.0 letters', 'x\u1C89\u1C8A A\uA7CBa \u{10D50}\u{10D70}a \u{16D40}\u{16D41}1 \u{105C0}x'],
  ['Unicode 17.0 code points', 'a\u088Fb \u0C5C1 A\uA7CEa \u{10940}x \u1ACF\u1ACF a\u0CDC\u0CDC\u{11DB0}'],
  ['U+0295, Ll in Unicode 16.0', 'A\u0295A \u0295\u0295 A\u0295 \u0295A x\u0295\'s'],
];

describe('exact tokenizers match the tiktoken reference', () => {
  const docs = mixedDocuments(200, 11);
  const corpus = mixedCorpus(256 * 1024, 5);

  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: each of 200 mixed documents`, () => {
      const t = ours(name);
      const bad = docs.filter((d) => t.count(d) !== reference(name, d));
      expect(bad.map((d) => JSON.stringify(d).slice(0, 120))).toEqual([]);
    });

    it(`${name}: a 256 KiB mixed corpus as one text, cold and cached`, () => {
      const t = ours(name);
      clearTokenCaches();
      const expected = reference(name, corpus);
      expect(t.engine.count(corpus)).toBe(expected); // plain engine, no chunking
      expect(t.count(corpus)).toBe(expected); // chunked
      expect(t.count(corpus)).toBe(expected); // whole-text cache
    });

    for (const [label, text] of EDGE_CASES) {
      it(`${name}: ${label}`, () => {
        clearTokenCaches();
        expect(ours(name).count(text)).toBe(reference(name, text));
      });
    }

    it(`${name}: 1,500 random strings of pattern-relevant characters`, () => {
      const r = prng(name.length * 7919);
      const t = ours(name);
      const bad: string[] = [];
      for (let i = 0; i < 1_500; i++) {
        const s = tricky(r, 40);
        if (t.count(s) !== reference(name, s)) bad.push(JSON.stringify(s));
      }
      expect(bad).toEqual([]);
    });
  }

  for (const name of ['p50k_base', 'r50k_base'] as const) {
    it(`${name}: mixed documents, edge cases and random strings`, () => {
      const t = ours(name);
      const r = prng(99);
      const texts = [...docs.slice(0, 40), ...EDGE_CASES.map(([, s]) => s), ...Array.from({ length: 400 }, () => tricky(r, 30))];
      const bad = texts.filter((s) => t.count(s) !== reference(name, s));
      expect(bad.map((d) => JSON.stringify(d).slice(0, 120))).toEqual([]);
    });
  }

  it('special-token text is counted as text and never throws', () => {
    for (const name of EXACT) {
      const t = ours(name);
      expect(() => t.count('<|endoftext|>')).not.toThrow();
      expect(t.count('<|endoftext|>')).toBeGreaterThan(1);
    }
  });
});

describe('pre-tokenizers split exactly as their regex specification', () => {
  for (const name of EXACT) {
    it(`${name}: scanner equals the pattern on random and mixed text`, () => {
      const re = new RegExp(ENCODINGS[name].pattern, 'gu');
      const engine = ours(name).engine;
      const r = prng(name.length * 31 + 1);
      // The reference regexes run on the runtime's Unicode tables, the scanners on Unicode 16.0's:
      // leave out the edge cases made of code points whose class changed after 16.0.
      const texts = [...mixedDocuments(60, 3), ...EDGE_CASES.filter(([label]) => !/Unicode 17|U\+0295/.test(label)).map(([, s]) => s)];
      for (let i = 0; i < 3_000; i++) texts.push(tricky(r, 24));
      const bad: string[] = [];
      for (const s of texts) {
        const expected = s.match(re) ?? [];
        const got = engine.split(s);
        if (got.length !== expected.length || got.some((p, k) => p !== expected[k])) bad.push(JSON.stringify(s));
      }
      expect(bad.slice(0, 5)).toEqual([]);
    });
  }

  it('character classes are frozen at Unicode 16.0: they differ from the runtime\'s only where it knows newer code points', () => {
    expect(UNICODE_VERSION).toBe('16.0.0');
    // The runtime's classes, from its regex engine, over every code point at once.
    let all = '';
    for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) all += String.fromCodePoint(cp);
    const runtime = new Uint8Array(0x110000).fill(OTHER);
    const mark = (re: RegExp, cls: number) => {
      for (const m of all.matchAll(re)) runtime[m[0].codePointAt(0)!] = cls;
    };
    mark(/[\p{Lu}\p{Lt}]/gu, LU);
    mark(/\p{Ll}/gu, LL);
    mark(/[\p{Lm}\p{Lo}]/gu, LO);
    mark(/\p{M}/gu, MK);
    mark(/\p{N}/gu, NUM);
    mark(/\p{White_Space}/gu, WS);
    runtime[10] = NL;
    runtime[13] = NL;
    const differences: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) if (classOf(cp) !== runtime[cp]) differences.push(cp);
    // Every difference is a code point the table has as unassigned (OTHER), assigned after 16.0,
    // or U+0295 LATIN LETTER PHARYNGEAL VOICED FRICATIVE, which Unicode 17.0 moved from Ll to Lo.
    expect(differences.filter((cp) => classOf(cp) !== OTHER && cp !== 0x295).map((cp) => cp.toString(16))).toEqual([]);
    expect(differences.length).toBeLessThan(10_000);
    expect(classOf(0x1c89)).toBe(LU); // CYRILLIC CAPITAL LETTER TJE, new in 16.0
    expect(classOf(0x088f)).toBe(OTHER); // assigned in 17.0
  });

  it('the patterns use Unicode White_Space, not JavaScript \\s (U+FEFF is not whitespace, U+0085 is)', () => {
    const re = new RegExp(ENCODINGS.o200k_base.pattern, 'gu');
    expect('a \ufeff b'.match(re)).toEqual(['a', ' \ufeff', ' b']);
    expect('a\u0085\u0085 b'.match(re)).toEqual(['a', '\u0085\u0085', ' b']);
  });
});

describe('rank data', () => {
  it('the compact rank asset round-trips js-tiktoken\'s data, and counts from it are exact', () => {
    for (const name of EXACT) {
      const list = parseJsTiktokenRanks(requireJsTiktokenRanks(name).bpe_ranks);
      const decoded = decodeRankAsset(encodeRankAsset(list));
      expect(decoded?.segments).toEqual(list.segments);
      // Buffer comparisons: a deep toEqual over megabytes of bytes would take a minute.
      expect(Buffer.from(decoded!.lengths).equals(Buffer.from(list.lengths))).toBe(true);
      expect(Buffer.from(decoded!.bytes).equals(Buffer.from(list.bytes))).toBe(true);
      expect(list.bytes.length).toBeGreaterThan(list.lengths.length);
      const engine = new BpeEngine(ENCODINGS[name], () => decoded!);
      const docs = mixedDocuments(20, 77);
      expect(docs.map((d) => engine.count(d))).toEqual(docs.map((d) => reference(name, d)));
    }
    // Vocabulary sizes, and p50k_base's gap at 50256 (<|endoftext|>).
    expect(parseJsTiktokenRanks(requireJsTiktokenRanks('o200k_base').bpe_ranks).lengths.length).toBe(199_998);
    expect(parseJsTiktokenRanks(requireJsTiktokenRanks('cl100k_base').bpe_ranks).lengths.length).toBe(100_256);
    expect(parseJsTiktokenRanks(requireJsTiktokenRanks('p50k_base').bpe_ranks).segments).toEqual([[0, 50_256], [50_257, 24]]);
  });

  it('a damaged rank asset is refused, not misread', () => {
    const asset = encodeRankAsset(parseJsTiktokenRanks(requireJsTiktokenRanks('r50k_base').bpe_ranks));
    expect(decodeRankAsset(asset.subarray(0, asset.length - 1))).toBeUndefined();
    expect(decodeRankAsset(new Uint8Array(8))).toBeUndefined();
    const badMagic = asset.slice();
    badMagic[0] ^= 1;
    expect(decodeRankAsset(badMagic)).toBeUndefined();
    const badLength = asset.slice();
    badLength[28] += 1; // first token's length: the lengths no longer add up to the byte count
    expect(decodeRankAsset(badLength)).toBeUndefined();
  });

  it('an encoding whose data cannot be found fails with a message that says what is missing', () => {
    expect(() => requireJsTiktokenRanks('no_such_base')).toThrow(/tokenizers\/no_such_base\.ranks/);
  });
});

describe('piece cache', () => {
  it('returns what was stored for exactly that text, across inline and arena-held pieces and refills', () => {
    const cache = new PieceCache(5); // 32 slots: emptied after 16 pieces
    const r = prng(606);
    const text = Array.from({ length: 4_000 }, () => ['a', 'b', '\u0000', 'é', '😀', ' '][Math.floor(r() * 6)]).join('');
    const stored = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      const start = Math.floor(r() * 3_900);
      const end = start + 1 + Math.floor(r() * 40);
      const h = PieceCache.hash(text, start, end);
      const key = text.slice(start, end);
      const got = cache.get(text, start, end, h);
      if (got >= 0) expect(got).toBe(stored.get(key));
      else {
        if (cache.size >= 16) stored.clear(); // the cache empties itself before this store
        cache.set(text, start, end, h, i);
        stored.set(key, i);
      }
      // A different text with the same content finds the same entry.
      expect(cache.get(key, 0, key.length, PieceCache.hash(key, 0, key.length))).toBe(stored.get(key));
    }
    expect(cache.get('never stored', 0, 12, PieceCache.hash('never stored', 0, 12))).toBe(-1);
  });

  it('tells apart pieces whose hashes collide, by length, inline units and arena tail', () => {
    const cache = new PieceCache(6);
    const keys = ['abcdefgh', 'abcdefg', 'abcdefgh1', 'abcdefgh2', 'abcdefgh12', 'abcdefgi', 'Abcdefgh1', 'abcdefgh\u0000', 'abcdefgh😀', 'abcdefgh😁'];
    keys.forEach((k, i) => cache.set(k, 0, k.length, 7, i)); // every key with the same hash
    keys.forEach((k, i) => expect(cache.get(`>${k}<`, 1, k.length + 1, 7)).toBe(i));
    expect(cache.get('abcdefgh3', 0, 9, 7)).toBe(-1);
    expect(cache.get('abcdefgh', 0, 8, 8)).toBe(-1); // another hash: another probe sequence
  });
});

describe('byte-pair merge', () => {
  it('the heap merge gives the same count as tiktoken\'s scan, for short and long pieces', () => {
    const r = prng(4242);
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const table = ours(name).engine.table;
      const enc = new TextEncoder();
      for (let i = 0; i < 400; i++) {
        const len = 2 + Math.floor(r() * (i < 300 ? 60 : 900));
        let s = '';
        const alphabet = i % 3 === 0 ? 'aaab' : i % 3 === 1 ? 'abcdefghij' : 'e\u0301中😀xyz=-';
        for (let k = 0; k < len; k++) s += alphabet[Math.floor(r() * alphabet.length)] ?? 'a';
        const bytes = enc.encode(s);
        expect(countHeap(table, bytes, bytes.length)).toBe(countScan(table, bytes, bytes.length));
      }
    }
  });

  it('long single pieces count as the reference does', () => {
    const r = prng(777);
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const t = ours(name);
      for (let i = 0; i < 12; i++) {
        let s = '';
        for (let k = 0; k < 1_000 + i * 500; k++) s += 'abcdefghijklmnopqrstuvwxyz'[Math.floor(r() * (i < 6 ? 26 : 3))];
        expect(t.engine.countPiece(s)).toBe(reference(name, s));
      }
    }
  });
});

describe('chunked and cached counting stays exact', () => {
  it('every safe cut is a piece boundary, and the pieces before it do not depend on the text after it', () => {
    const r = prng(2024);
    for (const name of EXACT) {
      const re = new RegExp(ENCODINGS[name].pattern, 'gu');
      for (let i = 0; i < 300; i++) {
        const s = tricky(r, 30);
        const pieces = s.match(re) ?? [];
        const ends: number[] = [];
        let at = 0;
        for (const piece of pieces) ends.push((at += piece.length));
        for (let p = 1; p < s.length; p++) {
          if (!isSafeCut(s, p)) continue;
          const k = ends.indexOf(p);
          expect(k).toBeGreaterThanOrEqual(0); // no piece spans the cut
          expect(s.slice(0, p).match(re)).toEqual(pieces.slice(0, k + 1)); // the prefix splits alike
          expect(s.slice(p).match(re)).toEqual(pieces.slice(k + 1)); // and so does the suffix
        }
      }
    }
  });

  it('cutPoints keeps only safe cuts, and chunk sums equal the reference when cutting at every one', () => {
    const r = prng(55);
    for (const name of ['o200k_base', 'cl100k_base', 'r50k_base'] as const) {
      const t = ours(name);
      for (let i = 0; i < 150; i++) {
        const s = i % 2 ? tricky(r, 200) : mixedDocuments(1, 1000 + i)[0];
        const cuts = cutPoints(s, 0);
        expect(cuts.every((p) => isSafeCut(s, p))).toBe(true);
        expect(t.countChunked(s, 0)).toBe(reference(name, s));
      }
    }
  });

  it('cuts are content-defined: an edit leaves the chunks away from it unchanged', () => {
    const text = mixedCorpus(40 * 1024, 8);
    const before = cutPoints(text);
    const at = 20_000;
    const edited = text.slice(0, at) + 'X' + text.slice(at);
    const after = cutPoints(edited);
    const farBefore = before.filter((p) => p < at - 100);
    const farAfter = before.filter((p) => p > at + 100).map((p) => p + 1);
    expect(after.filter((p) => p < at - 100)).toEqual(farBefore);
    expect(after.filter((p) => p > at + 101)).toEqual(farAfter);
    expect(before.length).toBeGreaterThan(20);
  });

  it('random edits of a long text: every re-count equals the reference', () => {
    const r = prng(31337);
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const t = ours(name);
      let text = mixedCorpus(20 * 1024, 21);
      for (let step = 0; step < 60; step++) {
        const at = Math.floor(r() * (text.length + 1));
        const kind = r();
        if (kind < 0.4) text = text.slice(0, at) + tricky(r, 3) + text.slice(at);
        else if (kind < 0.8) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(r() * 4));
        else text = text.slice(0, at) + TRICKY[Math.floor(r() * TRICKY.length)] + text.slice(at + 1);
        expect(t.count(text)).toBe(reference(name, text));
      }
    }
  });
});

describe('counting an edited text from a recent one', () => {
  it('is exact for edits at the edges, large replacements, unrelated texts and interleaved slots', () => {
    const name = 'o200k_base';
    const t = ours(name);
    clearTokenCaches();
    const a = mixedCorpus(12 * 1024, 41);
    const b = mixedCorpus(12 * 1024, 42);
    const variants = [
      a,
      'X' + a, // insert at the start
      a.slice(1), // delete at the start
      a + 'Z', // append
      a.slice(0, -1), // delete at the end
      a.slice(0, 5_000) + a.slice(9_000), // delete a large middle
      a.slice(0, 6_000) + b.slice(0, 3_000) + a.slice(6_000), // paste a block
      b, // unrelated
      a.slice(0, 100) + b.slice(100), // shares only a short prefix
      b.slice(0, 6_000) + "'s" + b.slice(6_000), // apostrophe right at the edit
      a.slice(0, 4_000) + '\ud83d' + a.slice(4_000), // lone surrogate at the edit
      a.slice(0, 4_000) + '😀' + a.slice(4_000),
      a.slice(0, 4_001), // truncate
    ];
    for (const [i, v] of variants.entries()) expect(t.count(v), `variant ${i}`).toBe(reference(name, v));
    // Alternate edits between two slots, as a user switching between two fixtures.
    let x = a;
    let y = b;
    const r = prng(8);
    for (let i = 0; i < 20; i++) {
      const at = Math.floor(r() * 10_000);
      x = x.slice(0, at) + 'q' + x.slice(at);
      y = y.slice(0, at) + ' ' + y.slice(at + 1);
      expect(t.count(x)).toBe(reference(name, x));
      expect(t.count(y)).toBe(reference(name, y));
    }
    // Texts no longer among the recent ones come from the text cache (long texts are keyed by a
    // content hash there) or are counted afresh; either way exactly.
    const long = mixedCorpus(40 * 1024, 43);
    const sameLength = [long, long.slice(0, 100) + 'Q' + long.slice(101), long.slice(0, 30_000) + '\n' + long.slice(30_001)];
    for (const v of [...sameLength, ...variants.slice(0, 4), ...sameLength]) expect(t.count(v)).toBe(reference(name, v));
  });
});

describe('tokenizer registry and chars4', () => {
  it('lists the exact encodings and chars4; names are case-insensitive; aliases resolve', () => {
    expect(listTokenizers()).toEqual(['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'chars4']);
    for (const name of listTokenizers()) expect(getTokenizer(name)?.name).toBe(name);
    expect(getTokenizer('O200K_BASE')?.name).toBe('o200k_base');
    expect(getTokenizer('gpt2')?.name).toBe('r50k_base');
    expect(getTokenizer('p50k_edit')?.name).toBe('p50k_base');
    expect(getTokenizer('o200k_base')).toBe(getTokenizer('o200k_base'));
    expect(getTokenizer('cl100k')).toBeUndefined();
    expect(getTokenizer('__proto__')).toBeUndefined();
    expect(getTokenizer('toString')).toBeUndefined();
    expect(getTokenizer('o200k_base')?.exact).toBe(true);
    expect(getTokenizer('chars4')?.exact).toBe(false);
  });

  it('chars4 is (code points + 3) // 4, the rule stated in seed 001', () => {
    expect(chars4.count('')).toBe(0);
    expect(chars4.count('a')).toBe(1);
    expect(chars4.count('abcd')).toBe(1);
    expect(chars4.count('abcde')).toBe(2);
    // Seed 001's passage costs: 31, 30 and 16 tokens are texts of 121, 120 and 61 characters.
    expect(chars4.count('x'.repeat(121))).toBe(31);
    expect(chars4.count('x'.repeat(120))).toBe(30);
    expect(chars4.count('x'.repeat(61))).toBe(16);
    // Code points, not UTF-16 units: five astral emoji are five characters.
    expect(chars4.count('😀😀😀😀😀')).toBe(2);
    expect(codePointCount('😀😀😀😀😀')).toBe(5);
    expect(codePointCount('a\ud800b\udc00')).toBe(4); // lone surrogates count one each
    expect(chars4.count('中文字符中')).toBe(2);
  });
});
