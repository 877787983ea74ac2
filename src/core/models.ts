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
 * - Anthropic does not publish a tokenizer; its counts use `chars4` (seed 001's stated
 *   4-characters rule, no measured error band: nothing offline to measure it against) and are
 *   marked estimates. Its per-message overhead is not published either, so it is 0 here: leave
 *   margin for it.
 * - Gemini 2.x counts use the Gemma 3 tokenizer (`gemma3`), as an estimate: the Gemma 3 report
 *   says Gemma 3 uses Gemini 2.0's tokenizer, and Google's own SDK counts these models locally
 *   with a Gemma 3 SentencePiece model (google-genai, _local_tokenizer_loader.py: gemini-2.0-*,
 *   gemini-2.5-*, gemini-3-*-preview -> "gemma3", the gemma3_cleaned_262144_v2 model). Equality
 *   with Gemini's API is not proven (that model is a "cleaned" variant of the vocabulary counted
 *   here, and the API tokenizer is not published) and no band could be measured offline: expect
 *   plain-text counts to agree closely, with unknown per-message overhead (0 here). Gemini 1.x
 *   used an older vocabulary and stays on `chars4`.
 * - Open-weight models (Llama 3.x, Qwen2.5/3, DeepSeek V3, Mistral Tekken models, Gemma 3,
 *   gpt-oss) count with their published vocabularies (src/core/tokens/families.ts), exactly for
 *   ordinary text. Their overheads are the tokens each family's chat template adds, counted with
 *   the family's own tokenizer on its published template (per message: the largest over roles;
 *   per request: the template's fixed text and the reply's priming). Windows are the native
 *   context lengths of the model cards or the provider's API; "max output" only where a source
 *   states a separate limit, otherwise output shares the window.
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
const google = (maxInput: number, maxOutput: number, tokenizer = 'chars4'): Builtin => ({ provider: 'google', window: maxInput, maxInput, maxOutput, tokenizer });

/**
 * An open-weight model (or an API serving one) counted with its family's tokenizer. `provider` is
 * 'custom' for the families whose makers ModelInfo has no provider for yet (Meta, Qwen, DeepSeek,
 * Mistral). `exact` is false where the served model's tokenizer is not the vocabulary counted here.
 */
const open = (
  tokenizer: string,
  window: number,
  overhead: { message: number; request: number },
  options: { maxOutput?: number; provider?: ModelInfo['provider']; exact?: boolean } = {},
): Builtin => ({
  provider: options.provider ?? 'custom',
  window,
  ...(options.maxOutput !== undefined ? { maxOutput: options.maxOutput } : {}),
  tokenizer,
  messageOverhead: overhead.message,
  requestOverhead: overhead.request,
  exact: options.exact ?? true,
});

