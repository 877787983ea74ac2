/**
 * What an assembled request says about its evidence, in the terms of seed 002's context-assembly
 * service: the citation map (prompt id -> source, spans, hash), the selection log (every
 * candidate, selected or not, with reason codes and the score's parts), the tool definitions the
 * request carries, and the check of a model answer's citations against what was supplied.
 *
 * Everything here is derived from the trace plus the values the trace was made from; nothing is
 * re-assembled, so these agree with the trace by construction.
 */
import type { ContextConfig } from '../core/config/schema';
import type { FixtureDoc, FixtureItem, FixtureValue, Trace } from '../core/types';
import type { ToolDefinition } from '../core/export';
import { toolDefinitions } from '../core/export';
import { versionMatches } from '../core/assembly/filters';
import { DEFAULT_WEIGHTS } from '../core/assembly/score';

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

/** The selection score's weighted parts; they add up to `score` (novelty is what the score adds beyond the others). */
export interface ScoreBreakdown {
  relevance: number;
  authority: number;
  version_match: number;
  recency: number;
  novelty: number;
  contradiction: number;
}

export interface SelectionEntry {
  evidence_id: string;
  slot: string;
  decision: Decision;
  reasons: string[];
  score?: number;
  score_breakdown?: ScoreBreakdown;
  tokens: number;
  /** Position in its slot after ordering (selected items). */
  position?: number;
  source_id?: string;
}

const TRIM_REASONS = new Set(['over-slot-budget', 'stop-policy', 'max-items', 'trimmed-for-request']);
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const clamp01 = (x: number) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);
const DAY_MS = 86_400_000;

function timeOf(iso: string | undefined): number | undefined {
  if (typeof iso !== 'string') return undefined;
  const t = Date.parse(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(iso) ? `${iso}Z` : iso);
  return Number.isFinite(t) ? t : undefined;
}

const normVersion = (v: string) => v.trim().replace(/^v/i, '');

/** Reason codes an item's metadata gives for keeping it. */
function metadataReasons(item: FixtureItem | undefined, version: string | undefined): string[] {
  if (!item) return [];
  const out: string[] = [];
  if (typeof item.relevance === 'number') {
    if (item.relevance >= 0.7) out.push('high_relevance');
    else if (item.relevance < 0.3) out.push('low_relevance');
  }
  if (version !== undefined) {
    if (item.version === undefined) out.push('unversioned');
    else if (normVersion(String(item.version)) === normVersion(version)) out.push('exact_version');
    else if (versionMatches(String(item.version), version)) out.push('version_match');
  }
  if (typeof item.source_type === 'string' && /^official/i.test(item.source_type)) out.push('official_source');
  if (typeof item.authority === 'number' && item.authority >= 0.8) out.push('high_authority');
  return out;
}

/** The reason code of an omission: filters name their key, expiry reads `expired`. */
function omissionReason(reason: string): string {
  return reason === 'filtered:expired' ? 'expired' : reason;
}

export interface SelectionOptions {
  config: ContextConfig;
  /** Reference time the assembly used (`now`, else `filters.now`). */
  now?: string;
}

/**
 * Every candidate of every slot with what happened to it: `selected` (in the request), `trimmed`
 * (dropped for the budget: over its slot's budget, the stop policy, max_items, or trimmed to fit
 * the request) or `rejected` (a hard filter, or a duplicate of a kept item). Selected items come
 * first in request order, then the others in pipeline order.
 */
export function selectionLog(trace: Trace, fixture: FixtureDoc | undefined, options: SelectionOptions): SelectionEntry[] {
  const find = lookup(fixture);
  const version = options.config.filters?.version;
  const now = options.now ?? options.config.filters?.now;
  const breakdown = scoreBreakdowns(trace, fixture, options.config, now);
  const required = new Set(Object.entries(options.config.slots ?? {}).filter(([, s]) => s.required).map(([n]) => n));
  const out: SelectionEntry[] = [];
  // A text value (the question, the policy) is one whole item with no metadata to give reasons.
  const isList = (slot: string) => fixture?.slots[slot]?.type === 'items';
  for (const t of trace.retained) {
    const item = find(t.slot, t.id);
    // A trace that records its own reasons and score parts is the authority; older traces get them derived here.
    const own = t as typeof t & { reasons?: string[]; score_breakdown?: ScoreBreakdown };
    let reasons: string[];
    if (own.reasons) reasons = [...own.reasons];
    else {
      reasons = isList(t.slot) ? metadataReasons(item, version) : [];
      if (required.has(t.slot)) reasons.unshift('required');
      if (t.merged?.length) reasons.push(`merged:${t.merged.join(',')}`);
    }
    if (!reasons.length) reasons.push('within_budget');
    const e = { evidence_id: t.id, slot: t.slot, decision: 'selected', reasons } as SelectionEntry;
    if (t.score !== undefined) e.score = t.score;
    const b = own.score_breakdown ?? breakdown.get(`${t.slot}\u0000${t.id}`);
    if (b) e.score_breakdown = b;
    e.tokens = t.tokens;
    e.position = t.position;
    if (t.source !== undefined) e.source_id = t.source;
    out.push(e);
  }
  for (const o of trace.omitted) {
    const e = { evidence_id: o.id, slot: o.slot, decision: TRIM_REASONS.has(o.reason) ? 'trimmed' : 'rejected', reasons: [omissionReason(o.reason)] } as SelectionEntry;
    if (o.score !== undefined) e.score = o.score;
    const b = breakdown.get(`${o.slot}\u0000${o.id}`);
    if (b) e.score_breakdown = b;
    e.tokens = o.tokens;
    if (o.source !== undefined) e.source_id = o.source;
    out.push(e);
  }
  return out;
}

