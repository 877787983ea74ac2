/**
 * The metrics of one eval case, read from an assembled request and its trace (seed 002,
 * "Evaluating context instead of trusting intuition" and "Measuring information loss"):
 *
 * - retrieval recall  = required evidence among the candidates / required evidence
 *   (candidates: every item the fixture gives, kept or omitted for any reason);
 * - selection recall  = required evidence kept in the request / required evidence
 *   (an item merged into a kept duplicate counts as kept, through that duplicate);
 * - context precision = kept required evidence / all kept items of the scored slots
 *   (the slots where the case's required evidence, distractors or forbidden items are candidates);
 * - evidence coverage = required facts present in the rendered request / all required facts
 *   (an exact string, whitespace runs compared as one space, or a regular expression);
 * - forbidden         = forbidden items kept, plus forbidden texts present in the request;
 * - input tokens and cost, from the trace.
 *
 * A ratio without a denominator (no required evidence, no facts) is null, never 1: a case that
 * asks nothing cannot pass a threshold by default.
 */
import type { AssemblyResult, RenderedMessage, Trace } from '../types';
import type { RequestCost } from '../cost';
import type { EvalCase, Fact, Forbidden, ItemRef, Thresholds } from './schema';

export interface RequiredStatus {
  id: string;
  note?: string;
  /** Among the candidates (the fixture gave it). */
  candidate: boolean;
  /** In the request, itself or through the kept item it was merged into. */
  kept: boolean;
  slot?: string;
  /** 0-based position in its slot, and its third (start, middle, end). */
  position?: number;
  placement?: 'start' | 'middle' | 'end';
  /** The kept duplicate that carries it, when it was merged. */
  via?: string;
  /** Why it was omitted. */
  reason?: string;
}

export interface FactStatus {
  id: string;
  kind: 'text' | 'regex';
  pattern: string;
  note?: string;
  present: boolean;
  /** Items (slot/id) or `template` whose rendered text holds the fact on its own. */
  found_in: string[];
}

export interface ForbiddenHit {
  /** The item id, or the text or pattern. */
  what: string;
  kind: 'item' | 'text' | 'regex';
  note?: string;
  slot?: string;
}

export interface CaseMetrics {
  retrieval_recall: number | null;
  selection_recall: number | null;
  context_precision: number | null;
  evidence_coverage: number | null;
  required: RequiredStatus[];
  facts: FactStatus[];
  /** Counts behind the ratios, so totals can be summed. */
  counts: { required: number; candidates: number; selected: number; kept_scored: number; kept_required_scored: number; facts: number; facts_present: number; middle: number };
  scored_slots: string[];
  distractors_kept: string[];
  forbidden: ForbiddenHit[];
  input_tokens: number;
  cost?: RequestCost;
}

const ref = (r: ItemRef): { id: string; note?: string } => (typeof r === 'string' ? { id: r } : { id: r.id, ...(r.note ? { note: r.note } : {}) });

/** Whitespace runs as one space, so a fact written on one line matches text folded across lines. */
export function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ');
}

export interface FactMatcher {
  id: string;
  kind: 'text' | 'regex';
  pattern: string;
  note?: string;
  test(text: string): boolean;
}

export function factMatcher(f: Fact | Exclude<Forbidden, { id: string } | string>): FactMatcher {
  if (typeof f === 'string') {
    const want = normalizeSpace(f);
    return { id: f, kind: 'text', pattern: f, test: (t) => normalizeSpace(t).includes(want) };
  }
  if ('text' in f) {
    const ignore = f.ignore_case === true;
    const want = ignore ? normalizeSpace(f.text).toLowerCase() : normalizeSpace(f.text);
    const id = 'id' in f && typeof f.id === 'string' ? f.id : f.text;
    return { id, kind: 'text', pattern: f.text, ...(f.note ? { note: f.note } : {}), test: (t) => (ignore ? normalizeSpace(t).toLowerCase() : normalizeSpace(t)).includes(want) };
  }
  const re = new RegExp(f.regex, (f.flags ?? '').replace(/g|y/g, ''));
  const id = 'id' in f && typeof f.id === 'string' ? f.id : f.regex;
  return { id, kind: 'regex', pattern: f.regex, ...(f.note ? { note: f.note } : {}), test: (t) => re.test(normalizeSpace(t)) };
}

