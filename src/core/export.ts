/**
 * Turns assembled messages into what a provider receives, or a readable text with slot
 * boundaries. Shared by `ctxlens assemble`, the assemble command, the preview's copy buttons, the
 * library (src/lib) and the service (src/service).
 *
 * Two kinds of output:
 * - the historical renderings `toOpenAI` (a Chat Completions `messages` array) and `toAnthropic`
 *   (a Messages body with `system` as one string), kept byte for byte;
 * - complete request bodies per provider (`toProviderRequest`): OpenAI Chat Completions, OpenAI
 *   Responses (`instructions` + `input` items), Anthropic Messages (`system` blocks with a
 *   `cache_control` breakpoint at the end of the stable prefix), Google Gemini `generateContent`
 *   (`systemInstruction` + `contents` of `parts`, role `model`), each with the template's tool
 *   definitions in the provider's own `tools` shape. Media parts become each provider's image (or
 *   file) parts. Key order follows the providers' API references, so copied bodies read naturally.
 *
 * Free-text tool output has no call id to answer, so every body sends it as user content: a
 * Chat Completions `tool` message without `tool_call_id` is refused by the API.
 */
import type { AssemblyResult, MessagePart, RenderedMessage } from './types';
import { conflictText, reasonText } from './reasonText';

export type RequestFormat = 'openai' | 'anthropic' | 'text' | 'json' | 'openai-responses' | 'gemini';
export const REQUEST_FORMATS: readonly RequestFormat[] = ['openai', 'anthropic', 'text', 'json', 'openai-responses', 'gemini'];

export type OpenAIContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface OpenAIMessage {
  role: string;
  content: string | OpenAIContentPart[];
}

/** A Chat Completions `messages` array; a message with media parts gets a content array. */
export function toOpenAI(messages: readonly RenderedMessage[]): OpenAIMessage[] {
  return messages.map((m) => {
    if (!m.parts.some((p) => p.media)) return { role: m.role, content: m.content };
    const content: OpenAIContentPart[] = [];
    let text = '';
    const flush = () => {
      if (text) content.push({ type: 'text', text });
      text = '';
    };
    for (const p of m.parts) {
      if (p.media) {
        flush();
        content.push({ type: 'image_url', image_url: { url: p.media.url } });
      } else text += p.text;
    }
    flush();
    return { role: m.role, content };
  });
}

export interface AnthropicBody {
  model?: string;
  max_tokens: number;
  system?: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/**
 * A Messages API body: system and developer text joined into `system`; tool output becomes user
 * content (the Messages API has no free-text tool role); adjacent turns of one role are merged.
 */
export function toAnthropic(messages: readonly RenderedMessage[], opts: { model?: string; maxTokens: number }): AnthropicBody {
  const system: string[] = [];
  const out: AnthropicBody['messages'] = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(m.content);
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    if (last && last.role === role) last.content += `\n\n${m.content}`;
    else out.push({ role, content: m.content });
  }
  // Key order follows the API reference, so copied bodies read naturally.
  return { ...(opts.model ? { model: opts.model } : {}), max_tokens: opts.maxTokens, ...(system.length ? { system: system.join('\n\n') } : {}), messages: out };
}

/**
 * A readable rendering: one header per message, slot boundaries marked on their own lines; then the
 * totals and the decisions of the trace in words (kept items with their reasons, omitted items,
 * conflicts), one per line.
 */
export function toText(result: AssemblyResult): string {
  const lines: string[] = [];
  result.messages.forEach((m, i) => {
    lines.push(`${i ? '\n' : ''}=== ${m.role}${m.runtimeRole ? ` (${m.runtimeRole})` : ''} ===`);
    let current: string | undefined;
    let buf = '';
    const flush = () => {
      if (buf) lines.push(buf.replace(/\n$/, ''));
      buf = '';
    };
    for (const part of m.parts) {
      if (part.slot !== current) {
        flush();
        if (current) lines.push(`--- end ${current} ---`);
        if (part.slot) lines.push(`--- slot ${part.slot}${part.untrusted ? ' (untrusted data)' : ''} ---`);
        current = part.slot;
      }
      if (part.media) buf += `[media ${part.media.url}${part.media.contentType ? ` ${part.media.contentType}` : ''}]`;
      else if (part.section) buf += `[section ${part.section}]`;
      // A line of the request that looks like this format's own headers is shown with a leading
      // backslash, so no text can fake a message or slot boundary here.
      else buf += part.text.replace(/(^|\n)(?=\\*(?:===|---) )/g, '$1\\');
    }
    flush();
    if (current) lines.push(`--- end ${current} ---`);
  });
  const t = result.trace;
  lines.push('', `--- ${t.input_tokens.toLocaleString('en-US')} input tokens (${t.tokenizer}${t.exact ? '' : ', estimate'}) of ${t.input_budget.toLocaleString('en-US')} input budget; output reserve ${t.reserved_output.toLocaleString('en-US')} ---`);
  lines.push(...decisionLines(result));
  return lines.join('\n') + '\n';
}

