/**
 * Project analysis: binds a template to its context config and fixtures, counts, assembles and
 * runs every rule. The one entry point shared by the CLI, the language server and the preview, so
 * that squiggles, `ctxlens check` and the panel always agree.
 */
import type { FileHost } from './host';
import type { ContextConfig, SeveritySetting } from './config/schema';
import type { AssemblyResult, BudgetReport, ConfigDoc, Finding, FixtureDoc, ModelInfo, SlotKind, Span, TemplateDoc, Trust } from './types';
import { parseTemplate } from './template';
import { parseConfig, parseInlineConfig } from './config/parse';
import { fixtureName, parseFixture, resolveFixtureFiles } from './fixture';
import { basename, dirname, resolveInWorkspace } from './paths';
import { scanHiddenCharacters, scanSecrets } from './text/scan';
import { getTokenizer } from './tokens';
import { resolveModel } from './models';
import { budgetFindings, computeBudget } from './budget';
import { assemble, withRemainder } from './assembly';
import { applySeverities, finding } from './rules/registry';
import { configRules, templateRules } from './rules/templateRules';
import { ContextConfigSchema } from './config/schema';
import { SAMPLE_FIXTURE, requestSettings, runtimeDefaults, sampleFixture, samplePath, templateDefaults } from './sample';
import { readPartials } from './partials';
import { ENV_REFERENCE } from './models';
import { withCost } from './cost';
import { cachePrefixFindings } from './prefix';

/**
 * Appends every list to `to` one by one. Spreading a list into push() passes it as arguments, and
 * a fixture with 150,000 hidden characters (as many findings) overflowed the call stack (found by
 * the fuzz suite).
 */
function append<T>(to: T[], ...lists: ReadonlyArray<readonly T[]>): void {
  for (const list of lists) for (const x of list) to.push(x);
}

export type FileKind = 'template' | 'config' | 'fixture';

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

export const DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024;
const FALLBACK_TOKENIZER = 'o200k_base';

export function classifyFile(path: string): FileKind | undefined {
  if (/\.context\.ya?ml$/i.test(path)) return 'config';
  if (/\.fixture\.(ya?ml|json)$/i.test(path)) return 'fixture';
  // dotprompt partials (`_name.prompt`) are rendered inside the templates that include them, not on their own.
  if (/(^|\/)_[^/]*\.prompt$/i.test(path)) return undefined;
  if (/\.(prompt|prompty)$/i.test(path)) return 'template';
  return undefined;
}



// ---------------------------------------------------------------------------
// Parse caches. Parsing is keyed by path and exact text, so re-analysing a template after a
// config edit re-parses only the config. Each cache is least-recently-used first out, bounded by
// entries and by the characters of the texts it keeps (a parsed document takes several times its
// text): a scan of a folder of 2 MB fixtures must not keep every one of them.
// ---------------------------------------------------------------------------

class TextCache<T> {
  private readonly map = new Map<string, { text: string; value: T }>();
  private chars = 0;
  constructor(
    private readonly limit = 512,
    private readonly maxChars = Number.POSITIVE_INFINITY,
  ) {}
  get(path: string, text: string, make: () => T): T {
    const hit = this.map.get(path);
    if (hit && hit.text === text) {
      this.map.delete(path);
      this.map.set(path, hit);
      return hit.value;
    }
    const value = make();
    this.delete(path);
    this.map.set(path, { text, value });
    this.chars += text.length;
    // The newest entry stays, whatever its size.
    while (this.map.size > 1 && (this.map.size > this.limit || this.chars > this.maxChars)) this.delete(this.map.keys().next().value as string);
    return value;
  }
  delete(path: string): void {
    const hit = this.map.get(path);
    if (!hit) return;
    this.chars -= hit.text.length;
    this.map.delete(path);
  }
}

const MB = 1024 * 1024;
const templates = new TextCache<TemplateDoc>(512, 32 * MB);
const configs = new TextCache<ConfigDoc>(512, 32 * MB);
const fixtures = new TextCache<FixtureDoc>(512, 8 * MB);
/**
 * What binding needs of a fixture file: its `template:` and `name:`. Every template's analysis asks
 * it of every fixture its config matches or that lies beside it, so it is kept, by text, longer
 * than the parses (a folder of twelve 2 MB fixtures was parsed in full for every analysis).
 */
