/**
 * Request assembly: template + context config + fixture -> the exact messages a model would
 * receive, deterministically, with a trace of why every item was or was not included. This is the
 * pipeline of seed 002 and `build_request` of seed 000, shared by the CLI, the language server and
 * the preview. Each stage is its own module:
 *
 *   filters.ts (hard filters) -> dedup.ts -> score.ts (rank) -> pack.ts (per slot)
 *   -> fit.ts (whole request, trimming by priority) -> order.ts -> render.ts (+ envelope.ts,
 *   escape.ts) -> trace (here, with sha256.ts and canonical.ts) -> findings.ts
 *
 * Same inputs give a byte-identical `JSON.stringify(trace)`: no clock is read (`now` comes from
 * the input or `filters.now`), every sort breaks ties by fixture index, and objects are built in a
 * fixed key order.
 */
import type { ContextConfig, SlotConfig } from '../config/schema';
import type {
  AssemblyResult,
  ConfigDoc,
  Finding,
  FixtureDoc,
  FixtureItem,
  FixtureValue,
  ModelInfo,
  OmittedItem,
  OrderPolicy,
  SlotTrace,
  TemplateDoc,
  TemplateNode,
  Tokenizer,
  Trace,
  TraceItem,
} from '../types';
import type { Omission, WorkItem } from './item';
import type { RenderIssue, RenderOptions, SlotState } from './render';
import type { FindingContext } from './findings';
import type { PackResult } from './pack';
import { computeBudget, formatTokens as fmt, modelFromConfig } from '../budget';
import { finding } from '../rules/registry';
import { effectiveTrust } from '../rules/templateRules';
import { canonicalJson } from './canonical';
import { countJoined } from './countParts';
import { dedup } from './dedup';
import { contentFindings, configRelated, listIds, lostInTheMiddle, slotLocation } from './findings';
import { applyFilters } from './filters';
import { fitPrefix } from './fit';
import { fromFixtureItem, itemSha } from './item';
import { mostRecentFirst, orderItems, placementOf } from './order';
import { pack } from './pack';
import { Renderer } from './render';
import { rankItems } from './score';
import { sha256 } from './sha256';

export { atTheEdges, chronological, placementOf } from './order';
export { pack } from './pack';
export { escapeUntrusted, neutralise, restore, findBreakouts } from './escape';
export { roleOf } from './render';
export type { RenderOptions } from './render';
export { sha256 } from './sha256';
export { canonicalJson } from './canonical';
export { fitPrefix } from './fit';

/** Bumped whenever a change to the pipeline can change its output for the same inputs (part of the cache key). */
export const ASSEMBLY_VERSION = 2;

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
}

interface SlotRun {
  state: SlotState;
  order: number;
  cfg?: SlotConfig;
  used: boolean;
  required: boolean;
  priority: number;
  orderPolicy: OrderPolicy;
  budget?: number;
  overhead: number;
  total: number;
  /** Candidates after filters and dedup, in priority order (best first; most recent first for history). */
  ranked: WorkItem[];
  /** Kept by packing, in priority order. */
  packed: WorkItem[];
  packIndex: Map<WorkItem, number>;
}

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

/** What the fixture-side stages of one slot produce (items -> filters -> dedup -> rank -> pack). */
export interface SlotStages {
  total: number;
  /** [fixture index, text] of items read from `{ file: ... }` references (hashed into the cache key). */
  files: Array<[number, string]>;
  /** Filter and dedup omissions, in stage order. */
  omitted: Omission[];
  /** Candidates after filters and dedup, in fixture order (what content findings look at). */
  candidates: WorkItem[];
  ranked: WorkItem[];
  /** Tokens of every ranked item with its overhead. */
  cost: number;
  /** Packing result; undefined for a required slot (never cut). */
  pack?: PackResult<WorkItem>;
  /** Content findings, and the fixture and config document they were located against. */
  findings: Finding[];
  findingsFor?: FixtureDoc;
  findingsConfig?: ConfigDoc;
}

/**
 * Fixture-side stages by tokenizer, fixture value (object identity: analyze.ts keeps the resolved
 * fixture while its text and referenced files are unchanged) and a signature of every setting the
 * stages read. A template edit changes none of these, so typing in a template does not re-count,
 * filter, dedup, score or pack a large fixture. The stages only ever set fields on the items they
 * create (score, merged sources, cached hashes) while building the entry; later steps copy the
 * arrays before changing them, so sharing an entry between assemblies gives the same results.
 */