/** The trace's decisions in words (reasonText.ts); ids from fixtures are kept on one line. */
function decisionLines(result: AssemblyResult): string[] {
  const t = result.trace;
  const one = (s: string) => s.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ');
  const out: string[] = [];
  for (const k of t.retained) if (k.reasons?.length) out.push(`kept ${one(k.slot)} ${one(k.id)}: ${k.reasons.map((r) => one(reasonText(r))).join(' ')} [${k.reasons.map(one).join(', ')}]`);
  for (const o of t.omitted) out.push(`omitted ${one(o.slot)} ${one(o.id)}: ${one(reasonText(o.reason))} [${one(o.reason)}]`);
  for (const c of t.conflicts ?? []) out.push(`conflict ${one(c.slot)}: ${one(conflictText(c))}`);
  return out.length ? ['', '--- decisions ---', ...out] : [];
}

/**
 * One format as text. `openai`, `anthropic`, `text` and `json` are the historical renderings;
 * `openai-responses` and `gemini` are complete request bodies (with `tools` when given).
 */
export function formatRequest(result: AssemblyResult, format: RequestFormat, model?: string, options: { tools?: readonly ToolDefinition[] } = {}): string {
  switch (format) {
    case 'openai':
      return JSON.stringify(toOpenAI(result.messages), null, 2) + '\n';
    case 'anthropic':
      return JSON.stringify(toAnthropic(result.messages, { model, maxTokens: result.trace.reserved_output }), null, 2) + '\n';
    case 'text':
      return toText(result);
    case 'json':
      return JSON.stringify({ messages: toOpenAI(result.messages), trace: result.trace }, null, 2) + '\n';
    case 'openai-responses':
    case 'gemini':
      return JSON.stringify(toProviderRequest(result, format, { model, tools: options.tools }), null, 2) + '\n';
  }
}

// ---------------------------------------------------------------------------
// Complete request bodies per provider
// ---------------------------------------------------------------------------

export type Provider = 'openai' | 'openai-responses' | 'anthropic' | 'gemini';
export const PROVIDERS: readonly Provider[] = ['openai', 'openai-responses', 'anthropic', 'gemini'];

/** A function the model may call, in the provider-neutral shape every export starts from. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters?: Record<string, unknown>;
  /** OpenAI strict schema adherence, when the definition asks for it. */
  strict?: boolean;
}

export interface ProviderOptions {
  /** Model name for the body (`model`); Gemini names the model in the URL, so its body has none. */
  model?: string;
  /** Output limit: `max_completion_tokens`, `max_output_tokens`, `max_tokens`, `generationConfig.maxOutputTokens`. */
  maxTokens?: number;
  tools?: readonly ToolDefinition[];
  /** Anthropic prompt caching: also mark the tool definitions (default false), and the breakpoints' TTL. */
  cache?: { tools?: boolean; ttl?: '5m' | '1h' };
}

/** The Messages API refuses a body without `max_tokens`; used when the config reserves no output. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Tool definitions from JSON values in any of the common shapes: `{ name, description,
 * parameters }`, OpenAI's `{ type: "function", function: { ... } }`, Anthropic's `{ name,
 * input_schema }`, Gemini's `{ functionDeclarations: [...] }`, or a list of these (a tool slot's
 * items, or a `tools.json` file's text). Anything else is not a tool definition and is skipped.
 */
export function toolDefinitions(value: unknown): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > 4) return;
    if (typeof v === 'string') {
      const t = v.trim();
      if (!t.startsWith('{') && !t.startsWith('[')) return;
      try {
        visit(JSON.parse(t), depth + 1);
      } catch {
        // Not JSON: tool text that is not a definition.
      }
      return;
    }
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    if (!isRecord(v)) return;
    if (Array.isArray(v.functionDeclarations)) {
      for (const x of v.functionDeclarations) visit(x, depth + 1);
      return;
    }
    const fn = v.type === 'function' && isRecord(v.function) ? v.function : v;
    // The names every provider accepts: OpenAI and Anthropic allow [a-zA-Z0-9_-], Gemini wants a letter or _ first, all up to 64.
    if (typeof fn.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(fn.name)) return;
    const def: ToolDefinition = { name: fn.name };
    if (typeof fn.description === 'string') def.description = fn.description;
    const params = fn.parameters ?? fn.input_schema ?? fn.parametersJsonSchema;
    if (isRecord(params)) def.parameters = params;
    const strict = fn.strict ?? v.strict;
    if (typeof strict === 'boolean') def.strict = strict;
    out.push(def);
  };
  visit(value, 0);
  return out;
}

