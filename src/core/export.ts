/**
 * Turns assembled messages into what a provider receives (OpenAI Chat Completions, Anthropic
 * Messages) or a readable text with slot boundaries. Shared by `ctxlens assemble`, the
 * assemble command and the preview's copy buttons.
 */
import type { AssemblyResult, RenderedMessage } from './types';

export type RequestFormat = 'openai' | 'anthropic' | 'text' | 'json';
export const REQUEST_FORMATS: readonly RequestFormat[] = ['openai', 'anthropic', 'text', 'json'];

export interface OpenAIMessage {
  role: string;
  content: string;
}

/** A Chat Completions `messages` array. */
export function toOpenAI(messages: readonly RenderedMessage[]): OpenAIMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content }));
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
    lines.push(`${i ? '\n' : ''}=== ${m.role} ===`);
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
      buf += part.text;
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
