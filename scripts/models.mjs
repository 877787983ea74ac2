#!/usr/bin/env node
// Generates src/core/models/registry.json, the built-in model registry: for every model its
// window, output limit, tokenizer, chat overheads, lifecycle (retired or retiring, with the
// provider's named successor) and price, each with the source it was read from and the date.
//
// Two inputs, both offline:
// - Prices come from @pydantic/genai-prices (MIT), a maintained machine-readable price table,
//   read through its own lookup (`calcPrice`), so its matching rules, tiers and dated price
//   changes are applied as the package applies them. Its bundled data carries no per-model check
//   date, so `as_of` is the publication date of the package version (npm registry time).
// - Windows, output limits and retirement dates come from the providers' model and deprecation
//   pages, written down below (CURATED) with the page and the day they were read. Where a page
//   gave no limit, the entry says which other source it came from, and a limit no source gave
//   is left out (output then shares the window), never guessed.
//
// Usage: node scripts/models.mjs [--check]   (--check fails when the committed file is stale)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const genai = require('@pydantic/genai-prices');
const genaiVersion = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/@pydantic/genai-prices/package.json'), 'utf8')).version;
// npm registry publication time of @pydantic/genai-prices 0.1.8 (`npm view @pydantic/genai-prices time`).
const GENAI_PUBLISHED = { '0.1.8': '2026-09-23' };
const PRICE_AS_OF = GENAI_PUBLISHED[genaiVersion] ?? `genai-prices ${genaiVersion}`;
const READ = '2026-12-01';
const OLD = '2025-10';

// Pages the limits and lifecycles were read from.
const P = {
  openaiModels: 'https://developers.openai.com/api/docs/models',
  openaiDeprecations: 'https://developers.openai.com/api/docs/deprecations',
  anthropicModels: 'https://platform.claude.com/docs/en/about-claude/models/overview',
  anthropicDeprecations: 'https://platform.claude.com/docs/en/about-claude/model-deprecations',
  geminiModels: 'https://ai.google.dev/gemini-api/docs/models',
  geminiDeprecations: 'https://ai.google.dev/gemini-api/docs/deprecations',
  gemini4: 'https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/start/get-started-with-gemini-4',
  mistralModels: 'https://docs.mistral.ai/models',
  xaiGrok46: 'https://docs.x.ai/developers/grok-4-6',
  xaiModels: 'https://docs.x.ai/docs/models',
  deepseek: 'https://api-docs.deepseek.com/quick_start/pricing',
  qwen: 'https://vercel.com/ai-gateway/models (Alibaba Model Studio listings)',
  gemini38: 'https://vercel.com/ai-gateway/models/google/gemini-3.8-flash (Google model card: deepmind.google/models/model-cards/gemini-3-8-flash)',
  gpt55: 'https://anchor.is/the-context-window/issue/1/the-language/article/15286 (OpenAI model docs as of May 2026)',
  gpt61terra: 'https://developers.openai.com/api/docs/models; https://www.getmaxim.ai/bifrost/model-library/compare/chatgpt/gpt-6.1-terra (922,000 input + 128,000 output)',
  claudeSonnet45: 'https://aiproductivity.ai/news/anthropic-retiring-claude-sonnet-4-5/; https://platform.claude.com/docs/en/about-claude/model-deprecations',
  genai: `@pydantic/genai-prices ${genaiVersion} (context_window)`,
  // Entries carried over from the registry as written in October 2025.
  openaiOld: 'https://platform.openai.com/docs/models',
  anthropicOld: 'https://docs.claude.com/en/docs/about-claude/models/overview',
  geminiOld: 'https://ai.google.dev/gemini-api/docs/models',
  llama: 'https://www.llama.com/docs/model-cards-and-prompt-formats/',
  qwenCards: 'https://huggingface.co/Qwen (Qwen3 and Qwen2.5 model cards)',
  deepseekCard: 'https://huggingface.co/deepseek-ai/DeepSeek-V3',
  mistralOld: 'https://docs.mistral.ai/getting-started/models/models_overview/',
  gemma3: 'https://ai.google.dev/gemma/docs/core/model_card_3',
  gptOss: 'https://platform.openai.com/docs/models/gpt-oss-120b',
};

// Chat-template overheads, counted with each family's tokenizer on its published template
// (test/unit/tokens.families.test.ts recounts them). OpenAI's recipe: 3 per message, 3 per request.
const OH = {
  openai: [3, 3],
  none: [0, 0],
  llama3: [5, 25],
  qwen: [5, 3],
  deepseek: [2, 2],
  mistral: [2, 1],
  gemma3: [5, 4],
  harmony: [7, 63],
};

const retiredAt = (date, successor, source) => ({ ...(date ? { date } : {}), ...(successor ? { successor } : {}), source });

