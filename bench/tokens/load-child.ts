/**
 * Bundled by bench/tokens.ts into a temporary file and run in a fresh Node process, so encoding
 * load time and memory are measured without anything already loaded. Exposes one function per
 * engine; the launcher (see loadInChild in bench/tokens.ts) times the require of this bundle plus
 * the call, so parsing the bundled rank data counts too, as it would in dist/cli.js.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { getTokenizer } from '../../src/core/tokens';

/** Loads reference libraries from the project's node_modules at run time (never bundled). */
const devRequire = createRequire(join(process.cwd(), 'package.json'));

export function loadOurs(name: string): number {
  return getTokenizer(name)?.count('warm up the encoding') ?? -1;
}

export function loadJsTiktoken(name: string): number {
  const { Tiktoken } = devRequire('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => { encode(t: string, a?: unknown, d?: unknown): number[] } };
  const ranks: unknown = devRequire(`js-tiktoken/ranks/${name}`);
  return new Tiktoken(ranks).encode('warm up the encoding', [], []).length;
}

export function loadWasm(name: string): number {
  const { get_encoding } = devRequire('tiktoken') as { get_encoding(n: string): { encode_ordinary(t: string): Uint32Array } };
  return get_encoding(name).encode_ordinary('warm up the encoding').length;
}
