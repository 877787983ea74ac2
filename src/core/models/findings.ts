/**
 * The finding about a model's lifecycle: `model-retired`, for a model its provider has shut down
 * (every request to it fails), naming the successor where the provider names one. A shutdown that
 * is only announced is not a finding (the model still answers; `ctxlens models` lists the date).
 */
import type { Finding, ModelInfo, Span } from '../types';
import { finding } from '../rules/registry';

/** The `model-retired` finding for `model`, or undefined when it is neither retired nor retiring. */
export function modelRetired(path: string, span: Span, model: ModelInfo | undefined): Finding | undefined {
  const life = model?.retired;
  if (!model || !life) return undefined;
  const next = life.successor ? `; the provider names ${life.successor} as its successor` : '';
  const when = life.date ? ` on ${life.date}` : '';
  return finding('model-retired', path, span, `Model '${model.name}' was retired by its provider${when}: requests to it fail${next}. (${life.source})`);
}

/** The `tokenizer-estimate` finding of a name the registry does not list, counted as its family. */
export function familyEstimate(path: string, span: Span, model: ModelInfo): Finding | undefined {
  if (!model.estimate) return undefined;
  return finding(
    'tokenizer-estimate',
    path,
    span,
    `Model '${model.name}' is not in the registry; counting it as the ${model.estimate.family} family: ${model.tokenizer} tokens (an estimate) and the limits of ${model.estimate.like} (${model.window.toLocaleString('en-US')}-token window). No price is known for it. Add it under 'models:' or to .context-lens/models.yaml to set its own.`,
  );
}