/**
 * The curated table. `limits` names the page the window and output limit were read from, `asOf`
 * the day (READ, or OLD for entries carried over unchanged). `price` names the genai-prices
 * provider and model id (default: the provider below and the entry's name), or false for none.
 */
const openai = (name, window, maxOutput, o = {}) => ({ name, provider: 'openai', tokenizer: o.tokenizer ?? 'o200k_base', exact: o.exact ?? true, overhead: OH.openai, window, maxOutput, limits: o.limits ?? P.openaiModels, asOf: o.asOf ?? READ, price: o.price, ...o.extra });
const claude = (name, window, maxOutput, o = {}) => ({ name, provider: 'anthropic', tokenizer: 'chars4', exact: false, overhead: OH.none, window, maxOutput, limits: o.limits ?? P.anthropicModels, asOf: o.asOf ?? READ, price: o.price, ...o.extra });
const gemini = (name, maxInput, maxOutput, o = {}) => ({ name, provider: 'google', tokenizer: o.tokenizer ?? 'gemma3', exact: false, overhead: OH.none, window: maxInput, ...(o.shared ? {} : { maxInput }), maxOutput, limits: o.limits ?? P.geminiModels, asOf: o.asOf ?? READ, price: o.price, ...o.extra });
const open = (name, provider, tokenizer, overhead, window, o = {}) => ({ name, provider, tokenizer, exact: o.exact ?? true, overhead, window, maxOutput: o.maxOutput, limits: o.limits, asOf: o.asOf ?? OLD, price: o.price ?? false, ...o.extra });

const ODEP = P.openaiDeprecations;
const ADEP = P.anthropicDeprecations;
const GDEP = P.geminiDeprecations;