/**
 * The weighted parts of each scored item's selection score (src/core/assembly/score.ts): the
 * factors are recomputed from the item's metadata; novelty is the rest of the trace's score, since
 * it depends on the items ranked above it.
 */
function scoreBreakdowns(trace: Trace, fixture: FixtureDoc | undefined, config: ContextConfig, now: string | undefined): Map<string, ScoreBreakdown> {
  const out = new Map<string, ScoreBreakdown>();
  const scored = [...trace.retained, ...trace.omitted].filter((t) => t.score !== undefined);
  if (!scored.length) return out;
  const w = { ...DEFAULT_WEIGHTS, ...config.scoring };
  const version = config.filters?.version;
  const find = lookup(fixture);
  // Recency's reference time: `now`, else the newest published_at among the slot's ranked candidates.
  const refBySlot = new Map<string, number | undefined>();
  const reference = (slot: string): number | undefined => {
    if (refBySlot.has(slot)) return refBySlot.get(slot);
    let ref = timeOf(now);
    if (now === undefined) {
      const ranked = [...trace.retained.filter((t) => t.slot === slot), ...trace.omitted.filter((o) => o.slot === slot && !o.reason.startsWith('filtered:') && !o.reason.startsWith('duplicate-of:'))];
      for (const r of ranked) {
        const p = timeOf(find(slot, r.id)?.published_at);
        if (p !== undefined && (ref === undefined || p > ref)) ref = p;
      }
    }
    refBySlot.set(slot, ref);
    return ref;
  };
  for (const t of scored) {
    const item = find(t.slot, t.id);
    if (!item) continue;
    const relevance = round4(w.relevance * clamp01(item.relevance ?? 0));
    const authority = round4(w.authority * clamp01(item.authority ?? 0));
    const vm = version === undefined ? 0 : item.version === undefined ? 0.5 : versionMatches(String(item.version), version) ? 1 : 0;
    const version_match = round4(w.version_match * vm);
    const pub = timeOf(item.published_at);
    const ref = reference(t.slot);
    const recency = round4(pub !== undefined && ref !== undefined ? w.recency * Math.pow(0.5, Math.max(0, ref - pub) / DAY_MS / 365) : 0);
    const risk = typeof item.meta.contradiction_risk === 'number' ? clamp01(item.meta.contradiction_risk) : 0;
    const contradiction = round4(-w.contradiction_penalty * risk);
    const novelty = round4(t.score! - relevance - authority - version_match - recency - contradiction);
    out.set(`${t.slot}\u0000${t.id}`, { relevance, authority, version_match, recency, novelty, contradiction });
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
  const kept = new Set(trace.retained.map((t) => `${t.slot}\u0000${t.id}`));
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
    else for (const c of candidatesOf(slot, value)) if (kept.has(`${slot}\u0000${c.id}`)) add(toolDefinitions(c.item.text));
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
  const omitted: Record<string, string> = {};
  for (const o of trace.omitted ?? []) if (!(o.id in omitted)) omitted[o.id] = o.reason;
  return { supplied: Object.keys(trace.citation_map), omitted };
}

/**
 * Checks an answer's citations against what the request supplied: an id the request did not carry
 * makes the answer invalid (seed 002: "validate that every cited ID was present in the supplied
 * context"); a claim without any id is reported as uncited. Whether a cited passage supports its
 * claim is a semantic question this check does not answer.
 */
export function checkCitations(answer: CitedAnswer, evidence: SuppliedEvidence | TraceEvidence): CitationCheck {
  const ev = 'supplied' in evidence ? evidence : suppliedEvidence(evidence);
  const supplied = new Set(ev.supplied);
  const unknown: string[] = [];
  const omitted: Record<string, string> = {};
  const uncited: string[] = [];
  const claims: ClaimCheck[] = answer.citations.map((c) => {
    const ids = [...c.evidence_ids];
    const bad = ids.filter((id) => !supplied.has(id));
    for (const id of bad) {
      if (!unknown.includes(id)) unknown.push(id);
      if (id in ev.omitted) omitted[id] = ev.omitted[id];
    }
    if (!ids.length) uncited.push(c.claim_id);
    return { claim_id: c.claim_id, evidence_ids: ids, unknown_ids: [...new Set(bad)], status: bad.length ? 'invalid' : ids.length ? 'supported' : 'uncited' };
  });
  return { valid: unknown.length === 0, complete: uncited.length === 0, claims, unknown_ids: unknown, omitted_ids: omitted, uncited_claims: uncited };
}