/** The request as one text, and the text each item (or the template's own words) rendered. */
export function renderedTexts(messages: readonly RenderedMessage[]): { whole: string; pieces: Map<string, string> } {
  const pieces = new Map<string, string>();
  for (const m of messages) {
    for (const p of m.parts) {
      const key = p.slot === undefined ? 'template' : p.itemId !== undefined ? `${p.slot}/${p.itemId}` : p.slot;
      pieces.set(key, (pieces.get(key) ?? '') + p.text);
    }
  }
  return { whole: messages.map((m) => m.content).join('\n\n'), pieces };
}

export function caseMetrics(c: EvalCase, result: AssemblyResult): CaseMetrics {
  const trace: Trace = result.trace;
  const retained = result.ok ? trace.retained : [];
  const keptById = new Map(retained.map((r) => [r.id, r]));
  const omittedById = new Map(trace.omitted.map((o) => [o.id, o]));
  const slotOf = (id: string): string | undefined => keptById.get(id)?.slot ?? omittedById.get(id)?.slot;

  // ---- Required evidence.
  const required: RequiredStatus[] = c.required_evidence.map(ref).map(({ id, note }) => {
    const s: RequiredStatus = { id, candidate: keptById.has(id) || omittedById.has(id), kept: false };
    if (note) s.note = note;
    const k = keptById.get(id);
    if (k) {
      Object.assign(s, { kept: true, slot: k.slot, position: k.position, placement: k.placement });
      return s;
    }
    const o = omittedById.get(id);
    if (o) {
      s.slot = o.slot;
      s.reason = o.reason;
      const dup = /^duplicate-of:(.+)$/.exec(o.reason)?.[1];
      const carrier = dup !== undefined ? keptById.get(dup) : undefined;
      if (carrier && result.ok) Object.assign(s, { kept: true, via: dup, position: carrier.position, placement: carrier.placement });
    }
    if (!s.candidate) s.reason = 'not a candidate';
    return s;
  });
  const candidates = required.filter((r) => r.candidate).length;
  const selected = required.filter((r) => r.kept).length;

  // ---- Precision over the scored slots.
  const distractors = c.distractors.map(ref);
  const forbiddenIds = c.forbidden.filter((f): f is string | { id: string; note?: string } => typeof f === 'string' || 'id' in f).map(ref);
  const scored = new Set<string>();
  for (const { id } of [...required, ...distractors, ...forbiddenIds]) {
    const slot = slotOf(id);
    if (slot !== undefined) scored.add(slot);
  }
  const keptScored = retained.filter((r) => scored.has(r.slot));
  const requiredIds = new Set(required.map((r) => r.id));
  const keptRequiredScored = keptScored.filter((r) => requiredIds.has(r.id)).length;

  // ---- Facts.
  const texts = renderedTexts(result.ok ? result.messages : []);
  const facts: FactStatus[] = c.required_facts.map((f) => {
    const m = factMatcher(f);
    const present = m.test(texts.whole);
    const found_in = present ? [...texts.pieces.entries()].filter(([, t]) => m.test(t)).map(([k]) => k) : [];
    return { id: m.id, kind: m.kind, pattern: m.pattern, ...(m.note ? { note: m.note } : {}), present, found_in };
  });
  const factsPresent = facts.filter((f) => f.present).length;

  // ---- Forbidden items and texts.
  const forbidden: ForbiddenHit[] = [];
  for (const f of c.forbidden) {
    if (typeof f === 'string' || 'id' in f) {
      const { id, note } = ref(f);
      const k = keptById.get(id);
      if (k) forbidden.push({ what: id, kind: 'item', slot: k.slot, ...(note ? { note } : {}) });
      continue;
    }
    const m = factMatcher(f);
    if (m.test(texts.whole)) forbidden.push({ what: m.pattern, kind: m.kind, ...(m.note ? { note: m.note } : {}) });
  }

  const ratio = (n: number, d: number): number | null => (d === 0 ? null : n / d);
  const out: CaseMetrics = {
    retrieval_recall: ratio(candidates, required.length),
    selection_recall: ratio(selected, required.length),
    context_precision: required.length ? ratio(keptRequiredScored, keptScored.length) ?? 0 : null,
    evidence_coverage: ratio(factsPresent, facts.length),
    required,
    facts,
    counts: {
      required: required.length,
      candidates,
      selected,
      kept_scored: keptScored.length,
      kept_required_scored: keptRequiredScored,
      facts: facts.length,
      facts_present: factsPresent,
      middle: required.filter((r) => r.kept && r.placement === 'middle').length,
    },
    scored_slots: [...scored].sort(),
    distractors_kept: distractors.filter((d) => keptById.has(d.id)).map((d) => d.id),
    forbidden,
    input_tokens: trace.input_tokens,
  };
  if (trace.cost) out.cost = trace.cost;
  return out;
}

