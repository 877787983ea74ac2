/**
 * Token counting for Context Lens: the tokenizers every front end counts with, and the caches
 * that keep counting cheap while a user types.
 *
 * - Exact BPE encodings (o200k_base, cl100k_base, p50k_base, r50k_base) count exactly as OpenAI's
 *   tiktoken `encode_ordinary` does (special-token text such as `<|endoftext|>` is plain text),
 *   with an engine of our own (engine.ts) over js-tiktoken's rank data. Rank data is loaded on the
 *   first count with an encoding, so unused encodings cost nothing.
 * - The open-weight families (families.ts: llama3, qwen3, deepseek_v3, tekken, gemma3, and
 *   o200k_harmony for gpt-oss) count exactly as their Hugging Face / tiktoken references do, with
 *   the same engine (rank families) or the merge-list engine of familyEngine.ts. Their data, too,
 *   is loaded on the first count.
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
import { ENCODINGS, type EncodingSpec } from './encodings';
import { BpeEngine } from './engine';
import { familyEngine, FAMILIES, loadFamilyTokenList } from './families';

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
const ALIASES: Readonly<Record<string, string>> = {
  gpt2: 'r50k_base',
  p50k_edit: 'p50k_base',
  // The families' other spellings; Qwen2 and Qwen2.5 share Qwen3's vocabulary and merges.
  'qwen2.5': 'qwen3',
  qwen2: 'qwen3',
  'deepseek-v3': 'deepseek_v3',
  'gemma-3': 'gemma3',
  'llama-3': 'llama3',
  harmony: 'o200k_harmony',
};

/** What each tokenizer is, for people. */
const LABELS: Readonly<Record<string, string>> = {
  o200k_base: 'o200k_base (OpenAI: GPT-4o, GPT-4.1, GPT-5, o-series)',
  cl100k_base: 'cl100k_base (OpenAI: GPT-4, GPT-3.5 Turbo)',
  p50k_base: 'p50k_base (OpenAI: Codex, text-davinci-002/003)',
  r50k_base: 'r50k_base (OpenAI: GPT-3, GPT-2)',
  o200k_harmony: 'o200k_harmony (gpt-oss): o200k_base plus the harmony special tokens; ordinary text counts as o200k_base',
  chars4: 'chars4 estimate: (characters + 3) / 4',
};

/** The counting side of an engine, as BpeTokenizer's caches use it. */
export interface CountingEngine {
  readonly name: string;
  readonly loaded: boolean;
  count(text: string, start?: number, end?: number): number;
  clearCache(): void;
  /** Whether the count of text is the sum of the counts of text[0..p) and text[p..) (and no more). */
  isSafeCut(s: string, p: number): boolean;
  /** The safe-cut predicate for chunking when it is not chunks.ts's inline default. */
  readonly cutPredicate: ((s: string, p: number) => boolean) | undefined;
}

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
 * Counts of whole texts in two generations: new and recently used texts go into the young map;
 * when the young map holds half the character bound it becomes the old one (the previous old
 * one is dropped), and a hit in the old map moves the entry back to the young one. That is an
 * approximate LRU at O(1) per operation: a strict LRU over one Map re-inserted on every hit and
 * evicted from its front degrades when tens of thousands of fresh texts stream through (a cold
 * 10,000-item fixture), because the front fills with deleted entries that every eviction skips.
 * Long texts are keyed by a hash of their content and verified by comparison on a hit.
 */
class TextCache {
  private young = new Map<string | number, { text: string; count: number }>();
  private old = new Map<string | number, { text: string; count: number }>();
  private youngChars = 0;

  private static key(text: string): string | number {
    return text.length <= LONG_KEY ? text : longHash(text);
  }

  get(text: string): number | undefined {
    const key = TextCache.key(text);
    const entry = this.young.get(key);
    if (entry !== undefined) return entry.text === text ? entry.count : undefined;
    const aged = this.old.get(key);
    if (aged === undefined || aged.text !== text) return undefined;
    this.old.delete(key);
    this.put(key, aged);
    return aged.count;
  }

  set(text: string, count: number): void {
    if (text.length > TEXT_CACHE_CHARS / 4) return; // a huge text would evict everything else
    const key = TextCache.key(text);
    this.old.delete(key);
    this.put(key, { text, count });
  }

