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
const TEXT_CACHE_CHARS = 16 * 1024 * 1024;
/** Chunks kept per cache generation (two generations are kept). */
const CHUNK_GENERATION = 20_000;
/** Long texts remembered (with their counts) as bases for counting an edited version. */
const RECENT_TEXTS = 8;

/** Names accepted besides the canonical ones (same counts for ordinary text). */
const ALIASES: Readonly<Record<string, string>> = { gpt2: 'r50k_base', p50k_edit: 'p50k_base' };

/** Counts of whole texts, least recently used first; bounded by total characters. */
class TextCache {
  private readonly map = new Map<string, number>();
  private chars = 0;

  get(text: string): number | undefined {
    const n = this.map.get(text);
    if (n !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      this.map.delete(text);
      this.map.set(text, n);
    }
    return n;
  }

  set(text: string, n: number): void {
    if (text.length > TEXT_CACHE_CHARS / 4) return; // a huge text would evict everything else
    this.map.set(text, n);
    this.chars += text.length;
    for (const key of this.map.keys()) {
      if (this.chars <= TEXT_CACHE_CHARS) break;
      this.map.delete(key);
      this.chars -= key.length;
    }
  }

  clear(): void {
    this.map.clear();
    this.chars = 0;
  }
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
    const hit = this.texts.get(text);
    if (hit !== undefined) return hit;
    let n: number;
    if (text.length < CHUNK_MIN) {
      n = this.engine.count(text);
    } else {
      n = this.countFromRecent(text) ?? (text.length <= CHUNK_MAX ? this.countChunked(text) : this.engine.count(text));
      this.recent.unshift({ text, count: n });
      if (this.recent.length > RECENT_TEXTS) this.recent.pop();
    }
    this.texts.set(text, n);
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
      let pre = 0;
      while (pre < limit && text.charCodeAt(pre) === old.charCodeAt(pre)) pre++;
      let suf = 0;
      const sufLimit = limit - pre;
      while (suf < sufLimit && text.charCodeAt(n - 1 - suf) === old.charCodeAt(old.length - 1 - suf)) suf++;
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
