/**
 * What a request costs: a dated price table per model (USD per million input, cached input and
 * output tokens, each entry with the date it was read and its source), the config's `prices:`
 * overrides, and the cost of one request and of a day of requests at a configured rate.
 *
 * Seed 001 is the test of this module: "with an example price of 0.50 dollars per million input
 * tokens, a 1,500-token prompt costs about 0.00075 dollars, so 100,000 questions a day cost about
 * 75 dollars". Cost is linear in tokens, so every figure here is tokens x price / 1,000,000.
 *
 * Data: the built-in prices live in the model registry (src/core/models/registry.json, generated
 * by scripts/models.mjs from @pydantic/genai-prices), each with its `as_of` date and `source`;
 * model files installed by the host (`.context-lens/models.yaml`) add or replace prices, and a
 * `prices:` entry in the context config wins over both. Nothing is fetched (nothing leaves the
 * machine). Batch discounts, cache-write surcharges and regional or priority tiers are not
 * modelled: the table is the standard, on-demand price; where a provider's price depends on the
 * time of day the table keeps the peak price. A model without a price has none: no price is
 * ever inferred from a similar model.
 *
 * Model names resolve as the registry resolves them (models.ts): lower-cased, without a provider
 * prefix (`openai/`, `anthropic/`, `models/`), a fine-tune wrapper, or a snapshot suffix
 * (`-2024-08-06`, `-20250514`, `-latest`), and through the same aliases, so every name
 * `resolveModel` knows has the price of the registry entry it resolves to (test/unit/cost.test.ts
 * checks the two tables agree). An exact key in the table (`gpt-4o-2024-05-13`, whose price
 * differs from `gpt-4o`) wins over the stripped name.
 */
import type { ContextConfig } from './config/schema';
import type { RequestCost } from './types';
import { builtinPrices, registryPrice } from './models';

/** One price entry: USD per million tokens. */
export interface Price {
  /** Standard input tokens. */
  input: number;
  /** Input tokens read from the provider's prompt cache; undefined when the provider has no cached price for the model. */
  cached_input?: number;
  /** Output tokens; undefined when unknown (embedding-style entries, or a config entry that gives input only). */
  output?: number;
  /** Prices of long prompts, for providers that charge more above a prompt length (Gemini Pro above 200k tokens). */
  long_context?: { above: number; input: number; cached_input?: number; output?: number };
  /** The date the price was read (ISO 8601, a day or a month). */
  as_of: string;
  /** Where it was read: the provider's pricing page, or the config file that overrides it. */
  source: string;
}

/** A price together with the table key it came from. */
export interface ResolvedPrice extends Price {
  /** The table key (or config key) that priced the model. */
  model: string;
  origin: 'builtin' | 'config';
}

/** The built-in price table, keyed like the model registry (derived from registry.json). */
export const PRICES: Readonly<Record<string, Price>> = Object.fromEntries(builtinPrices());

const own = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

/**
 * The price of a model: the config's `prices:` entry of that exact name first, then the model
 * files and the built-in table (through the registry's normalisation and aliases). Undefined when
 * none knows it.
 */
export function priceFor(model: string | undefined, config?: Pick<ContextConfig, 'prices'>, configPath?: string): ResolvedPrice | undefined {
  if (!model) return undefined;
  const prices = config?.prices;
  if (prices && own(prices, model)) {
    const p = prices[model];
    return { model, origin: 'config', ...p, as_of: p.as_of ?? 'config', source: p.source ?? configPath ?? 'prices: in the context config' };
  }
  const r = registryPrice(model);
  return r ? { model: r.key, origin: 'builtin', ...r.price } : undefined;
}

/** Money is kept to 1e-10 dollars, so 1,500 x 0.50 / 1e6 is exactly 0.00075. */
export function roundUsd(x: number): number {
  return Math.round(x * 1e10) / 1e10;
}

/** `tokens` at `perMillion` dollars per million tokens (seed 001: 1,500 at 0.50 = 0.00075). */
export function tokenCost(tokens: number, perMillion: number): number {
  return roundUsd((tokens * perMillion) / 1_000_000);
}

/** The prices that apply to a prompt of `inputTokens` (the long-context tier above its threshold). */
function tier(price: Price, inputTokens: number): { input: number; cached_input?: number; output?: number } {
  const l = price.long_context;
  if (l && inputTokens > l.above) return { input: l.input, cached_input: l.cached_input ?? price.cached_input, output: l.output ?? price.output };
  return { input: price.input, cached_input: price.cached_input, output: price.output };
}

/** The cost of one request, as the trace, `ctxlens eval` and the editor report it. */
/** What one request costs (the type lives with the trace in types.ts). */
export type { RequestCost } from './types';

export interface CostOptions {
  /** Output tokens reserved for the answer (the trace's `reserved_output`). */
  outputReserved?: number;
  /** Tokens of the request's cacheable prefix (prefix.ts). */
  cachedPrefixTokens?: number;
  /** Requests per day for the per-day figure (the config's `requests_per_day` by default). */
  requestsPerDay?: number;
}

