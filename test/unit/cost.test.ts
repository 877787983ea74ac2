/**
 * The price table and the cost functions (src/core/cost.ts). Seed 001's numbers are the test:
 * 1,500 input tokens at $0.50 per million cost $0.00075, and 100,000 such requests a day $75.
 */
import { describe, expect, it } from 'vitest';
import type { RequestCost } from '../../src/core/cost';
import { PRICES, formatUsd, priceFor, requestCost, roundUsd, tokenCost, traceCost, withCost } from '../../src/core/cost';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { resolveModel } from '../../src/core/models';

const example = ContextConfigSchema.parse({ prices: { 'example-model': { input: 0.5, as_of: '2026-01-01', source: 'seed 001' } } });

describe("seed 001's cost arithmetic", () => {
  it('1,500 input tokens at $0.50 per million cost $0.00075', () => {
    expect(tokenCost(1500, 0.5)).toBe(0.00075);
    const price = priceFor('example-model', example)!;
    const c = requestCost(1500, price);
    expect(c.input).toBe(0.00075);
    expect(formatUsd(c.input)).toBe('$0.00075');
  });

  it('100,000 such requests a day cost $75', () => {
    const c = requestCost(1500, priceFor('example-model', example)!, { requestsPerDay: 100_000 });
    expect(c.per_day?.input).toBe(75);
    expect(formatUsd(c.per_day!.input)).toBe('$75');
  });

  it('halving the sources halves the cost (cost is linear in input tokens)', () => {
    const p = priceFor('example-model', example)!;
    expect(requestCost(750, p, { requestsPerDay: 100_000 }).per_day?.input).toBe(37.5);
    expect(requestCost(3000, p).input).toBe(2 * requestCost(1500, p).input);
  });

  it('takes the request rate from the config', () => {
    const cfg = ContextConfigSchema.parse({ model: 'example-model', requests_per_day: 100_000, prices: example.prices });
    const c = traceCost({ model: 'example-model', input_tokens: 1500, reserved_output: 0 }, cfg)!;
    expect(c.requests_per_day).toBe(100_000);
    expect(c.per_day?.input).toBe(75);
  });
});

