/**
 * Provider request bodies against the providers' published request shapes: JSON Schemas written
 * from the API references (test/lib/provider-shapes/*.json: OpenAI Create chat completion, Create
 * a model response, Anthropic Create a Message, Gemini models.generateContent), checked with ajv.
 * Also the mapping rules: instructions and system text, roles, media parts, tools, cache_control.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { formatRequest, toAnthropic, toAnthropicMessages, toGemini, toOpenAI, toOpenAIChat, toOpenAIResponses, toProviderRequest, toolDefinitions, PROVIDERS, REQUEST_FORMATS } from '../../src/core/export';
import type { Provider, ProviderOptions } from '../../src/core/export';
import type { AssemblyResult, MessagePart, RenderedMessage, Role } from '../../src/core/types';

const SHAPES = join(__dirname, 'provider-shapes');
const ajv = new Ajv({ allErrors: true, strict: false });
const schemaFile: Record<Provider, string> = {
  openai: 'openai-chat-completions.json',
  'openai-responses': 'openai-responses.json',
  anthropic: 'anthropic-messages.json',
  gemini: 'gemini-generate-content.json',
};
const validators = Object.fromEntries(PROVIDERS.map((p) => [p, ajv.compile(JSON.parse(readFileSync(join(SHAPES, schemaFile[p]), 'utf8')))])) as Record<Provider, ReturnType<typeof ajv.compile>>;

function expectValid(provider: Provider, body: unknown): void {
  const v = validators[provider];
  const ok = v(body);
  expect(ok, `${provider}: ${ajv.errorsText(v.errors, { separator: '\n' })}\n${JSON.stringify(body, null, 2)}`).toBe(true);
}

function msg(role: Role, ...parts: Array<string | MessagePart>): RenderedMessage {
  const ps: MessagePart[] = parts.map((p) => (typeof p === 'string' ? { text: p } : p));
  return { role, content: ps.map((p) => p.text).join(''), parts: ps };
}

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const TOOLS = toolDefinitions(readFileSync(join(__dirname, '../../examples/refund-support/tools/refund-tools.json'), 'utf8'));

/** Conversations that exercise every mapping rule. */
const CONVERSATIONS: Record<string, RenderedMessage[]> = {
  'system and user': [msg('system', 'You answer SDK questions.'), msg('user', 'Does 4.2 retry 429s?')],
  'developer, history and tool output': [
    msg('system', 'Policy v3.'),
    msg('developer', 'Cite ids.'),
    msg('user', 'hi'),
    msg('assistant', 'hello'),
    msg('tool', '{"order":"NW-123456","status":"delivered"}'),
    msg('user', 'where is my refund?'),
  ],
  'media parts': [
    msg('system', 'Describe images.'),
    msg('user', 'What is in ', { text: '', media: { url: PNG } }, ' and ', { text: '', media: { url: 'https://example.com/photo.jpg' } }, '?'),
    msg('user', 'And this manual: ', { text: '', media: { url: 'https://example.com/manual.pdf', contentType: 'application/pdf' } }),
    msg('assistant', 'A cat.'),
  ],
  'user only': [msg('user', 'Question?')],
  'a pending section': [msg('system', 'Rules.'), msg('user', 'q', { text: '', section: 'output' })],
};

describe('request bodies match the providers\' published shapes', () => {
  for (const [name, messages] of Object.entries(CONVERSATIONS)) {
    for (const provider of PROVIDERS) {
      for (const tools of [undefined, TOOLS]) {
        it(`${provider}: ${name}${tools ? ' with tools' : ''}`, () => {
          const opts: ProviderOptions = { model: provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o', maxTokens: 1200, ...(tools ? { tools } : {}) };
          const body = toProviderRequest({ messages, trace: { reserved_output: 1200 } } as unknown as AssemblyResult, provider, opts);
          expectValid(provider, body);
        });
      }
    }
  }

  it('the schemas refuse what the APIs refuse (they are not vacuous)', () => {
    const v = (p: Provider, b: unknown) => validators[p](b);
    expect(v('openai', { model: 'gpt-4o', messages: [{ role: 'tool', content: 'x' }] })).toBe(false); // no tool_call_id
    expect(v('openai', { model: 'gpt-4o', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] })).toBe(false);
    expect(v('openai-responses', { model: 'gpt-4o', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] })).toBe(false); // no detail
    expect(v('openai-responses', { model: 'gpt-4o', input: 'x', tools: [{ type: 'function', name: 'f' }] })).toBe(false); // parameters, strict required
    expect(v('anthropic', { model: 'c', max_tokens: 10, messages: [{ role: 'system', content: 'x' }] })).toBe(false);
    expect(v('anthropic', { model: 'c', messages: [] })).toBe(false); // max_tokens
    expect(v('anthropic', { model: 'c', max_tokens: 1, messages: [], tools: [{ name: 'f', parameters: {} }] })).toBe(false);
    expect(v('gemini', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })).toBe(false);
    expect(v('gemini', { contents: [{ role: 'user', parts: [{ text: 'x', inlineData: { mimeType: 'a', data: 'b' } }] }] })).toBe(false);
    expect(v('gemini', { contents: [{ role: 'user', parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: 'f', description: '', parameters: { type: 'object', additionalProperties: false } }] }] })).toBe(false);
  });
});

