/**
 * The finding about a model's lifecycle: `model-retired`, for a model its provider has shut down
 * (a warning: every request to it fails) or has announced a shutdown date for (info), naming the
 * successor where the provider names one.
 */
import type { Finding, ModelInfo, Span } from '../types';
import { finding } from '../rules/registry';

/** The `model-retired` finding for `model`, or undefined when it is neither retired nor retiring. */
export function modelRetired(path: string, span: Span, model: ModelInfo | undefined): Finding | undefined {
  if (!model) return undefined;
  const life = model.retired ?? model.retires;
  if (!life) return undefined;
  const next = life.successor ? `; the provider names ${life.successor} as its successor` : '';
  if (model.retired) {
    const when = life.date ? ` on ${life.date}` : '';
    return finding('model-retired', path, span, `Model '${model.name}' was retired by its provider${when}: requests to it fail${next}. (${life.source})`);
  }
  return finding('model-retired', path, span, `Model '${model.name}' retires on ${life.date ?? 'an announced date'}${next}. (${life.source})`, { severity: 'info' });
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
