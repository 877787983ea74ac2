/**
 * Runs an eval set: every case of an eval file assembled through the template's own binding,
 * measured (metrics.ts), checked against its thresholds, and summed into totals; the cacheable
 * prefix across the template's fixtures and the cases (prefix.ts) and the cost at the configured
 * request rate (cost.ts); and, on request, every ablation with its deltas against the baseline.
 */
import type { FileHost } from '../host';
import type { AssemblyResult, FixtureDoc, RenderedMessage } from '../types';
import type { CommonPrefix } from '../prefix';
import type { RequestCost } from '../cost';
import type { EvalCase, EvalFile, Thresholds } from './schema';
import type { CaseMetrics, ThresholdResult } from './metrics';
import type { Ablation, CaseInput } from './ablate';
import type { Subject } from './subject';
import { dirname, join } from '../paths';
import { commonPrefix } from '../prefix';
import { roundUsd, traceCost } from '../cost';
import { caseMetrics, checkThresholds } from './metrics';
import { builtinAblations, fileAblations } from './ablate';
import { assembleWith, findFixture, prepareSubject, questionSlot, withInlineSlots } from './subject';
import { parseEval } from './parse';
import type { EvalDoc } from './parse';

export interface CaseResult {
  id: string;
  description?: string;
  fixture?: string;
  ok: boolean;
  /** Set when the case could not be assembled (a missing fixture, a request that cannot be built). */
  error?: string;
  metrics: CaseMetrics;
  thresholds: ThresholdResult[];
  passed: boolean;
}

export interface Totals {
  cases: number;
  passed: number;
  failed: number;
  retrieval_recall: number | null;
  selection_recall: number | null;
  context_precision: number | null;
  evidence_coverage: number | null;
  forbidden: number;
  distractors_kept: number;
  /** Required evidence kept in the middle third of its slot. */
  required_in_middle: number;
  input_tokens: number;
  mean_input_tokens: number;
  /** Mean input cost of one request (USD); undefined when the model has no price. */
  mean_cost?: number;
  /** The same with the cacheable prefix at the cached price. */
  mean_cost_cached?: number;
  requests_per_day?: number;
  /** Input cost of a day of requests at the mean cost. */
  cost_per_day?: number;
  cost_per_day_cached?: number;
}

export interface AblationResult {
  id: string;
  description: string;
  /** Cases the ablation changed (others keep their baseline numbers). */
  changed: number;
  error?: string;
  totals: Totals;
  cases: CaseResult[];
}

export interface EvalResult {
  path: string;
  template: string;
  model?: string;
  tokenizer: string;
  exact: boolean;
  cases: CaseResult[];
  totals: Totals;
  cache_prefix: CommonPrefix & { cost?: RequestCost };
  cache_prefix_tokens: number;
  passed: boolean;
  /** A problem with the eval file as a whole (template or config unusable). */
  error?: string;
  ablations?: AblationResult[];
}

export interface RunOptions {
  model?: string;
  ablate?: boolean;
  /** Only these ablations (ids); all when empty. */
  only?: readonly string[];
  requestsPerDay?: number;
}

function emptyMetrics(): CaseMetrics {
  return {
    retrieval_recall: null,
    selection_recall: null,
    context_precision: null,
    evidence_coverage: null,
    required: [],
    facts: [],
    counts: { required: 0, candidates: 0, selected: 0, kept_scored: 0, kept_required_scored: 0, facts: 0, facts_present: 0, middle: 0 },
    scored_slots: [],
    distractors_kept: [],
    forbidden: [],
    input_tokens: 0,
  };
}

/** The case's fixture: the named fixture with the inline values and the question over it. */
function caseFixture(host: FileHost, subject: Subject, evalPath: string, c: EvalCase): { fixture?: FixtureDoc; error?: string } {
  let base: FixtureDoc | undefined;
  if (c.fixture !== undefined) {
    const f = findFixture(host, subject, evalPath, c.fixture);
    if (!f.fixture) return { error: f.error };
    base = f.fixture;
  }
  const values: Record<string, unknown> = { ...(c.slots ?? {}) };
  if (c.question !== undefined) values[questionSlot(subject.config)] = c.question;
  if (!base && !Object.keys(values).length) return { error: `case ${c.id} has neither a fixture nor slot values` };
  return withInlineSlots(host, base, evalPath, `eval case ${c.id}`, values);
}

function thresholdsOf(file: EvalFile, c: EvalCase): Thresholds {
  return { ...(file.thresholds ?? {}), ...(c.thresholds ?? {}) };
}

