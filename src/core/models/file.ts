/**
 * Model files: `.context-lens/models.yaml` in a workspace (and the user's
 * `~/.config/context-lens/models.yaml`), which add or override registry entries and prices without
 * a release. This module parses one file's text; hosts read the files and install the result
 * with `useModelFiles` (index.ts). The format is documented in docs/models.md.
 */
import { parse } from 'yaml';
import { z } from 'zod';
import type { ModelLayer, RegistryEntry, RegistryPrice } from './index';
import { lookupEntry } from './index';

const Date = z.union([z.string(), z.date().transform((d) => d.toISOString().slice(0, 10))]);

const PriceSchema = z
  .object({
    input: z.number().nonnegative(),
    cached_input: z.number().nonnegative().optional(),
    output: z.number().nonnegative().optional(),
    as_of: Date.optional(),
    source: z.string().optional(),
  })
  .strict();

const EntrySchema = z
  .object({
    provider: z.enum(['openai', 'anthropic', 'google', 'mistral', 'xai', 'deepseek', 'qwen', 'meta', 'custom']).optional(),
    window: z.number().int().positive().optional(),
    max_output: z.number().int().positive().optional(),
    max_input: z.number().int().positive().optional(),
    tokenizer: z.string().optional(),
    exact: z.boolean().optional(),
    message_overhead: z.number().int().nonnegative().optional(),
    request_overhead: z.number().int().nonnegative().optional(),
    source: z.string().optional(),
    as_of: Date.optional(),
    retired: Date.optional(),
    successor: z.string().optional(),
    price: PriceSchema.optional(),
  })
  .strict();

const FileSchema = z
  .object({
    models: z.record(z.string(), EntrySchema).optional(),
    prices: z.record(z.string(), PriceSchema).optional(),
  })
  .strict();

export interface ModelFileResult {
  layer: ModelLayer;
  /** Problems, each one line naming the key; a bad entry is skipped, the rest of the file is used. */
  errors: string[];
}

function price(p: z.infer<typeof PriceSchema>, path: string): RegistryPrice {
  return { input: p.input, ...(p.cached_input !== undefined ? { cached_input: p.cached_input } : {}), ...(p.output !== undefined ? { output: p.output } : {}), as_of: p.as_of ?? 'unknown', source: p.source ?? path };
}

/**
 * Parses a model file. An entry for a name the registry knows inherits the fields it does not
 * write (so `gpt-4o: { window: 64000 }` only changes the window); a new name needs `window`.
 */
export function parseModelFile(text: string, path: string): ModelFileResult {
  const errors: string[] = [];
  const layer: ModelLayer = { path, models: new Map(), prices: new Map() };
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    errors.push(`${path}: not valid YAML (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
    return { layer, errors };
  }
  if (raw === null || raw === undefined) return { layer, errors };
  const top = z.object({ models: z.unknown().optional(), prices: z.unknown().optional() }).strict().safeParse(raw);
  if (!top.success) {
    errors.push(`${path}: a model file has the keys models: and prices: only`);
    return { layer, errors };
  }
  const models = z.record(z.string(), z.unknown()).safeParse(top.data.models ?? {});
  const prices = z.record(z.string(), z.unknown()).safeParse(top.data.prices ?? {});
  for (const [name, value] of Object.entries(models.success ? models.data : {})) {
    const r = EntrySchema.safeParse(value);
    if (!r.success) {
      errors.push(`${path}: models.${name}: ${r.error.issues.map((i) => `${i.path.join('.') || 'entry'} ${i.message}`).join('; ')}`);
      continue;
    }
    const e = r.data;
    const base = lookupEntry(name);
    const window = e.window ?? base?.window;
    if (window === undefined) {
      errors.push(`${path}: models.${name}: a model the registry does not know needs window:`);
      continue;
    }
    const entry: RegistryEntry = {
      name,
      provider: e.provider ?? base?.provider ?? 'custom',
      window,
      ...(e.max_output ?? base?.max_output) !== undefined ? { max_output: e.max_output ?? base?.max_output } : {},
      ...(e.max_input ?? base?.max_input) !== undefined ? { max_input: e.max_input ?? base?.max_input } : {},
      tokenizer: e.tokenizer ?? base?.tokenizer ?? 'chars4',
      exact: e.exact ?? (e.tokenizer === undefined ? (base?.exact ?? false) : false),
      message_overhead: e.message_overhead ?? base?.message_overhead ?? 0,
      request_overhead: e.request_overhead ?? base?.request_overhead ?? 0,
      source: e.source ?? path,
      as_of: e.as_of ?? base?.as_of ?? 'unknown',
      ...(e.retired !== undefined ? { retired: { date: e.retired, ...(e.successor ? { successor: e.successor } : {}), source: e.source ?? path } } : base?.retired ? { retired: base.retired } : {}),
      ...(base?.retires && e.retired === undefined ? { retires: base.retires } : {}),
      ...(e.price ? { price: price(e.price, path) } : base?.price ? { price: base.price } : {}),
    };
    layer.models.set(name.toLowerCase(), entry);
  }
  if (!models.success) errors.push(`${path}: models: must be a mapping of model names to entries`);
  for (const [name, value] of Object.entries(prices.success ? prices.data : {})) {
    const r = PriceSchema.safeParse(value);
    if (!r.success) {
      errors.push(`${path}: prices.${name}: ${r.error.issues.map((i) => `${i.path.join('.') || 'entry'} ${i.message}`).join('; ')}`);
      continue;
    }
    layer.prices.set(name.toLowerCase(), price(r.data, path));
  }
  if (!prices.success) errors.push(`${path}: prices: must be a mapping of model names to prices`);
  return { layer, errors };
}
