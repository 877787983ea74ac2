/**
 * The analysis of one file, for every front end (diagnostics, lenses, hovers, the preview, `ctxlens
 * check`). A template's analysis reads as its stages: bind (bind.ts: config, model, tokenizer,
 * budget, the rules that need no values) → fixture (choose, read, scan) → assemble → summary.
 */
import type { PromptyLoader } from '../language/prompty/engine';
import type { FileHost } from '../host';
import type { ContextConfig, SeveritySetting } from '../config/schema';
import type { AssemblyResult, BudgetReport, ConfigDoc, Finding, FixtureDoc, ModelInfo, SlotKind, Span, TemplateDoc, Trust } from '../types';
import type { TemplateBinding } from './bind';
import { fixtureName, resolveFixtureFiles } from '../fixture';
import { budgetFindings } from '../budget';
import { budgetFor } from '../budget/remainder';
import { applySeverities } from '../rules/registry';
import { configRules } from '../rules/templateRules';
import { fixtureTemplateUnresolved, fixtureTooLarge, requiredMissing } from '../rules/projectRules';
import { scanHiddenCharacters, scanSecrets } from '../text/scan';
import { SAMPLE_FIXTURE, ownFixturePath, samplePath } from '../sample';
import type { CodeRegistrySetting } from '../language/partials';
import { assembleBound, bindModel, bindTemplate } from './bind';
import { DEFAULT_MAX_FILE_SIZE, append, classifyFile, fixtureHead, readConfig, readFixture, readTemplate, resolveFixture, scanFixture, tooLarge } from './files';
import { fixturesFor, pickFixture, templateForFixture, templatesUsing } from './lookup';
import { templateFileOf, templatesIn } from '../language';

export interface AnalyzeOptions {
  /** Fixture path or name to use; default: the first fixture that matches the template. */
  fixture?: string;
  /** Model name overriding the config's (editor setting or CLI flag). */
  model?: string;
  /** Model used when neither the option, the template nor the config names one. */
  defaultModel?: string;
  /** When false, no fixture is chosen unless `fixture` names one (editor setting fixture.autoSelect). */
  autoFixture?: boolean;
  /** Severity overrides from the editor settings (applied after the config's `rules`). */
  severities?: Record<string, SeveritySetting>;
  /** Files larger than this (bytes) are not tokenized or assembled; a finding says so. */
  maxFileSize?: number;
  /** dotprompt helpers and partials registered in code, from the editor setting `contextLens.dotprompt`. */
  codeRegistered?: CodeRegistrySetting;
  /** The loader of `.prompty` files by glob, from the editor setting `contextLens.prompty.loaders`. */
  promptyLoaders?: Readonly<Record<string, PromptyLoader>>;
  /**
   * Only the findings are wanted (`ctxlens check`): what only the views read is not computed. A
   * template analysis then has no slot summaries (`slots` is empty) and no cost on its trace.
   */
  findingsOnly?: boolean;
}

export interface SlotSummary {
  name: string;
  kind: SlotKind;
  trust?: Trust;
  required: boolean;
  /** Resolved budget in tokens. */
  budget?: number;
  /** Tokens of the slot's packed content from the active fixture (0 without a fixture). */
  tokens: number;
  kept: number;
  total: number;
  /** First use in the template, where its code lens goes. */
  firstUse?: Span;
  /** The slot's entry in the config file. */
  configSpan?: Span;
}

export interface TemplateAnalysis {
  kind: 'template';
  path: string;
  template: TemplateDoc;
  config?: { path: string; inline: boolean; doc: ConfigDoc };
  fixtures: Array<{ path: string; name: string }>;
  fixture?: FixtureDoc;
  model?: ModelInfo;
  tokenizer: { name: string; exact: boolean };
  budget?: BudgetReport;
  assembly?: AssemblyResult;
  slots: SlotSummary[];
  /** Findings on any file involved (each carries its own path). */
  findings: Finding[];
  /** Every file read for this analysis (config, fixtures, file references): re-analyse when one changes. */
  dependencies: string[];
  /** Set when no context config applies: the request comes from the front matter, the registry and the sample. */
  zeroConfig?: { config: ContextConfig; maxOutput?: number };
  /** The setup every assembly of this template starts from (eval, diff and the preview's variants reuse it); absent in a light analysis. */
  binding?: TemplateBinding;
  /**
   * A file of several templates (BAML: one per function): the analysis of each, in file order.
   * The analysis itself is the first's, with the file's path and every function's findings.
   */
  functions?: TemplateAnalysis[];
}

