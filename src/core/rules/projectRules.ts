/**
 * Findings about how a template binds to its config, model, tokenizer and fixture: the rules the
 * project layer (src/core/project/) checks while it binds, worded in one place.
 */
import type { ConfigDoc, Finding, FixtureDoc, Span, TemplateDoc } from '../types';
import type { ContextConfig } from '../config/schema';
import { ENV_REFERENCE } from '../models';
import { unknownModelFinding } from '../models/findings';
import type { ModelWhere } from '../models/findings';
import { basename } from '../paths';
import { finding } from './registry';

/** The model names an environment variable or another reference Context Lens never resolves. */
export function unresolvedModel(template: TemplateDoc, reference: string, instead: string): Finding {
  const env = ENV_REFERENCE.exec(reference);
  return finding(
    'unknown-model',
    template.path,
    template.frontMatter!.model!.span,
    `The model is ${reference}, ${env ? `the application's environment variable ${env[1]}` : 'a reference'}, which Context Lens never reads; counting for ${instead} instead (set contextLens.defaultModel or the config's model:).`,
    { severity: 'info' },
  );
}

export function unknownModel(at: ModelWhere, name: string, fallback: string, inConfig: boolean, nearest: readonly string[]): Finding {
  return unknownModelFinding(at, name, fallback, inConfig, nearest);
}

export function unknownTokenizer(path: string, span: Span, name: string): Finding {
  return finding('config-invalid', path, span, `Unknown tokenizer '${name}'.`);
}

export function tokenizerEstimate(path: string, span: Span, tokenizer: string, model: string | undefined): Finding {
  return finding('tokenizer-estimate', path, span, `Token counts use ${tokenizer}, an estimate for ${model ?? 'this request'}; leave margin for the model's own count.`);
}

export function configMissing(template: TemplateDoc, stem: string): Finding {
  return finding('config-missing', template.path, { start: 0, end: 0 }, `No context config for ${basename(template.path)}: add '${basename(stem)}.context.yaml' beside it or a 'context:' key in the front matter.`);
}

export function configReference(template: TemplateDoc, span: Span, value: string, problem: string): Finding {
  return finding('file-reference', template.path, span, `Context config '${value}' ${problem}.`);
}

export function configUnresolved(template: TemplateDoc, span: Span, value: string, error: string | undefined): Finding {
  return finding('file-reference', template.path, span, `Context config '${value}': ${error ?? 'cannot be resolved'}.`);
}

export function fixtureTooLarge(path: string, size: number, limit: number): Finding {
  return finding('fixture-invalid', path, { start: 0, end: 0 }, `Fixture is ${size.toLocaleString('en-US')} bytes, over the ${limit.toLocaleString('en-US')}-byte limit for full analysis; it is not assembled.`);
}

export function fixtureTemplateUnresolved(fixture: FixtureDoc): Finding {
  return finding('file-reference', fixture.path, fixture.template!.span, `Template '${fixture.template!.value}' cannot be resolved inside the workspace.`);
}

/** Required slots the fixture gives no value for (only when a config declares them). */
export function requiredMissing(fixture: FixtureDoc, config: ContextConfig, cfgDoc: ConfigDoc): Finding[] {
  const out: Finding[] = [];
  for (const [slot, cfg] of Object.entries(config.slots)) {
    if (!cfg.required || slot in fixture.slots) continue;
    out.push(
      finding('required-missing', fixture.path, { start: 0, end: 0 }, `Fixture '${fixture.name}' has no value for required slot '${slot}'.`, {
        related: [{ path: cfgDoc.path, span: cfgDoc.keySpan(['slots', slot]) ?? { start: 0, end: 0 }, message: `slot '${slot}' is required` }],
      }),
    );
  }
  return out;
}
