/**
 * Stage 11, trace: one JSON record of the request, written from the decision log and the final
 * request only (seed 000, 3.3 and 3.5; seed 002's selection log). Kept items come in request
 * order, each with its position, content hash, reasons and score breakdown; omitted items with the
 * reason of the stage that dropped them; labelled items in the citation map, summaries with their
 * lineage; then the history plans, conflicts, coverage and tools, and a cache key over everything
 * that affects the result. Objects are built in a fixed key order, so the same inputs give a
 * byte-identical `JSON.stringify(trace)`.
 */
import type { FixtureDoc, KeepReason, OmittedItem, SlotTrace, Trace, TraceConflict, TraceHistory, TraceItem } from '../../types';
import type { WorkItem } from '../item';
import type { DecisionLog } from './log';
import { canonicalJson } from '../../canonical';
import { defineLazy as lazy } from '../../lazy';
import { itemSha, metaList } from '../item';
import { placementOf } from '../order';
import { versionMatches } from '../filters';
import { sha256 } from '../sha256';
import { coversOf } from './select';
import { isCommitmentRecord, turnCommitment } from './commitments';
import type { AssembledRequest, PipelineEnv, RequestChecks, SelectedSlot } from './state';

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** SHA-256 of a fixture's text, by document (a 1 MB fixture takes milliseconds to hash). */
const fixtureShas = new WeakMap<FixtureDoc, { text: string; sha: string }>();
function fixtureSha(fixture: FixtureDoc): string {
  const hit = fixtureShas.get(fixture);
  if (hit !== undefined && hit.text === fixture.text) return hit.sha;
  const sha = sha256(fixture.text);
  fixtureShas.set(fixture, { text: fixture.text, sha });
  return sha;
}

const normVersion = (v: string) => v.trim().replace(/^v/i, '');

/** Why a retained item is in the request: its slot, its metadata, its selection. */
export function keptReasons(env: PipelineEnv, run: SelectedSlot, item: WorkItem): KeepReason[] {
  const out: KeepReason[] = [];
  if (run.required) out.push('required');
  if (item.relevance !== undefined && item.relevance >= 0.7) out.push('high_relevance');
  const wanted = env.config.filters?.version;
  if (wanted !== undefined && item.version !== undefined) {
    if (normVersion(item.version) === normVersion(wanted)) out.push('exact_version');
    else if (versionMatches(item.version, wanted)) out.push('version_match');
  }
  if (item.source_type !== undefined && /^official/i.test(item.source_type)) out.push('official_source');
  if (item.authority !== undefined && item.authority >= 0.8) out.push('high_authority');
  const covers = coversOf(item);
  for (const sub of run.cfg?.requires ?? []) if (covers.includes(sub)) out.push(`covers:${sub}`);
  const kind = run.state.kind;
  if ((kind === 'memory' && isCommitmentRecord(item)) || (kind === 'history' && turnCommitment(item) !== undefined)) out.push('commitment');
  const part = run.selection?.history?.parts.get(item);
  if (part) out.push(part);
  return out;
}

