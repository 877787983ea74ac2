/**
 * The preview's what-if budgets and compare mode on the server side: re-assembles a template with
 * budgets the user typed in the panel (nothing is written), assembles the second side of a
 * comparison (another fixture, another model, or the budgets as written against the what-if ones)
 * and diffs the two, and computes the config edits of "Apply to config".
 *
 * Both sides are assembled with the code `ctxlens diff` runs (src/core/eval: `assembleWith`,
 * `patchConfig`, `findFixture`, `diffAssemblies`), so the panel and the CLI print the same diff;
 * each comparison carries the `ctxlens diff` arguments that reproduce it.
 */
import * as path from 'node:path';
import type { TemplateAnalysis } from '../core/analyze';
import type { ContextConfig } from '../core/config/schema';
import { slotBudgetEdits } from '../core/config/edit';
import { assembleWith, diffAssemblies, findFixture, patchConfig, prepareSubject, subjectFromAnalysis } from '../core/eval';
import type { Subject } from '../core/eval';
import type { FileHost } from '../core/host';
import { SAMPLE_FIXTURE } from '../core/sample';
import { LineIndex } from '../core/text/lineIndex';
import type { AssemblyResult, FixtureDoc } from '../core/types';
import type { BudgetEditResult, PreviewVariant } from '../protocol/lsp';
import type { CompareSide, CompareTarget, PreviewCompare, PreviewResult, PreviewSnapshotBody, WhatIfState } from '../protocol/preview';

export interface VariantContext {
  host: FileHost;
  /** Workspace roots, for the template path of the `ctxlens diff` command. */
  roots: readonly string[];
  /** True when the session overrides the model (the CLI then needs `--model`). */
  sessionModel: boolean;
}

/** The request parts of an assembly result the panel shows. */
export function previewResult(r: AssemblyResult): PreviewResult {
  return { ok: r.ok, error: r.error, budget: r.budget, trace: r.trace, messages: r.messages };
}

/** `evidence=400,history=900`, in the config's slot order (the CLI's `--budget` spec). */
function budgetSpec(budgets: Readonly<Record<string, number>>, config: ContextConfig): string {
  const order = Object.keys(config.slots ?? {});
  return Object.keys(budgets)
    .sort((x, y) => (order.indexOf(x) + 1 || Infinity) - (order.indexOf(y) + 1 || Infinity) || x.localeCompare(y))
    .map((k) => `${k}=${budgets[k]}`)
    .join(',');
}

/** `ctxlens diff`'s side label: "fixture post-retries · gpt-4o · budget evidence=400". */
function label(fixture: FixtureDoc | undefined, model: string | undefined, spec: string | undefined): string {
  return [fixture ? `fixture ${fixture.name}` : 'no fixture', model ?? 'model as configured', spec ? `budget ${spec}` : ''].filter(Boolean).join(' · ');
}

function budgetPatch(budgets: Readonly<Record<string, number>>): Record<string, unknown> {
  const slots: Record<string, { budget: number }> = {};
  for (const [k, v] of Object.entries(budgets)) slots[k] = { budget: v };
  return { slots };
}

/** The what-if config, or why the budgets do not apply to this config. */
function whatIfConfig(config: ContextConfig, budgets: Readonly<Record<string, number>>): { config: ContextConfig } | { error: string } {
  const unknown = Object.keys(budgets).filter((k) => !(k in (config.slots ?? {})));
  if (unknown.length) return { error: `${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a slot of the config` };
  const p = patchConfig(config, budgetPatch(budgets));
  return p.config ? { config: p.config } : { error: p.error ?? 'the budgets do not validate' };
}

/** Where "Apply to config" would write, checked by computing the edit now. */
function applyState(a: TemplateAnalysis, budgets: Readonly<Record<string, number>>, textOf: (p: string) => string | undefined): WhatIfState['apply'] {
  const binding = a.config;
  if (!binding || a.zeroConfig) return { ok: false, reason: 'The template has no context config to write to: create one first (quick fix “Create context config”).' };
  const file = binding.inline ? a.path : binding.path;
  const text = textOf(file) ?? (binding.inline ? a.template.text : binding.doc.text);
  const r = slotBudgetEdits(file, text, budgets, { inline: binding.inline });
  return r.error !== undefined ? { ok: false, reason: `Cannot write the budgets: ${r.error}.` } : { ok: true, path: file };
}