const CURATED = [
  // ---- OpenAI: current models (models page, read 2026-12-01). OpenAI states no encoding for the
  // GPT-5.1+ and GPT-6 models: o200k_base, the encoding of GPT-4o to GPT-5, is assumed (estimate).
  openai('gpt-6.2-astra', 1_050_000, 128_000, { exact: false, price: { manual: { input: 8, output: 40 }, source: P.openaiModels } }),
  openai('gpt-6.2-sol', 1_050_000, 128_000, { exact: false, price: { manual: { input: 2, output: 10 }, source: P.openaiModels } }),
  openai('gpt-6.1-terra', 1_050_000, 128_000, { exact: false, limits: P.gpt61terra, price: { manual: { input: 1, output: 5 }, source: P.openaiModels } }),
  openai('gpt-6-astra', 1_050_000, 128_000, { exact: false }),
  openai('gpt-6-sol', 1_050_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-6-luna', 1_050_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-5.6-sol', 1_050_000, 128_000, { exact: false, extra: { aliases: ['gpt-5.6'] } }),
  openai('gpt-5.6-terra', 1_050_000, 128_000, { exact: false }),
  openai('gpt-5.6-luna', 1_050_000, 128_000, { exact: false }),
  openai('gpt-5.5', 1_050_000, 128_000, { exact: false, limits: P.gpt55 }),
  openai('gpt-5.4', 1_050_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-5.4-mini', 400_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-5.4-nano', 400_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-5.2', 400_000, 128_000, { exact: false, limits: P.genai }),
  openai('gpt-5.1', 400_000, 128_000, { exact: false, limits: P.genai, extra: { retires: retiredAt('2027-04-01', undefined, ODEP) } }),
  // ---- OpenAI: retiring and retired (deprecations page, read 2026-12-01).
  openai('gpt-5', 400_000, 128_000, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2026-12-11', 'gpt-6.1-sol', ODEP) } }),
  openai('gpt-5-mini', 400_000, 128_000, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2026-12-11', 'gpt-6.1-terra', ODEP) } }),
  openai('gpt-5-nano', 400_000, 128_000, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2026-12-11', undefined, ODEP) } }),
  openai('o3', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2026-12-11', undefined, ODEP) } }),
  openai('o3-pro', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2026-12-11', undefined, ODEP) } }),
  openai('gpt-4.1', 1_047_576, 32_768, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2027-01-14', 'gpt-6-luna', ODEP) } }),
  openai('gpt-4.1-mini', 1_047_576, 32_768, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2027-01-14', 'gpt-6-luna', ODEP) } }),
  openai('gpt-4o', 128_000, 16_384, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2027-01-14', 'gpt-6-luna', ODEP) } }),
  openai('gpt-4o-mini', 128_000, 16_384, { asOf: OLD, limits: P.openaiOld, extra: { retires: retiredAt('2027-01-14', 'gpt-6-luna', ODEP) } }),
  openai('gpt-5-chat-latest', 128_000, 16_384, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-07-23', 'gpt-5.3-chat-latest', ODEP) } }),
  openai('gpt-4.1-nano', 1_047_576, 32_768, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', undefined, ODEP) } }),
  openai('gpt-4.5-preview', 128_000, 16_384, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2025-07-14', 'gpt-4.1', ODEP) } }),
  openai('gpt-4o-2024-05-13', 128_000, 4_096, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP) } }),
  openai('chatgpt-4o-latest', 128_000, 16_384, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-02-17', 'gpt-5.1-chat-latest', ODEP), aliases: ['gpt-4o-latest'] } }),
  openai('o1', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP) } }),
  openai('o1-mini', 128_000, 65_536, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2025-10-27', 'o4-mini', ODEP) } }),
  openai('o1-pro', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP) } }),
  openai('o3-mini', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP) } }),
  openai('o4-mini', 200_000, 100_000, { asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-terra', ODEP) } }),
  openai('gpt-4-turbo', 128_000, 4_096, { tokenizer: 'cl100k_base', asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP), aliases: ['gpt-4-turbo-preview', 'gpt-4-1106-preview', 'gpt-4-0125-preview', 'gpt-4-vision-preview'] } }),
  openai('gpt-4', 8_192, 8_192, { tokenizer: 'cl100k_base', asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-sol', ODEP) } }),
  openai('gpt-4-32k', 32_768, 32_768, { tokenizer: 'cl100k_base', asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2025-06-06', 'gpt-4o', ODEP) } }),
  openai('gpt-3.5-turbo', 16_385, 4_096, { tokenizer: 'cl100k_base', asOf: OLD, limits: P.openaiOld, extra: { retired: retiredAt('2026-10-23', 'gpt-5.6-terra', ODEP), aliases: ['gpt-35-turbo'] } }),

  // ---- Anthropic (models overview and deprecations, read 2026-12-01). No published tokenizer: chars4.
  claude('claude-fable-5-1', 1_000_000, 128_000),
  claude('claude-fable-5', 1_000_000, 128_000),
  claude('claude-opus-5', 1_000_000, 128_000),
  claude('claude-opus-5-5', 1_000_000, undefined, { limits: P.genai }),
  claude('claude-sonnet-5', 1_000_000, undefined, { limits: P.genai }),
  claude('claude-opus-4-8', 1_000_000, 128_000),
  claude('claude-opus-4-7', 1_000_000, 128_000),
  claude('claude-opus-4-6', 1_000_000, undefined, { limits: P.genai }),
  claude('claude-sonnet-4-6', 1_000_000, 64_000),
  claude('claude-opus-4-5', 200_000, 64_000, { limits: P.genai, extra: { retires: retiredAt('2026-11-24', undefined, ADEP) } }),
  claude('claude-haiku-4-5', 200_000, 64_000),
  claude('claude-sonnet-4-5', 200_000, 64_000, { asOf: OLD, limits: P.anthropicOld, extra: { retired: retiredAt(undefined, 'claude-sonnet-4-6', P.claudeSonnet45) } }),
  claude('claude-opus-4-1', 200_000, 32_000, { asOf: OLD, limits: P.anthropicOld, extra: { retired: retiredAt('2026-08-05', undefined, ADEP) } }),
  claude('claude-opus-4', 200_000, 32_000, { asOf: OLD, limits: P.anthropicOld, price: { id: 'claude-opus-4-0' }, extra: { retired: retiredAt('2026-06-15', 'claude-opus-4-8', ADEP), aliases: ['claude-opus-4-0', 'claude-4-opus'] } }),
  claude('claude-sonnet-4', 200_000, 64_000, { asOf: OLD, limits: P.anthropicOld, price: { id: 'claude-sonnet-4-0' }, extra: { retired: retiredAt('2026-06-15', 'claude-sonnet-4-6', ADEP), aliases: ['claude-sonnet-4-0', 'claude-4-sonnet'] } }),
  claude('claude-3-7-sonnet', 200_000, 64_000, { asOf: OLD, limits: P.anthropicOld, price: { id: 'claude-3-7-sonnet-latest' }, extra: { retired: retiredAt('2026-02-19', undefined, ADEP) } }),
  claude('claude-3-5-sonnet', 200_000, 8_192, { asOf: OLD, limits: P.anthropicOld, extra: { retired: retiredAt('2025-10-28', 'claude-sonnet-4-5', ADEP) } }),
  claude('claude-3-5-haiku', 200_000, 8_192, { asOf: OLD, limits: P.anthropicOld, price: { id: 'claude-3-5-haiku-latest' }, extra: { retired: retiredAt('2026-02-19', undefined, ADEP) } }),
  claude('claude-3-opus', 200_000, 4_096, { asOf: OLD, limits: P.anthropicOld, price: { id: 'claude-3-opus-latest' }, extra: { retired: retiredAt('2026-01-05', 'claude-opus-4', ADEP) } }),
  claude('claude-3-haiku', 200_000, 4_096, { asOf: OLD, limits: P.anthropicOld, extra: { retired: retiredAt('2026-04-20', undefined, ADEP) } }),

  // ---- Google (models and deprecations pages, read 2026-12-01). Gemini 3.x and 4 count with the
  // Gemma 3 vocabulary as an estimate (the google-genai SDK's local tokenizer maps Gemini 2.x and
  // 3 to it; nothing newer is published).
  gemini('gemini-4-argon', 1_048_576, undefined, { shared: true, limits: P.gemini4, price: false }),
  // Only Gemini 3.8 Flash has a stated output limit in the sources read; the others keep the
  // 1M input limit genai-prices records, and their output limit is left out.
  gemini('gemini-3.8-flash', 1_000_000, 65_536, { limits: P.gemini38 }),
  gemini('gemini-3.7-flash', 1_000_000, undefined, { limits: P.genai }),
  gemini('gemini-3.6-flash', 1_000_000, undefined, { limits: P.genai }),
  gemini('gemini-3.5-flash', 1_000_000, undefined, { limits: P.genai }),
  gemini('gemini-3.5-flash-lite', 1_000_000, undefined, { limits: P.genai }),
  gemini('gemini-3.1-flash-lite', 1_000_000, undefined, { limits: P.genai, extra: { retires: retiredAt('2027-05-07', undefined, GDEP) } }),
  gemini('gemini-3.1-pro-preview', 1_000_000, undefined, { limits: 'https://www.skills.sh/xiaolai/gemini-skills/gemini-api-dev (1M tokens)' }),
  gemini('gemini-2.5-flash-lite', 1_048_576, 65_536, { asOf: OLD, limits: P.geminiOld }),
  gemini('gemini-2.5-pro', 1_048_576, 65_536, { asOf: OLD, limits: P.geminiOld, extra: { retired: retiredAt('2026-12-01', 'gemini-3.8-flash', GDEP) } }),
  gemini('gemini-2.5-flash', 1_048_576, 65_536, { asOf: OLD, limits: P.geminiOld, extra: { retired: retiredAt('2026-12-01', 'gemini-3.5-flash-lite', GDEP) } }),
  gemini('gemini-2.0-flash', 1_048_576, 8_192, { asOf: OLD, limits: P.geminiOld, extra: { retired: retiredAt('2026-06-01', 'gemini-2.5-flash', GDEP) } }),
  gemini('gemini-2.0-flash-lite', 1_048_576, 8_192, { asOf: OLD, limits: P.geminiOld, extra: { retired: retiredAt('2026-06-01', 'gemini-2.5-flash-lite', GDEP) } }),
  gemini('gemini-1.5-pro', 2_097_152, 8_192, { tokenizer: 'chars4', asOf: OLD, limits: P.geminiOld, price: { id: 'gemini-pro-1.5' }, extra: { retired: retiredAt('2025-09-24', 'gemini-2.5-pro', GDEP) } }),
  gemini('gemini-1.5-flash', 1_048_576, 8_192, { tokenizer: 'chars4', asOf: OLD, limits: P.geminiOld, extra: { retired: retiredAt('2025-09-24', 'gemini-2.5-flash', GDEP) } }),
  gemini('gemini-1.5-flash-8b', 1_048_576, 8_192, { tokenizer: 'chars4', asOf: OLD, limits: P.geminiOld, price: { id: 'gemini-flash-1.5-8b' }, extra: { retired: retiredAt('2025-09-24', 'gemini-2.5-flash-lite', GDEP) } }),

  // ---- Mistral (models pages, read 2026-12-01): the -latest names point at the 256k models.
  open('mistral-medium-3-5', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.mistralModels, price: {}, extra: { aliases: ['mistral-medium-latest', 'mistral-medium', 'mistral-medium-3.5'] } }),
  open('mistral-large-2512', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['mistral-large-latest', 'mistral-large', 'mistral-large-3'] } }),
  open('mistral-small-2603', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['mistral-small-latest', 'mistral-small'] } }),
  open('ministral-14b-2512', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['ministral-14b-latest', 'ministral-14b'] } }),
  open('ministral-8b-2512', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['ministral-8b-latest'] } }),
  open('ministral-3b-2512', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['ministral-3b-latest'] } }),
  open('devstral-2512', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['devstral-latest', 'devstral-medium', 'devstral-2'] } }),
  open('codestral', 'mistral', 'tekken', OH.mistral, 262_144, { exact: false, limits: P.mistralOld, price: {}, extra: { aliases: ['codestral-2508', 'codestral-22b'] } }),
  open('mistral-large-2411', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: { id: 'mistral-large' }, extra: { aliases: ['mistral-large-2407', 'mistral-large-instruct'] } }),
  open('mistral-medium-3-1', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: {}, extra: { aliases: ['mistral-medium-3.1', 'mistral-medium-3', 'mistral-medium-2508', 'mistral-medium-2505'] } }),
  open('mistral-nemo', 'mistral', 'tekken', OH.mistral, 131_072, { limits: P.mistralOld, price: {}, extra: { aliases: ['open-mistral-nemo', 'mistral-nemo-instruct', 'mistral-nemo-instruct-2407', 'mistral-nemo:12b'] } }),
  open('ministral-8b', 'mistral', 'tekken', OH.mistral, 131_072, { limits: P.mistralOld, price: {}, extra: { aliases: ['ministral-8b-instruct', 'ministral-8b-instruct-2410', 'ministral-8b-2410'] } }),
  open('pixtral-12b', 'mistral', 'tekken', OH.mistral, 131_072, { limits: P.mistralOld, price: {}, extra: { aliases: ['pixtral-12b-2409'] } }),
  open('ministral-3b', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: {} }),
  open('mistral-small-3.2', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: { id: 'mistral-small-3.2-24b-instruct' }, extra: { aliases: ['mistral-small3.1', 'mistral-small3.2', 'mistral-small-3.1-24b-instruct', 'mistral-small-3.2-24b-instruct', 'mistral-small-24b-instruct'] } }),
  open('magistral-small', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: {} }),
  open('magistral-medium', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: {} }),
  open('devstral-small', 'mistral', 'tekken', OH.mistral, 131_072, { exact: false, limits: P.mistralOld, price: {} }),

  // ---- xAI (docs.x.ai, read 2026-12-01). No published tokenizer: chars4.
  open('grok-4.6', 'xai', 'chars4', OH.none, 500_000, { exact: false, asOf: READ, limits: P.xaiGrok46, price: {} }),
  open('grok-4.5', 'xai', 'chars4', OH.none, 500_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-4.3', 'xai', 'chars4', OH.none, 1_000_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-4.20', 'xai', 'chars4', OH.none, 1_000_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-build-0.1', 'xai', 'chars4', OH.none, 256_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-code-fast-1', 'xai', 'chars4', OH.none, 256_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-4-1-fast-reasoning', 'xai', 'chars4', OH.none, 2_000_000, { exact: false, asOf: READ, limits: P.genai, price: {}, extra: { aliases: ['grok-4-1-fast'] } }),
  open('grok-4-1-fast-non-reasoning', 'xai', 'chars4', OH.none, 2_000_000, { exact: false, asOf: READ, limits: P.genai, price: {} }),
  open('grok-4', 'xai', 'chars4', OH.none, 256_000, { exact: false, asOf: READ, limits: P.genai, price: { id: 'grok-4-0709' }, extra: { aliases: ['grok-4-0709'] } }),
  open('grok-3-mini', 'xai', 'chars4', OH.none, 131_072, { exact: false, asOf: READ, limits: P.genai, price: {} }),

  // ---- DeepSeek (pricing page, read 2026-12-01): V4.1 Flash serves deepseek-flash and the old
  // deepseek-v4-flash name; 1M context, 384K output.
  open('deepseek-flash', 'deepseek', 'deepseek_v3', OH.deepseek, 1_048_576, { exact: false, asOf: READ, maxOutput: 393_216, limits: P.deepseek, price: { id: 'deepseek-v4-flash' }, extra: { aliases: ['deepseek-v4-flash', 'deepseek-v4.1-flash'] } }),
  open('deepseek-v4-pro', 'deepseek', 'deepseek_v3', OH.deepseek, 1_048_576, { exact: false, asOf: READ, maxOutput: 393_216, limits: P.deepseek, price: {} }),
  open('deepseek-v3', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { limits: P.deepseekCard, extra: { aliases: ['deepseek-v3:671b', 'deepseek-v3-base'] } }),
  open('deepseek-v3.1', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { limits: P.deepseekCard, price: { id: 'deepseek-v3.1-terminus' }, extra: { aliases: ['deepseek-v3.1-terminus'] } }),
  open('deepseek-v3.2', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { limits: P.deepseekCard, price: {}, extra: { aliases: ['deepseek-v3.2-exp'] } }),
  open('deepseek-r1', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { limits: P.deepseekCard, extra: { aliases: ['deepseek-r1:671b'] } }),
  open('deepseek-chat', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { maxOutput: 8_192, limits: P.deepseek, price: {} }),
  open('deepseek-reasoner', 'deepseek', 'deepseek_v3', OH.deepseek, 131_072, { maxOutput: 65_536, limits: P.deepseek, price: {} }),

  // ---- Qwen (Alibaba Model Studio; the API models are not published vocabularies: Qwen3's is an
  // estimate). No price source offline: none is given.
  open('qwen3.8-max', 'qwen', 'qwen3', OH.qwen, 991_000, { exact: false, asOf: READ, maxOutput: 128_000, limits: P.qwen }),
  open('qwen3.7-max', 'qwen', 'qwen3', OH.qwen, 991_000, { exact: false, asOf: READ, limits: P.qwen }),
  open('qwen3.6-plus', 'qwen', 'qwen3', OH.qwen, 1_000_000, { exact: false, asOf: READ, limits: P.qwen }),
  open('qwen3.5-flash', 'qwen', 'qwen3', OH.qwen, 1_000_000, { exact: false, asOf: READ, limits: P.qwen }),
  open('qwen3-max', 'qwen', 'qwen3', OH.qwen, 262_144, { exact: false, asOf: READ, maxOutput: 65_536, limits: P.qwen }),
  // Open weights (model cards as stated in October 2025).
  ...['qwen3-4b', 'qwen3-8b', 'qwen3-14b', 'qwen3-32b', 'qwen3-30b-a3b', 'qwen3-235b-a22b'].map((n) => open(n, 'qwen', 'qwen3', OH.qwen, 32_768, { limits: P.qwenCards })),
  ...['qwen3-235b-a22b-instruct-2507', 'qwen3-235b-a22b-thinking-2507', 'qwen3-30b-a3b-instruct-2507'].map((n) => open(n, 'qwen', 'qwen3', OH.qwen, 262_144, { limits: P.qwenCards })),
  ...['qwen2.5-7b-instruct', 'qwen2.5-32b-instruct', 'qwen2.5-72b-instruct', 'qwen2.5-coder-32b-instruct'].map((n) => open(n, 'qwen', 'qwen3', OH.qwen, 32_768, { maxOutput: 8_192, limits: P.qwenCards })),

  // ---- Meta Llama, Gemma, gpt-oss (open weights; model cards as stated in October 2025).
  ...['llama-3.1-8b-instruct', 'llama-3.1-70b-instruct', 'llama-3.1-405b-instruct', 'llama-3.2-1b-instruct', 'llama-3.2-3b-instruct', 'llama-3.3-70b-instruct'].map((n) => open(n, 'meta', 'llama3', OH.llama3, 131_072, { limits: P.llama })),
  ...['gemma-3-4b-it', 'gemma-3-12b-it', 'gemma-3-27b-it'].map((n) => open(n, 'google', 'gemma3', OH.gemma3, 131_072, { maxOutput: 8_192, limits: P.gemma3 })),
  open('gemma-3-1b-it', 'google', 'gemma3', OH.gemma3, 32_768, { maxOutput: 8_192, limits: P.gemma3 }),
  open('gemma-4-31b-it', 'google', 'gemma3', OH.gemma3, 262_144, { exact: false, asOf: READ, limits: P.genai }),
  open('gemma-4-26b-a4b-it', 'google', 'gemma3', OH.gemma3, 262_144, { exact: false, asOf: READ, limits: P.genai }),
  open('gpt-oss-20b', 'openai', 'o200k_harmony', OH.harmony, 131_072, { maxOutput: 131_072, limits: P.gptOss }),
  open('gpt-oss-120b', 'openai', 'o200k_harmony', OH.harmony, 131_072, { maxOutput: 131_072, limits: P.gptOss }),
];

