/**
 * The models and tokenizers the pickers and completion offer: the core's registry (built-in data
 * and the installed model files, src/core/models/) plus the config's own `models:` entries, and
 * the built-in tokenizers. Retired models are left out of the picker: requests to them fail.
 */
import type { Analysis } from '../core/analyze';
import { listModels } from '../core/models';
import { ENCODINGS } from '../core/tokens/encodings';
import type { ModelChoice } from '../protocol/lsp';

export function tokenizerNames(): string[] {
  return [...Object.keys(ENCODINGS), 'chars4'];
}

export function modelChoices(a: Analysis | undefined): ModelChoice[] {
  const t = a?.kind === 'fixture' ? a.template : a?.kind === 'template' ? a : undefined;
  const cfg = a?.kind === 'config' ? a.doc.config : t?.config?.doc.config;
  const out = new Map<string, ModelChoice>();
  for (const m of listModels(cfg?.models)) if (!m.retired) out.set(m.name, { name: m.name, provider: m.provider, window: m.window, tokenizer: m.tokenizer, exact: m.exact });
  // A model named in a template but unknown to the registry is still the active one.
  if (t?.model && !out.has(t.model.name)) out.set(t.model.name, { name: t.model.name, provider: t.model.provider, window: t.model.window, tokenizer: t.model.tokenizer, exact: t.model.exact });
  return [...out.values()];
}