function measure(file: EvalFile, c: EvalCase, result: AssemblyResult | undefined, error?: string, fixtureName?: string): CaseResult {
  const metrics = result ? caseMetrics(c, result) : emptyMetrics();
  const thresholds = result ? checkThresholds(thresholdsOf(file, c), metrics) : [];
  const err = error ?? (result && !result.ok ? result.error ?? 'the request cannot be built' : undefined);
  const out: CaseResult = { id: c.id, ok: !err, metrics, thresholds, passed: !err && thresholds.every((t) => t.ok) };
  if (c.description) out.description = c.description;
  if (fixtureName) out.fixture = fixtureName;
  if (err) out.error = err;
  return out;
}

function totalsOf(cases: readonly CaseResult[], requestsPerDay: number | undefined): Totals {
  const sum = (f: (m: CaseMetrics) => number) => cases.reduce((s, c) => s + f(c.metrics), 0);
  const ratio = (n: number, d: number) => (d === 0 ? null : n / d);
  const required = sum((m) => m.counts.required);
  const costs = cases.map((c) => c.metrics.cost);
  const priced = costs.every((c) => c !== undefined) && cases.length > 0;
  const t: Totals = {
    cases: cases.length,
    passed: cases.filter((c) => c.passed).length,
    failed: cases.filter((c) => !c.passed).length,
    retrieval_recall: ratio(sum((m) => m.counts.candidates), required),
    selection_recall: ratio(sum((m) => m.counts.selected), required),
    context_precision: required ? ratio(sum((m) => m.counts.kept_required_scored), sum((m) => m.counts.kept_scored)) ?? 0 : null,
    evidence_coverage: ratio(sum((m) => m.counts.facts_present), sum((m) => m.counts.facts)),
    forbidden: sum((m) => m.forbidden.length),
    distractors_kept: sum((m) => m.distractors_kept.length),
    required_in_middle: sum((m) => m.counts.middle),
    input_tokens: sum((m) => m.input_tokens),
    mean_input_tokens: cases.length ? Math.round(sum((m) => m.input_tokens) / cases.length) : 0,
  };
  if (priced) {
    t.mean_cost = roundUsd(costs.reduce((s, c) => s + c!.input, 0) / cases.length);
    if (costs.every((c) => c!.input_cached !== undefined)) t.mean_cost_cached = roundUsd(costs.reduce((s, c) => s + c!.input_cached!, 0) / cases.length);
    if (requestsPerDay !== undefined && requestsPerDay > 0) {
      t.requests_per_day = requestsPerDay;
      t.cost_per_day = roundUsd(t.mean_cost * requestsPerDay);
      if (t.mean_cost_cached !== undefined) t.cost_per_day_cached = roundUsd(t.mean_cost_cached * requestsPerDay);
    }
  }
  return t;
}

