/**
 * The exact BPE encodings Context Lens counts with: their pre-tokenizer patterns and where their
 * rank data comes from.
 *
 * The patterns are tiktoken's (tiktoken_ext/openai_public.py), rewritten for JavaScript so that
 * they split text exactly as tiktoken's Rust regex engine does:
 * - `\s` / `\S` become `\p{White_Space}` / `\P{White_Space}`. JavaScript's `\s` also matches
 *   U+FEFF and misses U+0085; Rust's `\s` is the Unicode White_Space property. (This is the
 *   "+1 token per U+FEFF" bug of engines that reuse the pattern verbatim.)
 * - Rust's case-insensitive contraction group `(?i:'s|'t|'re|'ve|'m|'ll|'d)` becomes explicit
 *   classes. Unicode simple case folding adds one letter: U+017F LATIN SMALL LETTER LONG S folds
 *   to `s`, so `'ſ` is a contraction for tiktoken and must be here too.
 * - No special tokens: `<|endoftext|>` inside content is ordinary text, as with `encode_ordinary`.
 * Counting does not run these regexes: the scanners of pretokenize.ts implement them (faster, and
 * with character classes frozen at the reference's Unicode 16.0, where a regex would use the
 * runtime's Unicode version). The patterns are the specification the tests hold the scanners to.
 *
 * Rank data is js-tiktoken's (rankData.ts says where it is read from), loaded only when an
 * encoding is first used, so an unused encoding costs neither time nor memory.
 */
import { pieceEndCl100k, pieceEndO200k, pieceEndR50k, type PieceEnd } from './pretokenize';

const WS = '\\p{White_Space}';
const NOT_WS = '\\P{White_Space}';

/** `(?i:'s|'t|'re|'ve|'m|'ll|'d)` under Unicode simple case folding. */
const CONTRACTION_CI = "(?:'[sS\\u017F]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";

const O200K_PATTERN = [
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTION_CI}?`,
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTION_CI}?`,
  `\\p{N}{1,3}`,
  ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`,
  `${WS}*[\\r\\n]+`,
  `${WS}+(?!${NOT_WS})`,
  `${WS}+`,
].join('|');

const CL100K_PATTERN = [
  CONTRACTION_CI,
  `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`,
  `\\p{N}{1,3}`,
  ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*`,
  `${WS}*[\\r\\n]+`,
  `${WS}+(?!${NOT_WS})`,
  `${WS}+`,
].join('|');

/** GPT-2's pattern: case-sensitive contractions. */
const R50K_PATTERN = [
  `'s|'t|'re|'ve|'m|'ll|'d`,
  ` ?\\p{L}+`,
  ` ?\\p{N}+`,
  ` ?[^${WS}\\p{L}\\p{N}]+`,
  `${WS}+(?!${NOT_WS})`,
  `${WS}+`,
].join('|');

export interface EncodingSpec {
  name: string;
  /** Pre-tokenizer pattern source, compiled with the `gu` flags: the specification of pieceEnd. */
  pattern: string;
  /** The hand-written scanner that splits text as `pattern` does (pretokenize.ts). */
  pieceEnd: PieceEnd;
}

export const ENCODINGS: Readonly<Record<string, EncodingSpec>> = {
  o200k_base: { name: 'o200k_base', pattern: O200K_PATTERN, pieceEnd: pieceEndO200k },
  cl100k_base: { name: 'cl100k_base', pattern: CL100K_PATTERN, pieceEnd: pieceEndCl100k },
  p50k_base: { name: 'p50k_base', pattern: R50K_PATTERN, pieceEnd: pieceEndR50k },
  r50k_base: { name: 'r50k_base', pattern: R50K_PATTERN, pieceEnd: pieceEndR50k },
};
