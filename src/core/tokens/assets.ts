/**
 * Build-time only: converts js-tiktoken's rank modules into compact rank assets
 * (rankTable.ts, encodeRankAsset). esbuild.js bundles this file on its own and writes the result
 * to dist/tokenizers/<name>.ranks; the bench does the same for its load measurement. No runtime
 * code imports it.
 */
import { ENCODINGS } from './encodings';
import { requireJsTiktokenRanks, rankAssetFile } from './rankData';
import { encodeRankAsset, parseJsTiktokenRanks } from './rankTable';

/** File name -> contents of the rank asset of every exact encoding. */
export function rankAssets(): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const name of Object.keys(ENCODINGS)) out[rankAssetFile(name)] = encodeRankAsset(parseJsTiktokenRanks(requireJsTiktokenRanks(name).bpe_ranks));
  return out;
}