/** Other names of registry models: hubs' and hosts' spellings of open-weight models, and tags. */
const ALIASES = {
  'gemini-2.5-flash-lite-preview': 'gemini-2.5-flash-lite',
  'claude-3-7-sonnet-latest': 'claude-3-7-sonnet',
  'claude-3-5-sonnet-latest': 'claude-3-5-sonnet',
  'claude-3-5-haiku-latest': 'claude-3-5-haiku',
  'claude-3-opus-latest': 'claude-3-opus',
  'meta-llama-3.1-8b-instruct': 'llama-3.1-8b-instruct',
  'meta-llama-3.1-70b-instruct': 'llama-3.1-70b-instruct',
  'meta-llama-3.1-405b-instruct': 'llama-3.1-405b-instruct',
  'llama-3.1-8b': 'llama-3.1-8b-instruct',
  'llama-3.1-70b': 'llama-3.1-70b-instruct',
  'llama-3.1-405b': 'llama-3.1-405b-instruct',
  'llama-3.3-70b': 'llama-3.3-70b-instruct',
  'llama-3.2-1b': 'llama-3.2-1b-instruct',
  'llama-3.2-3b': 'llama-3.2-3b-instruct',
  'llama-3.1-8b-instant': 'llama-3.1-8b-instruct',
  'llama-3.3-70b-versatile': 'llama-3.3-70b-instruct',
  'llama-3.1-405b-instruct-fp8': 'llama-3.1-405b-instruct',
  'llama3.1': 'llama-3.1-8b-instruct',
  'llama3.1:8b': 'llama-3.1-8b-instruct',
  'llama3.1:70b': 'llama-3.1-70b-instruct',
  'llama3.1:405b': 'llama-3.1-405b-instruct',
  'llama3.2': 'llama-3.2-3b-instruct',
  'llama3.2:1b': 'llama-3.2-1b-instruct',
  'llama3.2:3b': 'llama-3.2-3b-instruct',
  'llama3.3': 'llama-3.3-70b-instruct',
  'llama3.3:70b': 'llama-3.3-70b-instruct',
  qwen3: 'qwen3-8b',
  'qwen3:4b': 'qwen3-4b',
  'qwen3:8b': 'qwen3-8b',
  'qwen3:14b': 'qwen3-14b',
  'qwen3:32b': 'qwen3-32b',
  'qwen3:30b': 'qwen3-30b-a3b',
  'qwen3:30b-a3b': 'qwen3-30b-a3b',
  'qwen3:235b': 'qwen3-235b-a22b',
  'qwen3:235b-a22b': 'qwen3-235b-a22b',
  'qwen3-235b-a22b-instruct': 'qwen3-235b-a22b-instruct-2507',
  'qwen3-235b-a22b-thinking': 'qwen3-235b-a22b-thinking-2507',
  'qwen3-30b-a3b-instruct': 'qwen3-30b-a3b-instruct-2507',
  'qwen3-235b-a22b-2507': 'qwen3-235b-a22b-instruct-2507',
  'qwen3-30b-a3b-2507': 'qwen3-30b-a3b-instruct-2507',
  'qwen2.5:7b': 'qwen2.5-7b-instruct',
  'qwen2.5:32b': 'qwen2.5-32b-instruct',
  'qwen2.5:72b': 'qwen2.5-72b-instruct',
  'qwen2.5-coder:32b': 'qwen2.5-coder-32b-instruct',
  'gemma-3-4b': 'gemma-3-4b-it',
  'gemma-3-12b': 'gemma-3-12b-it',
  'gemma-3-27b': 'gemma-3-27b-it',
  'gemma-3-1b': 'gemma-3-1b-it',
  gemma3: 'gemma-3-4b-it',
  'gemma3:1b': 'gemma-3-1b-it',
  'gemma3:4b': 'gemma-3-4b-it',
  'gemma3:12b': 'gemma-3-12b-it',
  'gemma3:27b': 'gemma-3-27b-it',
  'gpt-oss': 'gpt-oss-20b',
  'gpt-oss:20b': 'gpt-oss-20b',
  'gpt-oss:120b': 'gpt-oss-120b',
};

