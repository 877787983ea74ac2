/**
 * The models and tokenizers the pickers and completion offer: the configs' own `models` entries
 * and the model an analysis resolved, plus the built-in tokenizers.
 */
import type { Analysis } from '../core/analyze';
import { ENCODINGS } from '../core/tokens/encodings';
import type { ModelChoice } from '../protocol/lsp';

export function tokenizerNames(): string[] {
  return [...Object.keys(ENCODINGS), 'chars4'];
}

export function modelChoices(a: Analysis | undefined): ModelChoice[] {
  const out = new Map<string, ModelChoice>();
  const t = a?.kind === 'fixture' ? a.template : a?.kind === 'template' ? a : undefined;
  if (t?.model) out.set(t.model.name, { name: t.model.name, provider: t.model.provider, window: t.model.window, tokenizer: t.model.tokenizer, exact: t.model.exact });
  const cfg = a?.kind === 'config' ? a.doc.config : t?.config?.doc.config;
  for (const [name, m] of Object.entries(cfg?.models ?? {})) {
    if (!out.has(name)) out.set(name, { name, provider: 'custom', window: m.window, tokenizer: m.tokenizer, exact: m.exact });
  }
  return [...out.values()];
}