// Chat-template overheads, counted with each family's tokenizer on its published template
// (test/unit/tokens.families.test.ts recounts them):
// - Llama 3.1/3.2/3.3: `<|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>` is 5
//   per message; per request `<|begin_of_text|>`, the template's fixed system preamble
//   "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" (20) and the priming
//   `<|start_header_id|>assistant<|end_header_id|>\n\n` (4) = 25. Without a system message the
//   template still writes a system block: 5 more.
const LLAMA3 = { message: 5, request: 25 };
// - Qwen2.5/Qwen3: `<|im_start|>{role}\n{content}<|im_end|>\n` is 5; priming `<|im_start|>assistant\n`
//   is 3 (Qwen2.5 also adds a default system message when there is none).
const QWEN = { message: 5, request: 3 };
// - DeepSeek V3: user `<｜User｜>` 1, assistant `<｜Assistant｜>…<｜end▁of▁sentence｜>` 2, system 0;
//   per request `<｜begin▁of▁sentence｜>` and the priming `<｜Assistant｜>`.
const DEEPSEEK = { message: 2, request: 2 };
// - Mistral (instruct format v3/v7, mistral-common): `[INST]…[/INST]` 2, system `[SYSTEM_PROMPT]…
//   [/SYSTEM_PROMPT]` 2, assistant `…</s>` 1; per request `<s>`.
const MISTRAL = { message: 2, request: 1 };
// - Gemma 3: `<start_of_turn>{role}\n{content}<end_of_turn>\n` is 5 (a system message joins the
//   first user turn: 1); per request `<bos>` and the priming `<start_of_turn>model\n` (3).
const GEMMA3 = { message: 5, request: 4 };
// - gpt-oss (harmony): `<|start|>{role}<|message|>{content}<|end|>` is 4, a system message becomes
//   `<|start|>developer<|message|># Instructions\n\n…<|end|>` (7), an assistant answer
//   `<|start|>assistant<|channel|>final<|message|>…<|end|>` (6); per request the template's own
//   system message (model identity, knowledge cutoff, date, reasoning level, channels: 61) and
//   the priming `<|start|>assistant` (2).
const HARMONY = { message: 7, request: 63 };

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
  // Google (Gemini 2.x: the Gemma 3 tokenizer as an estimate, see above)
  'gemini-2.5-pro': google(1_048_576, 65_536, 'gemma3'),
  'gemini-2.5-flash': google(1_048_576, 65_536, 'gemma3'),
  'gemini-2.5-flash-lite': google(1_048_576, 65_536, 'gemma3'),
  'gemini-2.0-flash': google(1_048_576, 8_192, 'gemma3'),
  'gemini-2.0-flash-lite': google(1_048_576, 8_192, 'gemma3'),
  'gemini-1.5-pro': google(2_097_152, 8_192),
  'gemini-1.5-flash': google(1_048_576, 8_192),
  'gemini-1.5-flash-8b': google(1_048_576, 8_192),

  // Open weights. Sources, as stated in October 2025 unless noted:
  // - Llama: Meta's model cards (Llama 3.1, 3.2, 3.3): context length 128K (131,072).
  // - Qwen: the Qwen3 model cards: 32,768 tokens natively (131,072 with YaRN, which a deployment
  //   must enable: set `window` in `models:` for one); Qwen3-2507: 262,144 natively; Qwen2.5
  //   model cards: 32,768 natively, generation up to 8,192.
  // - DeepSeek: the V3 model card (128K context) and DeepSeek's API docs (Models & Pricing:
  //   deepseek-chat 128K context, max output 8K; deepseek-reasoner max output 64K).
  // - Mistral: docs.mistral.ai models overview (128K = 131,072 for NeMo, Ministral, Pixtral, Small
  //   3.x, Medium 3, Large 2411; 256K for Codestral 25.x) and mistral-common's tokenizer table:
  //   Mistral NeMo (2407) is "v3 - Tekken" (the 240718 vocabulary counted here), as are Ministral
  //   8B and Pixtral 12B. Mistral Small 3.x, Magistral and Devstral ship newer Tekken files (v7
  //   and later) not compared with it, Codestral 25.x and Medium are not published, and Large 2407/
  //   2411 use SentencePiece vocabularies: those count with Tekken as estimates.
  // - Gemma 3: Google's model card: 128K input for 4B, 12B and 27B (32K for 1B), 8,192 output.
  // - gpt-oss: OpenAI's model pages: 131,072 context window, 131,072 max output tokens.
  'llama-3.1-8b-instruct': open('llama3', 131_072, LLAMA3),
  'llama-3.1-70b-instruct': open('llama3', 131_072, LLAMA3),
  'llama-3.1-405b-instruct': open('llama3', 131_072, LLAMA3),
  'llama-3.2-1b-instruct': open('llama3', 131_072, LLAMA3),
  'llama-3.2-3b-instruct': open('llama3', 131_072, LLAMA3),
  'llama-3.3-70b-instruct': open('llama3', 131_072, LLAMA3),
  'qwen3-4b': open('qwen3', 32_768, QWEN),
  'qwen3-8b': open('qwen3', 32_768, QWEN),
  'qwen3-14b': open('qwen3', 32_768, QWEN),
  'qwen3-32b': open('qwen3', 32_768, QWEN),
  'qwen3-30b-a3b': open('qwen3', 32_768, QWEN),
  'qwen3-235b-a22b': open('qwen3', 32_768, QWEN),
  'qwen3-235b-a22b-instruct-2507': open('qwen3', 262_144, QWEN),
  'qwen3-235b-a22b-thinking-2507': open('qwen3', 262_144, QWEN),
  'qwen3-30b-a3b-instruct-2507': open('qwen3', 262_144, QWEN),
  'qwen2.5-7b-instruct': open('qwen3', 32_768, QWEN, { maxOutput: 8_192 }),
  'qwen2.5-32b-instruct': open('qwen3', 32_768, QWEN, { maxOutput: 8_192 }),
  'qwen2.5-72b-instruct': open('qwen3', 32_768, QWEN, { maxOutput: 8_192 }),
  'qwen2.5-coder-32b-instruct': open('qwen3', 32_768, QWEN, { maxOutput: 8_192 }),
  // V3.1 and V3.2 continue V3's pre-training with its vocabulary (their tokenizers change added
  // tokens only, whose text counts as plain text here).
  'deepseek-v3': open('deepseek_v3', 131_072, DEEPSEEK),
  'deepseek-v3.1': open('deepseek_v3', 131_072, DEEPSEEK),
  'deepseek-v3.2': open('deepseek_v3', 131_072, DEEPSEEK),
  'deepseek-r1': open('deepseek_v3', 131_072, DEEPSEEK),
  'deepseek-chat': open('deepseek_v3', 131_072, DEEPSEEK, { maxOutput: 8_192 }),
  'deepseek-reasoner': open('deepseek_v3', 131_072, DEEPSEEK, { maxOutput: 65_536 }),
  'mistral-nemo': open('tekken', 131_072, MISTRAL),
  'ministral-8b': open('tekken', 131_072, MISTRAL),
  'pixtral-12b': open('tekken', 131_072, MISTRAL),
  'ministral-3b': open('tekken', 131_072, MISTRAL, { exact: false }),
  'mistral-small': open('tekken', 131_072, MISTRAL, { exact: false }),
  'mistral-medium': open('tekken', 131_072, MISTRAL, { exact: false }),
  'mistral-large': open('tekken', 131_072, MISTRAL, { exact: false }),
  'magistral-small': open('tekken', 131_072, MISTRAL, { exact: false }),
  'magistral-medium': open('tekken', 131_072, MISTRAL, { exact: false }),
  'devstral-small': open('tekken', 131_072, MISTRAL, { exact: false }),
  'devstral-medium': open('tekken', 131_072, MISTRAL, { exact: false }),
  codestral: open('tekken', 262_144, MISTRAL, { exact: false }),
  'gemma-3-4b-it': open('gemma3', 131_072, GEMMA3, { maxOutput: 8_192, provider: 'google' }),
  'gemma-3-12b-it': open('gemma3', 131_072, GEMMA3, { maxOutput: 8_192, provider: 'google' }),
  'gemma-3-27b-it': open('gemma3', 131_072, GEMMA3, { maxOutput: 8_192, provider: 'google' }),
  'gemma-3-1b-it': open('gemma3', 32_768, GEMMA3, { maxOutput: 8_192, provider: 'google' }),
  'gpt-oss-20b': open('o200k_harmony', 131_072, HARMONY, { maxOutput: 131_072, provider: 'openai' }),
  'gpt-oss-120b': open('o200k_harmony', 131_072, HARMONY, { maxOutput: 131_072, provider: 'openai' }),
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
  // Open weights: Hugging Face repository names (after their org prefix), Ollama tags, hosts' names.
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
  'deepseek-v3:671b': 'deepseek-v3',
  'deepseek-v3-base': 'deepseek-v3',
  'deepseek-v3.1-terminus': 'deepseek-v3.1',
  'deepseek-v3.2-exp': 'deepseek-v3.2',
  'deepseek-r1:671b': 'deepseek-r1',
  'open-mistral-nemo': 'mistral-nemo',
  'mistral-nemo-instruct': 'mistral-nemo',
  'mistral-nemo-instruct-2407': 'mistral-nemo',
  'mistral-nemo:12b': 'mistral-nemo',
  'ministral-8b-instruct': 'ministral-8b',
  'ministral-8b-instruct-2410': 'ministral-8b',
  'pixtral-12b-2409': 'pixtral-12b',
  'mistral-small3.1': 'mistral-small',
  'mistral-small3.2': 'mistral-small',
  'mistral-small-3.1-24b-instruct': 'mistral-small',
  'mistral-small-3.2-24b-instruct': 'mistral-small',
  'mistral-small-24b-instruct': 'mistral-small',
  'mistral-large-instruct': 'mistral-large',
  'codestral-22b': 'codestral',
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

