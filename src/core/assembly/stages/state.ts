/**
 * The state the assembly stages pass along, in one module below every stage: one slot's run
 * through the pipeline and what each stage produces for it. Stage files import these types from
 * here, so no two stages depend on each other for a type.
 */
import type { HistoryPolicy, SlotConfig } from '../../config/schema';
import type { ConfigDoc, Finding, FixtureDoc, FixtureValue, OrderPolicy } from '../../types';
import type { Omission, WorkItem } from '../item';
import type { SlotState } from '../render';
import type { ConflictRecord } from './conflicts';

/** One slot as it runs through the pipeline. */
export interface SlotRun {
  state: SlotState;
  /** Position among the slots (the last tie-breaker of the drop order). */
  order: number;
  cfg?: SlotConfig;
  /** The template uses the slot. */
  used: boolean;
  required: boolean;
  priority: number;
  orderPolicy: OrderPolicy;
  /** History slots: the policy as configured (undefined: the sliding window of earlier versions). */
  policy?: HistoryPolicy;
  /** Resolved budget (budget stage); undefined when the slot is not capped. */
  budget?: number;
  /** Per-item overhead: list slots and labelled slots pay the envelope. */
  overhead: number;
  value?: FixtureValue;
  /** Items in the fixture value. */
  total: number;
  /** Filter .. score (memoized per fixture value). */
  candidates?: SlotCandidates;
  /** Budget .. select (memoized per candidates and budget). */
  selection?: Selection;
  /** Candidates after filters, dedup and supersession, in priority order (best first; most recent first for history). */
  ranked: WorkItem[];
  /** Kept by selection, in priority order. */
  packed: WorkItem[];
  packIndex: Map<WorkItem, number>;
}

export interface LoadedSlots {
  runs: SlotRun[];
  /** Slot names by the template's use (history markers included). */
  used: Set<string>;
}

/** What load .. score produce for one slot. */
export interface SlotCandidates {
  total: number;
  /** [fixture index, text] of items read from `{ file: ... }` references (hashed into the cache key). */
  files: Array<[number, string]>;
  /** Filter, dedup and supersession omissions, in stage order. */
  omitted: Omission[];
  /** Candidates after filters, dedup and supersession, in fixture order (what content findings look at). */
  candidates: WorkItem[];
  ranked: WorkItem[];
  conflicts: ConflictRecord[];
  /** Content findings, and the fixture and config document they were located against. */
  findings: Finding[];
  findingsFor?: FixtureDoc;
  findingsConfig?: ConfigDoc;
  /** Selections of these candidates, by budget settings. */
  selections: Map<string, Selection>;
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