export function buildTrace(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest, checks: RequestChecks, log: DecisionLog, version: number): Trace {
  const { template, config, tokenizer, fixture, budget, model, input } = env;
  const slotOf = new Map(slots.map((r) => [r.state.name, r]));
  const kept = request.kept;
  // The per-item entries (retained, citation map, omitted, conflicts) are built when first read.
  let entries: { retained: TraceItem[]; citation: Trace['citation_map'] } | undefined;
  const keptEntries = () => (entries ??= retainedEntries(env, slots, request));

  const slotTraces: SlotTrace[] = slots.map((r) => {
    const k = kept.get(r.state.name) ?? [];
    const s: SlotTrace = { name: r.state.name, kind: r.state.kind } as SlotTrace;
    if (r.cfg?.trust !== undefined) s.trust = r.cfg.trust;
    if (r.budget !== undefined) s.budget = r.budget;
    s.used = k.reduce((sum, i) => sum + i.tokens + r.overhead, 0);
    // Text the runtime writes itself (BAML's `ctx.output_format`): no items, its parts' tokens.
    if (!k.length && r.state.name.includes('.')) for (const m of request.messages) for (const p of m.parts) if (p.slot === r.state.name) s.used += tokenizer.count(p.text);
    s.kept = k.length;
    s.omitted = r.total - k.length;
    s.total = r.total;
    return s;
  });

  const templateText = input.templateText ?? template.text;
  const configPath = input.configPath ?? input.configDoc?.path ?? template.path;
  const configText = input.configText ?? input.configDoc?.text ?? canonicalJson(config);
  const modelName = model?.name ?? input.modelName ?? config.model;

  const trace = {} as Trace;
  trace.version = 1;
  trace.template = { path: template.path, sha256: env.hash(templateText) };
  if (!input.zeroConfig) trace.config = { path: configPath, sha256: env.hash(configText) };
  if (fixture) trace.fixture = { path: fixture.path, sha256: fixtureSha(fixture) };
  if (config.version !== undefined) trace.policy_version = config.version;
  if (modelName !== undefined) trace.model = modelName;
  trace.tokenizer = tokenizer.name;
  // The runtime line a .prompty request follows (Prompty 0.1.x or v2), as its engine rendered it.
  if (request.rendered.runtime !== undefined) trace.runtime = request.rendered.runtime;
  if (request.rendered.request !== undefined) trace.provider_request = request.rendered.request;
  // A placeholder for a helper or partial of the application's code makes every count an estimate.
  trace.exact = env.exact && !request.rendered.estimate;
  trace.window = budget.window;
  trace.reserved_output = budget.output;
  trace.margin = budget.margin;
  trace.input_budget = Number.isFinite(env.fitLimit) ? env.fitLimit : 0;
  trace.input_tokens = request.tokens;
  trace.slots = slotTraces;
  lazy(trace, 'retained', () => keptEntries().retained);
  lazy(trace, 'omitted', () => omittedEntries(log));
  lazy(trace, 'citation_map', () => keptEntries().citation);
  if (request.ok && request.rendered.neutralised.length) {
    trace.neutralised = request.rendered.neutralised.map((n) => {
      const e = { slot: n.slot } as NonNullable<Trace['neutralised']>[number];
      if (n.itemId !== undefined) e.id = n.itemId;
      e.offset = n.index;
      e.kind = n.kind;
      e.sequence = n.sequence;
      if (n.field) e.field = true;
      return e;
    });
  }
  const plans = log.plans;
  if (plans.length) {
    const remainders = new Map((budget.remainder ?? []).map((r) => [r.slot, r]));
    trace.history = plans.map(({ slot, plan }) => {
      const h = { slot, policy: plan.policy, budget: slotOf.get(slot)?.budget ?? plan.budget } as TraceHistory;
      const r = remainders.get(slot);
      if (r) h.remainder = { capacity: r.capacity, fixed: r.fixed, available: r.available };
      if (plan.recent) h.recent = { ...plan.recent };
      if (plan.summary) h.summary = { ...plan.summary };
      if (plan.retrieved) h.retrieved = { ...plan.retrieved };
      if (plan.leftAfterRecent !== undefined) h.left_after_recent = plan.leftAfterRecent;
      return h;
    });
  }
  if (log.allConflicts.length) lazy(trace, 'conflicts', () => conflictEntries(log, request));
  const coverage: NonNullable<Trace['coverage']> = [];
  for (const r of slots) {
    if (!r.used || !r.cfg?.requires?.length) continue;
    const k = kept.get(r.state.name) ?? [];
    for (const sub of r.cfg.requires) coverage.push({ slot: r.state.name, subtopic: sub, covered_by: k.filter((i) => coversOf(i).includes(sub)).map((i) => i.id) });
  }
  if (coverage.length) trace.coverage = coverage;
  if (checks.tools.length) trace.tools = checks.tools.map((t) => ({ ...t }));
  trace.cache_key = sha256(
    canonicalJson({
      assembly: version,
      template: env.hash(templateText),
      config,
      fixture: fixture ? { text: fixtureSha(fixture), files: fileHashes(env, slots) } : null,
      model: model ?? null,
      modelName: modelName ?? null,
      tokenizer: tokenizer.name,
      exact: env.exact,
      now: env.now ?? null,
      render: input.render
        ? { partials: input.render.partials ?? null, defaults: input.render.defaults ?? null, escape: input.render.escape ?? true, ...(input.render.codeHelpers?.length || input.render.codePartials?.length ? { codeHelpers: input.render.codeHelpers ?? [], codePartials: input.render.codePartials ?? [] } : {}) }
        : null,
    }),
  );
  return trace;
}

/** [fixture index, sha256] of file-referenced item texts, by slot (part of the cache key). */
function fileHashes(env: PipelineEnv, slots: readonly SelectedSlot[]): Record<string, unknown> {
  const files: Record<string, unknown> = {};
  for (const r of slots) if (r.candidates?.files.length) files[r.state.name] = r.candidates.files.map(([index, text]) => [index, env.hash(text)]);
  return files;
}


/**
 * A shallow copy of a trace that keeps its lazy entries lazy (a spread would build them): every
 * own property descriptor is copied, getters included.
 */
export function copyTrace<T extends object>(trace: T): T {
  return Object.defineProperties({}, Object.getOwnPropertyDescriptors(trace)) as T;
}

/** Builds every lazy entry of a trace now (for a caller about to keep it a long time or hand it on). */
export function materializeTrace<T extends object>(trace: T): T {
  for (const key of Object.keys(trace)) void (trace as Record<string, unknown>)[key];
  return trace;
}

