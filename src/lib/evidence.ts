/**
 * What an assembled request says about its evidence, in the terms of seed 002's context-assembly
 * service: the citation map (prompt id -> source, spans, hash), the selection log (every
 * candidate, selected or not, with reason codes and the score's parts), the tool definitions the
 * request carries, and the check of a model answer's citations against what was supplied.
 *
 * Everything here is read from the trace (the selection log's reasons and score parts are the
 * trace's own) plus, for spans and tool definitions, the values the trace was made from; nothing is
 * re-assembled or re-scored, so these agree with the trace by construction.
 */
import type { ContextConfig } from '../core/config/schema';
import type { FixtureDoc, FixtureItem, FixtureValue, ScoreBreakdown as CoreScoreBreakdown, Trace } from '../core/types';
import type { ToolDefinition } from '../core/export';
import { toolDefinitions } from '../core/export';

// ---------------------------------------------------------------------------
// Items by the ids the trace gives them
// ---------------------------------------------------------------------------

/** One candidate of a slot: a list item, or a text value as its single item. */
export interface Candidate {
  id: string;
  item: FixtureItem;
}

/**
 * The slot's candidates under the ids the assembly gives them (src/core/assembly/index.ts): the
 * written `id`, else `<slot>_<index + 1>`, with a `~k` suffix when an id repeats.
 */
export function candidatesOf(slot: string, value: FixtureValue | undefined): Candidate[] {
  if (!value || value.type === 'data') return [];
  const raw: FixtureItem[] = value.type === 'text' ? [{ index: 0, text: value.text, meta: {}, span: value.span, textSpan: value.span }] : value.items;
  const ids = new Set<string>();
  return raw.map((item) => {
    const w = item.id as unknown;
    const written = typeof w === 'string' && w !== '' ? w : typeof w === 'number' ? String(w) : undefined;
    const base = written ?? `${slot}_${item.index + 1}`;
    let id = base;
    for (let k = 2; ids.has(id); k++) id = `${base}~${k}`;
    ids.add(id);
    return { id, item };
  });
}

function lookup(fixture: FixtureDoc | undefined): (slot: string, id: string) => FixtureItem | undefined {
  const bySlot = new Map<string, Map<string, FixtureItem>>();
  return (slot, id) => {
    let m = bySlot.get(slot);
    if (!m) {
      m = new Map(candidatesOf(slot, fixture?.slots[slot]).map((c) => [c.id, c.item]));
      bySlot.set(slot, m);
    }
    return m.get(id);
  };
}

// ---------------------------------------------------------------------------
// Citation map
// ---------------------------------------------------------------------------

export interface CitationEntry {
  /** The item's `source` (seed 002's `source_id`), else its id. */
  source_id: string;
  /** Half-open UTF-16 ranges of the source text the item stands for. */
  spans: Array<[number, number]>;
  sha256: string;
  /** Every source merged into this item by deduplication, its own first. */
  sources?: string[];
}

const isSpan = (v: unknown): v is [number, number] => Array.isArray(v) && v.length === 2 && v.every((n) => Number.isInteger(n) && n >= 0) && v[0] <= v[1];

/**
 * Where an item sits in its source: `spans: [[start, end], ...]` or `source_span: [start, end]` /
 * `{ start, end }` from its metadata, else the whole text.
 */
export function itemSpans(item: FixtureItem | undefined): Array<[number, number]> {
  const meta = item?.meta ?? {};
  if (Array.isArray(meta.spans) && meta.spans.length && meta.spans.every(isSpan)) return meta.spans.map((s) => [s[0], s[1]]);
  const ss = meta.source_span as unknown;
  if (isSpan(ss)) return [[ss[0], ss[1]]];
  if (ss && typeof ss === 'object' && isSpan([(ss as { start?: unknown }).start, (ss as { end?: unknown }).end])) {
    const o = ss as { start: number; end: number };
    return [[o.start, o.end]];
  }
  return [[0, item?.text.length ?? 0]];
}

