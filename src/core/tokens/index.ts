/**
 * Token counting for Context Lens: the tokenizers every front end counts with, and the caches
 * that keep counting cheap while a user types.
 *
 * - Exact BPE encodings (o200k_base, cl100k_base, p50k_base, r50k_base) count exactly as OpenAI's
 *   tiktoken `encode_ordinary` does (special-token text such as `<|endoftext|>` is plain text),
 *   with an engine of our own (engine.ts) over js-tiktoken's rank data. Rank data is loaded on the
 *   first count with an encoding, so unused encodings cost nothing.
 * - `chars4` is seed 001's stated rule, `(code points + 3) // 4`: an estimate, and says so
 *   (`exact: false`).
 *
 * Caching, so an unchanged text is never re-tokenized and an edit re-counts only its surroundings:
 * each tokenizer keeps the counts of whole texts (LRU, bounded by characters), long texts are
 * counted as content-defined chunks whose counts are cached by content (chunks.ts), and every
 * piece's count is cached by the engine.
 */
import type { Tokenizer } from '../types';
import { cutPoints } from './chunks';
import { ENCODINGS } from './encodings';
import { BpeEngine } from './engine';
import { isSafeCut } from './pretokenize';

/** Texts shorter than this are counted directly: a cache lookup would cost as much. */
const TEXT_CACHE_MIN = 64;
/** Texts at least this long are counted chunk by chunk. */
const CHUNK_MIN = 2048;
/**
 * Texts longer than this are counted without the chunk cache: slicing and storing thousands of
 * chunks would cost a tenth of the count, for texts (whole files, pasted dumps) whose edits the
 * recent-text path below handles anyway.
 */
const CHUNK_MAX = 512 * 1024;
/** Bound of the whole-text cache, in UTF-16 units held, per tokenizer. */
const TEXT_CACHE_CHARS = 4 * 1024 * 1024;
/** Chunks kept per cache generation (two generations are kept). */
const CHUNK_GENERATION = 20_000;
/** Long texts remembered (with their counts) as bases for counting an edited version. */
const RECENT_TEXTS = 8;

/** Names accepted besides the canonical ones (same counts for ordinary text). */
const ALIASES: Readonly<Record<string, string>> = { gpt2: 'r50k_base', p50k_edit: 'p50k_base' };

/**
 * V8 hashes a string longer than this by its length alone, so a Map keyed by long strings of one
 * length (every version of a slot being typed into) degrades into comparing whole texts.
 */
const LONG_KEY = 16_383;

/** A content hash for texts too long to be Map keys themselves. */
function longHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/**
 * Counts of whole texts, least recently used first; bounded by total characters. Long texts are
 * keyed by a hash of their content and verified by comparison on a hit.
 */
class TextCache {
  private readonly map = new Map<string | number, { text: string; count: number }>();
  private chars = 0;

  private static key(text: string): string | number {
    return text.length <= LONG_KEY ? text : longHash(text);
  }

  get(text: string): number | undefined {
    const key = TextCache.key(text);
    const entry = this.map.get(key);
    if (entry === undefined || entry.text !== text) return undefined;
    // Refresh recency: Map iteration order is insertion order.
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.count;
  }

  set(text: string, count: number): void {
    if (text.length > TEXT_CACHE_CHARS / 4) return; // a huge text would evict everything else
    const key = TextCache.key(text);
    const previous = this.map.get(key);
    if (previous) {
      this.map.delete(key); // a hash collision: the newer text wins
      this.chars -= previous.text.length;
    }
    this.map.set(key, { text, count });
    this.chars += text.length;
    for (const [k, entry] of this.map) {
      if (this.chars <= TEXT_CACHE_CHARS) break;
      this.map.delete(k);
      this.chars -= entry.text.length;
    }
  }

  clear(): void {
    this.map.clear();
    this.chars = 0;
  }
}

/** Block size of the prefix and suffix comparisons: whole blocks compare natively. */
const BLOCK = 256;

