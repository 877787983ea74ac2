/**
 * Turns assembled messages into what a provider receives (OpenAI Chat Completions, Anthropic
 * Messages) or a readable text with slot boundaries. Shared by `ctxlens assemble`, the
 * assemble command and the preview's copy buttons.
 */
import type { AssemblyResult, RenderedMessage } from './types';

export type RequestFormat = 'openai' | 'anthropic' | 'text' | 'json';
export const REQUEST_FORMATS: readonly RequestFormat[] = ['openai', 'anthropic', 'text', 'json'];

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

/** A readable rendering: one header per message, slot boundaries marked on their own lines. */
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
  return lines.join('\n') + '\n';
}

export function formatRequest(result: AssemblyResult, format: RequestFormat, model?: string): string {
  switch (format) {
    case 'openai':
      return JSON.stringify(toOpenAI(result.messages), null, 2) + '\n';
    case 'anthropic':
      return JSON.stringify(toAnthropic(result.messages, { model, maxTokens: result.trace.reserved_output }), null, 2) + '\n';
    case 'text':
      return toText(result);
    case 'json':
      return JSON.stringify({ messages: toOpenAI(result.messages), trace: result.trace }, null, 2) + '\n';
  }
}
