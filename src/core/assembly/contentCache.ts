/**
 * What the assembly derives from an item's text alone, kept by content across requests, fixtures
 * and edits: the content hash, the dedup/novelty fingerprint and the content scans (breakouts,
 * instruction-like phrases). Retrieval traffic repeats chunks and an edit changes one slot, so
 * most items of a request were seen before, but in new objects: the per-fixture-value memo of
 * stages/candidates.ts (object identity) misses them, this cache does not.
 *
 * The key is the text itself. A JavaScript Map hashes a string key by its content (once per
 * string) and confirms a hit by comparing the strings, so a lookup costs about one pass over the
 * text and a hit can never be another text's answer. Each fact is stored with every other input
 * it depends on: a scan's entry key names the scan, its options and the version of its data (the
 * pattern sources, see `dataVersion`), and the whole cache is cleared whenever the namespace (the
 * assembly's version and the data versions registered so far) changes. Token counts are not kept
 * here: every exact tokenizer keeps its own content cache (src/core/tokens, bounded by characters),
 * keyed by the tokenizer instance that owns the vocabulary, and chars4 costs nothing to count.
 *
 * Bounded by entries and by an estimate of the bytes held (the text's UTF-16 units plus the facts),
 * least recently used first out (cache.ts). Values are shared between items and requests, so they
 * are frozen or never mutated by their readers (fingerprints and scan results are read-only).
 */
import { BoundedCache } from '../cache';
import type { Fingerprint } from './fingerprint';
import { fingerprint } from './fingerprint';
import { sha256 } from './sha256';

/** The facts of one text; each is computed on first use. */
export interface Facts {
  sha?: string;
  fp?: Fingerprint;
  /** Scan results by scan key (scan name, options, data version). */
  scans?: Map<string, unknown>;
  weight: number;
}

/** Default bounds: about 32 MB held, at most 100,000 texts. */
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRIES = 100_000;
/**
 * Bytes charged per entry besides its text: the map entry, the facts object, a hash string, a
 * sketch of 32 numbers, the scans' map. Measured: a heap snapshot of the hostile-workspace scan
 * (bench/lsp.ts) held 45.8 MB in this cache for 32 MB charged at 400 bytes an entry (texts of
 * about 250 characters), so an entry costs about 700.
 */
const ENTRY_BYTES = 700;
/** Texts longer than this are not kept: a pasted dump would evict thousands of chunks. */
const MAX_TEXT = 256 * 1024;

let cache = new BoundedCache<string, Facts>(MAX_ENTRIES, MAX_BYTES);
let enabled = true;
let namespace = '';
let hits = 0;
let misses = 0;

/**
 * A short version string of the data a scan depends on (its pattern sources): 32-bit FNV-1a and
 * the length, so a change to any pattern changes the scan's cache key.
 */
export function dataVersion(...sources: readonly string[]): string {
  let h = 0x811c9dc5 | 0;
  let n = 0;
  for (const s of sources) {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0, 0x01000193);
    n += s.length + 1;
  }
  return `${(h >>> 0).toString(36)}.${n.toString(36)}`;
}

/**
 * Sets the namespace every entry is valid in (the assembly version and the data versions of the
 * scans); a different one than before empties the cache. Called with the current versions before
 * an assembly reads the cache.
 */
export function useContentNamespace(key: string): void {
  if (key === namespace) return;
  namespace = key;
  cache.clear();
}

/**
 * The cache entry of a text (looked up once per work item, item.ts), or undefined when the text is
 * not kept (the cache is off, or the text is too long).
 */
export function factsOf(text: string): Facts | undefined {
  if (!enabled || text.length > MAX_TEXT) return undefined;
  let f = cache.get(text);
  if (f === undefined) {
    misses++;
    f = { weight: text.length * 2 + ENTRY_BYTES };
    cache.set(text, f, f.weight);
  } else hits++;
  return f;
}

/** SHA-256 of the text (hex), from the cache when the text was hashed before. */
export function contentSha(text: string, f: Facts | undefined = factsOf(text)): string {
  if (f === undefined) return sha256(text);
  return (f.sha ??= sha256(text));
}

/** The text's fingerprint (fingerprint.ts), from the cache when the text was seen before. */
export function contentFingerprint(text: string, f: Facts | undefined = factsOf(text)): Fingerprint {
  if (f === undefined) return fingerprint(text);
  return (f.fp ??= fingerprint(text));
}

/**
 * The result of `scan(text)` under `key`, which must name the scan, every option it reads and the
 * version of its data (`dataVersion` of its patterns). The result is shared: callers never change it.
 * `f`: the text's entry when the caller has it (one lookup per item instead of one per fact).
 */
export function contentScan<T>(text: string, key: string, scan: (text: string) => T, f: Facts | undefined = factsOf(text)): T {
  if (f === undefined) return scan(text);
  const scans = (f.scans ??= new Map());
  if (scans.has(key)) return scans.get(key) as T;
  const v = scan(text);
  scans.set(key, v);
  return v;
}

/** Turns the cache off (every call computes) or on again; turning it off empties it. For tests and benches. */
export function setContentCache(on: boolean): void {
  enabled = on;
  if (!on) cache.clear();
}

/** Empties the cache; `maxBytes` / `maxEntries` set new bounds. */
export function resetContentCache(bounds: { maxBytes?: number; maxEntries?: number } = {}): void {
  cache = new BoundedCache<string, Facts>(bounds.maxEntries ?? MAX_ENTRIES, bounds.maxBytes ?? MAX_BYTES);
  hits = 0;
  misses = 0;
}

/** Entries, estimated bytes held, hits and misses since the last reset. */
export function contentCacheStats(): { entries: number; bytes: number; hits: number; misses: number; enabled: boolean } {
  return { entries: cache.size, bytes: cache.weight, hits, misses, enabled };
}
