/**
 * Counting a message from its parts without joining them: the fit step (fit.ts) recounts the
 * request once per probe, and the message that holds a large slot is hundreds of kilobytes whose
 * parts (item texts, envelopes, template text) are almost all the same from one probe to the next.
 *
 * Exact for BPE tokenizers, by the same argument as the tokenizer's own chunking (tokens/chunks.ts):
 * a safe cut (pretokenize.ts, isSafeCut) splits a text into parts whose counts add up, and whether
 * a position is a safe cut depends only on the units p-2..p+1 around it. So inside a part, a safe
 * cut at least two units from its start and two from its end is a safe cut of the joined message
 * too. Each long part is counted once between its first and last such cut ("interior", cached by
 * content); what lies between one part's last cut and the next part's first cut ("glue": an item's
 * tail, a separator, an envelope line, the next item's head) is short and counted as it comes.
 * Tokenizers that do not add up at safe cuts (chars4, or any other) count the joined text.
 */
import type { Tokenizer } from '../types';
import { BpeTokenizer } from '../tokens';
import { isSafeCut } from '../tokens/pretokenize';

/** Parts shorter than this go into the glue whole: finding their cuts would not save a count. */
const MIN_PART = 48;
/** Entries kept per tokenizer before the cache is started afresh (bounds memory while typing). */
const MAX_ENTRIES = 50_000;

/** First and last usable cut of a part and the count between them; `a < 0` when it has none. */
interface PartCuts {
  a: number;
  b: number;
  inner: number;
}

/** Glue longer than this is counted by the tokenizer with its own caches. */
const MAX_GLUE_KEY = 2048;

const NONE: PartCuts = { a: -1, b: -1, inner: 0 };

interface Caches {
  parts: Map<string, PartCuts>;
  /**
   * Counts of glue texts. Plain Maps cleared when full rather than the tokenizer's LRU: a probe
   * looks up one glue per item, and most of them were seen by the previous probe.
   */
  glue: Map<string, number>;
}
const caches = new WeakMap<Tokenizer, Caches>();

function countGlue(tokenizer: BpeTokenizer, cache: Map<string, number>, glue: string): number {
  if (glue.length > MAX_GLUE_KEY) return tokenizer.count(glue);
  let n = cache.get(glue);
  if (n === undefined) {
    n = tokenizer.engine.count(glue);
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(glue, n);
  }
  return n;
}

function cutsOf(tokenizer: BpeTokenizer, cache: Map<string, PartCuts>, text: string): PartCuts {
  let c = cache.get(text);
  if (c !== undefined) return c;
  const n = text.length;
  let a = 2;
  while (a <= n - 2 && !isSafeCut(text, a)) a++;
  let b = n - 2;
  while (b > a && !isSafeCut(text, b)) b--;
  if (a > n - 2 || b <= a) c = NONE;
  else c = { a, b, inner: tokenizer.count(text.slice(a, b)) };
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(text, c);
  return c;
}

/** Token count of `texts.join('')`, equal to `tokenizer.count` of the joined text. */
export function countJoined(tokenizer: Tokenizer, texts: readonly string[]): number {
  if (!(tokenizer instanceof BpeTokenizer)) return tokenizer.count(texts.join(''));
  let cache = caches.get(tokenizer);
  if (!cache) {
    cache = { parts: new Map(), glue: new Map() };
    caches.set(tokenizer, cache);
  }
  let total = 0;
  let glue = '';
  for (const t of texts) {
    const c = t.length >= MIN_PART ? cutsOf(tokenizer, cache.parts, t) : NONE;
    if (c.a < 0) {
      glue += t;
      continue;
    }
    glue += t.slice(0, c.a);
    if (glue) total += countGlue(tokenizer, cache.glue, glue);
    total += c.inner;
    glue = t.slice(c.b);
  }
  if (glue) total += countGlue(tokenizer, cache.glue, glue);
  return total;
}