/** Length of the common prefix of a and b, at most limit. */
function commonPrefix(a: string, b: string, limit: number): number {
  let i = 0;
  // Block by block with startsWith (a native comparison), then unit by unit in the last block.
  while (i + BLOCK <= limit && a.startsWith(b.slice(i, i + BLOCK), i)) i += BLOCK;
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Length of the common suffix of a and b, at most limit. */
function commonSuffix(a: string, b: string, limit: number): number {
  let k = 0;
  const an = a.length;
  const bn = b.length;
  while (k + BLOCK <= limit && a.endsWith(b.slice(bn - k - BLOCK, bn - k), an - k)) k += BLOCK;
  while (k < limit && a.charCodeAt(an - 1 - k) === b.charCodeAt(bn - 1 - k)) k++;
  return k;
}

/** An exact tokenizer over one BPE encoding, with the text and chunk caches. */
export class BpeTokenizer implements Tokenizer {
  readonly exact = true;
  readonly engine: BpeEngine;
  private readonly texts = new TextCache();
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  /** Recently counted long texts, most recent first. */
  private recent: Array<{ text: string; count: number }> = [];

  constructor(engine: BpeEngine) {
    this.engine = engine;
  }

  get name(): string {
    return this.engine.name;
  }

  count(text: string): number {
    if (text.length < TEXT_CACHE_MIN) return this.engine.count(text);
    if (text.length < CHUNK_MIN) {
      const hit = this.texts.get(text);
      if (hit !== undefined) return hit;
      const n = this.engine.count(text);
      this.texts.set(text, n);
      return n;
    }
    // Long texts: first from a recent text that shares most of it (an edit, or the same text:
    // one pass of comparisons), then from the text cache, then chunk by chunk.
    let n = this.countFromRecent(text);
    if (n === undefined) {
      n = this.texts.get(text);
      if (n === undefined) {
        n = text.length <= CHUNK_MAX ? this.countChunked(text) : this.engine.count(text);
        this.texts.set(text, n);
      }
    }
    if (this.recent[0]?.text !== text) {
      this.recent.unshift({ text, count: n });
      if (this.recent.length > RECENT_TEXTS) this.recent.pop();
    }
    return n;
  }

  /**
   * The count of text derived from a recently counted text that shares most of it (the same
   * slot before an edit): the common prefix and suffix are not re-tokenized. Between the last
   * safe cut inside the common prefix and the first one inside the common suffix, the old middle
   * is re-counted and subtracted, the new middle counted and added. Exact, because a safe cut
   * splits a text into parts whose counts add up (pretokenize.ts, isSafeCut), and whether a
   * position is a safe cut depends only on the characters around it, which both texts share
   * there. Undefined when no recent text shares enough of this one to save work.
   */
  countFromRecent(text: string): number | undefined {
    const n = text.length;
    for (const base of this.recent) {
      const old = base.text;
      const limit = Math.min(n, old.length);
      const pre = commonPrefix(text, old, limit);
      const suf = commonSuffix(text, old, limit - pre);
      if ((pre + suf) * 2 < n) continue;
      // A cut at p looks at the units p-2..p, so it must lie at least one unit inside the shared
      // prefix (p <= pre - 1) or two inside the shared suffix (q >= n - suf + 2).
      let p = Math.min(pre - 1, n - 1);
      while (p > 0 && !isSafeCut(text, p)) p--;
      if (p < 0) p = 0;
      let q = Math.max(n - suf + 2, p + 1);
      while (q < n && !isSafeCut(text, q)) q++;
      if (q > n) q = n;
      const qOld = q + old.length - n;
      // Worth it only when less than the whole text is re-tokenized (a short text that is the
      // prefix of a huge one would otherwise re-count the huge one's tail).
      if (qOld - p + (q - p) >= n) continue;
      return base.count - this.engine.count(old, p, qOld) + this.engine.count(text, p, q);
    }
    return undefined;
  }

  /** Sum of the chunks' counts, each from the chunk cache when its content was seen before. */
  countChunked(text: string, mask?: number, maxChunk?: number): number {
    const cuts = cutPoints(text, mask, maxChunk);
    let total = 0;
    let a = 0;
    for (let k = 0; k <= cuts.length; k++) {
      const b = k < cuts.length ? cuts[k] : text.length;
      if (b - a > LONG_KEY) {
        // Too long to be a good Map key (see LONG_KEY); only texts without safe cuts get here.
        total += this.engine.count(text, a, b);
        a = b;
        continue;
      }
      const chunk = text.slice(a, b);
      let n = this.young.get(chunk);
      if (n === undefined) {
        n = this.old.get(chunk) ?? this.engine.count(text, a, b);
        if (this.young.size >= CHUNK_GENERATION) {
          this.old = this.young;
          this.young = new Map();
        }
        this.young.set(chunk, n);
      }
      total += n;
      a = b;
    }
    return total;
  }

  /** Forgets every cached count (texts, chunks, pieces); the rank data stays loaded. */
  clearCaches(): void {
    this.texts.clear();
    this.recent = [];
    this.young = new Map();
    this.old = new Map();
    this.engine.clearCache();
  }
}

/** Number of Unicode code points (a lone surrogate counts as one, as in Python). */
export function codePointCount(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Seed 001's rule `(len(text) + 3) // 4`, with len counting code points as Python's str does. */
export const chars4: Tokenizer = {
  name: 'chars4',
  exact: false,
  count: (text: string) => Math.floor((codePointCount(text) + 3) / 4),
};

const tokenizers = new Map<string, BpeTokenizer>();

/**
 * The tokenizer of that name (o200k_base, cl100k_base, p50k_base, r50k_base, chars4; also the
 * aliases gpt2 and p50k_edit), or undefined when unknown. Names are case-insensitive. Cheap:
 * rank data is loaded on the first count, not here.
 */
export function getTokenizer(name: string): Tokenizer | undefined {
  const key = name.trim().toLowerCase();
  if (key === 'chars4') return chars4;
  const canonical = ALIASES[key] ?? key;
  const spec = Object.prototype.hasOwnProperty.call(ENCODINGS, canonical) ? ENCODINGS[canonical] : undefined;
  if (!spec) return undefined;
  let t = tokenizers.get(canonical);
  if (!t) {
    t = new BpeTokenizer(new BpeEngine(spec));
    tokenizers.set(canonical, t);
  }
  return t;
}

/** Canonical tokenizer names, exact encodings first. */
export function listTokenizers(): string[] {
  return [...Object.keys(ENCODINGS), 'chars4'];
}

/** Whether an encoding's rank data has been loaded in this process (for tests and diagnostics). */
export function isTokenizerLoaded(name: string): boolean {
  const key = name.trim().toLowerCase();
  const t = tokenizers.get(ALIASES[key] ?? key);
  return t !== undefined && t.engine.loaded;
}

/** Forgets every cached count of every tokenizer (the bench measures cold counts with it). */
export function clearTokenCaches(): void {
  for (const t of tokenizers.values()) t.clearCaches();
}
