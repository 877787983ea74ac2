/**
 * The state the assembly stages pass along, in one module below every stage: the input, what
 * follows from it before any fixture value is read (`PipelineEnv`), and what each stage makes of
 * a slot. Each stage returns a new value of the next type and never fills a field of an earlier
 * one:
 *
 *   LoadedSlot    (load)             the slot as the template and config define it, its fixture value
 *   CandidateSlot (filter .. score)  + its candidates, in priority order
 *   BudgetedSlot  (budget)           + its resolved budget
 *   SelectedSlot  (select)           + what the selection keeps
 *   AssembledRequest (fit .. render) the kept items in final order and the messages
 *   RequestChecks (checks)           the tools the request offers
 *
 * Decisions (omissions, findings, conflicts, history plans) are appended to the decision log
 * (log.ts), which the trace reads. Stage files import these types from here, so no two stages
 * depend on each other for a type.
 */
import type { ContextConfig, HistoryPolicy, SlotConfig } from '../../config/schema';
import type { BudgetReport, ConfigDoc, Finding, FixtureDoc, FixtureValue, ModelInfo, OmitReason, OrderPolicy, RenderedMessage, TemplateDoc, Tokenizer, ToolDefinitionInfo, TraceTool } from '../../types';
import type { FindingContext } from '../findings';
import type { Omission, WorkItem } from '../item';
import type { RenderOptions, Rendered, SlotState } from '../render';

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

/** What every stage reads: the input and what follows from it before any fixture value is looked at (env.ts). */
export interface PipelineEnv {
  readonly input: AssembleInput;
  readonly template: TemplateDoc;
  readonly config: ContextConfig;
  readonly tokenizer: Tokenizer;
  /** The fixture with its values in the shape their slots take (fixture/shape.ts). */
  readonly fixture?: FixtureDoc;
  readonly model?: ModelInfo;
  readonly exact: boolean;
  /** The budget equation of the config with its history remainders (budget/). */
  readonly budget: BudgetReport;
  /** Reference time: the input's `now`, else `filters.now`. */
  readonly now?: string;
  readonly itemOverhead: number;
  readonly messageOverhead: number;
  readonly requestOverhead: number;
  /** Where findings are located (template, fixture, config document). */
  readonly ctx: FindingContext;
  /** SHA-256 of a text, cached for this assembly. */
  hash(text: string): string;
  /** Tokens the request is fitted to: window - output - margin; infinite when no window is known. */
  readonly fitLimit: number;
  /** The fit limit as words, for messages. */
  readonly inputLimitText: string;
  /** What shaping the fixture's values left out or refused (fixture/shape.ts). */
  readonly shapeFindings: readonly Finding[];
}

/** Stage 1, load: one slot of the request as the template and config define it, with its fixture value. */
export interface LoadedSlot {
  readonly state: SlotState;
  /** Position among the slots (the last tie-breaker of the drop order). */
  readonly order: number;
  readonly cfg?: SlotConfig;
  /** The template uses the slot. */
  readonly used: boolean;
  readonly required: boolean;
  readonly priority: number;
  readonly orderPolicy: OrderPolicy;
  /** History slots: the policy as configured (undefined: the sliding window of earlier versions). */
  readonly policy?: HistoryPolicy;
  /** Per-item overhead: list slots and labelled slots pay the envelope. */
  readonly overhead: number;
  readonly value?: FixtureValue;
}

/** Stages 2 to 5, filter .. score: a loaded slot with its candidates. */
export interface CandidateSlot extends LoadedSlot {
  /** Absent for a slot the template does not use or without a list or text value. */
  readonly candidates?: SlotCandidates;
  /** Items in the fixture value (0 without candidates). */
  readonly total: number;
  /** Candidates after filters, dedup and supersession, in priority order (best first; most recent first for history). */
  readonly ranked: readonly WorkItem[];
}

/** Stage 6, budget: a slot with its resolved budget. */
export interface BudgetedSlot extends CandidateSlot {
  /** Undefined when the slot is not capped. */
  readonly budget?: number;
}