export interface ThresholdResult {
  name: keyof Thresholds;
  limit: number;
  actual: number | null;
  ok: boolean;
  message: string;
}

const pct = (x: number) => `${(Math.round(x * 1000) / 10).toString()}%`;

/** Each threshold that applies, met or not. A ratio threshold on a ratio the case does not define fails. */
export function checkThresholds(t: Thresholds, m: CaseMetrics): ThresholdResult[] {
  const out: ThresholdResult[] = [];
  const min = (name: keyof Thresholds, actual: number | null, label: string) => {
    const limit = t[name];
    if (limit === undefined) return;
    const ok = actual !== null && actual + 1e-12 >= limit;
    out.push({ name, limit, actual, ok, message: `${label} ${actual === null ? 'undefined (nothing required)' : pct(actual)} ${ok ? '>=' : '<'} ${pct(limit)}` });
  };
  min('min_coverage', m.evidence_coverage, 'evidence coverage');
  min('min_retrieval_recall', m.retrieval_recall, 'retrieval recall');
  min('min_selection_recall', m.selection_recall, 'selection recall');
  min('min_precision', m.context_precision, 'context precision');
  if (t.max_tokens !== undefined) {
    const ok = m.input_tokens <= t.max_tokens;
    out.push({ name: 'max_tokens', limit: t.max_tokens, actual: m.input_tokens, ok, message: `input tokens ${m.input_tokens.toLocaleString('en-US')} ${ok ? '<=' : '>'} ${t.max_tokens.toLocaleString('en-US')}` });
  }
  if (t.max_cost !== undefined) {
    const actual = m.cost?.input ?? null;
    const ok = actual !== null && actual <= t.max_cost + 1e-12;
    out.push({ name: 'max_cost', limit: t.max_cost, actual, ok, message: actual === null ? `cost unknown: the model has no price (add it under prices: in the context config)` : `input cost $${actual} ${ok ? '<=' : '>'} $${t.max_cost}` });
  }
  const maxForbidden = t.max_forbidden ?? 0;
  const n = m.forbidden.length;
  if (n > maxForbidden || t.max_forbidden !== undefined) {
    out.push({ name: 'max_forbidden', limit: maxForbidden, actual: n, ok: n <= maxForbidden, message: `forbidden in the request: ${n ? m.forbidden.map((f) => f.what).join(', ') : 'none'} (${n} ${n <= maxForbidden ? '<=' : '>'} ${maxForbidden})` });
  }
  return out;
}
