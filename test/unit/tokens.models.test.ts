/**
 * The built-in model registry (src/core/models/, data in registry.json): limits and tokenizers,
 * snapshot and alias resolution, family estimates for unlisted names, and config `models:` entries
 * overriding and extending it.
 */
import { describe, expect, it } from 'vitest';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { listModels, resolveModel } from '../../src/core/models';
import { getTokenizer } from '../../src/core/tokens';

describe('built-in models', () => {
  it('OpenAI models count exactly with their published encodings and chat overhead', () => {
    expect(resolveModel('gpt-4o')).toEqual({
      name: 'gpt-4o',
      provider: 'openai',
      window: 128_000,
      maxOutput: 16_384,
      tokenizer: 'o200k_base',
      messageOverhead: 3,
      requestOverhead: 3,
      exact: true,
      source: 'https://platform.openai.com/docs/models',
      asOf: '2025-10',
      retires: { date: '2027-01-14', successor: 'gpt-6-luna', source: 'https://developers.openai.com/api/docs/deprecations' },
    });
    for (const name of ['gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o3', 'o4-mini', 'gpt-5', 'gpt-5-mini']) {
      expect(resolveModel(name)).toMatchObject({ provider: 'openai', tokenizer: 'o200k_base', exact: true, messageOverhead: 3, requestOverhead: 3 });
    }
    expect(resolveModel('gpt-4.1')?.window).toBe(1_047_576);
    expect(resolveModel('gpt-5')).toMatchObject({ window: 400_000, maxOutput: 128_000 });
    for (const name of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo']) expect(resolveModel(name)?.tokenizer).toBe('cl100k_base');
  });

  it('Anthropic and Gemini 1.x models are estimates with chars4; Gemini 2.x an estimate with the Gemma 3 tokenizer', () => {
    for (const name of ['gemini-2.0-flash', 'gemini-2.5-pro', 'googleai/gemini-2.5-flash', 'vertexai/gemini-2.5-pro']) {
      const m = resolveModel(name);
      expect(m?.tokenizer).toBe('gemma3');
      expect(m?.exact).toBe(false);
    }
    for (const name of ['claude-3-5-sonnet', 'claude-3-7-sonnet', 'claude-sonnet-4', 'claude-opus-4-1', 'gemini-1.5-pro']) {
      const m = resolveModel(name);
      expect(m?.tokenizer).toBe('chars4');
      expect(m?.exact).toBe(false);
    }
    expect(resolveModel('claude-3-7-sonnet')).toMatchObject({ provider: 'anthropic', window: 200_000, maxOutput: 64_000 });
    expect(resolveModel('gemini-1.5-pro')).toMatchObject({ provider: 'google', window: 2_097_152, maxInput: 2_097_152, maxOutput: 8_192 });
  });

  it('every built-in entry names a known tokenizer and is exact only with an exact one', () => {
    const all = listModels();
    expect(all.length).toBeGreaterThan(30);
    for (const m of all) {
      const t = getTokenizer(m.tokenizer);
      expect(t, m.name).toBeDefined();
      if (m.exact) expect(t?.exact, m.name).toBe(true);
      expect(m.window, m.name).toBeGreaterThan(0);
      if (m.maxOutput !== undefined && m.maxInput === undefined) expect(m.maxOutput, m.name).toBeLessThanOrEqual(m.window);
    }
  });

  it('resolves snapshots, aliases, provider prefixes and fine-tunes to their base model, keeping the asked name', () => {
    const cases: Array<[string, string]> = [
      ['gpt-4o-2024-08-06', 'o200k_base'],
      ['GPT-4o-mini-2024-07-18', 'o200k_base'],
      ['gpt-4-0613', 'cl100k_base'],
      ['gpt-4-1106-preview', 'cl100k_base'],
      ['openai/gpt-4.1', 'o200k_base'],
      ['ft:gpt-4o-mini-2024-07-18:acme::abc123', 'o200k_base'],
      ['claude-3-5-sonnet-20241022', 'chars4'],
      ['claude-sonnet-4-20250514', 'chars4'],
      ['claude-3-7-sonnet-latest', 'chars4'],
      ['models/gemini-1.5-pro-002', 'chars4'],
      ['gemini-2.5-pro-preview-05-06', 'gemma3'],
    ];
    for (const [name, tokenizer] of cases) {
      const m = resolveModel(name);
      expect(m?.tokenizer, name).toBe(tokenizer);
      expect(m?.name).toBe(name);
    }
    expect(resolveModel('gpt-4-1106-preview')?.window).toBe(128_000);
    expect(resolveModel('gpt-4o-2024-05-13')?.maxOutput).toBe(4_096);
  });

  it('unknown names resolve to undefined, including prototype keys', () => {
    for (const name of ['my-model', 'gpt', '', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(resolveModel(name)).toBeUndefined();
  });

  it('a name of a known family resolves to the family tokenizer as an estimate, never exact', () => {
    const cases: Array<[string, string, string]> = [
      ['gpt-9', 'gpt', 'o200k_base'],
      ['gpt-6.1-nova', 'gpt', 'o200k_base'],
      ['claude-sonnet-5-5', 'claude', 'chars4'],
      ['gemini-3.9-flash-lite', 'gemini-3', 'gemma3'],
      ['qwen4-max', 'qwen', 'qwen3'],
      ['deepseek-v5', 'deepseek', 'deepseek_v3'],
    ];
    for (const [name, family, tokenizer] of cases) {
      const m = resolveModel(name);
      expect(m, name).toMatchObject({ name, tokenizer, exact: false, estimate: { family } });
      expect(m!.window, name).toBeGreaterThan(0);
      expect(m!.retired, name).toBeUndefined();
    }
  });
});

describe('config models: entries', () => {
  const config = ContextConfigSchema.parse({
    models: {
      'gpt-4o': { window: 64_000, max_output: 4_000, tokenizer: 'o200k_base', message_overhead: 4, request_overhead: 2, exact: true },
      'local-llama': { window: 8_192 },
      'claimed-exact': { window: 1_000, tokenizer: 'chars4', exact: true },
    },
  });

  it('override a built-in entry of the same name', () => {
    expect(resolveModel('gpt-4o', config.models)).toEqual({
      name: 'gpt-4o',
      provider: 'openai',
      window: 64_000,
      maxOutput: 4_000,
      tokenizer: 'o200k_base',
      messageOverhead: 4,
      requestOverhead: 2,
      exact: true,
    });
    // Other built-ins stay as they are.
    expect(resolveModel('gpt-4o-mini', config.models)?.window).toBe(128_000);
  });

  it('add custom models with the schema defaults (chars4, estimate, no overhead)', () => {
    expect(resolveModel('local-llama', config.models)).toEqual({
      name: 'local-llama',
      provider: 'custom',
      window: 8_192,
      tokenizer: 'chars4',
      messageOverhead: 0,
      requestOverhead: 0,
      exact: false,
    });
    expect(resolveModel('local-llama')).toBeUndefined();
  });

  it('cannot claim exact counts with an estimating tokenizer', () => {
    expect(resolveModel('claimed-exact', config.models)?.exact).toBe(false);
  });

  it('appear in listModels, replacing the built-in of the same name', () => {
    const all = listModels(config.models);
    expect(all.filter((m) => m.name === 'gpt-4o')).toHaveLength(1);
    expect(all.find((m) => m.name === 'gpt-4o')?.window).toBe(64_000);
    expect(all.some((m) => m.name === 'local-llama')).toBe(true);
  });
});
