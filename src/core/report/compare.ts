/**
 * The impact report's comparison: given each template's requests (one per fixture, the sample
 * included) assembled at a base revision and in the working tree, what changed for every request
 * (tokens, cost per request and per day, output reserve, fit, the items each slot kept or dropped
 * with the reason on each side, the first differing message line), which findings are new or
 * fixed, what the eval sets measure on each side, and whether the gates pass. The front end reads
 * both revisions and assembles them; this module only compares, so it stays pure.
 */
import type { AssemblyResult, RenderedMessage, Severity } from '../types';
import type { Report, ReportDelta, ReportEval, ReportEvalSide, ReportFinding, ReportGate, ReportRequest, ReportSide, ReportSlotChange, ReportTemplate } from './schema';
import { REPORT_VERSION } from './schema';
import type { AssemblyDiff } from '../eval/diff';
import { diffAssemblies } from '../eval/diff';
import { roundUsd } from '../cost';
import { redactSecrets } from '../text/secrets';

/** One request of a template on one side: a fixture and its assembly (with `trace.cost` set). */
export interface RequestRun {
  fixture: string;
  result: AssemblyResult;
}

/** An eval file of the template on one side: its totals and the required evidence of each case. */
export interface EvalRun {
  /** The file as displayed (base paths mapped through renames). */
  file: string;
  side: ReportEvalSide;
  required: Array<{ case: string; id: string; kept: boolean }>;
}

/** A template on one side. */
export interface TemplateRun {
  requests: RequestRun[];
  /** Slots the config declares `required: true`. */
  requiredSlots: readonly string[];
  /** Tokens of the prefix every fixture shares. */
  cachePrefixTokens: number;
  /** Findings of every analysis of the template (each fixture), located and with display paths. */
  findings: ReportFinding[];
  evals: EvalRun[];
}

/** A template at the base and in the working tree, paired by path or by git's rename detection. */
export interface TemplatePair {
  /** Display path in the working tree (at the base for a removed template). */
  path: string;
  /** Display path at the base when it differs (a rename). */
  basePath?: string;
  base?: TemplateRun;
  head?: TemplateRun;
}

export type FailOn = 'new-errors' | 'dropped-required';

/** A limit given as a number or a percentage of the base (`500`, `10%`). */
export interface Limit {
  value: number;
  percent: boolean;
  /** As the user wrote it, for the reasons. */
  text: string;
}

export interface GateOptions {
  /** Most input tokens any one request may gain. */
  maxTokenIncrease?: Limit;
  /** Most the summed cost per day (or, without request rates, per request) may rise, in USD. */
  maxCostIncrease?: Limit;
  failOn?: readonly FailOn[];
}

export interface ReportMeta {
  baseRef: string;
  baseCommit: string;
  headCommit?: string;
}

