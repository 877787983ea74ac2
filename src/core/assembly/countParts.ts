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

/**
 * First and last usable cut of a part, the count between them, and the part's head (before the
 * first cut) and tail (after the last); `a < 0` when it has none. Head and tail are kept as string
 * objects so that every probe looks up the same strings (V8 caches a string's hash in it).
 */
interface PartCuts {
  a: number;
  b: number;
  inner: number;
  head: string;
  tail: string;
}

/** Glue longer than this is counted by the tokenizer with its own caches. */
const MAX_GLUE_KEY = 2048;

const NONE: PartCuts = { a: -1, b: -1, inner: 0, head: '', tail: '' };

/**
 * Glue counts in a trie keyed by the sequence of pieces the glue is made of (a part's tail, short
 * parts, the next part's head). The pieces are the same string objects from one probe to the next,
 * so a lookup hashes nothing new, where keying by the joined glue would build and hash a fresh
 * string per item per probe. Equal sequences join to equal texts, so a node's count is exact.
 */
interface GlueNode {
  /** Count of the glue that ends here; -1 until counted. */
  n: number;
  next?: Map<string, GlueNode>;
}

interface Caches {
  parts: Map<string, PartCuts>;
  glue: GlueNode;
  /** Nodes in `glue`; the trie is started afresh past MAX_ENTRIES (bounds memory while typing). */
  nodes: number;
}
const caches = new WeakMap<Tokenizer, Caches>();

function cutsOf(tokenizer: BpeTokenizer, cache: Map<string, PartCuts>, text: string): PartCuts {
  let c = cache.get(text);
  if (c !== undefined) return c;
  const n = text.length;
  let a = 2;
  while (a <= n - 2 && !isSafeCut(text, a)) a++;
  let b = n - 2;
  while (b > a && !isSafeCut(text, b)) b--;
  if (a > n - 2 || b <= a) c = NONE;
  else {
    // The interior's count is the whole part's less its head and tail (a and b are safe cuts, so
    // the three counts add up): an item's text was counted whole when it was loaded, and that
    // count is the tokenizer's cache hit here, where counting the interior would tokenize it again.
    const head = text.slice(0, a);
    const tail = text.slice(b);
    c = { a, b, inner: tokenizer.count(text) - tokenizer.count(head) - tokenizer.count(tail), head, tail };
  }
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(text, c);
  return c;
}

/** Token count of the parts' texts joined, equal to `tokenizer.count` of the joined text. */
export function countJoined(tokenizer: Tokenizer, texts: readonly string[]): number {
  if (!(tokenizer instanceof BpeTokenizer)) return tokenizer.count(texts.join(''));
  let cache = caches.get(tokenizer);
  if (!cache) {
    cache = { parts: new Map(), glue: { n: -1 }, nodes: 0 };
    caches.set(tokenizer, cache);
  }
  if (cache.nodes >= MAX_ENTRIES) {
    cache.glue = { n: -1 };
    cache.nodes = 0;
  }
  const root = cache.glue;
  const c0 = cache;
  let total = 0;
  // The glue being gathered: its pieces, its length, and its node in the trie.
  const pieces: string[] = [];
  let length = 0;
  let node = root;
  const add = (piece: string) => {
    if (!piece) return;
    pieces.push(piece);
    length += piece.length;
    if (length > MAX_GLUE_KEY) return; // counted joined at the flush; not worth a trie path
    let next = node.next;
    if (!next) node.next = next = new Map();
    let child = next.get(piece);
    if (!child) {
      child = { n: -1 };
      next.set(piece, child);
      c0.nodes++;
    }
    node = child;
  };
  const flush = () => {
    if (!pieces.length) return;
    if (length > MAX_GLUE_KEY) total += tokenizer.count(pieces.join(''));
    else {
      if (node.n < 0) node.n = tokenizer.engine.count(pieces.join(''));
      total += node.n;
    }
    pieces.length = 0;
    length = 0;
    node = root;
  };
  const part = (t: string) => {
    const c = t.length >= MIN_PART ? cutsOf(tokenizer, c0.parts, t) : NONE;
    if (c.a < 0) {
      add(t);
      return;
    }
    add(c.head);
    flush();
    total += c.inner;
    add(c.tail);
  };
  for (const t of texts) part(t);
  flush();
  return total;
}