/** The cost of a request of `inputTokens` tokens at `price`. */
export function requestCost(inputTokens: number, price: ResolvedPrice, options: CostOptions = {}): RequestCost {
  const t = tier(price, inputTokens);
  const out: RequestCost = {
    currency: 'USD',
    model: price.model,
    price: { input: t.input, ...(t.cached_input !== undefined ? { cached_input: t.cached_input } : {}), ...(t.output !== undefined ? { output: t.output } : {}), as_of: price.as_of, source: price.source, origin: price.origin },
    input_tokens: inputTokens,
    input: tokenCost(inputTokens, t.input),
    output_reserved: options.outputReserved ?? 0,
  };
  if (options.cachedPrefixTokens !== undefined) {
    const cached = Math.max(0, Math.min(inputTokens, options.cachedPrefixTokens));
    out.cached_input_tokens = cached;
    out.input_cached = roundUsd(tokenCost(inputTokens - cached, t.input) + tokenCost(cached, t.cached_input ?? t.input));
  }
  if (t.output !== undefined) {
    out.output_max = tokenCost(out.output_reserved, t.output);
    out.total_max = roundUsd(out.input + out.output_max);
  }
  const rate = options.requestsPerDay;
  if (rate !== undefined && rate > 0) {
    out.requests_per_day = rate;
    // Per day from tokens, not from the rounded per-request figure: 1,500 x 100,000 x 0.50 / 1e6 = 75 exactly.
    const perDay: NonNullable<RequestCost['per_day']> = { input: tokenCost(inputTokens * rate, t.input) };
    if (out.cached_input_tokens !== undefined) {
      perDay.input_cached = roundUsd(tokenCost((inputTokens - out.cached_input_tokens) * rate, t.input) + tokenCost(out.cached_input_tokens * rate, t.cached_input ?? t.input));
    }
    if (t.output !== undefined) perDay.total_max = roundUsd(perDay.input + tokenCost(out.output_reserved * rate, t.output));
    out.per_day = perDay;
  }
  return out;
}

/**
 * The cost of an assembled request (its trace's model, input tokens and output reserve) under
 * the config's prices and request rate; undefined when the model has no price.
 */
export function traceCost(
  trace: { model?: string; input_tokens: number; reserved_output: number },
  config?: Pick<ContextConfig, 'prices' | 'requests_per_day'>,
  options: { configPath?: string; cachedPrefixTokens?: number; requestsPerDay?: number } = {},
): RequestCost | undefined {
  const price = priceFor(trace.model, config, options.configPath);
  if (!price) return undefined;
  return requestCost(trace.input_tokens, price, {
    outputReserved: trace.reserved_output,
    cachedPrefixTokens: options.cachedPrefixTokens,
    requestsPerDay: options.requestsPerDay ?? config?.requests_per_day,
  });
}

/**
 * The assembly result with `trace.cost` set (a new result and trace; the input is not changed).
 * A request that was not built, or a model without a price, is returned as it is.
 */
export function withCost<R extends { ok: boolean; trace: { model?: string; input_tokens: number; reserved_output: number; cost?: RequestCost } }>(
  result: R,
  config?: Pick<ContextConfig, 'prices' | 'requests_per_day'>,
  configPath?: string,
): R {
  if (!result.ok) return result;
  const cost = traceCost(result.trace, config, { configPath });
  if (!cost) return result;
  // A descriptor copy, not a spread: the trace's per-item entries stay lazy (assembly/stages/trace.ts).
  const trace = Object.defineProperties({}, Object.getOwnPropertyDescriptors(result.trace)) as R['trace'];
  trace.cost = cost;
  return { ...result, trace };
}

/**
 * Dollars as the editor and the CLI print them: "$0.00075", "$0.0012", "$0.0137", "$1.37",
 * "$75", "$1,370". Small amounts keep two significant digits, so a request never reads "$0.00".
 */
export function formatUsd(x: number): string {
  if (!Number.isFinite(x)) return '—';
  const sign = x < 0 ? '-' : '';
  const v = Math.abs(x);
  if (v === 0) return '$0';
  if (v >= 100) return `${sign}$${Math.round(v).toLocaleString('en-US')}`;
  if (v >= 1) return `${sign}$${trimZeros(v.toFixed(2), 2)}`;
  if (v >= 0.01) return `${sign}$${trimZeros(v.toFixed(4), 2)}`;
  // Two significant digits: 0.00075 -> 0.00075, 0.0012345 -> 0.0012, 0.00396 -> 0.0040.
  let decimals = Math.min(12, Math.ceil(-Math.log10(v)) + 1);
  // Rounding can carry into a new digit (0.0099 -> 0.010): two significant digits still.
  if (Number(v.toFixed(decimals)) >= 0.01) decimals = 3;
  return `${sign}$${v.toFixed(decimals)}`;
}

/** "1.50" -> "1.5" down to `min` decimals; "75.00" -> "75". */
function trimZeros(s: string, min: number): string {
  if (!s.includes('.')) return s;
  let t = s.replace(/0+$/, '');
  const decimals = t.length - t.indexOf('.') - 1;
  if (decimals < min && !/\.$/.test(t)) t = t + '0'.repeat(min - decimals);
  if (t.endsWith('.')) t = t.slice(0, -1);
  return t;
}