/** A `${env:NAME}` reference (Prompty), which is never read: the model is unresolved. */
export const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}$/;

const PROVIDER_PREFIX =
  /^(?:openai|anthropic|google|googleai|vertexai|vertex_ai|gemini|azure|azure_openai|azureopenai|bedrock|models|publishers\/[a-z]+\/models|meta-llama|meta|qwen|deepseek-ai|deepseek|mistralai|mistral|ollama|ollama_chat|openrouter|together_ai|together|groq|fireworks_ai|accounts\/fireworks\/models|huggingface|hf|lm_studio|lmstudio|hosted_vllm|vllm|deepinfra|cerebras|nvidia_nim|nvidia|nebius|novita|sambanova|cloudflare|workers_ai|@cf\/[a-z-]+|@hf\/[a-z-]+)\//;
/** Quantization and serving suffixes of open-weight model names. */
const SERVING_SUFFIX = /-(?:fp8|fp16|bf16|awq|gptq(?:-int[48])?|gguf|mlx(?:-\d+bit)?|int[48]|\d+bit|q\d(?:_k)?(?:_[msl])?|turbo|instruct-turbo)$/;

/** The snapshot suffixes of the providers' names, stripped. */
function stripSnapshot(n: string): string {
  return n
    .replace(/-\d{4}-\d{2}-\d{2}$/, '')
    .replace(/-\d{8}$/, '')
    .replace(/-(?:preview|exp)(?:-\d{2}-\d{2}|-\d{2}-\d{4}|-\d{4})?$/, '')
    .replace(/-\d{3,4}$/, '')
    .replace(/-latest$/, '');
}