/** A message cut into runs of text and media (pending sections carry no text and are left out). */
type Segment = { type: 'text'; text: string } | { type: 'media'; url: string; contentType?: string };

function segments(m: RenderedMessage): Segment[] {
  if (!m.parts.some((p) => p.media)) return m.content ? [{ type: 'text', text: m.content }] : [];
  const out: Segment[] = [];
  let text = '';
  const flush = () => {
    if (text) out.push({ type: 'text', text });
    text = '';
  };
  for (const p of m.parts as MessagePart[]) {
    if (p.media) {
      flush();
      out.push({ type: 'media', url: p.media.url, ...(p.media.contentType ? { contentType: p.media.contentType } : {}) });
    } else text += p.text;
  }
  flush();
  return out;
}

const hasMedia = (m: RenderedMessage): boolean => m.parts.some((p) => p.media);

/** `data:<type>;base64,<data>` split into its type and data. */
function dataUrl(url: string): { mediaType?: string; data: string } | undefined {
  const m = /^data:([^;,]*)((?:;[^;,]*)*);base64,([\s\S]*)$/i.exec(url);
  if (!m) return undefined;
  return { ...(m[1] ? { mediaType: m[1].toLowerCase() } : {}), data: m[3] };
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/** The media type a part declares, or its data URL states, or its URL's extension implies. */
function mediaTypeOf(s: { url: string; contentType?: string }): string | undefined {
  if (s.contentType) return s.contentType.toLowerCase();
  const d = dataUrl(s.url);
  if (d?.mediaType) return d.mediaType;
  const ext = /\.([A-Za-z0-9]{2,5})(?:[?#]|$)/.exec(s.url)?.[1]?.toLowerCase();
  return ext ? EXTENSION_TYPES[ext] : undefined;
}

const isSystem = (m: RenderedMessage): boolean => m.role === 'system' || m.role === 'developer';
/** The conversational role of a message: tool output and anything else that is not the model's is the user's. */
const turnRole = (m: RenderedMessage): 'user' | 'assistant' => (m.role === 'assistant' ? 'assistant' : 'user');
const positive = (n: number | undefined): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;

// ---- OpenAI Chat Completions -------------------------------------------------------------------

export interface OpenAIChatBody {
  model?: string;
  messages: OpenAIMessage[];
  max_completion_tokens?: number;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean } }>;
}

/** A Chat Completions body: the `toOpenAI` messages (tool output as user content), the output limit and the tools. */
export function toOpenAIChat(messages: readonly RenderedMessage[], opts: ProviderOptions = {}): OpenAIChatBody {
  const msgs = toOpenAI(messages).map((m) => (m.role === 'tool' ? { role: 'user', content: m.content } : m));
  const body: OpenAIChatBody = { ...(opts.model ? { model: opts.model } : {}), messages: msgs };
  if (positive(opts.maxTokens)) body.max_completion_tokens = opts.maxTokens;
  if (opts.tools?.length) body.tools = opts.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), ...(t.parameters ? { parameters: t.parameters } : {}), ...(t.strict !== undefined ? { strict: t.strict } : {}) } }));
  return body;
}

// ---- OpenAI Responses --------------------------------------------------------------------------

export type ResponsesContentPart = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

export interface ResponsesInputMessage {
  type: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesContentPart[];
}

export interface OpenAIResponsesBody {
  model?: string;
  instructions?: string;
  input: ResponsesInputMessage[];
  max_output_tokens?: number;
  tools?: Array<{ type: 'function'; name: string; description?: string; parameters: Record<string, unknown> | null; strict: boolean }>;
}

/**
 * A Responses body: the leading system and developer messages become `instructions`; every other
 * message is an `input` message item (media as `input_image` parts).
 */
