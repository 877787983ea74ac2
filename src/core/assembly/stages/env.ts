/**
 * Stage 0, prepare: what every stage of the pipeline reads (`PipelineEnv`, stages/state.ts): the
 * assembly input, and what follows from it before any fixture value is looked at (the model, the
 * budget equation, the reference time, the overheads, the input budget the request is fitted to),
 * and the fixture's values in the shape their slots take (fixture/shape.ts). Built once per
 * `assemble` call; no stage changes it.
 */
import { shapeFixture } from '../../fixture/shape';
import { inputLimit, modelFromConfig } from '../../budget';
import { budgetFor } from '../../budget/remainder';
import { sha256 } from '../sha256';
import { countsExact } from '../../tokens/exact';
import type { AssembleInput, PipelineEnv } from './state';
export type { AssembleInput, PipelineEnv } from './state';

export function prepare(input: AssembleInput): PipelineEnv {
  const { template, config, tokenizer } = input;
  // Values in the shape their slots take, before anything reads them (fixture/shape.ts).
  const shaped = shapeFixture(input.fixture, config);
  const fixture = shaped.fixture;
  // The caller resolves the model from the registry; a model defined only in the config's own
  // `models` is read from there.
  const model = input.model ?? modelFromConfig(config);
  const exact = input.exact ?? countsExact(tokenizer, model, { configTokenizer: !!config.tokenizer, unknownModel: !!input.modelName && !model });
  // A binding passes the report it computed for this config; any other config gets it from the same function.
  const budget = input.budget ?? budgetFor(config, model, { name: tokenizer.name, exact });
  const shaCache = new Map<string, string>();
  const hash = (t: string): string => {
    let h = shaCache.get(t);
    if (h === undefined) {
      h = sha256(t);
      shaCache.set(t, h);
    }
    return h;
  };
  const limit = inputLimit(budget);
  return {
    input,
    template,
    config,
    tokenizer,
    fixture,
    model,
    exact,
    budget,
    now: input.now ?? config.filters?.now,
    itemOverhead: config.overhead?.item ?? 0,
    messageOverhead: config.overhead?.message ?? model?.messageOverhead ?? 0,
    requestOverhead: config.overhead?.request ?? model?.requestOverhead ?? 0,
    ctx: { template, fixture, configDoc: input.configDoc },
    hash,
    fitLimit: limit.tokens,
    inputLimitText: limit.text,
    shapeFindings: shaped.findings,
  };
}