/**
 * Families: a name the registry does not list but whose family it knows counts with the family's
 * tokenizer as an estimate, against the window of the family's reference model (stated in the
 * finding). Never a price. Patterns are matched against the normalised name, first match wins.
 */
const FAMILIES = [
  { family: 'gpt', pattern: '^(?:gpt-[5-9]|o[3-9](?:-|$))', like: 'gpt-6.2-sol' },
  { family: 'claude', pattern: '^claude-', like: 'claude-sonnet-5' },
  { family: 'gemini-4', pattern: '^gemini-[4-9]', like: 'gemini-4-argon' },
  { family: 'gemini-3', pattern: '^gemini-3', like: 'gemini-3.8-flash' },
  { family: 'grok', pattern: '^grok-', like: 'grok-4.6' },
  { family: 'deepseek', pattern: '^deepseek-', like: 'deepseek-v4-pro' },
  { family: 'qwen', pattern: '^qwen', like: 'qwen3.8-max' },
  { family: 'mistral', pattern: '^(?:mistral|ministral|magistral|devstral|codestral|pixtral)-', like: 'mistral-medium-3-5' },
  { family: 'llama', pattern: '^llama-?[34]', like: 'llama-3.3-70b-instruct' },
];

// ---------------------------------------------------------------------------------------------