export function toOpenAIResponses(messages: readonly RenderedMessage[], opts: ProviderOptions = {}): OpenAIResponsesBody {
  let lead = 0;
  while (lead < messages.length && isSystem(messages[lead]) && !hasMedia(messages[lead])) lead++;
  const instructions = messages.slice(0, lead).map((m) => m.content);
  const input: ResponsesInputMessage[] = messages.slice(lead).map((m) => {
    const role = m.role === 'tool' ? 'user' : m.role;
    if (!hasMedia(m)) return { type: 'message', role, content: m.content };
    const content: ResponsesContentPart[] = segments(m).map((s) => (s.type === 'text' ? { type: 'input_text', text: s.text } : { type: 'input_image', image_url: s.url, detail: 'auto' }));
    return { type: 'message', role, content };
  });
  const body: OpenAIResponsesBody = { ...(opts.model ? { model: opts.model } : {}), ...(instructions.length ? { instructions: instructions.join('\n\n') } : {}), input };
  if (positive(opts.maxTokens)) body.max_output_tokens = opts.maxTokens;
  // Responses defaults `strict` to true, which refuses schemas with optional properties: a
  // definition is strict only when it says so.
  if (opts.tools?.length) body.tools = opts.tools.map((t) => ({ type: 'function', name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.parameters ?? null, strict: t.strict ?? false }));
  return body;
}

// ---- Anthropic Messages ------------------------------------------------------------------------

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export type AnthropicSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type AnthropicBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'image'; source: AnthropicSource }
  | { type: 'document'; source: AnthropicSource };

export interface AnthropicMessagesBody {
  model?: string;
  max_tokens: number;
  system?: Array<{ type: 'text'; text: string; cache_control?: CacheControl }>;
  messages: Array<{ role: 'user' | 'assistant'; content: string | AnthropicBlock[] }>;
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown>; cache_control?: CacheControl }>;
}

function anthropicMedia(s: { url: string; contentType?: string }): AnthropicBlock {
  const type = mediaTypeOf(s);
  const d = dataUrl(s.url);
  const source: AnthropicSource = d ? { type: 'base64', media_type: type ?? d.mediaType ?? 'application/octet-stream', data: d.data } : { type: 'url', url: s.url };
  if (type === 'application/pdf') return { type: 'document', source };
  if (type === undefined || type.startsWith('image/')) return { type: 'image', source };
  // Audio and video have no Messages content block: the part is named in text instead.
  return { type: 'text', text: `[media ${s.url} ${type}]` };
}

/**
 * A Messages body with prompt caching. System and developer text (joined as in `toAnthropic`) is
 * the stable prefix of every request from the template, so it is one `system` text block with a
 * `cache_control` breakpoint: the tools before it are part of the cached prefix too (the cache
 * covers tools, then system, then messages). `cache.tools` adds a breakpoint on the last tool
 * definition as well, for requests whose system text changes while the tools do not. Tool output
 * becomes user content; adjacent turns of one role are merged.
 */
export function toAnthropicMessages(messages: readonly RenderedMessage[], opts: ProviderOptions = {}): AnthropicMessagesBody {
  const cc: CacheControl = { type: 'ephemeral', ...(opts.cache?.ttl ? { ttl: opts.cache.ttl } : {}) };
  const system: string[] = [];
  const out: AnthropicMessagesBody['messages'] = [];
  for (const m of messages) {
    if (isSystem(m) && !hasMedia(m)) {
      system.push(m.content);
      continue;
    }
    const role = turnRole(m);
    const blocks: AnthropicBlock[] = hasMedia(m) ? segments(m).map((s) => (s.type === 'text' ? { type: 'text', text: s.text } : anthropicMedia(s))) : [];
    const last = out[out.length - 1];
    if (last && last.role === role) {
      if (!blocks.length && typeof last.content === 'string') last.content += `\n\n${m.content}`;
      else {
        const prev: AnthropicBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
        last.content = [...prev, ...(blocks.length ? blocks : [{ type: 'text' as const, text: m.content }])];
      }
    } else out.push({ role, content: blocks.length ? blocks : m.content });
  }
  // Key order follows the API reference: model, max_tokens, system, messages, tools.
  const body: AnthropicMessagesBody = {
    ...(opts.model ? { model: opts.model } : {}),
    max_tokens: positive(opts.maxTokens) ? opts.maxTokens : ANTHROPIC_DEFAULT_MAX_TOKENS,
    ...(system.length ? { system: [{ type: 'text' as const, text: system.join('\n\n'), cache_control: cc }] } : {}),
    messages: out,
  };
  if (opts.tools?.length) {
    body.tools = opts.tools.map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), input_schema: t.parameters ?? { type: 'object', properties: {} } }));
    if (opts.cache?.tools) body.tools[body.tools.length - 1].cache_control = { ...cc };
  }
  return body;
}