/** The citation map of seed 002 for the evidence a request supplied, in the order the request shows it. */
export function citationMap(trace: Trace, fixture: FixtureDoc | undefined): Record<string, CitationEntry> {
  const find = lookup(fixture);
  const slotOf = new Map(trace.retained.map((t) => [t.id, t.slot]));
  const out: Record<string, CitationEntry> = {};
  for (const [id, entry] of Object.entries(trace.citation_map)) {
    const item = find(slotOf.get(id) ?? '', id);
    const e: CitationEntry = { source_id: entry.source ?? id, spans: itemSpans(item), sha256: entry.sha256 };
    if (entry.sources) e.sources = [...entry.sources];
    out[id] = e;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Selection log
// ---------------------------------------------------------------------------

export type Decision = 'selected' | 'rejected' | 'trimmed';

/**
 * The selection score's weighted parts, as the trace records them (src/core/assembly/score.ts);
 * they add up to `score`. A history turn ranked for retrieval has one part, its relevance as
 * written or `lexical_overlap` with the question, and zeros for the others.
 */
export interface ScoreBreakdown {
  relevance: number;
  authority: number;
  version_match: number;
  recency: number;
  novelty: number;
  contradiction: number;
  lexical_overlap?: number;
}

export interface SelectionEntry {
  evidence_id: string;
  slot: string;
  decision: Decision;
  /** Reason codes (src/core/reasonText.ts says each in words). */
  reasons: string[];
  score?: number;
  score_breakdown?: ScoreBreakdown;
  tokens: number;
  /** Position in its slot after ordering (selected items). */
  position?: number;
  source_id?: string;
}

const TRIM_REASONS = new Set(['over-slot-budget', 'stop-policy', 'max-items', 'trimmed-for-request']);

/** The reason code of an omission: filters name their key, expiry reads `expired` (the service contract's code). */
function omissionReason(reason: string): string {
  return reason === 'filtered:expired' ? 'expired' : reason;
}

/** The trace's score breakdown in the selection log's shape. */
function breakdownOf(b: CoreScoreBreakdown | undefined): ScoreBreakdown | undefined {
  if (!b) return undefined;
  const out: ScoreBreakdown = { relevance: b.relevance ?? 0, authority: b.authority ?? 0, version_match: b.version_match ?? 0, recency: b.recency ?? 0, novelty: b.novelty ?? 0, contradiction: b.contradiction ?? 0 };
  if (b.lexical_overlap !== undefined) out.lexical_overlap = b.lexical_overlap;
  return out;
}

export interface SelectionOptions {
  /** Kept for callers of earlier versions; the log reads everything from the trace. */
  config?: ContextConfig;
  now?: string;
}

/**
 * Every candidate of every slot with what happened to it: `selected` (in the request), `trimmed`
 * (dropped for the budget: over its slot's budget, the stop policy, max_items, or
 * trimmed to fit the request) or `rejected` (a hard filter, a duplicate, a supersession, a history
 * policy). Selected items come first in request order, then the others in pipeline order.
 *
 * Reasons, scores and score breakdowns are the trace's own (`TraceItem.reasons`,
 * `score_breakdown`, `OmittedItem.reason`): nothing is recomputed, so the service's selection log,
 * the preview, the hover and the CLI can never disagree. A kept item the trace gives no reason is
 * `within_budget`.
 */
export function selectionLog(trace: Trace, _fixture?: FixtureDoc, _options?: SelectionOptions): SelectionEntry[] {
  const out: SelectionEntry[] = [];
  for (const t of trace.retained) {
    const reasons: string[] = t.reasons?.length ? [...t.reasons] : ['within_budget'];
    const e = { evidence_id: t.id, slot: t.slot, decision: 'selected', reasons } as SelectionEntry;
    if (t.score !== undefined) e.score = t.score;
    const b = breakdownOf(t.score_breakdown);
    if (b) e.score_breakdown = b;
    e.tokens = t.tokens;
    e.position = t.position;
    if (t.source !== undefined) e.source_id = t.source;
    out.push(e);
  }
  for (const o of trace.omitted) {
    const e = { evidence_id: o.id, slot: o.slot, decision: TRIM_REASONS.has(o.reason) ? 'trimmed' : 'rejected', reasons: [omissionReason(o.reason)] } as SelectionEntry;
    if (o.score !== undefined) e.score = o.score;
    const b = breakdownOf(o.score_breakdown);
    if (b) e.score_breakdown = b;
    e.tokens = o.tokens;
    if (o.source !== undefined) e.source_id = o.source;
    out.push(e);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/**
 * The function definitions a request carries: the values of its `kind: tool` slots that are JSON
 * function definitions (a list of objects, or items and texts holding JSON), limited to the items
 * the assembly kept.
 */
export function toolsOf(config: ContextConfig, fixture: FixtureDoc | undefined, trace: Trace): ToolDefinition[] {
  if (!fixture) return [];
  // Read only where a tool slot holds items: the trace builds its retained entries when read.
  let keptIds: Set<string> | undefined;
  const kept = () => (keptIds ??= new Set(trace.retained.map((t) => `${t.slot}\u0000${t.id}`)));
  const out: ToolDefinition[] = [];
  const names = new Set<string>();
  const add = (defs: ToolDefinition[]) => {
    for (const d of defs) {
      if (names.has(d.name)) continue;
      names.add(d.name);
      out.push(d);
    }
  };
  for (const [slot, cfg] of Object.entries(config.slots ?? {})) {
    if (cfg.kind !== 'tool') continue;
    const value = fixture.slots[slot];
    if (!value) continue;
    if (value.type === 'data') add(toolDefinitions(value.value));
    else for (const c of candidatesOf(slot, value)) if (kept().has(`${slot}\u0000${c.id}`)) add(toolDefinitions(c.item.text));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Citation check
// ---------------------------------------------------------------------------

/** A model answer with its citations, as seed 002 asks the model to give it. */
export interface CitedAnswer {
  answer?: string;
  citations: Array<{ claim_id: string; evidence_ids: string[] }>;
}

/** What a check needs from a trace: the ids supplied to the model and the candidates left out. */
export interface SuppliedEvidence {
  supplied: string[];
  omitted: Record<string, string>;
}

export interface ClaimCheck {
  claim_id: string;
  evidence_ids: string[];
  /** Cited ids that were not supplied in the request. */
  unknown_ids: string[];
  status: 'supported' | 'invalid' | 'uncited';
}

export interface CitationCheck {
  /** Every cited id was supplied in the request. */
  valid: boolean;
  /** Every claim cites at least one id. */
  complete: boolean;
  claims: ClaimCheck[];
  /** Distinct cited ids that were not supplied, in order of first citation. */
  unknown_ids: string[];
  /** Of those, the ones that were candidates but left out, with the reason. */
  omitted_ids: Record<string, string>;
  uncited_claims: string[];
}

/** The parts of a trace (or of a service response's trace) a citation check reads. */
export interface TraceEvidence {
  citation_map: Record<string, unknown>;
  omitted?: ReadonlyArray<{ id: string; reason: string }>;
}

/** The evidence a trace supplied (its citation map) and what it left out (first reason per id). */
export function suppliedEvidence(trace: TraceEvidence): SuppliedEvidence {
  // A null-prototype record: ids such as `constructor` or `__proto__` are plain keys here.
  const omitted: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const o of trace.omitted ?? []) if (!Object.hasOwn(omitted, o.id)) omitted[o.id] = o.reason;
  return { supplied: Object.keys(trace.citation_map), omitted };
}

/**
 * Checks an answer's citations against what the request supplied: an id the request did not carry
 * makes the answer invalid (seed 002: "validate that every cited ID was present in the supplied
 * context"); a claim without any id is reported as uncited. Whether a cited passage supports its
 * claim is a semantic question this check does not answer. Linear in the cited ids: every lookup is
 * a set or an own-key test.
 */
export function checkCitations(answer: CitedAnswer, evidence: SuppliedEvidence | TraceEvidence): CitationCheck {
  const ev = 'supplied' in evidence ? evidence : suppliedEvidence(evidence);
  const supplied = new Set(ev.supplied);
  const unknownSet = new Set<string>();
  const omitted: Record<string, string> = Object.create(null) as Record<string, string>;
  const uncited: string[] = [];
  const claims: ClaimCheck[] = answer.citations.map((c) => {
    const ids = [...c.evidence_ids];
    const bad = new Set<string>();
    for (const id of ids) {
      if (supplied.has(id)) continue;
      bad.add(id);
      if (unknownSet.has(id)) continue;
      unknownSet.add(id);
      if (Object.hasOwn(ev.omitted, id)) omitted[id] = ev.omitted[id];
    }
    if (!ids.length) uncited.push(c.claim_id);
    return { claim_id: c.claim_id, evidence_ids: ids, unknown_ids: [...bad], status: bad.size ? 'invalid' : ids.length ? 'supported' : 'uncited' };
  });
  const unknown = [...unknownSet];
  return { valid: unknown.length === 0, complete: uncited.length === 0, claims, unknown_ids: unknown, omitted_ids: omitted, uncited_claims: uncited };
}