export interface ConfigAnalysis {
  kind: 'config';
  path: string;
  doc: ConfigDoc;
  budget?: BudgetReport;
  model?: ModelInfo;
  tokenizer: { name: string; exact: boolean };
  /** Templates bound to this config. */
  templates: string[];
  findings: Finding[];
  dependencies: string[];
}

export interface FixtureAnalysis {
  kind: 'fixture';
  path: string;
  doc: FixtureDoc;
  /** The template this fixture feeds, and its analysis with this fixture active. */
  template?: TemplateAnalysis;
  findings: Finding[];
  dependencies: string[];
}

export type Analysis = TemplateAnalysis | ConfigAnalysis | FixtureAnalysis;

/** Severity overrides (config, then editor), and one finding per place and message. */
export function finish(findings: Finding[], config: ContextConfig | undefined, severities: AnalyzeOptions['severities']): Finding[] {
  return dedupe(applySeverities(findings, config?.rules, severities));
}

export function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of findings) {
    const key = `${f.path}\u0000${f.rule}\u0000${f.span.start}\u0000${f.span.end}\u0000${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Template analysis: bind → fixture → assemble → summary
// ---------------------------------------------------------------------------

/** Findings of the template's engine, which speak without a fixture too (content findings need one). */
const ENGINE_RULES = new Set(['unsupported-feature', 'template-invalid', 'unknown-helper', 'code-registered', 'value-missing']);

export function analyzeTemplate(host: FileHost, path: string, options: AnalyzeOptions = {}): TemplateAnalysis | undefined {
  const template = readTemplate(host, path);
  if (!template) return undefined;
  return analyzeBound(host, bindTemplate(host, template, options), options);
}

/**
 * The analysis of a bound template with one fixture. The binding depends on the template, its
 * config, sample and partials and the model options, never on the fixture, so a caller that
 * analyses one template with each of its fixtures in turn (`ctxlens check`) binds it once and
 * passes the binding back with each fixture. It must come from `bindTemplate` with the same
 * host and options (`fixture` aside), while no file it read has changed.
 */
export function analyzeBound(host: FileHost, b: TemplateBinding, options: AnalyzeOptions = {}): TemplateAnalysis {
  const template = b.template;
  const path = template.path;
  const findings = [...b.findings];
  const dependencies = [...b.dependencies];
  const analysis: TemplateAnalysis = {
    kind: 'template',
    path,
    template,
    config: b.config,
    fixtures: [],
    model: b.model.info,
    tokenizer: { name: b.tokenizer.name, exact: b.exact },
    slots: [],
    findings,
    dependencies,
    binding: b,
  };
  if (!b.usable) {
    analysis.findings = inFile(path, finish(findings, undefined, options.severities));
    return analysis;
  }
  if (b.zeroConfig) analysis.zeroConfig = b.zeroConfig;
  analysis.budget = b.budget;

  const chosen = chooseFixture(host, b, options);
  analysis.fixtures = chosen.fixtures;
  append(dependencies, chosen.dependencies);
  append(findings, chosen.findings);
  const fixture = chosen.fixture;
  analysis.fixture = fixture;

  append(findings, b.partials.findings);
  append(dependencies, b.partials.dependencies);
  // The request's cost is for the views; no finding reads it.
  const assembly = assembleBound(b, fixture, b.effective, options.findingsOnly ? { cost: false } : {});
  analysis.assembly = assembly;
  // Engine findings (unsupported constructs) speak without a fixture too; content findings need one.
  if (fixture) append(findings, assembly.findings);
  else append(findings, assembly.findings.filter((f) => ENGINE_RULES.has(f.rule)));
  if (!options.findingsOnly) analysis.slots = slotSummaries(b, assembly, fixture);
  analysis.findings = inFile(path, finish(findings, b.zeroConfig ? undefined : b.effective, options.severities));
  return analysis;
}

/** Findings located in a template inside a file (BAML's `x.baml#F`) are the file's. */
function inFile(path: string, findings: Finding[]): Finding[] {
  const file = templateFileOf(path);
  if (file === path) return findings;
  return findings.map((f) => (f.path === path ? { ...f, path: file } : f));
}

/** The template's fixtures (its sample first) and the one this analysis uses, read, resolved and scanned. */
function chooseFixture(host: FileHost, b: TemplateBinding, options: AnalyzeOptions): { fixtures: TemplateAnalysis['fixtures']; fixture?: FixtureDoc; findings: Finding[]; dependencies: string[] } {
  const path = b.template.path;
  const findings: Finding[] = [];
  const fixturePaths = fixturesFor(host, path, b.config?.path, b.config?.doc.config);
  const dependencies = [...fixturePaths];
  const sample = b.sample;
  // A format's own fixtures (BAML's tests) come first, each by its name; a fixture option naming one picks it.
  const tests = sample.tests ?? [];
  const test = tests.find((t) => options.fixture === t.name || options.fixture === ownFixturePath(path, t.name));
  const fixtures = [
    ...(sample.tests ? tests.map((t) => ({ path: ownFixturePath(path, t.name), name: t.name })) : sample.fixture ? [{ path: samplePath(path), name: SAMPLE_FIXTURE }] : []),
    ...fixturePaths.map((p) => ({ path: p, name: (tooLarge(host, p, options.maxFileSize) === undefined ? fixtureHead(host, p)?.name : undefined) ?? fixtureName(p) })),
  ];
  const wantsSample = test !== undefined || options.fixture === SAMPLE_FIXTURE || options.fixture === samplePath(path);
  // The template's own sample is the first fixture; an explicitly named fixture file wins.
  const active = wantsSample ? undefined : pickFixture(host, fixturePaths, options.fixture, options.autoFixture !== false && !sample.fixture);
  let fixture: FixtureDoc | undefined;
  if (test) fixture = test.fixture;
  else if (sample.fixture && (wantsSample || (!active && options.autoFixture !== false))) fixture = sample.fixture;
  if (active && !fixture) {
    if (!fixturePaths.includes(active)) dependencies.push(active);
    // The size check comes before parsing: a huge fixture must not stall the analysis.
    const big = tooLarge(host, active, options.maxFileSize);
    const raw = big === undefined ? readFixture(host, active) : undefined;
    if (big !== undefined) findings.push(fixtureTooLarge(active, big, options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE));
    else if (raw) {
      const resolved = resolveFixture(raw, host);
      fixture = resolved.doc;
      append(dependencies, resolved.dependencies);
      append(findings, fixture.findings, scanFixture(host, fixture));
      if (b.config && !b.zeroConfig) append(findings, requiredMissing(fixture, b.effective, b.config.doc));
    }
  }
  return { fixtures, ...(fixture ? { fixture } : {}), findings, dependencies };
}

/** One summary per slot: every slot the config declares, or without a config every slot the template uses. */
function slotSummaries(b: TemplateBinding, assembly: AssemblyResult, fixture: FixtureDoc | undefined): SlotSummary[] {
  const firstUse = new Map<string, Span>();
  // A use in another file of a composed request (u.path) is that file's lens, not this one's.
  for (const u of b.template.uses) if (!u.path && !firstUse.has(u.slot)) firstUse.set(u.slot, u.span);
  const traceSlots = new Map(assembly.trace.slots.map((s) => [s.name, s]));
  if (b.zeroConfig) {
    // Without a config, each slot is counted from the rendered request.
    const attributed = new Map<string, string[]>();
    for (const m of assembly.messages) for (const p of m.parts) if (p.slot !== undefined) attributed.set(p.slot, [...(attributed.get(p.slot) ?? []), p.text]);
    return [...firstUse.keys()].map((name) => {
      const t = traceSlots.get(name);
      return {
        name,
        kind: t?.kind ?? 'other',
        required: false,
        tokens: fixture ? (attributed.get(name) ?? []).reduce((n, text) => n + b.tokenizer.count(text), 0) : 0,
        kept: fixture ? (t?.kept ?? 0) : 0,
        total: fixture ? (t?.total ?? 0) : 0,
        firstUse: firstUse.get(name),
      };
    });
  }
  const budgets = new Map((b.budget?.slots ?? []).map((s) => [s.name, s.budget]));
  const doc = b.config!.doc;
  // Text the runtime writes itself (BAML's `ctx.output_format`) is no slot of the config, but a part
  // of the request with its own count and lens.
  const written: SlotSummary[] = [];
  for (const [name, span] of firstUse) {
    if (!name.includes('.') || Object.prototype.hasOwnProperty.call(b.effective.slots, name)) continue;
    let tokens = 0;
    for (const m of assembly.messages) for (const p of m.parts) if (p.slot === name) tokens += b.tokenizer.count(p.text);
    written.push({ name, kind: 'other', required: false, tokens: fixture ? tokens : 0, kept: 0, total: 0, firstUse: span });
  }
  return [...Object.entries(b.effective.slots).map(([name, s]) => {
    const t = traceSlots.get(name);
    return {
      name,
      kind: s.kind,
      trust: s.trust,
      required: s.required,
      budget: budgets.get(name),
      tokens: fixture ? (t?.used ?? 0) : 0,
      kept: fixture ? (t?.kept ?? 0) : 0,
      total: fixture ? (t?.total ?? 0) : 0,
      firstUse: firstUse.get(name),
      configSpan: b.config!.inline ? undefined : doc.keySpan(['slots', name]),
    };
  }), ...written];
}

// ---------------------------------------------------------------------------
// Config and fixture analysis
// ---------------------------------------------------------------------------

export function analyzeConfig(host: FileHost, path: string, options: AnalyzeOptions = {}): ConfigAnalysis | undefined {
  const doc = readConfig(host, path);
  if (!doc) return undefined;
  const findings: Finding[] = [...doc.findings, ...scanHiddenCharacters(path, doc.text), ...scanSecrets(path, doc.text)];
  const config = doc.config;
  const bound = bindModel(
    config,
    options.model ?? config?.model ?? options.defaultModel,
    () => ({ path, span: doc.valueSpan(['model']) ?? { start: 0, end: 0 }, text: doc.text, ...(doc.keySpan(['models']) ? {} : { declareIn: { path, text: doc.text } }) }),
    () => ({ path, span: doc.valueSpan(['tokenizer']) ?? { start: 0, end: 0 } }),
    true,
  );
  append(findings, bound.findings);
  const tokenizer = { name: bound.tokenizer.name, exact: bound.exact };
  let budget: BudgetReport | undefined;
  if (config) {
    budget = budgetFor(config, bound.model.info, tokenizer);
    append(findings, budgetFindings(budget, doc, bound.model.info));
  }
  const templatesBound = templatesUsing(host, path);
  // A config no template uses yet still gets every rule that needs no template.
  if (doc.config && !templatesBound.length && !doc.findings.some((f) => f.rule === 'config-invalid')) append(findings, configRules(doc));
  return {
    kind: 'config',
    path,
    doc,
    budget,
    model: bound.model.info,
    tokenizer,
    templates: templatesBound,
    findings: finish(findings, config, options.severities),
    dependencies: templatesBound,
  };
}

export function analyzeFixture(host: FileHost, path: string, options: AnalyzeOptions = {}): FixtureAnalysis | undefined {
  const doc = readFixture(host, path);
  if (!doc) return undefined;
  const templatePath = templateForFixture(host, path, doc);
  if (doc.template && !templatePath) {
    return { kind: 'fixture', path, doc, findings: finish([...doc.findings, fixtureTemplateUnresolved(doc)], undefined, options.severities), dependencies: [] };
  }
  const template = templatePath ? analyzeTemplate(host, templatePath, { ...options, fixture: path }) : undefined;
  const own = template
    ? template.findings.filter((f) => f.path === path || (template.fixture?.path === path && f.path !== templatePath && f.path !== template.config?.path))
    : finish([...doc.findings, ...scanFixture(host, resolveFixtureFiles(doc, host).doc)], undefined, options.severities);
  return { kind: 'fixture', path, doc, template, findings: own, dependencies: template ? [templatePath!, ...template.dependencies] : [] };
}

/** A template file: its one template, or each template of a file that holds several (BAML's functions). */
function analyzeTemplates(host: FileHost, path: string, options: AnalyzeOptions): TemplateAnalysis | undefined {
  const text = templateFileOf(path) === path ? host.readFile(path) : undefined;
  const inner = text === undefined ? [path] : templatesIn(path, text);
  if (inner.length <= 1) return analyzeTemplate(host, inner[0] ?? path, options);
  const all = inner.map((p) => analyzeTemplate(host, p, options)).filter((a): a is TemplateAnalysis => a !== undefined);
  if (!all.length) return undefined;
  return {
    ...all[0],
    path,
    functions: all,
    // One finding per place and message: a project that does not load says so once, not once per function.
    findings: dedupe(all.flatMap((a) => a.findings)),
    dependencies: [...new Set(all.flatMap((a) => a.dependencies))],
  };
}

export function analyzeFile(host: FileHost, path: string, options: AnalyzeOptions = {}): Analysis | undefined {
  switch (classifyFile(path)) {
    case 'template':
      return analyzeTemplates(host, path, options);
    case 'config':
      return analyzeConfig(host, path, options);
    case 'fixture':
      return analyzeFixture(host, path, options);
    default:
      return undefined;
  }
}