// ---- Google Gemini generateContent -------------------------------------------------------------

export type GeminiPart = { text: string } | { inlineData: { mimeType: string; data: string } } | { fileData: { mimeType?: string; fileUri: string } };

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** The OpenAPI subset schema, when the definition's schema stays inside it. */
  parameters?: Record<string, unknown>;
  /** Full JSON Schema, for definitions that use keywords outside the subset (`additionalProperties`, `const`, …). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiBody {
  contents: Array<{ role: 'user' | 'model'; parts: GeminiPart[] }>;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  systemInstruction?: { parts: Array<{ text: string }> };
  generationConfig?: { maxOutputTokens: number };
}

/** Keywords of Gemini's `Schema` (an OpenAPI 3.0 subset). */
const GEMINI_SCHEMA_KEYS = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum']);

function inGeminiSubset(schema: unknown, depth = 0): boolean {
  if (depth > 32 || !isRecord(schema)) return false;
  for (const [k, v] of Object.entries(schema)) {
    if (!GEMINI_SCHEMA_KEYS.has(k)) return false;
    if (k === 'type' && (typeof v !== 'string' || !['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'].includes(v.toLowerCase()))) return false;
    if (k === 'properties') {
      if (!isRecord(v) || !Object.values(v).every((x) => inGeminiSubset(x, depth + 1))) return false;
    } else if (k === 'items' && !inGeminiSubset(v, depth + 1)) return false;
    else if (k === 'anyOf' && (!Array.isArray(v) || !v.every((x) => inGeminiSubset(x, depth + 1)))) return false;
  }
  return true;
}

function geminiMedia(s: { url: string; contentType?: string }): GeminiPart {
  const type = mediaTypeOf(s);
  const d = dataUrl(s.url);
  if (d) return { inlineData: { mimeType: type ?? 'application/octet-stream', data: d.data } };
  return { fileData: { ...(type ? { mimeType: type } : {}), fileUri: s.url } };
}

/**
 * A `generateContent` body: system and developer text becomes `systemInstruction`; the turns are
 * `contents` with roles `user` and `model` (tool output is the user's), adjacent turns of one role
 * merged; media as `inlineData` (data URLs) or `fileData` parts.
 */
export function toGemini(messages: readonly RenderedMessage[], opts: ProviderOptions = {}): GeminiBody {
  const system: string[] = [];
  const contents: GeminiBody['contents'] = [];
  for (const m of messages) {
    if (isSystem(m) && !hasMedia(m)) {
      system.push(m.content);
      continue;
    }
    const role = turnRole(m) === 'assistant' ? 'model' : 'user';
    const parts: GeminiPart[] = segments(m).map((s) => (s.type === 'text' ? { text: s.text } : geminiMedia(s)));
    if (!parts.length) parts.push({ text: '' });
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const body: GeminiBody = { contents };
  if (opts.tools?.length) {
    body.tools = [
      {
        functionDeclarations: opts.tools.map((t) => {
          // The reference marks description as required.
          const d: GeminiFunctionDeclaration = { name: t.name, description: t.description ?? '' };
          if (t.parameters) {
            if (inGeminiSubset(t.parameters)) d.parameters = t.parameters;
            else d.parametersJsonSchema = t.parameters;
          }
          return d;
        }),
      },
    ];
  }
  if (system.length) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (positive(opts.maxTokens)) body.generationConfig = { maxOutputTokens: opts.maxTokens };
  return body;
}

export type ProviderBody = OpenAIChatBody | OpenAIResponsesBody | AnthropicMessagesBody | GeminiBody;

/** The request body of one provider for an assembled request; the output limit defaults to the trace's reserved output. */
export function toProviderRequest(result: Pick<AssemblyResult, 'messages'> & { trace: Pick<AssemblyResult['trace'], 'reserved_output'> }, provider: Provider, opts: ProviderOptions = {}): ProviderBody {
  const o: ProviderOptions = { ...opts, maxTokens: opts.maxTokens ?? result.trace.reserved_output };
  switch (provider) {
    case 'openai':
      return toOpenAIChat(result.messages, o);
    case 'openai-responses':
      return toOpenAIResponses(result.messages, o);
    case 'anthropic':
      return toAnthropicMessages(result.messages, o);
    case 'gemini':
      return toGemini(result.messages, o);
  }
}