/** A limit from the command line: a non-negative number, optionally with `%`; undefined when malformed. */
export function parseLimit(text: string): Limit | undefined {
  const m = /^\s*\$?(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  if (!m) return undefined;
  return { value: Number(m[1]), percent: m[2] === '%', text: text.trim() };
}

const sum = (xs: ReadonlyArray<number | undefined>) => xs.reduce<number>((s, x) => s + (x ?? 0), 0);

function d(base: number | undefined | null, head: number | undefined | null, money = false): ReportDelta {
  const b = base ?? null;
  const h = head ?? null;
  const raw = (h ?? 0) - (b ?? 0);
  return { base: b, head: h, delta: money ? roundUsd(raw) : raw };
}

/** The common-prefix computation counts identical requests once, as `ctxlens assemble` does. */
export function distinctRequests(requests: ReadonlyArray<readonly RenderedMessage[]>): RenderedMessage[][] {
  const seen = new Set<string>();
  const out: RenderedMessage[][] = [];
  for (const r of requests) {
    const key = JSON.stringify(r.map((m) => [m.role, m.content]));
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([...r]);
  }
  return out;
}

function side(r: AssemblyResult, cachePrefixTokens: number): ReportSide {
  const s: ReportSide = {
    ok: r.ok,
    fits: r.ok && r.budget.fits,
    input_tokens: r.trace.input_tokens,
    output_reserve: r.trace.reserved_output,
    cache_prefix_tokens: cachePrefixTokens,
  };
  if (r.error !== undefined) s.error = r.error;
  if (r.trace.model !== undefined) s.model = r.trace.model;
  const cost = r.trace.cost;
  if (cost) {
    s.cost = cost.input;
    if (cost.requests_per_day !== undefined) s.requests_per_day = cost.requests_per_day;
    if (cost.per_day) s.cost_per_day = cost.per_day.input;
  }
  return s;
}

function slotChanges(diff: AssemblyDiff, base: AssemblyResult, head: AssemblyResult, required: ReadonlySet<string>): ReportSlotChange[] {
  const pos = (r: AssemblyResult, slot: string, id: string) => r.trace.retained.find((x) => x.slot === slot && x.id === id)?.position;
  const out: ReportSlotChange[] = [];
  for (const s of diff.slots) {
    if (!s.only_a.length && !s.only_b.length && s.tokens_a === s.tokens_b && s.kept_a === s.kept_b && s.total_a === s.total_b) continue;
    out.push({
      slot: s.slot,
      required: required.has(s.slot),
      kept: { base: s.kept_a, head: s.kept_b },
      total: { base: s.total_a, head: s.total_b },
      tokens: d(s.tokens_a, s.tokens_b),
      dropped: s.only_a.map((x) => ({ id: x.id, base: `kept #${(pos(base, s.slot, x.id) ?? 0) + 1}`, head: x.b })),
      added: s.only_b.map((x) => ({ id: x.id, base: x.a, head: `kept #${(pos(head, s.slot, x.id) ?? 0) + 1}` })),
    });
  }
  return out;
}

function compareRequest(fixture: string, base: RequestRun | undefined, head: RequestRun | undefined, prefix: { base: number; head: number }, required: ReadonlySet<string>): ReportRequest {
  const b = base ? side(base.result, prefix.base) : undefined;
  const h = head ? side(head.result, prefix.head) : undefined;
  const out: ReportRequest = {
    fixture,
    status: !b ? 'added' : !h ? 'removed' : 'unchanged',
    input_tokens: d(b?.input_tokens, h?.input_tokens),
    slots: [],
  };
  if (b) out.base = b;
  if (h) out.head = h;
  if (b?.cost !== undefined || h?.cost !== undefined) out.cost = d(b?.cost, h?.cost, true);
  if (b?.cost_per_day !== undefined || h?.cost_per_day !== undefined) out.cost_per_day = d(b?.cost_per_day, h?.cost_per_day, true);
  if (base && head) {
    const diff = diffAssemblies(base.result, head.result);
    out.slots = slotChanges(diff, base.result, head.result, required);
    const f = diff.first_difference;
    if (f) {
      // The lines are quoted in a pull-request comment others read: a key a fixture holds is shown redacted.
      out.first_difference = { message: f.message + 1, line: f.line, base: redactSecrets(f.a), head: redactSecrets(f.b) };
      if (f.role_a !== undefined) out.first_difference.role_base = f.role_a;
      if (f.role_b !== undefined) out.first_difference.role_head = f.role_b;
    }
    const changed =
      !!f ||
      out.slots.length > 0 ||
      b!.ok !== h!.ok ||
      b!.fits !== h!.fits ||
      b!.input_tokens !== h!.input_tokens ||
      b!.output_reserve !== h!.output_reserve ||
      b!.cost !== h!.cost ||
      b!.cost_per_day !== h!.cost_per_day ||
      b!.cache_prefix_tokens !== h!.cache_prefix_tokens ||
      b!.model !== h!.model;
    if (changed) out.status = 'changed';
  }
  return out;
}

/**
 * A finding's identity across revisions: its file, rule, severity and message with the numbers
 * left out, so a budget error whose figures moved is the same error, not one fixed and one new.
 */
function findingKey(f: ReportFinding): string {
  return `${f.path}\u0000${f.rule}\u0000${f.severity}\u0000${f.message.replace(/\d[\d,._]*/g, '#')}`;
}

function findingChanges(base: readonly ReportFinding[], head: readonly ReportFinding[]): { new: ReportFinding[]; fixed: ReportFinding[] } {
  const count = (list: readonly ReportFinding[]) => {
    const m = new Map<string, number>();
    for (const f of list) m.set(findingKey(f), (m.get(findingKey(f)) ?? 0) + 1);
    return m;
  };
  // A finding repeated n times on one side and m on the other: |n - m| of them are new or fixed.
  const left = count(base);
  const right = count(head);
  const pick = (list: readonly ReportFinding[], mine: Map<string, number>, other: Map<string, number>) => {
    const spare = new Map<string, number>();
    for (const [k, n] of mine) spare.set(k, n - (other.get(k) ?? 0));
    const out: ReportFinding[] = [];
    for (const f of list) {
      const k = findingKey(f);
      const n = spare.get(k) ?? 0;
      if (n > 0) {
        out.push(f);
        spare.set(k, n - 1);
      }
    }
    return out;
  };
  return { new: pick(head, right, left), fixed: pick(base, left, right) };
}

function evalChanges(base: readonly EvalRun[], head: readonly EvalRun[]): ReportEval[] {
  const files = [...new Set([...base.map((e) => e.file), ...head.map((e) => e.file)])].sort();
  return files.map((file) => {
    const b = base.find((e) => e.file === file);
    const h = head.find((e) => e.file === file);
    const out: ReportEval = { file, required_dropped: [] };
    if (b) out.base = b.side;
    if (h) out.head = h.side;
    if (b && h) {
      const now = new Map(h.required.map((r) => [`${r.case}\u0000${r.id}`, r.kept]));
      for (const r of b.required) if (r.kept && now.get(`${r.case}\u0000${r.id}`) === false) out.required_dropped.push({ case: r.case, id: r.id });
    }
    return out;
  });
}

function compareTemplate(pair: TemplatePair): ReportTemplate {
  const { base, head } = pair;
  const required = new Set([...(head?.requiredSlots ?? base?.requiredSlots ?? [])]);
  const names = [...new Set([...(base?.requests ?? []).map((r) => r.fixture), ...(head?.requests ?? []).map((r) => r.fixture)])];
  const prefix = { base: base?.cachePrefixTokens ?? 0, head: head?.cachePrefixTokens ?? 0 };
  const requests = names.map((n) =>
    compareRequest(
      n,
      base?.requests.find((r) => r.fixture === n),
      head?.requests.find((r) => r.fixture === n),
      prefix,
      required,
    ),
  );
  const findings = findingChanges(base?.findings ?? [], head?.findings ?? []);
  const evals = evalChanges(base?.evals ?? [], head?.evals ?? []);
  let status: ReportTemplate['status'];
  if (!base) status = 'added';
  else if (!head) status = 'removed';
  else if (pair.basePath !== undefined && pair.basePath !== pair.path) status = 'renamed';
  else {
    const evalMoved = evals.some((e) => JSON.stringify(e.base) !== JSON.stringify(e.head) || e.required_dropped.length > 0);
    status = requests.some((r) => r.status !== 'unchanged') || findings.new.length || findings.fixed.length || evalMoved ? 'modified' : 'unchanged';
  }
  const out: ReportTemplate = {
    path: pair.path,
    status,
    requests,
    cache_prefix_tokens: d(base ? base.cachePrefixTokens : null, head ? head.cachePrefixTokens : null),
    findings,
    eval: evals,
  };
  if (pair.basePath !== undefined && pair.basePath !== pair.path) out.base_path = pair.basePath;
  return out;
}

const isError = (s: Severity) => s === 'error';

/** Input tokens of a request's sides, for the token gate: requests that exist on both sides only. */
function tokenGate(templates: readonly ReportTemplate[], limit: Limit): ReportGate {
  const reasons: string[] = [];
  for (const t of templates) {
    for (const r of t.requests) {
      if (!r.base || !r.head) continue;
      const grow = r.head.input_tokens - r.base.input_tokens;
      if (grow <= 0) continue;
      const over = limit.percent ? r.base.input_tokens === 0 || (grow / r.base.input_tokens) * 100 > limit.value : grow > limit.value;
      if (!over) continue;
      const pct = r.base.input_tokens ? ` (${((grow / r.base.input_tokens) * 100).toFixed(1)}%)` : '';
      reasons.push(`${t.path} × ${r.fixture}: +${grow.toLocaleString('en-US')} input tokens${pct}, more than ${limit.text}`);
    }
  }
  return { gate: 'max-token-increase', limit: limit.text, passed: reasons.length === 0, reasons };
}

function costGate(summary: Report['summary'], limit: Limit): ReportGate {
  // The summed cost per day when request rates are configured, else the summed cost of one of each request.
  const perDay = summary.cost_per_day;
  const basis = perDay ?? summary.cost;
  const reasons: string[] = [];
  if (basis) {
    const base = basis.base ?? 0;
    const grow = basis.delta;
    const over = grow > 0 && (limit.percent ? base === 0 || (grow / base) * 100 > limit.value : grow > limit.value);
    if (over) reasons.push(`cost ${perDay ? 'per day' : 'per request (summed over the requests)'} rises by $${grow}${base ? ` (${((grow / base) * 100).toFixed(1)}%)` : ''}, more than ${limit.text}`);
  }
  return { gate: 'max-cost-increase', limit: limit.text, passed: reasons.length === 0, reasons };
}

function newErrorReasons(templates: readonly ReportTemplate[]): string[] {
  const reasons: string[] = [];
  for (const t of templates) {
    for (const f of t.findings.new) if (isError(f.severity)) reasons.push(`${f.path}${f.line ? `:${f.line}` : ''} ${f.rule}: ${f.message}`);
    for (const r of t.requests) if (r.base?.ok && r.head && !r.head.ok) reasons.push(`${t.path} × ${r.fixture}: the request can no longer be built${r.head.error ? ` (${r.head.error})` : ''}`);
  }
  return reasons;
}

function droppedRequiredReasons(templates: readonly ReportTemplate[]): string[] {
  const reasons: string[] = [];
  for (const t of templates) {
    for (const r of t.requests) for (const s of r.slots) if (s.required) for (const x of s.dropped) reasons.push(`${t.path} × ${r.fixture}: ${x.id} of required slot ${s.slot} is dropped (${x.head})`);
    for (const e of t.eval) for (const x of e.required_dropped) reasons.push(`${e.file}: case ${x.case} no longer keeps its required evidence ${x.id}`);
  }
  return reasons;
}

/** The report of a set of template pairs, with the gates applied. */
export function buildReport(pairs: readonly TemplatePair[], meta: ReportMeta, gates: GateOptions = {}): Report {
  const templates = [...pairs].sort((a, b) => a.path.localeCompare(b.path)).map(compareTemplate);
  const requests = templates.flatMap((t) => t.requests);
  const both = (pick: (s: ReportSide) => number | undefined, money: boolean): ReportDelta | undefined => {
    const bs = requests.map((r) => (r.base ? pick(r.base) : undefined)).filter((x): x is number => x !== undefined);
    const hs = requests.map((r) => (r.head ? pick(r.head) : undefined)).filter((x): x is number => x !== undefined);
    if (!bs.length && !hs.length) return undefined;
    // Dollars are summed in units of 1e-10 (the precision of roundUsd), so 600 requests add up exactly.
    const total = (xs: number[]) => (money ? Math.round(xs.reduce((s, x) => s + Math.round(x * 1e10), 0)) / 1e10 : sum(xs));
    const b = total(bs);
    const h = total(hs);
    return d(bs.length ? b : null, hs.length ? h : null, money);
  };
  const errors = newErrorReasons(templates);
  const dropped = droppedRequiredReasons(templates);
  const summary: Report['summary'] = {
    templates: templates.length,
    templates_added: templates.filter((t) => t.status === 'added').length,
    templates_removed: templates.filter((t) => t.status === 'removed').length,
    templates_renamed: templates.filter((t) => t.status === 'renamed').length,
    requests: requests.length,
    requests_changed: requests.filter((r) => r.status !== 'unchanged').length,
    input_tokens: both((s) => s.input_tokens, false) ?? d(0, 0),
    new_errors: errors.length,
    new_findings: templates.reduce((n, t) => n + t.findings.new.length, 0),
    fixed_findings: templates.reduce((n, t) => n + t.findings.fixed.length, 0),
    dropped_required: dropped.length,
  };
  const cost = both((s) => s.cost, true);
  if (cost) summary.cost = cost;
  const perDay = both((s) => s.cost_per_day, true);
  if (perDay) summary.cost_per_day = perDay;

  const results: ReportGate[] = [];
  if (gates.maxTokenIncrease) results.push(tokenGate(templates, gates.maxTokenIncrease));
  if (gates.maxCostIncrease) results.push(costGate(summary, gates.maxCostIncrease));
  for (const f of [...new Set(gates.failOn ?? [])]) {
    const reasons = f === 'new-errors' ? errors : dropped;
    results.push({ gate: f, passed: reasons.length === 0, reasons });
  }
  const head: Report['head'] = { ref: 'working tree' };
  if (meta.headCommit !== undefined) head.commit = meta.headCommit;
  return {
    version: REPORT_VERSION,
    base: { ref: meta.baseRef, commit: meta.baseCommit },
    head,
    summary,
    templates,
    gates: results,
    passed: results.every((g) => g.passed),
  };
}