describe('mapping rules', () => {
  const conv = CONVERSATIONS['developer, history and tool output'];

  it('OpenAI Chat Completions: the toOpenAI messages, tool output as user content, the output limit and function tools', () => {
    const b = toOpenAIChat(conv, { model: 'gpt-4o', maxTokens: 800, tools: TOOLS });
    expect(b.messages.map((m) => m.role)).toEqual(['system', 'developer', 'user', 'assistant', 'user', 'user']);
    expect(b.messages.filter((m) => m.role !== 'user' || m.content !== conv[4].content)).toEqual(toOpenAI(conv).filter((m) => m.role !== 'tool'));
    expect(b.max_completion_tokens).toBe(800);
    expect(b.tools?.map((t) => t.function.name)).toEqual(['lookup_order', 'escalate_refund_request', 'issue_refund']);
    expect(b.tools?.[0]).toEqual({ type: 'function', function: { name: 'lookup_order', description: TOOLS[0].description, parameters: TOOLS[0].parameters } });
  });

  it('OpenAI Responses: leading system and developer text is the instructions; the rest are message items', () => {
    const b = toOpenAIResponses(conv, { model: 'gpt-4o', tools: TOOLS });
    expect(b.instructions).toBe('Policy v3.\n\nCite ids.');
    expect(b.input.map((i) => [i.type, i.role])).toEqual([
      ['message', 'user'],
      ['message', 'assistant'],
      ['message', 'user'],
      ['message', 'user'],
    ]);
    expect(b.tools?.[2]).toMatchObject({ type: 'function', name: 'issue_refund', strict: false });
    const media = toOpenAIResponses(CONVERSATIONS['media parts']);
    expect(media.input[0].content).toEqual([
      { type: 'input_text', text: 'What is in ' },
      { type: 'input_image', image_url: PNG, detail: 'auto' },
      { type: 'input_text', text: ' and ' },
      { type: 'input_image', image_url: 'https://example.com/photo.jpg', detail: 'auto' },
      { type: 'input_text', text: '?' },
    ]);
  });

  it('Anthropic: system text is one block with a cache_control breakpoint; tools optionally cached too', () => {
    const b = toAnthropicMessages(conv, { model: 'claude-sonnet-4-5', maxTokens: 900, tools: TOOLS });
    expect(b.system).toEqual([{ type: 'text', text: 'Policy v3.\n\nCite ids.', cache_control: { type: 'ephemeral' } }]);
    // The same text as the historical rendering, so token counts agree.
    expect(b.system?.[0].text).toBe(toAnthropic(conv, { maxTokens: 900 }).system);
    expect(b.messages).toEqual(toAnthropic(conv, { maxTokens: 900 }).messages);
    expect(b.tools?.map((t) => t.name)).toEqual(['lookup_order', 'escalate_refund_request', 'issue_refund']);
    expect(b.tools?.[0].input_schema).toEqual(TOOLS[0].parameters);
    expect(b.tools?.some((t) => t.cache_control)).toBe(false);
    const cached = toAnthropicMessages(conv, { tools: TOOLS, cache: { tools: true, ttl: '1h' } });
    expect(cached.tools?.[2].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(cached.system?.[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(cached.max_tokens).toBe(1024);
    const media = toAnthropicMessages(CONVERSATIONS['media parts']);
    expect(media.messages[0].content).toEqual([
      { type: 'text', text: 'What is in ' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.slice(PNG.indexOf(',') + 1) } },
      { type: 'text', text: ' and ' },
      { type: 'image', source: { type: 'url', url: 'https://example.com/photo.jpg' } },
      { type: 'text', text: '?' },
      { type: 'text', text: 'And this manual: ' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/manual.pdf' } },
    ]);
  });

  it('Gemini: systemInstruction, roles user and model, merged turns, inlineData and fileData, function declarations', () => {
    const b = toGemini(conv, { maxTokens: 700, tools: TOOLS });
    expect(b.systemInstruction).toEqual({ parts: [{ text: 'Policy v3.\n\nCite ids.' }] });
    expect(b.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(b.contents[2].parts).toEqual([{ text: conv[4].content }, { text: 'where is my refund?' }]);
    expect(b.generationConfig).toEqual({ maxOutputTokens: 700 });
    // The refund tools use additionalProperties and exclusiveMinimum, outside Gemini's OpenAPI subset.
    expect(b.tools?.[0].functionDeclarations[0]).toEqual({ name: 'lookup_order', description: TOOLS[0].description, parametersJsonSchema: TOOLS[0].parameters });
    const simple = toGemini(conv, { tools: [{ name: 'f', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }] });
    expect(simple.tools?.[0].functionDeclarations[0]).toEqual({ name: 'f', description: '', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } });
    const media = toGemini(CONVERSATIONS['media parts']);
    expect(media.contents[0].parts).toEqual([
      { text: 'What is in ' },
      { inlineData: { mimeType: 'image/png', data: PNG.slice(PNG.indexOf(',') + 1) } },
      { text: ' and ' },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photo.jpg' } },
      { text: '?' },
      { text: 'And this manual: ' },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/manual.pdf' } },
    ]);
    expect(media.contents.map((c) => c.role)).toEqual(['user', 'model']);
  });
});

describe('tool definitions', () => {
  it('reads OpenAI, neutral, Anthropic and Gemini shapes, lists and JSON text', () => {
    expect(TOOLS.map((t) => t.name)).toEqual(['lookup_order', 'escalate_refund_request', 'issue_refund']);
    expect(toolDefinitions({ name: 'a', description: 'd', parameters: { type: 'object' } })).toEqual([{ name: 'a', description: 'd', parameters: { type: 'object' } }]);
    expect(toolDefinitions([{ name: 'b', input_schema: { type: 'object' } }])).toEqual([{ name: 'b', parameters: { type: 'object' } }]);
    expect(toolDefinitions({ functionDeclarations: [{ name: 'c', parametersJsonSchema: { type: 'object' } }] })).toEqual([{ name: 'c', parameters: { type: 'object' } }]);
    expect(toolDefinitions('{"type":"function","function":{"name":"d","strict":true}}')).toEqual([{ name: 'd', strict: true }]);
  });

  it('skips what is not a definition', () => {
    expect(toolDefinitions('order NW-123456 is delivered')).toEqual([]);
    expect(toolDefinitions('{"status":"ok"}')).toEqual([]);
    expect(toolDefinitions('{not json')).toEqual([]);
    expect(toolDefinitions([{ name: 'has space' }, { name: 'x'.repeat(65) }, 3, null])).toEqual([]);
  });
});

describe('formats', () => {
  it('keeps the historical formats and adds the two new bodies', () => {
    expect(REQUEST_FORMATS).toEqual(['openai', 'anthropic', 'text', 'json', 'openai-responses', 'gemini']);
    const result = { ok: true, messages: CONVERSATIONS['system and user'], trace: { reserved_output: 500, input_tokens: 20, input_budget: 1000, tokenizer: 'o200k_base', exact: true } } as unknown as AssemblyResult;
    expect(JSON.parse(formatRequest(result, 'openai'))).toEqual(toOpenAI(result.messages));
    expect(JSON.parse(formatRequest(result, 'gemini'))).toEqual(toGemini(result.messages, { maxTokens: 500 }));
    expect(JSON.parse(formatRequest(result, 'openai-responses', 'gpt-4o', { tools: TOOLS }))).toEqual(toOpenAIResponses(result.messages, { model: 'gpt-4o', maxTokens: 500, tools: TOOLS }));
  });
});