describe('price table', () => {
  it('dates and sources every entry', () => {
    for (const [model, p] of Object.entries(PRICES)) {
      expect(p.as_of, model).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
      expect(p.source, model).toMatch(/https:\/\/[a-z]/);
      expect(p.input, model).toBeGreaterThan(0);
      if (p.cached_input !== undefined) expect(p.cached_input, model).toBeLessThan(p.input);
    }
  });

  it('is keyed like the model registry: every priced model is a registry model', () => {
    for (const model of Object.keys(PRICES)) expect(resolveModel(model), model).toBeDefined();
  });

  it('prices the models the examples and the registry use most', () => {
    for (const m of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-5', 'o3', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'gemini-2.5-pro', 'gemini-2.5-flash']) expect(priceFor(m), m).toBeDefined();
  });

  it.each([
    ['gpt-4o-2024-08-06', 'gpt-4o', 2.5],
    ['openai/gpt-4o-mini', 'gpt-4o-mini', 0.15],
    ['GPT-4o', 'gpt-4o', 2.5],
    ['gpt-4o-2024-05-13', 'gpt-4o-2024-05-13', 5],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4', 3],
    ['anthropic/claude-3-5-sonnet-latest', 'claude-3-5-sonnet', 3],
    ['claude-4-opus', 'claude-opus-4', 15],
    ['googleai/gemini-2.5-flash', 'gemini-2.5-flash', 0.3],
    ['ft:gpt-4o-mini-2024-07-18:org::abc', 'gpt-4o-mini', 0.15],
    ['gpt-35-turbo', 'gpt-3.5-turbo', 0.5],
  ])('resolves %s to %s (registry normalisation and aliases)', (name, key, input) => {
    const p = priceFor(name)!;
    expect(p.model).toBe(key);
    expect(p.input).toBe(input);
    expect(p.origin).toBe('builtin');
  });

  it('knows no price for an unknown model', () => {
    expect(priceFor('my-finetune')).toBeUndefined();
    expect(priceFor(undefined)).toBeUndefined();
    expect(traceCost({ model: 'my-finetune', input_tokens: 100, reserved_output: 0 })).toBeUndefined();
  });

  it("lets the config's prices override a built-in entry, with the config as the source", () => {
    const cfg = ContextConfigSchema.parse({ prices: { 'gpt-4o': { input: 2, output: 8 } } });
    const p = priceFor('gpt-4o', cfg, '/ws/support.context.yaml')!;
    expect(p).toMatchObject({ model: 'gpt-4o', input: 2, output: 8, origin: 'config', source: '/ws/support.context.yaml', as_of: 'config' });
    expect(p.cached_input).toBeUndefined();
    // Another model still has its built-in price.
    expect(priceFor('gpt-4o-mini', cfg)?.origin).toBe('builtin');
  });

  it('rejects negative prices and unknown keys in the config', () => {
    expect(ContextConfigSchema.safeParse({ prices: { m: { input: -1 } } }).success).toBe(false);
    expect(ContextConfigSchema.safeParse({ prices: { m: { input: 1, currency: 'EUR' } } }).success).toBe(false);
    expect(ContextConfigSchema.safeParse({ requests_per_day: -5 }).success).toBe(false);
  });

  it('leaves a config without prices as it was (no default is added, so cache keys do not move)', () => {
    const cfg = ContextConfigSchema.parse({ window: 8000 });
    expect('prices' in cfg).toBe(false);
    expect('requests_per_day' in cfg).toBe(false);
  });
});

describe('request cost', () => {
  const gpt4o = priceFor('gpt-4o')!;

  it('charges input, and the whole output reserve as the most one answer costs', () => {
    const c = requestCost(1898, gpt4o, { outputReserved: 2000 });
    expect(c.input).toBe(roundUsd((1898 * 2.5) / 1e6));
    expect(c.output_max).toBe(0.02);
    expect(c.total_max).toBe(roundUsd(c.input + 0.02));
    expect(c.price).toMatchObject({ input: 2.5, cached_input: 1.25, output: 10, as_of: '2026-09-23', origin: 'builtin' });
  });

  it('bills a cached prefix at the cached price', () => {
    const c = requestCost(1500, gpt4o, { cachedPrefixTokens: 1000, requestsPerDay: 100_000 });
    expect(c.cached_input_tokens).toBe(1000);
    expect(c.input_cached).toBe(roundUsd((500 * 2.5 + 1000 * 1.25) / 1e6));
    expect(c.per_day?.input_cached).toBe(roundUsd((500 * 2.5 + 1000 * 1.25) / 10));
    // A prefix longer than the request is the request.
    expect(requestCost(100, gpt4o, { cachedPrefixTokens: 5000 }).cached_input_tokens).toBe(100);
  });

  it('bills the cached prefix at the input price for a model without a cached price', () => {
    const p = priceFor('gpt-4-turbo')!;
    const c = requestCost(1000, p, { cachedPrefixTokens: 600 });
    expect(c.input_cached).toBe(c.input);
  });

  it("uses the long-context tier above the tier's threshold", () => {
    const p = priceFor('gemini-2.5-pro')!;
    expect(requestCost(100_000, p).price.input).toBe(1.25);
    expect(requestCost(250_000, p).price.input).toBe(2.5);
    expect(requestCost(250_000, p).input).toBe(0.625);
  });

  it('is attached to an assembled trace, never to a request that was not built', () => {
    const trace: { model: string; input_tokens: number; reserved_output: number; cost?: RequestCost } = { model: 'gpt-4o', input_tokens: 1000, reserved_output: 100 };
    const ok = withCost({ ok: true, trace }, undefined);
    expect(ok.trace.cost?.input).toBe(0.0025);
    expect(trace).not.toHaveProperty('cost');
    const failed = withCost({ ok: false, trace }, undefined);
    expect(failed.trace).not.toHaveProperty('cost');
    const unpriced = withCost({ ok: true, trace: { ...trace, model: 'nope' } }, undefined);
    expect(unpriced.trace).not.toHaveProperty('cost');
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '$0'],
    [0.00075, '$0.00075'],
    [0.0012345, '$0.0012'],
    [0.00396, '$0.0040'],
    [0.00996, '$0.010'],
    [0.0137, '$0.0137'],
    [0.05, '$0.05'],
    [1.5, '$1.50'],
    [75, '$75'],
    [75.25, '$75.25'],
    [1370.4, '$1,370'],
    [-0.0012, '-$0.0012'],
  ])('%s -> %s', (x, s) => {
    expect(formatUsd(x)).toBe(s);
  });
});