/** Runs one parsed eval file. */
export function runEval(host: FileHost, evalPath: string, file: EvalFile, options: RunOptions = {}): EvalResult {
  const templatePath = join(dirname(evalPath), file.template);
  const prepared = prepareSubject(host, templatePath, { model: options.model ?? file.model });
  const empty: EvalResult = {
    path: evalPath,
    template: templatePath,
    tokenizer: '',
    exact: false,
    cases: [],
    totals: totalsOf([], undefined),
    cache_prefix: { tokens: 0, messages: 0, partial_chars: 0, requests: 0 },
    cache_prefix_tokens: 0,
    passed: false,
  };
  if (!prepared.subject) return { ...empty, error: prepared.error };
  const subject = prepared.subject;
  const rate = options.requestsPerDay ?? file.requests_per_day ?? subject.config.requests_per_day;

  // ---- Baseline: every case as written.
  const inputs: CaseInput[] = [];
  const baseline: CaseResult[] = [];
  const requests: RenderedMessage[][] = [];
  for (const c of file.cases) {
    const f = caseFixture(host, subject, evalPath, c);
    if (f.error) {
      inputs.push({ caseId: c.id, config: subject.config });
      baseline.push(measure(file, c, undefined, f.error));
      continue;
    }
    const result = assembleWith(subject, f.fixture, subject.config);
    inputs.push({ caseId: c.id, fixture: f.fixture, config: subject.config, baseline: result });
    if (result.ok) requests.push(result.messages);
    baseline.push(measure(file, c, result, undefined, f.fixture?.name));
  }

  // ---- The cacheable prefix: across the template's fixtures and the cases.
  requests.push(...fixtureRequests(host, subject));
  const distinct = dedupeRequests(requests);
  const prefix = commonPrefix(distinct, subject.tokenizer, subject.messageOverhead);
  // Costs with the prefix billed at the cached price.
  const price = (c: CaseResult, r: AssemblyResult | undefined): CaseResult => {
    if (!r || !r.ok) return c;
    const cost = traceCost(r.trace, subject.config, { configPath: subject.configPath, cachedPrefixTokens: Math.min(prefix.tokens, r.trace.input_tokens), requestsPerDay: rate });
    if (cost) c.metrics.cost = cost;
    return c;
  };
  baseline.forEach((c, i) => price(c, inputs[i].baseline));

  const model = subject.modelName;
  const result: EvalResult = {
    path: evalPath,
    template: templatePath,
    ...(model !== undefined ? { model } : {}),
    tokenizer: subject.tokenizer.name,
    exact: subject.analysis.tokenizer.exact,
    cases: baseline,
    totals: totalsOf(baseline, rate),
    cache_prefix: { ...prefix },
    cache_prefix_tokens: prefix.tokens,
    passed: baseline.every((c) => c.passed),
  };
  const sample = inputs.find((i) => i.baseline?.ok)?.baseline;
  if (sample) {
    const cost = traceCost({ ...sample.trace, input_tokens: prefix.tokens }, subject.config, { configPath: subject.configPath, requestsPerDay: rate });
    if (cost) result.cache_prefix.cost = cost;
  }

  // ---- Ablations, one at a time.
  if (options.ablate) {
    const all: Ablation[] = [...builtinAblations(subject, inputs), ...fileAblations(host, evalPath, file.ablations)];
    const chosen = options.only?.length ? all.filter((a) => options.only!.some((o) => o === a.id || (o.endsWith(':') && a.id.startsWith(o)) || a.id.startsWith(`${o}:`))) : all;
    result.ablations = chosen.map((ab) => {
      let changed = 0;
      let error: string | undefined;
      // A case the ablation does not change keeps its baseline numbers; an ablation is priced at the baseline's cached prefix.
      const cases = file.cases.map((c, i) => {
        const input = inputs[i];
        if (!input.baseline) return baseline[i];
        const t = ab.apply(input);
        if (!t) return baseline[i];
        if ('error' in t) {
          error = t.error;
          return measure(file, c, undefined, t.error);
        }
        changed++;
        const r = assembleWith(subject, t.fixture, t.config);
        return price(measure(file, c, r, undefined, t.fixture?.name), r);
      });
      const out: AblationResult = { id: ab.id, description: ab.description, changed, totals: totalsOf(cases, rate), cases };
      if (error) out.error = error;
      return out;
    });
  }
  return result;
}

/** The requests of every fixture of the template (its sample first, as the analysis lists them). */
function fixtureRequests(host: FileHost, subject: Subject): RenderedMessage[][] {
  const out: RenderedMessage[][] = [];
  for (const fx of subject.analysis.fixtures) {
    const f = findFixture(host, subject, subject.path, fx.path.endsWith('#sample') ? 'sample' : fx.path);
    if (!f.fixture) continue;
    const r = assembleWith(subject, f.fixture);
    if (r.ok) out.push(r.messages);
  }
  return out;
}

/**
 * The cacheable prefix across every fixture of a template (what `ctxlens assemble --format json`
 * can report as `cache_prefix_tokens`); undefined when the template cannot be bound.
 */
export function templateCachePrefix(host: FileHost, templatePath: string, options: { model?: string } = {}): CommonPrefix | undefined {
  const p = prepareSubject(host, templatePath, options);
  if (!p.subject) return undefined;
  return commonPrefix(dedupeRequests(fixtureRequests(host, p.subject)), p.subject.tokenizer, p.subject.messageOverhead);
}

/** Requests with the same messages counted once (two fixtures that render alike are one request). */
function dedupeRequests(requests: RenderedMessage[][]): RenderedMessage[][] {
  const seen = new Set<string>();
  const out: RenderedMessage[][] = [];
  for (const r of requests) {
    const key = JSON.stringify(r.map((m) => [m.role, m.content]));
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}

/** Parses and runs an eval file read through the host; its problems when it does not parse. */
export function runEvalFile(host: FileHost, evalPath: string, options: RunOptions = {}): { result?: EvalResult; doc: EvalDoc } {
  const text = host.readFile(evalPath);
  if (text === undefined) return { doc: { path: evalPath, text: '', problems: [{ message: `cannot read ${evalPath}`, span: { start: 0, end: 0 } }] } };
  const doc = parseEval(evalPath, text);
  if (!doc.eval) return { doc };
  return { doc, result: runEval(host, evalPath, doc.eval, options) };
}
