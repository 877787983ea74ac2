/**
 * What every stage of the pipeline reads: the assembly input, and what follows from it before any
 * fixture value is looked at (the model, the budget equation, the reference time, the overheads,
 * the input budget the request is fitted to), and the fixture's values in the shape their slots
 * take (fixture/shape.ts). Built once per `assemble` call by `prepare`.
 */
import { shapeFixture } from '../../fixture/shape';
import type { ContextConfig } from '../../config/schema';
import type { BudgetReport, ConfigDoc, Finding, FixtureDoc, ModelInfo, TemplateDoc, Tokenizer } from '../../types';
import type { RenderOptions } from '../render';
import type { FindingContext } from '../findings';
import { formatTokens as fmt, modelFromConfig } from '../../budget';
import { budgetFor } from '../../budget/remainder';
import { sha256 } from '../sha256';
import { countsExact } from '../../tokens/exact';

export interface AssembleInput {
  template: TemplateDoc;
  /** Template text for the trace hash (defaults to `template.text`). */
  templateText?: string;
  config: ContextConfig;
  /** Config file path for the trace (defaults to `configDoc.path`, else the template's path for an inline config). */
  configPath?: string;
  /** Config text for the trace hash (defaults to `configDoc.text`, else the canonical JSON of `config`). */
  configText?: string;
  /** The parsed config document, for locating findings at config nodes. */
  configDoc?: ConfigDoc;
  /** Fixture values; without one, every slot renders empty. `{ file: ... }` values must already be resolved. */
  fixture?: FixtureDoc;
  tokenizer: Tokenizer;
  /** Registry entry of the model (window, limits, per-message and per-request overhead). */
  model?: ModelInfo;
  /** The model name as requested, when it may not be in the registry (recorded in the trace). */
  modelName?: string;
  /** Reference time (ISO 8601) for expiry and recency; `filters.now` when absent. The clock is never read. */
  now?: string;
  /** Whether counts are exact; default: the tokenizer is exact and is the model's own. */
  exact?: boolean;
  /** Partials, front matter defaults and escaping for the template engine (render.ts). */
  render?: RenderOptions;
  /** No context config: the config is derived from the front matter, and the trace names none. */
  zeroConfig?: boolean;
  /** The budget report of `config` (with history remainders), when the caller computed it already (a binding). */
  budget?: BudgetReport;
}

export interface PipelineEnv {
  input: AssembleInput;
  template: TemplateDoc;
  config: ContextConfig;
  tokenizer: Tokenizer;
  fixture?: FixtureDoc;
  model?: ModelInfo;
  exact: boolean;
  budget: BudgetReport;
  /** Reference time: the input's `now`, else `filters.now`. */
  now?: string;
  itemOverhead: number;
  messageOverhead: number;
  requestOverhead: number;
  /** Where findings are located (template, fixture, config document). */
  ctx: FindingContext;
  /** SHA-256 of a text, cached for this assembly. */
  hash(text: string): string;
  /** Tokens the request is fitted to: window - output - margin; infinite when no window is known. */
  fitLimit: number;
  /** The fit limit as words, for messages. */
  inputLimitText: string;
  /** What shaping the fixture's values left out or refused (fixture/shape.ts). */
  shapeFindings: Finding[];
}

export function prepare(input: AssembleInput): PipelineEnv {
  const { template, config, tokenizer } = input;
  // Values in the shape their slots take, before anything reads them (fixture/shape.ts).
  const shaped = shapeFixture(input.fixture, config);
  const fixture = shaped.fixture;
  // The caller resolves the model from the registry; a model defined only in the config's own
  // `models` is read from there.
  const model = input.model ?? modelFromConfig(config);
  const exact = input.exact ?? countsExact(tokenizer, model, { configTokenizer: !!config.tokenizer, unknownModel: !!input.modelName && !model });
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
  // The margin is a planning reserve for count variation and chat-template overhead the registry
  // may not know, so fitting uses window - output - margin (seed 000's build_request compares with
  // limit - reserved output; the margin stays on top of that).
  const windowKnown = budget.window > 0 || !!budget.limits;
  const fitLimit = windowKnown ? budget.inputBudget - budget.margin : Number.POSITIVE_INFINITY;
  const inputLimitText = budget.limits
    ? `input limit ${fmt(budget.limits.input)} - margin ${fmt(budget.margin)}`
    : `window ${fmt(budget.window)} - output ${fmt(budget.output)} - margin ${fmt(budget.margin)}`;
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
    fitLimit,
    inputLimitText,
    shapeFindings: shaped.findings,
  };
}
