/**
 * The finding about a model's lifecycle: `model-retired`, for a model its provider has shut down
 * (every request to it fails), naming the successor where the provider names one. A shutdown that
 * is only announced is not a finding (the model still answers; `ctxlens models` lists the date).
 */
import type { Finding, FixHint, ModelInfo, Span } from '../types';
import { finding } from '../rules/registry';

/** The `model-retired` finding for `model`, or undefined when it is neither retired nor retiring. */
export function modelRetired(path: string, span: Span, model: ModelInfo | undefined): Finding | undefined {
  const life = model?.retired;
  if (!model || !life) return undefined;
  const next = life.successor ? `; the provider names ${life.successor} as its successor` : '';
  const when = life.date ? ` on ${life.date}` : '';
  return finding('model-retired', path, span, `Model '${model.name}' was retired by its provider${when}: requests to it fail${next}. (${life.source})`);
}

/**
 * Where a model finding is shown, and what its quick fixes may edit: `text` is the text of the
 * file at `path` (a fix replaces the name only where the span holds it), `declareIn` a context
 * config without a `models:` key, where a fix may declare the model.
 */
export interface ModelWhere {
  path: string;
  span: Span;
  text?: string;
  declareIn?: { path: string; text: string };
}

/** The quick fixes of an unknown model name: each nearest known name in its place, and declaring it in the config. */
export function unknownModelFixes(at: ModelWhere, name: string, nearest: readonly string[], declared: { window: number; tokenizer: string }): FixHint[] {
  const fixes: FixHint[] = [];
  const written = at.text?.slice(at.span.start, at.span.end);
  const quote = written && /^(["'])(.*)\1$/.exec(written);
  if (written === name || (quote && quote[2] === name)) {
    for (const [i, n] of nearest.entries()) {
      fixes.push({ title: `Use model '${n}'`, edits: [{ path: at.path, span: at.span, newText: quote ? `${quote[1]}${n}${quote[1]}` : n }], ...(i === 0 ? { preferred: true } : {}) });
    }
  }
  if (at.declareIn && /^[A-Za-z0-9._:/@-]+$/.test(name)) {
    const text = at.declareIn.text;
    const end = text.length;
    const sep = text.length && !text.endsWith('\n') ? '\n' : '';
    fixes.push({
      title: `Declare model '${name}' under models: in ${basenameOf(at.declareIn.path)} (set its real window)`,
      edits: [{ path: at.declareIn.path, span: { start: end, end }, newText: `${sep}models:\n  ${JSON.stringify(name)}: { window: ${declared.window}, tokenizer: ${declared.tokenizer} }\n` }],
    });
  }
  return fixes;
}

function basenameOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function nearestText(nearest: readonly string[]): string {
  return nearest.length ? ` Nearest known: ${nearest.map((n) => `'${n}'`).join(', ')}.` : '';
}

/**
 * The `unknown-model` finding of a name no registry entry, model file or config lists but whose
 * family is known: counted with the family's tokenizer as an estimate, and with the limits of
 * the family's reference model, which the finding names (a typo must not pass every budget check
 * silently with a borrowed window).
 */
export function familyEstimate(at: ModelWhere, model: ModelInfo, nearest: readonly string[]): Finding | undefined {
  if (!model.estimate) return undefined;
  return finding(
    'unknown-model',
    at.path,
    at.span,
    `Unknown model '${model.name}': no registry entry, model file or config lists it.${nearestText(nearest)} Counting it as the ${model.estimate.family} family: ${model.tokenizer} tokens (an estimate), and the budget checks borrow the ${model.window.toLocaleString('en-US')}-token window of ${model.estimate.like}; no price is known. Pick a known name, or declare it under 'models:' or in .context-lens/models.yaml.`,
    { fixes: unknownModelFixes(at, model.name, nearest, { window: model.window, tokenizer: model.tokenizer }) },
  );
}

/** The `unknown-model` finding of a name of no known family: counted with the fallback tokenizer, with no window of its own. */
export function unknownModelFinding(at: ModelWhere, name: string, fallback: string, inConfig: boolean, nearest: readonly string[]): Finding {
  return finding(
    'unknown-model',
    at.path,
    at.span,
    `Unknown model '${name}': no registry entry, model file or config lists it.${nearestText(nearest)} Counting with ${fallback} as an approximation. Pick a known name, or add it under 'models:'${inConfig ? '' : ' in the config'} to set its window and tokenizer.`,
    { fixes: unknownModelFixes(at, name, nearest, { window: 128000, tokenizer: fallback }) },
  );
}