function quote(arg: string): string {
  return /^[\w./@:+=,%-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `ctxlens diff` flags for one option: none when both sides use the CLI's default, else once per side. */
function flags(name: string, a: string | undefined, b: string | undefined, isDefault: (v: string | undefined) => boolean): string[] {
  if (a === b) return isDefault(a) || a === undefined ? [] : [name, a, name, a];
  if (a === undefined) return [name, b!];
  return [name, a, name, b ?? a];
}

interface Side {
  subject: Subject;
  fixture?: FixtureDoc;
  budgets?: Record<string, number>;
  spec?: string;
  result: AssemblyResult;
}

function side(s: Side): CompareSide {
  const out: CompareSide = { label: label(s.fixture, s.subject.modelName, s.spec), result: previewResult(s.result) };
  if (s.fixture) out.fixture = s.fixture.name;
  if (s.subject.modelName) out.model = s.subject.modelName;
  if (s.budgets) out.budgets = s.budgets;
  return out;
}

/**
 * The snapshot `body` (of analysis `a`) with the variant applied: the what-if request as its
 * result (with `whatIf`), and the comparison (`compare`). `locate` recomputes the locations of a
 * what-if result's items.
 */
export function applyVariant(
  body: PreviewSnapshotBody,
  a: TemplateAnalysis,
  variant: PreviewVariant,
  ctx: VariantContext & { textOf(p: string): string | undefined; locate(r: AssemblyResult): PreviewSnapshotBody['locations'] },
): PreviewSnapshotBody {
  const budgets = variant.budgets && Object.keys(variant.budgets).length ? variant.budgets : undefined;
  if (!budgets && !variant.compare) return body;
  const out: PreviewSnapshotBody = { ...body };
  const prepared = subjectFromAnalysis(ctx.host, a, a.model ? { model: a.model.name } : {});
  if (!prepared.subject) {
    if (budgets) out.whatIf = { budgets, written: {}, error: prepared.error, apply: { ok: false, reason: prepared.error } };
    if (variant.compare) out.compare = { target: variant.compare, error: prepared.error };
    return out;
  }
  const subject = prepared.subject;
  const fixture = a.fixture;
  const asWritten = assembleWith(subject, fixture);
  let whatIf: { config: ContextConfig; result: AssemblyResult; spec: string } | undefined;
  if (budgets) {
    const written: Record<string, number | null> = {};
    for (const line of asWritten.budget.slots) written[line.name] = line.budget ?? null;
    const cfg = whatIfConfig(subject.config, budgets);
    if ('error' in cfg) {
      out.whatIf = { budgets, written, error: cfg.error, apply: { ok: false, reason: cfg.error } };
    } else {
      const result = assembleWith(subject, fixture, cfg.config);
      whatIf = { config: cfg.config, result, spec: budgetSpec(budgets, subject.config) };
      out.whatIf = { budgets, written, diff: diffAssemblies(asWritten, result), apply: applyState(a, budgets, ctx.textOf) };
      out.result = previewResult(result);
      out.locations = ctx.locate(result);
    }
  }
  if (variant.compare) out.compare = compare(variant.compare, a, subject, fixture, asWritten, whatIf, budgets, ctx);
  return out;
}

function compare(
  target: CompareTarget,
  a: TemplateAnalysis,
  subject: Subject,
  fixture: FixtureDoc | undefined,
  asWritten: AssemblyResult,
  whatIf: { config: ContextConfig; result: AssemblyResult; spec: string } | undefined,
  budgets: Record<string, number> | undefined,
  ctx: VariantContext,
): PreviewCompare {
  const fail = (error: string): PreviewCompare => ({ target, error });
  // A: the panel's request (with its what-if budgets); B: that request with one thing changed.
  const A: Side = whatIf ? { subject, fixture, budgets, spec: whatIf.spec, result: whatIf.result } : { subject, fixture, result: asWritten };
  let B: Side;
  if (target.kind === 'budget') {
    if (!whatIf || !budgets) return fail('Type a budget in the budget bar first: the budget comparison puts the budgets as written beside the what-if ones.');
    A.budgets = undefined;
    A.spec = undefined;
    A.result = asWritten;
    B = { subject, fixture, budgets, spec: whatIf.spec, result: whatIf.result };
  } else if (target.kind === 'fixture') {
    const choice = a.fixtures.find((f) => f.path === target.path);
    if (!choice) return fail(`${target.path} is not a fixture of ${path.posix.basename(a.path)}`);
    const found = findFixture(ctx.host, subject, a.path, choice.name === SAMPLE_FIXTURE ? SAMPLE_FIXTURE : choice.path);
    if (!found.fixture) return fail(found.error ?? `fixture ${choice.name} cannot be read`);
    B = { subject, fixture: found.fixture, budgets: A.budgets, spec: A.spec, result: assembleWith(subject, found.fixture, whatIf?.config ?? subject.config) };
  } else {
    const other = prepareSubject(ctx.host, a.path, { model: target.model });
    if (!other.subject) return fail(other.error);
    let config = other.subject.config;
    if (budgets) {
      const cfg = whatIfConfig(config, budgets);
      if ('error' in cfg) return fail(cfg.error);
      config = cfg.config;
    }
    B = { subject: other.subject, fixture, budgets: A.budgets, spec: A.spec, result: assembleWith(other.subject, fixture, config) };
  }
  return { target, a: side(A), b: side(B), diff: diffAssemblies(A.result, B.result), command: diffCommand(a, A, B, ctx) };
}

/** The `ctxlens diff` arguments that print the same comparison (for the panel to show). */
function diffCommand(a: TemplateAnalysis, A: Side, B: Side, ctx: VariantContext): string[] {
  const root = ctx.roots.find((r) => a.path.startsWith(r.endsWith('/') ? r : `${r}/`));
  const template = root ? path.posix.relative(root, a.path) : a.path;
  // The CLI's defaults: the template's first fixture, the config's model, the budgets as written.
  const firstFixture = a.fixtures[0]?.name;
  const args = ['diff', template];
  args.push(...flags('--fixture', A.fixture?.name, B.fixture?.name, (v) => v === firstFixture));
  args.push(...flags('--model', A.subject.modelName, B.subject.modelName, () => !ctx.sessionModel));
  args.push(...flags('--budget', A.spec, B.spec, (v) => v === undefined));
  return args.map(quote);
}

/**
 * The edits of "Apply to config": the what-if budgets written into the template's config (a
 * `*.context.yaml`, or the template's own front matter for an inline config), as LSP ranges of
 * the text the server has now.
 */
export function budgetEditReply(
  a: TemplateAnalysis,
  budgets: Readonly<Record<string, number>>,
  ctx: { textOf(p: string): string | undefined; uriOf(p: string): string; versionOf(p: string): number | undefined },
): BudgetEditResult {
  const binding = a.config;
  if (!binding || a.zeroConfig) return { error: `${path.posix.basename(a.path)} has no context config to write to: create one first (quick fix “Create context config”)` };
  const file = binding.inline ? a.path : binding.path;
  const text = ctx.textOf(file) ?? (binding.inline ? a.template.text : binding.doc.text);
  const r = slotBudgetEdits(file, text, budgets, { inline: binding.inline });
  if (r.error !== undefined) return { error: r.error };
  const idx = new LineIndex(text);
  const edits = r.edits.map((e) => ({ range: { start: idx.positionAt(e.span.start), end: idx.positionAt(e.span.end) }, newText: e.newText }));
  const out: BudgetEditResult = { uri: ctx.uriOf(file), path: file, edits };
  const version = ctx.versionOf(file);
  if (version !== undefined) out.version = version;
  return out;
}