const stageMemo = new WeakMap<Tokenizer, WeakMap<FixtureValue, Map<string, SlotStages>>>();
/** Signatures kept per fixture value (different slot settings tried in a session). */
const STAGE_SIGNATURES = 16;

function slotStages(tokenizer: Tokenizer, value: FixtureValue, sig: string, make: () => SlotStages): SlotStages {
  let byValue = stageMemo.get(tokenizer);
  if (!byValue) {
    byValue = new WeakMap();
    stageMemo.set(tokenizer, byValue);
  }
  let bySig = byValue.get(value);
  if (!bySig) {
    bySig = new Map();
    byValue.set(value, bySig);
  }
  let st = bySig.get(sig);
  if (!st) {
    st = make();
    if (bySig.size >= STAGE_SIGNATURES) bySig.delete(bySig.keys().next().value as string);
    bySig.set(sig, st);
  }
  return st;
}

export function assemble(input: AssembleInput): AssemblyResult {
  const { template, config, tokenizer, fixture } = input;
  // The caller resolves the model from the registry; a model defined only in the config's own
  // `models` is read from there.
  const model = input.model ?? modelFromConfig(config);
  const exact = input.exact ?? (tokenizer.exact && (model ? model.exact || !!config.tokenizer : true) && !(input.modelName && !model));
  const budget = computeBudget(config, { model, tokenizer: { name: tokenizer.name, exact } });
  const now = input.now ?? config.filters?.now;
  const itemOverhead = config.overhead?.item ?? 0;
  const messageOverhead = config.overhead?.message ?? model?.messageOverhead ?? 0;
  const requestOverhead = config.overhead?.request ?? model?.requestOverhead ?? 0;
  const ctx: FindingContext = { template, fixture, configDoc: input.configDoc };
  const findings: Finding[] = [];

  const shaCache = new Map<string, string>();
  const hash = (t: string): string => {
    let h = shaCache.get(t);
    if (h === undefined) {
      h = sha256(t);
      shaCache.set(t, h);
    }
    return h;
  };

  // ---- Slots: every config slot, then slots the template uses without defining them.
  const usedSlots = new Set<string>(template.uses.map((u) => u.slot));
  for (const m of template.messages) collectHistory(m.nodes, usedSlots);
  const names = [...Object.keys(config.slots ?? {})];
  for (const s of usedSlots) if (!(s in (config.slots ?? {}))) names.push(s);

  const budgetOf = new Map(budget.slots.map((l) => [l.name, l.budget]));
  const omissions: Omission[] = [];
  const runs: SlotRun[] = [];
  const fixtureDigest: Record<string, unknown> = {};

  // Untrusted text must not forge the envelope of any slot, nor close any wrapper the template writes.
  const escapeWith: string[] = [];
  const addDelimiter = (d: string | undefined) => {
    if (d && !escapeWith.some((e) => e.toLowerCase() === d.toLowerCase())) escapeWith.push(d);
  };
  for (const c of Object.values(config.slots ?? {})) addDelimiter(c?.label);
  for (const u of template.uses) addDelimiter(u.delimiter);
  names.forEach((name, order) => {
    const cfg = config.slots?.[name];
    const value = fixture?.slots[name];
    const state: SlotState = {
      name,
      config: cfg,
      kind: cfg?.kind ?? 'other',
      isText: value?.type === 'text',
      untrusted: effectiveTrust(cfg) === 'untrusted',
      label: cfg?.label,
      envelope: cfg?.envelope ?? 'bracket',
      escapeWith,
    };
    const isList = value?.type === 'items';
    const run: SlotRun = {
      state,
      order,
      cfg,
      used: usedSlots.has(name),
      required: cfg?.required ?? false,
      priority: cfg?.priority ?? 0,
      orderPolicy: cfg?.order ?? 'rank',
      budget: budgetOf.get(name),
      overhead: isList || cfg?.label ? itemOverhead : 0,
      total: 0,
      ranked: [],
      packed: [],
      packIndex: new Map(),
    };
    runs.push(run);
    if (!run.used || !value || value.type === 'data') return;

    // ---- Items: stable ids, token counts, content hashes.
    // ---- Items, hard filters, dedup, rank and pack depend on the fixture value and the slot's
    // settings only, not on the template text: memoized (stageMemo) so re-assembling after a
    // template edit reuses them.
    const sig = JSON.stringify([name, cfg ?? null, config.filters ?? null, config.scoring ?? null, now ?? null, state.kind, state.untrusted, state.label ?? null, state.escapeWith, run.overhead, run.budget ?? null, run.required]);
    const st = slotStages(tokenizer, value, sig, () => runStages(name, value, state, cfg, run, isList));
    run.total = st.total;
    const fromFiles = st.files.map(([index, text]) => [index, hash(text)]);
    if (fromFiles.length) fixtureDigest[name] = fromFiles;
    omissions.push(...st.omitted);
    // Content findings are located in the fixture with related locations in the config.
    if (st.findingsFor !== fixture || st.findingsConfig !== input.configDoc) {
      st.findings = contentFindings(ctx, state, st.candidates);
      st.findingsFor = fixture;
      st.findingsConfig = input.configDoc;
    }
    findings.push(...st.findings);
    run.ranked = st.ranked;

    // ---- Pack into the slot budget. Required slots are never cut: a required slot over its budget is reported instead.
    const cost = st.cost;
    if (run.required) {
      run.packed = [...run.ranked];
    } else {
      const p = st.pack!;
      run.packed = p.kept;
      for (const o of p.omitted) omissions.push({ item: o.item, reason: o.reason });
      if (run.budget !== undefined && cost > run.budget && fixture) {
        const loc = slotLocation(ctx, name);
        const dropped = p.omitted.map((o) => ({ id: o.item.id, reason: o.reason }));
        findings.push(
          finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives '${name}' ${fmt(cost)} tokens (${run.ranked.length} item${run.ranked.length === 1 ? '' : 's'}${run.overhead ? ` with ${fmt(run.overhead)}-token overhead each` : ''}) > its ${fmt(run.budget)}-token budget; packing (${cfg?.pack ?? 'stop'}) keeps ${p.kept.length} (${fmt(p.used)} tokens) and drops ${listIds(dropped)}.`, {
            related: configRelated(ctx, name, 'budget', `budget: ${fmt(run.budget)}`),
          }),
        );
      }
    }
    if (run.required && run.budget !== undefined && cost > run.budget && fixture) {
      const loc = slotLocation(ctx, name);
      findings.push(
        finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives required slot '${name}' ${fmt(cost)} tokens > its ${fmt(run.budget)}-token budget; required slots are never cut, so the excess comes out of other slots or overflows the request.`, {
          related: configRelated(ctx, name, 'budget', `budget: ${fmt(run.budget)}`),
        }),
      );
    }
    run.packed.forEach((it, i) => run.packIndex.set(it, i));
  });

  // ---- Fit the whole request. The margin is a planning reserve for count variation and chat-template
  // overhead the registry may not know, so fitting uses window - output - margin (seed 000's
  // build_request compares with limit - reserved output; we keep the margin on top of that).
  const slotStates = new Map(runs.filter((r) => r.used).map((r) => [r.state.name, r.state]));
  const renderer = new Renderer(template, slotStates, fixture, input.render);
  const windowKnown = budget.window > 0 || !!budget.limits;
  const fitLimit = windowKnown ? budget.inputBudget - budget.margin : Number.POSITIVE_INFINITY;
  const runOf = new Map(runs.map((r) => [r.state.name, r]));

  const dropSeq: WorkItem[] = [];
  for (const r of runs) if (r.used && !r.required) dropSeq.push(...r.packed);
  dropSeq.sort((a, b) => {
    const ra = runOf.get(a.slot)!;
    const rb = runOf.get(b.slot)!;
    return (
      ra.priority - rb.priority ||
      (a.score ?? 0) - (b.score ?? 0) ||
      rb.packIndex.get(b)! - ra.packIndex.get(a)! ||
      rb.order - ra.order
    );
  });

  const keptAfter = (k: number): Map<string, WorkItem[]> => {
    const removed = new Set(dropSeq.slice(0, k));
    const kept = new Map<string, WorkItem[]>();
    for (const r of runs) {
      if (!r.used) continue;
      const rest = removed.size ? r.packed.filter((i) => !removed.has(i)) : r.packed;
      kept.set(r.state.name, orderItems(rest, r.orderPolicy, r.state.kind === 'history'));
    }
    return kept;
  };
  // Each probe of the fit renders the part texts only and counts them without joining
  // (countParts.ts); only the chosen prefix is rendered into messages.
  const counts = new Map<number, number>();
  const tokensAfter = (k: number): number => {
    let n = counts.get(k);
    if (n === undefined) {
      n = requestOverhead;
      for (const texts of renderer.renderTexts(keptAfter(k))) n += messageOverhead + countJoined(tokenizer, texts);
      counts.set(k, n);
    }
    return n;
  };
  const fit = fitPrefix(dropSeq.length, tokensAfter, fitLimit);
  const finalKept = keptAfter(fit.dropped);
  const rendered = renderer.full(finalKept);
  const final = { kept: finalKept, messages: rendered.messages, tokens: tokensAfter(fit.dropped) };
  // The probes count the marked render; when attribution was lost the final messages are the plain one.
  if (rendered.issues.some((i) => i.rule === 'attribution-lost')) {
    let n = requestOverhead;
    for (const m of final.messages) n += messageOverhead + tokenizer.count(m.content);
    final.tokens = n;
  }
  findings.push(...renderFindings(template, rendered.issues));
  const trimmed = dropSeq.slice(0, fit.dropped);
  for (const item of trimmed) omissions.push({ item, reason: 'trimmed-for-request' });

  const inputLimitText = budget.limits
    ? `input limit ${fmt(budget.limits.input)} - margin ${fmt(budget.margin)}`
    : `window ${fmt(budget.window)} - output ${fmt(budget.output)} - margin ${fmt(budget.margin)}`;
  let error: string | undefined;
  if (!fit.ok) {
    const parts: string[] = [];
    let slotsTotal = 0;
    for (const r of runs) {
      if (!r.used || !r.required) continue;
      const t = r.packed.reduce((s, i) => s + i.tokens + r.overhead, 0);
      slotsTotal += t;
      parts.push(`${r.state.name} ${fmt(t)}`);
    }
    const rest = final.tokens - slotsTotal;
    parts.push(`template text and message overhead ${fmt(rest)}`);
    error = `Required content alone is ${fmt(final.tokens)} tokens > ${fmt(fitLimit)} input budget (${inputLimitText}): ${parts.join(', ')}. No request can be built; shorten a required slot or raise the window.`;
    const biggest = runs.filter((r) => r.used && r.required).sort((a, b) => slotCost(b) - slotCost(a) || a.order - b.order)[0];
    const loc = biggest ? slotLocation(ctx, biggest.state.name) : { path: template.path, span: template.bodySpan };
    findings.push(finding('required-overflow', loc.path, loc.span, error, { related: biggest ? configRelated(ctx, biggest.state.name, 'required', 'required: true') : [] }));
  } else if (trimmed.length) {
    const before = tokensAfter(0);
    const first = runOf.get(trimmed[0].slot)!;
    const loc = slotLocation(ctx, first.state.name);
    const list = listIds(trimmed.map((i) => ({ id: i.id, reason: `${i.slot}, ${fmt(i.tokens)} tokens` })));
    findings.push(
      finding('request-overflow', loc.path, loc.span, `The assembled request is ${fmt(before)} tokens > ${fmt(fitLimit)} input budget (${inputLimitText}); trimming ${trimmed.length} optional item${trimmed.length === 1 ? '' : 's'} by priority brings it to ${fmt(final.tokens)}: ${list}.`, {
        related: configRelated(ctx, first.state.name, 'priority', `priority: ${first.priority}`),
      }),
    );
  }

  // ---- Final order, lost-in-the-middle.
  const keptFinal = fit.ok ? final.kept : new Map<string, WorkItem[]>();
  for (const r of runs) {
    const ordered = keptFinal.get(r.state.name);
    if (!ordered || !fixture) continue;
    const removed = new Set(trimmed);
    findings.push(...lostInTheMiddle(ctx, r.state, ordered, r.packed.filter((i) => !removed.has(i))));
  }

  // ---- Trace.
  const retained: TraceItem[] = [];
  const citation: Trace['citation_map'] = {};
  if (fit.ok) {
    const seen = new Set<string>();
    const byKey = new Map<string, { item: WorkItem; position: number; n: number; run: SlotRun }>();
    for (const r of runs) {
      const ordered = keptFinal.get(r.state.name) ?? [];
      ordered.forEach((item, position) => byKey.set(`${r.state.name}\u0000${item.id}`, { item, position, n: ordered.length, run: r }));
    }
    const add = (key: string) => {
      if (seen.has(key)) return;
      const e = byKey.get(key);
      if (!e) return;
      seen.add(key);
      retained.push(traceItem(e.item, e.position, e.n));
      const r = e.run;
      if (r.state.kind === 'evidence' || r.state.label) {
        const entry = {} as Trace['citation_map'][string];
        if (e.item.source !== undefined) entry.source = e.item.source;
        entry.sha256 = itemSha(e.item);
        if (e.item.merged.length) entry.sources = [...(e.item.source !== undefined ? [e.item.source] : []), ...e.item.merged];
        citation[e.item.id] = entry;
      }
    };
    for (const m of final.messages) for (const p of m.parts) if (p.slot !== undefined && p.itemId !== undefined) add(`${p.slot}\u0000${p.itemId}`);
    // Kept but not rendered (a slot used only in `{{#if}}`): listed after the rendered ones.
    for (const k of byKey.keys()) add(k);
  } else {
    for (const item of dropSeq) if (!trimmed.includes(item)) omissions.push({ item, reason: 'trimmed-for-request' });
  }

  const omitted: OmittedItem[] = omissions.map(({ item, reason }) => {
    const o = { slot: item.slot, id: item.id, tokens: item.tokens } as OmittedItem;
    if (item.score !== undefined) o.score = round4(item.score);
    o.reason = reason;
    if (item.source !== undefined) o.source = item.source;
    return o;
  });

  const keptCount = new Map<string, WorkItem[]>();
  for (const r of runs) keptCount.set(r.state.name, keptFinal.get(r.state.name) ?? []);
  const slots: SlotTrace[] = runs.map((r) => {
    const kept = keptCount.get(r.state.name)!;
    const s: SlotTrace = { name: r.state.name, kind: r.state.kind } as SlotTrace;
    if (r.cfg?.trust !== undefined) s.trust = r.cfg.trust;
    if (r.budget !== undefined) s.budget = r.budget;
    s.used = kept.reduce((sum, i) => sum + i.tokens + r.overhead, 0);
    s.kept = kept.length;
    s.omitted = r.total - kept.length;
    s.total = r.total;
    return s;
  });

  const templateText = input.templateText ?? template.text;
  const configPath = input.configPath ?? input.configDoc?.path ?? template.path;
  const configText = input.configText ?? input.configDoc?.text ?? canonicalJson(config);
  const modelName = model?.name ?? input.modelName ?? config.model;

  const trace = {} as Trace;
  trace.version = 1;
  trace.template = { path: template.path, sha256: hash(templateText) };
  if (!input.zeroConfig) trace.config = { path: configPath, sha256: hash(configText) };
  if (fixture) trace.fixture = { path: fixture.path, sha256: fixtureSha(fixture) };
  if (config.version !== undefined) trace.policy_version = config.version;
  if (modelName !== undefined) trace.model = modelName;
  trace.tokenizer = tokenizer.name;
  trace.exact = exact;
  trace.window = budget.window;
  trace.reserved_output = budget.output;
  trace.margin = budget.margin;
  trace.input_budget = Number.isFinite(fitLimit) ? fitLimit : 0;
  trace.input_tokens = final.tokens;
  trace.slots = slots;
  trace.retained = retained;
  trace.omitted = omitted;
  trace.citation_map = citation;
  if (fit.ok && rendered.neutralised.length) {
    trace.neutralised = rendered.neutralised.map((n) => {
      const e = { slot: n.slot } as NonNullable<Trace['neutralised']>[number];
      if (n.itemId !== undefined) e.id = n.itemId;
      e.offset = n.index;
      e.kind = n.kind;
      e.sequence = n.sequence;
      if (n.field) e.field = true;
      return e;
    });
  }
  trace.cache_key = sha256(
    canonicalJson({
      assembly: ASSEMBLY_VERSION,
      template: hash(templateText),
      config,
      fixture: fixture ? { text: fixtureSha(fixture), files: fixtureDigest } : null,
      model: model ?? null,
      modelName: modelName ?? null,
      tokenizer: tokenizer.name,
      exact,
      now: now ?? null,
      render: input.render ? { partials: input.render.partials ?? null, defaults: input.render.defaults ?? null, escape: input.render.escape ?? true } : null,
    }),
  );

  const result: AssemblyResult = { ok: fit.ok, messages: fit.ok ? final.messages : [], trace, budget, findings };
  if (error !== undefined) result.error = error;
  return result;

  /** Items, hard filters, dedup, rank and pack of one slot (see stageMemo). */
  function runStages(name: string, value: FixtureValue, state: SlotState, cfg: SlotConfig | undefined, run: SlotRun, isList: boolean): SlotStages {
    // ---- Items: stable ids, token counts, content hashes.
    const raw: FixtureItem[] =
      value.type === 'text'
        ? [{ index: 0, text: value.text, meta: {}, span: value.span, textSpan: value.span, ...(value.file !== undefined ? { file: value.file } : {}) }]
        : value.type === 'items'
          ? value.items
          : [];
    const ids = new Set<string>();
    const items: WorkItem[] = raw.map((it) => {
      const written = typeof it.id === 'string' && it.id !== '' ? it.id : typeof it.id === 'number' ? String(it.id) : undefined;
      let id = written ?? `${name}_${it.index + 1}`;
      for (let k = 2; ids.has(id); k++) id = `${written ?? `${name}_${it.index + 1}`}~${k}`;
      ids.add(id);
      const text = typeof it.text === 'string' ? it.text : '';
      return fromFixtureItem(name, it, text, id, written !== undefined, tokenizer.count(text));
    });
    // The fixture text already covers inline values and metadata; texts read from files are not in it.
    const files = items.filter((w) => w.file !== undefined).map((w): [number, string] => [w.index, w.text]);

    // ---- Hard filters, then dedup (lists only; history turns are never merged: "ok" twice is two turns).
    const omitted: Omission[] = [];
    let candidates = items;
    if (isList) {
      const f = applyFilters(candidates, config.filters, now);
      omitted.push(...f.omitted);
      candidates = f.kept;
      if (state.kind !== 'history') {
        const d = dedup(candidates);
        omitted.push(...d.omitted);
        candidates = d.kept;
      }
    }

    // ---- Rank: the selection score where metadata exists, fixture order otherwise; history most recent first.
    const ranked = state.kind === 'history' ? mostRecentFirst(candidates) : rankItems(candidates, { weights: config.scoring, version: config.filters?.version, now });
    const cost = ranked.reduce((s, i) => s + i.tokens + run.overhead, 0);
    const packed = run.required ? undefined : pack(ranked, run.budget, run.overhead, cfg?.pack ?? 'stop', cfg?.max_items);
    return { total: items.length, files, omitted, candidates, ranked, cost, pack: packed, findings: [] };
  }
  function slotCost(r: SlotRun): number {
    return r.packed.reduce((s, i) => s + i.tokens + r.overhead, 0);
  }
  function traceItem(item: WorkItem, position: number, n: number): TraceItem {
    const t = { slot: item.slot, id: item.id, tokens: item.tokens } as TraceItem;
    if (item.score !== undefined) t.score = round4(item.score);
    t.position = position;
    t.placement = placementOf(position, n);
    t.sha256 = itemSha(item);
    if (item.source !== undefined) t.source = item.source;
    if (item.merged.length) t.merged = [...item.merged];
    return t;
  }
}

/** Engine problems as findings in the template. */
function renderFindings(template: TemplateDoc, issues: readonly RenderIssue[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const i of issues) {
    const key = `${i.rule}\u0000${i.span.start}\u0000${i.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(finding(i.rule === 'attribution-lost' ? 'unsupported-feature' : i.rule, template.path, i.span, i.message, i.rule === 'attribution-lost' ? { severity: 'info' } : {}));
  }
  return out;
}

function collectHistory(nodes: readonly TemplateNode[], out: Set<string>): void {
  for (const n of nodes) {
    if (n.type === 'history') out.add(n.slot);
    else if (n.type === 'each' || n.type === 'if') {
      collectHistory(n.body, out);
      if (n.inverse) collectHistory(n.inverse, out);
    }
  }
}