interface FixtureHead {
  template?: string;
  name: string;
}
const fixtureHeads = new TextCache<FixtureHead>(4096, 64 * MB);

function fixtureHead(host: FileHost, path: string): FixtureHead | undefined {
  const text = host.readFile(path);
  if (text === undefined) return undefined;
  return fixtureHeads.get(path, text, () => {
    // Without the words, or an escape that could spell them, no key of the document is `template` or `name`.
    if (!text.includes('template') && !text.includes('name') && !text.includes('\\')) return { name: fixtureName(path) };
    const doc = fixtures.get(path, text, () => parseFixture(path, text));
    return { ...(doc.template ? { template: doc.template.value } : {}), name: doc.name };
  });
}

/**
 * Drops the parsed documents of these paths (the language server, after its workspace scan read
 * files no open document needs). Later analyses parse them again.
 */
export function forgetParsed(paths: Iterable<string>): void {
  for (const p of paths) {
    templates.delete(p);
    configs.delete(p);
    fixtures.delete(p);
  }
}

// ---------------------------------------------------------------------------
// Derived caches. Typing in a template re-analyses it with the same config and fixtures: the
// fixture's file references, its hidden-character and secret scans (a 1 MB fixture takes
// milliseconds to scan) and the config scan are reused while their inputs are unchanged.
// ---------------------------------------------------------------------------

/** One host call made while computing a cached value, with what it returned. */
type HostCall =
  | { op: 'roots'; result: string }
  | { op: 'readFile' | 'size'; path: string; result: string | number | undefined }
  | { op: 'glob'; path: string; pattern: string; result: string }
  | { op: 'realPath'; path: string; result: string | undefined };

/** A host that records every call, so a cached value can be checked against the host later. */
function recordingHost(host: FileHost, calls: HostCall[]): FileHost {
  return {
    get roots() {
      calls.push({ op: 'roots', result: host.roots.join('\u0000') });
      return host.roots;
    },
    readFile(path: string) {
      const result = host.readFile(path);
      calls.push({ op: 'readFile', path, result });
      return result;
    },
    size(path: string) {
      const result = host.size(path);
      calls.push({ op: 'size', path, result });
      return result;
    },
    glob(dir: string, pattern: string) {
      const result = host.glob(dir, pattern);
      calls.push({ op: 'glob', path: dir, pattern, result: result.join('\u0000') });
      return result;
    },
    ...(host.realPath
      ? {
          realPath(p: string) {
            const result = host.realPath!(p);
            calls.push({ op: 'realPath', path: p, result });
            return result;
          },
        }
      : {}),
  };
}

/** Whether every recorded call gives the same answer now (a changed referenced file invalidates). */
function sameAnswers(host: FileHost, calls: readonly HostCall[]): boolean {
  for (const c of calls) {
    switch (c.op) {
      case 'roots':
        if (host.roots.join('\u0000') !== c.result) return false;
        break;
      case 'readFile':
        if (host.readFile(c.path) !== c.result) return false;
        break;
      case 'size':
        if (host.size(c.path) !== c.result) return false;
        break;
      case 'glob':
        if (host.glob(c.path, c.pattern).join('\u0000') !== c.result) return false;
        break;
      case 'realPath':
        if (host.realPath?.(c.path) !== c.result) return false;
        break;
    }
  }
  return true;
}

/**
 * `compute(host)` memoized by `key` (a parsed or resolved document, kept by the parse caches while
 * its text is unchanged) and validated by replaying the host calls it made.
 */
class HostMemo<K extends object, V> {
  private readonly map = new WeakMap<K, { calls: HostCall[]; value: V }>();
  get(key: K, host: FileHost, compute: (host: FileHost) => V): V {
    const hit = this.map.get(key);
    if (hit && sameAnswers(host, hit.calls)) return hit.value;
    const calls: HostCall[] = [];
    const value = compute(recordingHost(host, calls));
    this.map.set(key, { calls, value });
    return value;
  }
}

const resolvedFixtures = new HostMemo<FixtureDoc, { doc: FixtureDoc; dependencies: string[] }>();
const fixtureScans = new HostMemo<FixtureDoc, Finding[]>();
const configScans = new WeakMap<ConfigDoc, Finding[]>();