const GENAI_PROVIDER = { openai: 'openai', anthropic: 'anthropic', google: 'google', mistral: 'mistral', xai: 'x-ai', deepseek: 'deepseek' };
const r10 = (x) => Math.round(x * 1e10) / 1e10;

/** The genai-prices price of a model on READ, as the registry's Price; the peak price where it varies by time of day. */
function genaiPrice(providerId, modelId) {
  let best;
  for (let h = 0; h < 24; h++) {
    const at = new Date(`${READ}T${String(h).padStart(2, '0')}:15:00Z`);
    const r = genai.calcPrice({ input_tokens: 1_000_000, output_tokens: 0 }, modelId, { providerId, timestamp: at });
    if (!r || r.model.id !== modelId) break;
    if (!best || r.input_price > best.input_price) best = r;
  }
  // Some ids match no name of the package's own matcher (its rules expect dated or -latest
  // names); their entry is read directly: the last price in force on READ, time-of-day prices
  // (which the matcher would weigh) excepted.
  let mp = best?.model_price;
  if (!mp) {
    const m = genai.findProvider({ providerId })?.models.find((x) => x.id === modelId);
    if (!m) return undefined;
    const list = Array.isArray(m.prices) ? m.prices : [{ prices: m.prices }];
    for (const c of list) if (!c.constraint || (c.constraint.type === 'start_date' && c.constraint.start_date <= READ)) mp = c.prices;
    if (!mp) return undefined;
  }
  const base = (v) => (v === undefined ? undefined : typeof v === 'number' ? v : v.base);
  const tierOf = (v) => (v && typeof v === 'object' && v.tiers?.length ? v.tiers[0] : undefined);
  const input = base(mp.input_mtok);
  if (input === undefined) return undefined;
  const out = { input: r10(input) };
  if (mp.cache_read_mtok !== undefined) out.cached_input = r10(base(mp.cache_read_mtok));
  if (mp.output_mtok !== undefined) out.output = r10(base(mp.output_mtok));
  const t = tierOf(mp.input_mtok);
  if (t) {
    const lc = { above: t.start, input: r10(t.price) };
    const c = tierOf(mp.cache_read_mtok);
    if (c) lc.cached_input = r10(c.price);
    const o = tierOf(mp.output_mtok);
    if (o) lc.output = r10(o.price);
    out.long_context = lc;
  }
  const provider = genai.findProvider({ providerId });
  const url = provider?.pricing_urls?.[0];
  out.as_of = PRICE_AS_OF;
  out.source = `@pydantic/genai-prices ${genaiVersion} (${providerId}/${modelId}${url ? `, ${url}` : ''})`;
  return out;
}