  private put(key: string | number, entry: { text: string; count: number }): void {
    const previous = this.young.get(key);
    if (previous) this.youngChars -= previous.text.length; // a hash collision: the newer text wins
    this.young.set(key, entry);
    this.youngChars += entry.text.length;
    if (this.youngChars > TEXT_CACHE_CHARS / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngChars = 0;
    }
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
    this.youngChars = 0;
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
export class BpeTokenizer<E extends CountingEngine = BpeEngine> implements Tokenizer {
  readonly exact = true;
  readonly engine: E;
  /** What the tokenizer is, for people. */
  readonly label: string;
  private readonly nameValue: string | undefined;
  private readonly texts = new TextCache();
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  /** Recently counted long texts, most recent first. */
  private recent: Array<{ text: string; count: number }> = [];

  /** `name` when the tokenizer goes by another name than its engine (o200k_harmony). */
  constructor(engine: E, options: { name?: string; label?: string } = {}) {
    this.engine = engine;
    this.nameValue = options.name;
    this.label = options.label ?? LABELS[engine.name] ?? engine.name;
  }

  get name(): string {
    return this.nameValue ?? this.engine.name;
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
      const engine = this.engine;
      let p = Math.min(pre - 1, n - 1);
      while (p > 0 && !engine.isSafeCut(text, p)) p--;
      if (p < 0) p = 0;
      let q = Math.max(n - suf + 2, p + 1);
      while (q < n && !engine.isSafeCut(text, q)) q++;
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
    const cuts = cutPoints(text, mask, maxChunk, this.engine.cutPredicate);
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

const tokenizers = new Map<string, BpeTokenizer<CountingEngine>>();

/** Canonical name of a tokenizer name as written (case, aliases), or undefined when unknown. */
function canonicalName(name: string): string | undefined {
  const key = name.trim().toLowerCase();
  const canonical = Object.prototype.hasOwnProperty.call(ALIASES, key) ? ALIASES[key] : key;
  const known = (o: object): boolean => Object.prototype.hasOwnProperty.call(o, canonical);
  return known(ENCODINGS) || known(FAMILIES) || canonical === 'o200k_harmony' || canonical === 'chars4' ? canonical : undefined;
}

function makeTokenizer(canonical: string): BpeTokenizer<CountingEngine> {
  if (Object.prototype.hasOwnProperty.call(ENCODINGS, canonical)) return new BpeTokenizer(new BpeEngine(ENCODINGS[canonical]));
  if (canonical === 'o200k_harmony') {
    // gpt-oss's o200k_harmony is o200k_base's ranks and pattern plus special tokens, which are
    // counted as text: the o200k_base tokenizer itself, caches and all, under its own name.
    const base = tokenizerOf('o200k_base');
    return new BpeTokenizer(base.engine, { name: 'o200k_harmony', label: LABELS.o200k_harmony });
  }
  const spec = FAMILIES[canonical];
  if (spec.engine === 'ranks') {
    const encoding: EncodingSpec = { name: spec.name, pattern: spec.patterns?.[0] ?? '', pieceEnd: spec.pieceEnd! };
    return new BpeTokenizer(new BpeEngine(encoding, () => loadFamilyTokenList(spec)), { label: spec.label });
  }
  return new BpeTokenizer(familyEngine(spec), { label: spec.label });
}

function tokenizerOf(canonical: string): BpeTokenizer<CountingEngine> {
  let t = tokenizers.get(canonical);
  if (!t) {
    t = makeTokenizer(canonical);
    tokenizers.set(canonical, t);
  }
  return t;
}

/**
 * The tokenizer of that name (o200k_base, cl100k_base, p50k_base, r50k_base, the open-weight
 * families llama3, qwen3, deepseek_v3, tekken, gemma3, o200k_harmony, and chars4; also the aliases
 * in ALIASES), or undefined when unknown. Names are case-insensitive. Cheap: vocabulary data is
 * loaded on the first count, not here.
 */
export function getTokenizer(name: string): Tokenizer | undefined {
  const canonical = canonicalName(name);
  if (canonical === undefined) return undefined;
  if (canonical === 'chars4') return chars4;
  return tokenizerOf(canonical);
}

/** Canonical names of OpenAI's exact encodings and chars4 (the set this function has always listed). */
export function listTokenizers(): string[] {
  return [...Object.keys(ENCODINGS), 'chars4'];
}

/** Every canonical tokenizer name: OpenAI's encodings, the open-weight families, then chars4. */
export function listAllTokenizers(): string[] {
  return [...Object.keys(ENCODINGS), ...Object.keys(FAMILIES), 'o200k_harmony', 'chars4'];
}

/** What a tokenizer is (its canonical name, a label for people, whether it is exact), or undefined. */
export function describeTokenizer(name: string): { name: string; label: string; exact: boolean } | undefined {
  const canonical = canonicalName(name);
  if (canonical === undefined) return undefined;
  if (canonical === 'chars4') return { name: 'chars4', label: LABELS.chars4, exact: false };
  const label = Object.prototype.hasOwnProperty.call(FAMILIES, canonical) ? FAMILIES[canonical].label : (LABELS[canonical] ?? canonical);
  return { name: canonical, label, exact: true };
}

/** Whether an encoding's rank data has been loaded in this process (for tests and diagnostics). */
export function isTokenizerLoaded(name: string): boolean {
  const canonical = canonicalName(name);
  const t = canonical === undefined ? undefined : tokenizers.get(canonical);
  return t !== undefined && t.engine.loaded;
}

/** Forgets every cached count of every tokenizer (the bench measures cold counts with it). */
export function clearTokenCaches(): void {
  for (const t of tokenizers.values()) t.clearCaches();
}