/** The fixture with its `{ file: ... }` values read; the same object while nothing it read changed. */
function resolveFixture(raw: FixtureDoc, host: FileHost): { doc: FixtureDoc; dependencies: string[] } {
  return resolvedFixtures.get(raw, host, (h) => resolveFixtureFiles(raw, h));
}

/** Hidden characters in a (file) config's text; a config document is kept per text by the parse cache. */
function scanConfig(doc: ConfigDoc): Finding[] {
  let f = configScans.get(doc);
  if (!f) {
    f = scanHiddenCharacters(doc.path, doc.text);
    configScans.set(doc, f);
  }
  return f;
}

function tooLarge(host: FileHost, path: string, options: AnalyzeOptions): number | undefined {
  const size = host.size(path);
  const max = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  return size !== undefined && size > max ? size : undefined;
}

function readTemplate(host: FileHost, path: string): TemplateDoc | undefined {
  const text = host.readFile(path);
  return text === undefined ? undefined : templates.get(path, text, () => parseTemplate(path, text));
}

function readConfig(host: FileHost, path: string): ConfigDoc | undefined {
  const text = host.readFile(path);
  return text === undefined ? undefined : configs.get(path, text, () => parseConfig(path, text));
}

function readFixture(host: FileHost, path: string): FixtureDoc | undefined {
  const text = host.readFile(path);
  return text === undefined ? undefined : fixtures.get(path, text, () => parseFixture(path, text));
}

// ---------------------------------------------------------------------------
// Binding
// ---------------------------------------------------------------------------

export interface Binding {
  config?: { path: string; inline: boolean; doc: ConfigDoc };
  findings: Finding[];
  dependencies: string[];
}

/** Finds a template's config: front matter `context:` (path or inline), else `<name>.context.yaml` beside it. */
export function bindConfig(host: FileHost, template: TemplateDoc): Binding {
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const ctx = template.frontMatter?.context;
  if (ctx && typeof ctx.value === 'object') {
    const doc = parseInlineConfig(template.path, template.text, ctx.span);
    return { config: { path: template.path, inline: true, doc }, findings, dependencies };
  }
  if (ctx && typeof ctx.value === 'string') {
    const resolved = resolveInWorkspace(host, template.path, ctx.value);
    if (!resolved.path) {
      findings.push(finding('file-reference', template.path, ctx.span, `Context config '${ctx.value}': ${resolved.error ?? 'cannot be resolved'}.`));
      return { findings, dependencies };
    }
    dependencies.push(resolved.path);
    const doc = readConfig(host, resolved.path);
    if (!doc) {
      findings.push(finding('file-reference', template.path, ctx.span, `Context config '${ctx.value}' does not exist.`));
      return { findings, dependencies };
    }
    return { config: { path: resolved.path, inline: false, doc }, findings, dependencies };
  }
  const stem = template.path.replace(/\.(prompt|prompty)$/i, '');
  for (const candidate of [`${stem}.context.yaml`, `${stem}.context.yml`]) {
    dependencies.push(candidate);
    const doc = readConfig(host, candidate);
    if (doc) return { config: { path: candidate, inline: false, doc }, findings, dependencies };
  }
  findings.push(
    finding('config-missing', template.path, { start: 0, end: 0 }, `No context config for ${basename(template.path)}: add '${basename(stem)}.context.yaml' beside it or a 'context:' key in the front matter.`),
  );
  return { findings, dependencies };
}

/** Fixture files of a config (its `fixtures` globs) that feed this template, sorted by path. */
export function fixturesFor(host: FileHost, templatePath: string, configPath: string | undefined, config: ContextConfig | undefined): string[] {
  const found = new Set<string>();
  if (config && configPath) {
    const dir = dirname(configPath);
    for (const pattern of config.fixtures) {
      // An empty or absurd pattern matches nothing (the config schema reports it).
      if (!pattern.trim() || pattern.length > 512) continue;
      for (const p of host.glob(dir, pattern)) if (classifyFile(p) === 'fixture') found.add(p);
    }
  }
  const out: string[] = [];
  for (const p of [...found].sort()) {
    const named = fixtureTemplateRef(host, p);
    if (named) {
      const r = resolveInWorkspace(host, p, named);
      if (r.path && r.path !== templatePath) continue;
    }
    out.push(p);
  }
  // A fixture whose `template:` names this template binds without any glob: beside the template or in a fixtures/ folder there.
  const tdir = dirname(templatePath);
  const near = [...host.glob(tdir, '*.fixture.{yaml,yml,json}'), ...host.glob(tdir, 'fixtures/*.fixture.{yaml,yml,json}')].filter((p) => !found.has(p)).sort();
  for (const p of near) {
    const named = fixtureTemplateRef(host, p);
    if (!named) continue;
    const r = resolveInWorkspace(host, p, named);
    if (r.path === templatePath) out.push(p);
  }
  return out;
}