function build() {
  const models = [];
  const seen = new Set();
  const problems = [];
  for (const c of CURATED) {
    if (seen.has(c.name)) problems.push(`duplicate ${c.name}`);
    seen.add(c.name);
    const e = {
      name: c.name,
      provider: c.provider,
      window: c.window,
      ...(c.maxOutput !== undefined ? { max_output: c.maxOutput } : {}),
      ...(c.maxInput !== undefined ? { max_input: c.maxInput } : {}),
      tokenizer: c.tokenizer,
      exact: c.exact,
      message_overhead: c.overhead[0],
      request_overhead: c.overhead[1],
      source: c.limits,
      as_of: c.asOf,
    };
    if (c.aliases?.length) e.aliases = c.aliases;
    if (c.retired) e.retired = c.retired;
    if (c.retires) e.retires = c.retires;
    if (c.price !== false) {
      const spec = c.price ?? {};
      if (spec.manual) e.price = { ...spec.manual, as_of: READ, source: spec.source };
      else {
        const pid = spec.provider ?? GENAI_PROVIDER[c.provider];
        const p = pid ? genaiPrice(pid, spec.id ?? c.name) : undefined;
        if (p) e.price = p;
        else if (c.price !== undefined) problems.push(`no genai-prices price for ${c.name} (${pid}/${spec.id ?? c.name})`);
      }
    }
    models.push(e);
  }
  const aliases = { ...ALIASES };
  for (const m of models) for (const a of m.aliases ?? []) aliases[a] = m.name;
  for (const [a, t] of Object.entries(aliases)) if (!seen.has(t)) problems.push(`alias ${a} -> unknown ${t}`);
  for (const f of FAMILIES) if (!seen.has(f.like)) problems.push(`family ${f.family} -> unknown ${f.like}`);
  for (const m of models) delete m.aliases;
  const data = {
    generated_by: 'scripts/models.mjs',
    prices: `@pydantic/genai-prices ${genaiVersion}, published ${PRICE_AS_OF}`,
    limits_read: READ,
    models,
    aliases: Object.fromEntries(Object.entries(aliases).sort(([a], [b]) => (a < b ? -1 : 1))),
    families: FAMILIES,
  };
  return { data, problems };
}

const { data, problems } = build();
if (problems.length) {
  for (const p of problems) console.error(`models: ${p}`);
  process.exit(1);
}
const text = JSON.stringify(data, null, 1) + '\n';
const target = path.join(root, 'src/core/models/registry.json');
if (process.argv.includes('--check')) {
  const now = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (now !== text) {
    console.error('models: src/core/models/registry.json is out of date; run node scripts/models.mjs');
    process.exit(1);
  }
  console.log(`models: registry.json up to date (${data.models.length} models)`);
} else {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
  const priced = data.models.filter((m) => m.price).length;
  const retired = data.models.filter((m) => m.retired).length;
  console.log(`models: wrote ${path.relative(root, target)}: ${data.models.length} models, ${priced} priced, ${retired} retired, ${Object.keys(data.aliases).length} aliases`);
}