/** Retained items in request order and the citation map. */
function retainedEntries(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest): { retained: TraceItem[]; citation: Trace['citation_map'] } {
  const retained: TraceItem[] = [];
  const citation: Trace['citation_map'] = {};
  const kept = request.kept;
  if (request.ok) {
    const seen = new Set<string>();
    const byKey = new Map<string, { item: WorkItem; position: number; n: number; run: SelectedSlot }>();
    for (const r of slots) {
      const ordered = kept.get(r.state.name) ?? [];
      ordered.forEach((item, position) => byKey.set(`${r.state.name}\u0000${item.id}`, { item, position, n: ordered.length, run: r }));
    }
    const add = (key: string) => {
      if (seen.has(key)) return;
      const e = byKey.get(key);
      if (!e) return;
      seen.add(key);
      retained.push(traceItem(env, e.run, e.item, e.position, e.n));
      const lineage = metaList(e.item, 'summary_of');
      if (e.run.state.kind === 'evidence' || e.run.state.label || lineage.length) {
        const entry = {} as Trace['citation_map'][string];
        if (e.item.source !== undefined) entry.source = e.item.source;
        entry.sha256 = itemSha(e.item);
        if (e.item.merged.length) entry.sources = [...(e.item.source !== undefined ? [e.item.source] : []), ...e.item.merged];
        if (lineage.length) {
          entry.summary_of = lineage;
          entry.resolves_to = resolveLineage(e.run, e.item);
        }
        citation[e.item.id] = entry;
      }
    };
    for (const m of request.messages) for (const p of m.parts) if (p.slot !== undefined && p.itemId !== undefined) add(`${p.slot}\u0000${p.itemId}`);
    // Kept but not rendered (a slot used only in `{{#if}}`): listed after the rendered ones.
    for (const k of byKey.keys()) add(k);
  }

  return { retained, citation };
}

/** Omitted items with the reason of the stage that dropped them. */
function omittedEntries(log: DecisionLog): OmittedItem[] {
  return log.omissions.map(({ item, reason }) => {
    const o = { slot: item.slot, id: item.id, tokens: item.tokens } as OmittedItem;
    if (item.score !== undefined) o.score = round4(item.score);
    o.reason = reason;
    if (item.source !== undefined) o.source = item.source;
    if (item.score !== undefined && item.breakdown) o.score_breakdown = { ...item.breakdown };
    return o;
  });
}

/** Conflict records, with the items of each that the request kept. */
function conflictEntries(log: DecisionLog, request: AssembledRequest): TraceConflict[] {
  const keptSet = new Set<WorkItem>();
  for (const list of request.kept.values()) for (const i of list) keptSet.add(i);
  const inKept = (item: WorkItem) => keptSet.has(item);
  return log.allConflicts.map(({ slot, record: c }) => {
    const t = { slot, kind: c.kind } as TraceConflict;
    if (c.topic !== undefined) t.topic = c.topic;
    t.items = c.items.map((i) => i.id);
    if (c.values) t.values = [...c.values];
    t.resolution = c.resolution;
    if (c.kept) t.kept = c.kept.id;
    if (c.superseded) t.superseded = c.superseded.id;
    if (c.basis) t.basis = c.basis;
    if (c.filtered) t.filtered = c.filtered.id;
    if (c.reason) t.reason = c.reason;
    t.retained = request.ok ? c.items.filter(inKept).map((i) => i.id) : [];
    return t;
  });
}

function traceItem(env: PipelineEnv, run: SelectedSlot, item: WorkItem, position: number, n: number): TraceItem {
  const t = { slot: item.slot, id: item.id, tokens: item.tokens } as TraceItem;
  if (item.score !== undefined) t.score = round4(item.score);
  t.position = position;
  t.placement = placementOf(position, n);
  t.sha256 = itemSha(item);
  if (item.source !== undefined) t.source = item.source;
  if (item.merged.length) t.merged = [...item.merged];
  const lineage = metaList(item, 'summary_of');
  if (lineage.length) t.summary_of = lineage;
  if (item.conflicts?.length) t.conflicts_with = item.conflicts.map((c) => c.id);
  const reasons = keptReasons(env, run, item);
  if (reasons.length) t.reasons = reasons;
  if (item.score !== undefined && item.breakdown) t.score_breakdown = { ...item.breakdown };
  const vpt = run.selection?.valuePerToken.get(item);
  if (vpt !== undefined) t.value_per_token = vpt;
  return t;
}

/** The original items a summary stands for, through summaries of summaries. */
function resolveLineage(run: SelectedSlot, summary: WorkItem): Array<{ id: string; source?: string; sha256: string }> {
  const st = run.candidates;
  const byId = new Map<string, WorkItem>();
  for (const i of st?.candidates ?? []) byId.set(i.id, i);
  for (const o of st?.omitted ?? []) if (!byId.has(o.item.id)) byId.set(o.item.id, o.item);
  const out: Array<{ id: string; source?: string; sha256: string }> = [];
  const seen = new Set<string>([summary.id]);
  const visit = (ids: readonly string[]) => {
    for (const id of ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      const it = byId.get(id);
      if (!it) continue;
      const deeper = metaList(it, 'summary_of');
      if (deeper.length) visit(deeper);
      else out.push({ id: it.id, ...(it.source !== undefined ? { source: it.source } : {}), sha256: itemSha(it) });
    }
  };
  visit(metaList(summary, 'summary_of'));
  return out;
}