/** Stage 7, select: a slot with what its selection keeps. */
export interface SelectedSlot extends BudgetedSlot {
  /** Absent for a slot without candidates. */
  readonly selection?: Selection;
  /** Kept by selection, in priority order. */
  readonly packed: readonly WorkItem[];
  /** Each packed item's position in `packed`. */
  readonly packIndex: ReadonlyMap<WorkItem, number>;
}

/** What load .. score produce for one slot (memoized per fixture value: candidates.ts; never changed once made). */
export interface SlotCandidates {
  readonly total: number;
  /** [fixture index, text] of items read from `{ file: ... }` references (hashed into the cache key). */
  readonly files: ReadonlyArray<[number, string]>;
  /** Filter, dedup and supersession omissions, in stage order. */
  readonly omitted: readonly Omission[];
  /** Candidates after filters, dedup and supersession, in fixture order (what content findings look at). */
  readonly candidates: readonly WorkItem[];
  readonly ranked: readonly WorkItem[];
  readonly conflicts: readonly ConflictRecord[];
  /** Selections of these candidates, by budget settings. */
  readonly selections: Map<string, Selection>;
}

/** A contradiction among a slot's candidates (conflicts.ts). */
export interface ConflictRecord {
  kind: 'claim' | 'version' | 'supersession';
  topic?: string;
  /** The items, in fixture order: two for a supersession, every disagreeing item of the group otherwise. */
  items: WorkItem[];
  values?: string[];
  resolution: 'superseded' | 'labelled' | 'filtered';
  kept?: WorkItem;
  superseded?: WorkItem;
  basis?: 'supersedes' | 'superseded_by' | 'valid_from' | 'valid_to';
  /** Resolution filtered: the out-of-scope item and the filter that removed it. */
  filtered?: WorkItem;
  reason?: OmitReason;
}

/** What a selection keeps (in priority order) and omits, and the tokens it uses with overhead. */
export interface Picked {
  kept: WorkItem[];
  omitted: Omission[];
  used: number;
}

export interface Selection {
  /** Tokens of every ranked item with its overhead. */
  cost: number;
  /** Undefined for a required slot (never cut). */
  picked?: Picked;
  history?: HistoryPlan;
  /** Subtopics each item was picked for first. */
  coverFor: Map<WorkItem, string>;
  /** Marginal value per token at the time each item was selected (`select: value-per-token`). */
  valuePerToken: Map<WorkItem, number>;
}

export interface SelectOptions {
  budget?: number;
  overhead: number;
  cfg?: SlotConfig;
  /** Novelty weight of the selection score, for marginal value. */
  novelty: number;
}

export type HistoryPart = 'recent' | 'summary' | 'retrieved';

export interface HistoryPlan {
  policy: HistoryPolicy;
  budget: number;
  recent?: { budget: number; used: number; kept: number };
  summary?: { budget: number; used: number; kept: number };
  retrieved?: { budget: number; used: number; kept: number };
  /** Budget left after the recent turns. */
  leftAfterRecent?: number;
  /** The part that kept each item. */
  parts: Map<WorkItem, HistoryPart>;
}

export interface HistorySelection {
  picked: Picked;
  plan?: HistoryPlan;
}

/** Stages 8 to 10, fit -> order -> render: the request as it is sent. */
export interface AssembledRequest {
  ok: boolean;
  /** Kept items of every used slot, in final order; empty when no request can be built. */
  kept: Map<string, WorkItem[]>;
  messages: RenderedMessage[];
  rendered: Rendered;
  /** Input tokens of the request as counted. */
  tokens: number;
  /** Items trimmed to fit, in drop order. */
  trimmed: WorkItem[];
  error?: string;
}

/** Stage 11, checks: the tools of the request's tool slots (its findings go to the log). */
export interface RequestChecks {
  /** Whether any slot holds tool definitions (the result then carries `tools`). */
  hasToolSlots: boolean;
  /** Every definition and its verdict, for the trace. */
  tools: TraceTool[];
  /** The valid, allowed definitions, for the provider's `tools` parameter. */
  toolDefinitions: ToolDefinitionInfo[];
}
