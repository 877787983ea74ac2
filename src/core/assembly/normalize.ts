/**
 * The near-duplicate normalization of seed 002 ("near-duplicates require normalized text"):
 * lowercase, punctuation and symbols removed, whitespace collapsed to one space and trimmed.
 */
const NON_ASCII = /[^\x00-\x7f]/;
/** ASCII punctuation and symbols: exactly the ASCII members of \p{P} and \p{S}. */
const ASCII_PUNCT = /[!-/:-@[-`{-~]+/g;

export function normalizeForDedup(text: string): string {
  // ASCII text takes the cheaper non-Unicode expressions; the result is the same.
  if (!NON_ASCII.test(text)) return text.toLowerCase().replace(ASCII_PUNCT, '').replace(/\s+/g, ' ').trim();
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, '')
    .replace(/\s+/gu, ' ')
    .trim();
}