/**
 * A fixture's `template:` value. Files over the analysis size limit are not parsed for this; a
 * top-level `template:` line (YAML) or key (JSON) is read from their first 64 KiB instead.
 */
function fixtureTemplateRef(host: FileHost, path: string): string | undefined {
  const size = host.size(path);
  if (size !== undefined && size > DEFAULT_MAX_FILE_SIZE) {
    const head = (host.readFile(path) ?? '').slice(0, 65536);
    const m = /^template:\s*["']?([^"'\n#]+?)["']?\s*(?:#.*)?$/m.exec(head) ?? /"template"\s*:\s*"([^"]+)"/.exec(head);
    return m?.[1];
  }
  return fixtureHead(host, path)?.template;
}

function pickFixture(host: FileHost, list: string[], wanted: string | undefined, auto = true): string | undefined {
  if (!wanted) return auto ? list[0] : undefined;
  const hit = list.find((p) => p === wanted || p.endsWith('/' + wanted) || fixtureName(p) === wanted);
  if (hit) return hit;
  // A fixture named explicitly (a path) is always used, whether or not a glob lists it.
  if (classifyFile(wanted) === 'fixture' && host.size(wanted) !== undefined) return wanted;
  return list[0];
}

function pickModel(name: string | undefined, config: ContextConfig | undefined): { name?: string; info?: ModelInfo } {
  if (!name) return {};
  return { name, info: resolveModel(name, config?.models) };
}

function tokenizerFor(config: ContextConfig | undefined, model: ModelInfo | undefined) {
  const name = config?.tokenizer ?? model?.tokenizer ?? FALLBACK_TOKENIZER;
  return { name, tokenizer: getTokenizer(name) };
}

// ---------------------------------------------------------------------------
// Template analysis
// ---------------------------------------------------------------------------

export function analyzeTemplate(host: FileHost, path: string, options: AnalyzeOptions = {}): TemplateAnalysis | undefined {
  const template = readTemplate(host, path);
  if (!template) return undefined;
  const findings: Finding[] = [...template.findings];
  append(findings, scanHiddenCharacters(path, template.text), scanSecrets(path, template.text));
  const binding = bindConfig(host, template);
  append(findings, binding.findings);
  const dependencies = [...binding.dependencies];
  const cfgDoc = binding.config?.doc;
  const config = cfgDoc?.config;
  if (cfgDoc && !binding.config?.inline) append(findings, cfgDoc.findings, scanConfig(cfgDoc));
  else if (cfgDoc) append(findings, cfgDoc.findings);

  // Model: explicit option, then template front matter, then config, then the editor default.
  const settings = requestSettings(template);
  if (settings.unresolved && !options.model && template.frontMatter?.model) {
    const env = ENV_REFERENCE.exec(settings.unresolved);
    findings.push(
      finding('unknown-model', template.path, template.frontMatter.model.span, `The model is ${settings.unresolved}, ${env ? `the application's environment variable ${env[1]}` : 'a reference'}, which Context Lens never reads; counting for ${config?.model ?? options.defaultModel ?? `the ${FALLBACK_TOKENIZER} tokenizer`} instead (set contextLens.defaultModel or the config's model:).`, { severity: 'info' }),
    );
  }
  const modelName = options.model ?? settings.model ?? config?.model ?? options.defaultModel;
  const model = pickModel(modelName, config);
  if (model.name && !model.info && !config?.tokenizer) {
    const span = modelSpan(template, cfgDoc, options);
    findings.push(finding('unknown-model', span.path, span.span, `Unknown model '${model.name}': counting with ${FALLBACK_TOKENIZER} as an approximation. Add it under 'models:' in the config to set its window and tokenizer.`));
  }
  const tk = tokenizerFor(config, model.info);
  let tokenizer = tk.tokenizer;
  if (!tokenizer) {
    const span = cfgDoc?.valueSpan(['tokenizer']);
    if (cfgDoc && span) findings.push(finding('config-invalid', cfgDoc.path, span, `Unknown tokenizer '${tk.name}'.`));
    tokenizer = getTokenizer(FALLBACK_TOKENIZER)!;
  }
  const exact = tokenizer.exact && (model.info ? model.info.exact || !!config?.tokenizer : true) && !(model.name && !model.info);
  if (!exact && config) {
    const span = modelSpan(template, cfgDoc, options);
    findings.push(finding('tokenizer-estimate', span.path, span.span, `Token counts use ${tokenizer.name}, an estimate for ${model.name ?? 'this request'}; leave margin for the model's own count.`));
  }

  const analysis: TemplateAnalysis = {
    kind: 'template',
    path,
    template,
    config: binding.config,
    fixtures: [],
    model: model.info,
    tokenizer: { name: tokenizer.name, exact },
    slots: [],
    findings,
    dependencies,
  };
  if (binding.config && (!config || !cfgDoc)) {
    // A config exists but cannot be used (invalid): its findings say why; nothing is assembled.
    analysis.findings = finish(findings, undefined, options);
    return analysis;
  }
  // Zero-config: the request settings come from the front matter and the model registry.
  const zero = !config;
  const effective: ContextConfig =
    config ??
    ContextConfigSchema.parse({
      output: settings.maxOutput ?? model.info?.maxOutput ?? 0,
      ...(model.info || !model.name ? {} : { window: 128_000 }),
    });
  if (zero) analysis.zeroConfig = { config: effective, ...(settings.maxOutput !== undefined ? { maxOutput: settings.maxOutput } : {}) };

  // With the history remainder of slots with a policy (seed 000, 3.4), for `ctxlens budget` and the lenses.
  const budget = withRemainder(computeBudget(effective, { model: model.info, tokenizer: { name: tokenizer.name, exact } }), effective);
  analysis.budget = budget;
  if (cfgDoc) {
    append(findings, budgetFindings(budget, cfgDoc, model.info));
    append(findings, templateRules({ template, config: effective, configDoc: cfgDoc, inline: binding.config!.inline }));
    append(findings, cachePrefixFindings(template, effective, cfgDoc));
  }

  const sample = sampleFixture(host, template);
  append(findings, sample.findings);
  append(dependencies, sample.dependencies);
  const fixturePaths = fixturesFor(host, path, binding.config?.path, config);
  append(dependencies, fixturePaths);
  analysis.fixtures = [
    ...(sample.fixture ? [{ path: samplePath(path), name: SAMPLE_FIXTURE }] : []),
    ...fixturePaths.map((p) => ({ path: p, name: (tooLarge(host, p, options) === undefined ? fixtureHead(host, p)?.name : undefined) ?? fixtureName(p) })),
  ];
  const wantsSample = options.fixture === SAMPLE_FIXTURE || options.fixture === samplePath(path);
  // The template's own sample is the first fixture; an explicitly named fixture file wins.
  const active = wantsSample ? undefined : pickFixture(host, fixturePaths, options.fixture, options.autoFixture !== false && !sample.fixture);
  let fixture: FixtureDoc | undefined;
  if (sample.fixture && (wantsSample || (!active && options.autoFixture !== false))) fixture = sample.fixture;
  if (active && !fixture) {
    if (!fixturePaths.includes(active)) dependencies.push(active);
    // The size check comes before parsing: a huge fixture must not stall the analysis.
    const big = tooLarge(host, active, options);
    const raw = big === undefined ? readFixture(host, active) : undefined;
    if (big !== undefined) {
      findings.push(finding('fixture-invalid', active, { start: 0, end: 0 }, `Fixture is ${big.toLocaleString('en-US')} bytes, over the ${(options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE).toLocaleString('en-US')}-byte limit for full analysis; it is not assembled.`));
    } else if (raw) {
      const resolved = resolveFixture(raw, host);
      fixture = resolved.doc;
      append(dependencies, resolved.dependencies);
      append(findings, fixture.findings, fixtureScans.get(fixture, host, (h) => scanFixture(h, fixture!)));
      for (const [slot, cfg] of Object.entries(effective.slots)) {
        if (cfgDoc && cfg.required && !(slot in fixture.slots)) {
          findings.push(finding('required-missing', fixture.path, { start: 0, end: 0 }, `Fixture '${fixture.name}' has no value for required slot '${slot}'.`, { related: [{ path: cfgDoc.path, span: cfgDoc.keySpan(['slots', slot]) ?? { start: 0, end: 0 }, message: `slot '${slot}' is required` }] }));
        }
      }
    }
  }
  analysis.fixture = fixture;

  const partials = readPartials(host, template);
  append(findings, partials.findings);
  append(dependencies, partials.dependencies);
  const assembly = assemble({
    template,
    config: effective,
    ...(binding.config ? { configPath: binding.config.inline ? undefined : binding.config.path, configText: cfgDoc!.text, configDoc: cfgDoc } : {}),
    fixture,
    tokenizer,
    model: model.info,
    modelName: model.name,
    // Defaults under the fixture's values: dotprompt's input.default (as Genkit passes it); for Prompty the
    // input defaults and the sample, which Prompty's prepare() hoists under the inputs of every run.
    render: { partials: partials.sources, defaults: runtimeDefaults(template, sample), escape: !zero },
    ...(zero ? { zeroConfig: true } : {}),
  });
  // The request's cost at its model's price (cost.ts), on the trace every front end reads.
  analysis.assembly = withCost(assembly, effective, binding.config && !binding.config.inline ? binding.config.path : undefined);
  // Engine findings (unsupported constructs) speak without a fixture too; content findings need one.
  if (fixture) append(findings, assembly.findings);
  else append(findings, assembly.findings.filter((f) => f.rule === 'unsupported-feature' || f.rule === 'template-invalid'));

  const firstUse = new Map<string, Span>();
  for (const u of template.uses) if (!firstUse.has(u.slot)) firstUse.set(u.slot, u.span);
  const traceSlots = new Map(assembly.trace.slots.map((s) => [s.name, s]));
  const budgets = new Map(budget.slots.map((s) => [s.name, s.budget]));
  if (zero) {
    // Without a config every slot the template uses is listed, counted from the rendered request.
    const attributed = new Map<string, string[]>();
    for (const m of assembly.messages) for (const p of m.parts) if (p.slot !== undefined) attributed.set(p.slot, [...(attributed.get(p.slot) ?? []), p.text]);
    analysis.slots = [...firstUse.keys()].map((name) => {
      const t = traceSlots.get(name);
      return {
        name,
        kind: t?.kind ?? 'other',
        required: false,
        tokens: fixture ? (attributed.get(name) ?? []).reduce((n, text) => n + tokenizer.count(text), 0) : 0,
        kept: fixture ? (t?.kept ?? 0) : 0,
        total: fixture ? (t?.total ?? 0) : 0,
        firstUse: firstUse.get(name),
      };
    });
    analysis.findings = finish(findings, undefined, options);
    return analysis;
  }
  const cfgDocK = cfgDoc!;
  analysis.slots = Object.entries(effective.slots).map(([name, s]) => {
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
      configSpan: binding.config!.inline ? undefined : cfgDocK.keySpan(['slots', name]),
    };
  });
  analysis.findings = finish(findings, effective, options);
  return analysis;
}

function modelSpan(template: TemplateDoc, cfgDoc: ConfigDoc | undefined, options: AnalyzeOptions): { path: string; span: Span } {
  if (!options.model && template.frontMatter?.model) return { path: template.path, span: template.frontMatter.model.span };
  const s = cfgDoc?.valueSpan(['model']) ?? cfgDoc?.valueSpan(['tokenizer']);
  if (cfgDoc && s && cfgDoc.path !== template.path) return { path: cfgDoc.path, span: s };
  return { path: template.path, span: template.frontMatter?.span ?? { start: 0, end: 0 } };
}

/** Hidden characters and secrets in fixture text (inline values are in the fixture, file values in their file). */
function scanFixture(host: FileHost, fixture: FixtureDoc): Finding[] {
  const out: Finding[] = [...scanHiddenCharacters(fixture.path, fixture.text), ...scanSecrets(fixture.path, fixture.text)];
  const seen = new Set<string>();
  const scanFile = (file: string | undefined) => {
    if (!file || seen.has(file)) return;
    seen.add(file);
    const text = host.readFile(file);
    if (text !== undefined) append(out, scanHiddenCharacters(file, text), scanSecrets(file, text));
  };
  for (const value of Object.values(fixture.slots)) {
    if (value.type === 'text') scanFile(value.file);
    else if (value.type === 'items') for (const item of value.items) scanFile(item.file);
  }
  return out;
}

/** Severity overrides (config, then editor), and one finding per place and message. */
function finish(findings: Finding[], config: ContextConfig | undefined, options: AnalyzeOptions): Finding[] {
  return dedupe(applySeverities(findings, config?.rules, options.severities));
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
// Config and fixture analysis
// ---------------------------------------------------------------------------

/** Templates (anywhere under the workspace roots) whose config resolves to `configPath`. */
export function templatesUsing(host: FileHost, configPath: string): string[] {
  const out: string[] = [];
  // The config's own project: its folder and below (a template elsewhere names it with `context:` and is found from there).
  for (const root of [dirname(configPath)]) {
    for (const t of [...host.glob(root, '**/*.prompt'), ...host.glob(root, '**/*.prompty')]) {
      const doc = readTemplate(host, t);
      if (!doc) continue;
      const b = bindConfig(host, doc);
      if (b.config && !b.config.inline && b.config.path === configPath) out.push(t);
    }
  }
  return [...new Set(out)].sort();
}

export function analyzeConfig(host: FileHost, path: string, options: AnalyzeOptions = {}): ConfigAnalysis | undefined {
  const doc = readConfig(host, path);
  if (!doc) return undefined;
  const findings: Finding[] = [...doc.findings, ...scanHiddenCharacters(path, doc.text), ...scanSecrets(path, doc.text)];
  const config = doc.config;
  const model = pickModel(options.model ?? config?.model ?? options.defaultModel, config);
  if (model.name && !model.info && !config?.tokenizer) {
    const span = doc.valueSpan(['model']) ?? { start: 0, end: 0 };
    findings.push(finding('unknown-model', path, span, `Unknown model '${model.name}': counting with ${FALLBACK_TOKENIZER} as an approximation. Add it under 'models:' to set its window and tokenizer.`));
  }
  const tk = tokenizerFor(config, model.info);
  const tokenizer = tk.tokenizer ?? getTokenizer(FALLBACK_TOKENIZER)!;
  if (!tk.tokenizer) findings.push(finding('config-invalid', path, doc.valueSpan(['tokenizer']) ?? { start: 0, end: 0 }, `Unknown tokenizer '${tk.name}'.`));
  const exact = tokenizer.exact && (model.info ? model.info.exact || !!config?.tokenizer : true) && !(model.name && !model.info);
  let budget: BudgetReport | undefined;
  if (config) {
    budget = withRemainder(computeBudget(config, { model: model.info, tokenizer: { name: tokenizer.name, exact } }), config);
    append(findings, budgetFindings(budget, doc, model.info));
  }
  const templatesBound = templatesUsing(host, path);
  // A config no template uses yet still gets every rule that needs no template.
  if (doc.config && !templatesBound.length && !doc.findings.some((f) => f.rule === 'config-invalid')) append(findings, configRules(doc));
  return {
    kind: 'config',
    path,
    doc,
    budget,
    model: model.info,
    tokenizer: { name: tokenizer.name, exact },
    templates: templatesBound,
    findings: finish(findings, config, options),
    dependencies: templatesBound,
  };
}

/** The template a fixture feeds: its `template:` key, else a template whose config globs match it. */
export function templateForFixture(host: FileHost, path: string, doc: FixtureDoc): string | undefined {
  if (doc.template) {
    const r = resolveInWorkspace(host, path, doc.template.value);
    return r.path;
  }
  // The fixture's project: the folder above its own (fixtures usually sit in a fixtures/ folder beside the template).
  const dir = dirname(path);
  for (const root of [basename(dir) === 'fixtures' ? dirname(dir) : dir]) {
    for (const t of [...host.glob(root, '**/*.prompt'), ...host.glob(root, '**/*.prompty')].sort()) {
      const tdoc = readTemplate(host, t);
      if (!tdoc) continue;
      const b = bindConfig(host, tdoc);
      if (fixturesFor(host, t, b.config?.path, b.config?.doc.config).includes(path)) return t;
    }
  }
  return undefined;
}

export function analyzeFixture(host: FileHost, path: string, options: AnalyzeOptions = {}): FixtureAnalysis | undefined {
  const doc = readFixture(host, path);
  if (!doc) return undefined;
  const templatePath = templateForFixture(host, path, doc);
  if (doc.template && !templatePath) {
    return { kind: 'fixture', path, doc, findings: finish([...doc.findings, finding('file-reference', path, doc.template.span, `Template '${doc.template.value}' cannot be resolved inside the workspace.`)], undefined, options), dependencies: [] };
  }
  const template = templatePath ? analyzeTemplate(host, templatePath, { ...options, fixture: path }) : undefined;
  const own = template
    ? template.findings.filter((f) => f.path === path || (template.fixture?.path === path && f.path !== templatePath && f.path !== template.config?.path))
    : finish([...doc.findings, ...scanFixture(host, resolveFixtureFiles(doc, host).doc)], undefined, options);
  return { kind: 'fixture', path, doc, template, findings: own, dependencies: template ? [templatePath!, ...template.dependencies] : [] };
}

export function analyzeFile(host: FileHost, path: string, options: AnalyzeOptions = {}): Analysis | undefined {
  switch (classifyFile(path)) {
    case 'template':
      return analyzeTemplate(host, path, options);
    case 'config':
      return analyzeConfig(host, path, options);
    case 'fixture':
      return analyzeFixture(host, path, options);
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Whole-tree check (CLI, CI)
// ---------------------------------------------------------------------------

/** What checking one template (with every one of its fixtures) found, and the files it covered. */
export interface TemplateCheck {
  findings: Finding[];
  /** The template, its config and fixtures: they need no check of their own. */
  covered: string[];
}

/** One template with its first fixture, then with each other fixture (the first step of `checkFiles`). */
export function checkTemplate(host: FileHost, path: string, options: AnalyzeOptions = {}): TemplateCheck {
  const findings: Finding[] = [];
  const covered = [path];
  const first = analyzeTemplate(host, path, options);
  if (!first) return { findings, covered };
  append(findings, first.findings);
  if (first.config && !first.config.inline) covered.push(first.config.path);
  for (const f of first.fixtures) {
    covered.push(f.path);
    if (f.path === first.fixture?.path) continue;
    const again = analyzeTemplate(host, path, { ...options, fixture: f.path });
    if (again) append(findings, again.findings);
  }
  return { findings, covered };
}

/** A config or fixture no template reached (the second step of `checkFiles`). */
export function checkUncovered(host: FileHost, path: string, options: AnalyzeOptions = {}): Finding[] {
  const kind = classifyFile(path);
  if (kind === 'config') return analyzeConfig(host, path, options)?.findings ?? [];
  if (kind === 'fixture') return analyzeFixture(host, path, options)?.findings ?? [];
  return [];
}

/** The files `checkFiles` checks, in its order: sorted and unique; templates first, then the rest. */
export function checkOrder(files: readonly string[]): { sorted: string[]; templates: string[] } {
  const sorted = [...new Set(files)].sort();
  return { sorted, templates: sorted.filter((p) => classifyFile(p) === 'template') };
}

/** Findings grouped by file, deduplicated, each file's sorted by position and rule. */
export function groupFindings(all: readonly Finding[]): Map<string, Finding[]> {
  const byFile = new Map<string, Finding[]>();
  for (const f of dedupe([...all])) {
    const list = byFile.get(f.path);
    if (list) list.push(f);
    else byFile.set(f.path, [f]);
  }
  for (const list of byFile.values()) list.sort((a, b) => a.span.start - b.span.start || a.rule.localeCompare(b.rule));
  return byFile;
}

/**
 * Checks every template with every one of its fixtures, then configs and fixtures no template
 * reached. Returns findings grouped by file, deduplicated. The steps are exported so that a front
 * end can run them in parallel (the CLI's worker threads) and still concatenate their findings in
 * this order, which makes the result identical.
 */
export function checkFiles(host: FileHost, files: string[], options: AnalyzeOptions = {}): Map<string, Finding[]> {
  const all: Finding[] = [];
  const covered = new Set<string>();
  const { sorted, templates } = checkOrder(files);
  for (const path of templates) {
    const step = checkTemplate(host, path, options);
    append(all, step.findings);
    for (const c of step.covered) covered.add(c);
  }
  for (const path of sorted) {
    if (covered.has(path) || classifyFile(path) === 'template') continue;
    append(all, checkUncovered(host, path, options));
  }
  return groupFindings(all);
}
