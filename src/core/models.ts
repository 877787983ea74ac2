/**
 * The built-in model registry: context window, output limit, tokenizer, per-message and
 * per-request overhead of current OpenAI, Anthropic and Google models, and whether counts with
 * that tokenizer are exact. A context config's `models:` entries override or extend it.
 *
 * Data date: limits as the providers' model pages stated them in October 2025, written down from
 * those pages (not fetched at run time: nothing leaves the machine). Models change; when a limit
 * here is out of date, a `models:` entry in the config overrides it.
 *
 * Tokenizers and exactness:
 * - OpenAI publishes its encodings: GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and the o-series use
 *   o200k_base; GPT-4 / GPT-4 Turbo / GPT-3.5 Turbo use cl100k_base. Counts are exact.
 *   Chat overhead follows OpenAI's published counting recipe: 3 tokens per message
 *   (<|start|>role<|message|>...<|end|>) and 3 per request to prime the reply.
 * - Anthropic and Google do not publish offline tokenizers; counts use `chars4` (seed 001's
 *   stated 4-characters rule) and are marked estimates. Their per-message overhead is not
 *   published either, so it is 0 here: leave margin for it.
 * - Google states separate input and output limits: `window` is the input limit (what Google
 *   calls the context window), with `maxInput` and `maxOutput` set for budgets that check both.
 *   OpenAI and Anthropic windows are shared by input and output.
 */
import type { ModelEntry } from './config/schema';
import type { ModelInfo } from './types';
import { getTokenizer } from './tokens';

type Builtin = Omit<ModelInfo, 'name' | 'messageOverhead' | 'requestOverhead' | 'exact'> &
  Partial<Pick<ModelInfo, 'messageOverhead' | 'requestOverhead' | 'exact'>>;

const openai = (window: number, maxOutput: number, tokenizer = 'o200k_base'): Builtin => ({
  provider: 'openai',
  window,
  maxOutput,
  tokenizer,
  messageOverhead: 3,
  requestOverhead: 3,
  exact: true,
});
const anthropic = (maxOutput: number): Builtin => ({ provider: 'anthropic', window: 200_000, maxOutput, tokenizer: 'chars4' });
const google = (maxInput: number, maxOutput: number): Builtin => ({ provider: 'google', window: maxInput, maxInput, maxOutput, tokenizer: 'chars4' });

const BUILTIN: Readonly<Record<string, Builtin>> = {
  // OpenAI
  'gpt-5': openai(400_000, 128_000),
  'gpt-5-mini': openai(400_000, 128_000),
  'gpt-5-nano': openai(400_000, 128_000),
  'gpt-5-chat-latest': openai(128_000, 16_384),
  'gpt-4.1': openai(1_047_576, 32_768),
  'gpt-4.1-mini': openai(1_047_576, 32_768),
  'gpt-4.1-nano': openai(1_047_576, 32_768),
  'gpt-4.5-preview': openai(128_000, 16_384),
  'gpt-4o': openai(128_000, 16_384),
  'gpt-4o-2024-05-13': openai(128_000, 4_096),
  'gpt-4o-mini': openai(128_000, 16_384),
  'chatgpt-4o-latest': openai(128_000, 16_384),
  o1: openai(200_000, 100_000),
  'o1-mini': openai(128_000, 65_536),
  'o1-pro': openai(200_000, 100_000),
  o3: openai(200_000, 100_000),
  'o3-pro': openai(200_000, 100_000),
  'o3-mini': openai(200_000, 100_000),
  'o4-mini': openai(200_000, 100_000),
  'gpt-4-turbo': openai(128_000, 4_096, 'cl100k_base'),
  'gpt-4': openai(8_192, 8_192, 'cl100k_base'),
  'gpt-4-32k': openai(32_768, 32_768, 'cl100k_base'),
  'gpt-3.5-turbo': openai(16_385, 4_096, 'cl100k_base'),
  // Anthropic (200k-token windows; larger windows exist only behind beta headers)
  'claude-sonnet-4-5': anthropic(64_000),
  'claude-haiku-4-5': anthropic(64_000),
  'claude-opus-4-1': anthropic(32_000),
  'claude-opus-4': anthropic(32_000),
  'claude-sonnet-4': anthropic(64_000),
  'claude-3-7-sonnet': anthropic(64_000),
  'claude-3-5-sonnet': anthropic(8_192),
  'claude-3-5-haiku': anthropic(8_192),
  'claude-3-opus': anthropic(4_096),
  'claude-3-haiku': anthropic(4_096),
  // Google
  'gemini-2.5-pro': google(1_048_576, 65_536),
  'gemini-2.5-flash': google(1_048_576, 65_536),
  'gemini-2.5-flash-lite': google(1_048_576, 65_536),
  'gemini-2.0-flash': google(1_048_576, 8_192),
  'gemini-2.0-flash-lite': google(1_048_576, 8_192),
  'gemini-1.5-pro': google(2_097_152, 8_192),
  'gemini-1.5-flash': google(1_048_576, 8_192),
  'gemini-1.5-flash-8b': google(1_048_576, 8_192),
};

