/**
 * The open-weight vocabularies load lazily: resolving models, listing and naming tokenizers loads
 * nothing; the first count with a family loads that family and no other. Its own file, so the
 * module state is fresh (vitest runs each file in its own fork).
 */
import { expect, it } from 'vitest';
import { describeTokenizer, getTokenizer, isTokenizerLoaded, listAllTokenizers } from '../../src/core/tokens';
import { listModels, resolveModel } from '../../src/core/models';

const FAMILIES = ['llama3', 'qwen3', 'deepseek_v3', 'tekken', 'gemma3', 'o200k_harmony'];

it('loads a family on its first count, and no other', () => {
  listAllTokenizers();
  listModels();
  for (const name of ['llama-3.1-8b-instruct', 'qwen3-8b', 'deepseek-chat', 'mistral-nemo', 'gemma-3-27b-it', 'gpt-oss-120b', 'gemini-2.5-pro']) expect(resolveModel(name)).toBeDefined();
  for (const name of FAMILIES) {
    expect(getTokenizer(name)).toBeDefined();
    describeTokenizer(name);
  }
  for (const name of FAMILIES) expect(isTokenizerLoaded(name), name).toBe(false);
  expect(getTokenizer('qwen3')?.count('hello world')).toBe(2);
  expect(isTokenizerLoaded('qwen3')).toBe(true);
  for (const name of FAMILIES.filter((n) => n !== 'qwen3')) expect(isTokenizerLoaded(name), name).toBe(false);
  expect(isTokenizerLoaded('o200k_base')).toBe(false);
  expect(getTokenizer('gemma3')?.count('hello world')).toBe(2);
  expect(isTokenizerLoaded('gemma3')).toBe(true);
  expect(isTokenizerLoaded('llama3')).toBe(false);
}, 60_000);