/**
 * Candidate registry keys for a name as users write it: lower-cased, without a provider prefix
 * (`openai/`, `models/`), a fine-tune wrapper (`ft:gpt-4o-mini-2024-07-18:org::id`), or a
 * snapshot suffix (`-2024-08-06`, `-20241022`, `-0613`, `-001`, `-latest`, `-preview-05-20`).
 * Open-weight models also as their hubs and hosts write them: organisation prefixes
 * (`meta-llama/`, `Qwen/`, `deepseek-ai/`, `mistralai/`, `google/`, `openai/`) and hosts'
 * (`ollama/`, `openrouter/`, `together_ai/`, `groq/`, `@cf/meta/`, ...), Ollama and router tags
 * (`llama3.1:8b-instruct-q4_K_M`, `gpt-oss-120b:free`), `Meta-Llama-3.1-…`, Bedrock's
 * `meta.llama3-1-70b-instruct-v1:0`, Fireworks's `llama-v3p1-8b-instruct`, and quantization or
 * serving suffixes (`-FP8`, `-AWQ`, `-GGUF`, `-Turbo`).
 */
function candidates(name: string): string[] {
  let n = name.trim().toLowerCase();
  const ft = /^ft:([^:]+):/.exec(n);
  if (ft) n = ft[1];
  // Provider prefixes as Genkit, LiteLLM and the SDKs write them: googleai/gemini-2.5-flash,
  // vertexai/gemini-2.5-pro, openai/gpt-4o, anthropic/claude-sonnet-4-5, models/gemini-1.5-pro;
  // and the hubs' and hosts' of open-weight models: openrouter/meta-llama/llama-3.1-8b-instruct.
  for (let k = 0; k < 3; k++) n = n.replace(PROVIDER_PREFIX, '');
  const forms = [n];
  // Bedrock's Llama ids, with a cross-region prefix: us.meta.llama3-3-70b-instruct-v1:0.
  const bedrock = /^(?:[a-z]{2,4}\.)?meta\.llama(\d)-(\d)-(\d+b)-instruct-v\d+(?::\d+)?$/.exec(n);
  if (bedrock) forms.push(`llama-${bedrock[1]}.${bedrock[2]}-${bedrock[3]}-instruct`);
  // Ollama and router tags: "llama3.1:8b-instruct-q4_k_m" -> "llama3.1:8b", then "llama3.1".
  const colon = n.indexOf(':');
  if (colon > 0 && !bedrock) {
    const tag = n.slice(colon + 1);
    if (tag !== 'latest') forms.push(`${n.slice(0, colon)}:${tag.split('-')[0]}`);
    forms.push(n.slice(0, colon));
  }
  for (const f of [...forms]) {
    const spelled = f.replace(/^meta-llama-/, 'llama-').replace(/^llama-v(\d)p(\d)-/, 'llama-$1.$2-');
    const unserved = spelled.replace(SERVING_SUFFIX, '');
    for (const g of [spelled, unserved]) if (!forms.includes(g)) forms.push(g);
  }
  const out: string[] = [];
  for (const f of forms) {
    for (const c of [f, stripSnapshot(f)]) if (c && !out.includes(c)) out.push(c);
  }
  return out;
}

/**
 * Table keys to try for a model name as users write it, most specific first: each normalised form
 * (see `candidates`), then the registry's alias of it. Shared by the registry and the price table
 * (cost.ts), so both read a name alike.
 */
export function modelKeys(name: string): string[] {
  const out: string[] = [];
  for (const c of candidates(name)) {
    if (!out.includes(c)) out.push(c);
    if (own(ALIASES, c) && !out.includes(ALIASES[c])) out.push(ALIASES[c]);
  }
  return out;
}

function lookupBuiltin(name: string): (Builtin & { key: string }) | undefined {
  for (const key of modelKeys(name)) if (own(BUILTIN, key)) return { ...BUILTIN[key], key };
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