/** Other names the providers use for the same models. */
const ALIASES: Readonly<Record<string, string>> = {
  'gpt-4-turbo-preview': 'gpt-4-turbo',
  'gpt-4-1106-preview': 'gpt-4-turbo',
  'gpt-4-0125-preview': 'gpt-4-turbo',
  'gpt-4-vision-preview': 'gpt-4-turbo',
  'gpt-4o-latest': 'chatgpt-4o-latest',
  'gpt-35-turbo': 'gpt-3.5-turbo',
  'claude-sonnet-4-0': 'claude-sonnet-4',
  'claude-opus-4-0': 'claude-opus-4',
  'claude-4-sonnet': 'claude-sonnet-4',
  'claude-4-opus': 'claude-opus-4',
  'claude-3-7-sonnet-latest': 'claude-3-7-sonnet',
  'claude-3-5-sonnet-latest': 'claude-3-5-sonnet',
  'claude-3-5-haiku-latest': 'claude-3-5-haiku',
  'claude-3-opus-latest': 'claude-3-opus',
  'gemini-2.5-flash-lite-preview': 'gemini-2.5-flash-lite',
};

const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

function fromBuiltin(name: string, b: Builtin): ModelInfo {
  return {
    name,
    provider: b.provider,
    window: b.window,
    ...(b.maxOutput !== undefined ? { maxOutput: b.maxOutput } : {}),
    ...(b.maxInput !== undefined ? { maxInput: b.maxInput } : {}),
    tokenizer: b.tokenizer,
    messageOverhead: b.messageOverhead ?? 0,
    requestOverhead: b.requestOverhead ?? 0,
    exact: b.exact ?? false,
  };
}

function fromEntry(name: string, e: Partial<ModelEntry>): ModelInfo {
  const tokenizer = e.tokenizer ?? 'chars4';
  const builtin = lookupBuiltin(name);
  return {
    name,
    provider: builtin?.provider ?? 'custom',
    window: e.window ?? 0,
    ...(e.max_output !== undefined ? { maxOutput: e.max_output } : {}),
    ...(e.max_input !== undefined ? { maxInput: e.max_input } : {}),
    tokenizer,
    messageOverhead: e.message_overhead ?? 0,
    requestOverhead: e.request_overhead ?? 0,
    // An entry can claim exactness only with a tokenizer that is exact.
    exact: e.exact === true && getTokenizer(tokenizer)?.exact === true,
  };
}

/**
 * Candidate registry keys for a name as users write it: lower-cased, without a provider prefix
 * (`openai/`, `models/`), a fine-tune wrapper (`ft:gpt-4o-mini-2024-07-18:org::id`), or a
 * snapshot suffix (`-2024-08-06`, `-20241022`, `-0613`, `-001`, `-latest`, `-preview-05-20`).
 */
/** A `${env:NAME}` reference (Prompty), which is never read: the model is unresolved. */
export const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}$/;

function candidates(name: string): string[] {
  let n = name.trim().toLowerCase();
  const ft = /^ft:([^:]+):/.exec(n);
  if (ft) n = ft[1];
  // Provider prefixes as Genkit, LiteLLM and the SDKs write them: googleai/gemini-2.5-flash,
  // vertexai/gemini-2.5-pro, openai/gpt-4o, anthropic/claude-sonnet-4-5, models/gemini-1.5-pro.
  for (let k = 0; k < 3; k++) n = n.replace(/^(?:openai|anthropic|google|googleai|vertexai|vertex_ai|gemini|azure|azure_openai|azureopenai|bedrock|models|publishers\/[a-z]+\/models)\//, '');
  const out = [n];
  const stripped = n
    .replace(/-\d{4}-\d{2}-\d{2}$/, '')
    .replace(/-\d{8}$/, '')
    .replace(/-(?:preview|exp)(?:-\d{2}-\d{2}|-\d{2}-\d{4}|-\d{4})?$/, '')
    .replace(/-\d{3,4}$/, '')
    .replace(/-latest$/, '');
  if (stripped !== n) out.push(stripped);
  return out;
}

function lookupBuiltin(name: string): (Builtin & { key: string }) | undefined {
  for (const c of candidates(name)) {
    const key = own(ALIASES, c) ? ALIASES[c] : c;
    if (own(BUILTIN, key)) return { ...BUILTIN[key], key };
  }
  return undefined;
}

/**
 * The model's limits and tokenizer, or undefined when unknown. `extra` (the config's `models:`)
 * is consulted first, by exact name, so it overrides a built-in entry of the same name and adds
 * new ones. The returned `name` is the name as asked for.
 */
export function resolveModel(name: string, extra?: Record<string, ModelEntry>): ModelInfo | undefined {
  if (extra && own(extra, name)) return fromEntry(name, extra[name]);
  const b = lookupBuiltin(name);
  return b ? fromBuiltin(name, b) : undefined;
}

/** Every known model: the built-in registry, then config entries (replacing built-ins of the same name). */
export function listModels(extra?: Record<string, ModelEntry>): ModelInfo[] {
  const out = new Map<string, ModelInfo>();
  for (const key of Object.keys(BUILTIN)) out.set(key, fromBuiltin(key, BUILTIN[key]));
  if (extra) for (const key of Object.keys(extra)) out.set(key, fromEntry(key, extra[key]));
  return [...out.values()];
}
