/**
 * Encoding data is loaded lazily: only on the first count with an encoding, and only for that
 * encoding. Its own file, so the module state is fresh (vitest runs each file in its own fork).
 */
import { expect, it } from 'vitest';
import { getTokenizer, isTokenizerLoaded, listTokenizers } from '../../src/core/tokens';
import { resolveModel } from '../../src/core/models';

it('loads rank data on the first count of an encoding, and no other encoding', () => {
  listTokenizers();
  resolveModel('gpt-4o');
  const o200k = getTokenizer('o200k_base');
  getTokenizer('cl100k_base');
  expect(isTokenizerLoaded('o200k_base')).toBe(false);
  expect(isTokenizerLoaded('cl100k_base')).toBe(false);
  getTokenizer('chars4')?.count('hello');
  expect(isTokenizerLoaded('o200k_base')).toBe(false);
  expect(o200k?.count('hello world')).toBe(2);
  expect(isTokenizerLoaded('o200k_base')).toBe(true);
  expect(isTokenizerLoaded('cl100k_base')).toBe(false);
  expect(isTokenizerLoaded('p50k_base')).toBe(false);
  expect(isTokenizerLoaded('r50k_base')).toBe(false);
});
