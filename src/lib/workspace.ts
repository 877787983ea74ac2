/**
 * A workspace: templates, context configs and fixtures in a folder on disk, and the operations
 * the CLI offers on them as functions: assemble (with a fixture or with live values), check,
 * budget and count. Files are read through DiskFileHost on every call (nothing is watched), and
 * references resolve inside the workspace roots only, as in the editor and the CLI.
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import type { ContextConfig, SeveritySetting, Filters } from '../core/config/schema';
import type { AssemblyResult, BudgetReport, Finding, FixtureDoc, RenderedMessage, SlotKind, TemplateFormat, Trace } from '../core/types';
import type { CacheControl, Provider, ProviderBody, ToolDefinition } from '../core/export';
import { analyzeConfig, analyzeTemplate, checkFiles, classifyFile, dedupe } from '../core/analyze';
import { templateFileOf } from '../core/language';
import { FiltersSchema } from '../core/config/schema';
import { PROVIDERS, toProviderRequest } from '../core/export';
import { resolveFixtureFiles } from '../core/fixture';
import { fixtureFromValues, withRuntimeValue } from '../core/fixture/values';
import { parseJsonValues } from '../core/language/prompty/engine';
import { resolveModel } from '../core/models';
import { applySeverities } from '../core/rules/registry';
import { SAMPLE_FIXTURE } from '../core/sample';
import { LineIndex } from '../core/text/lineIndex';
import { getTokenizer, listTokenizers } from '../core/tokens';
import { DiskFileHost, toPosix } from '../node/fileHost';
import { installModelFiles } from '../node/modelFiles';
import { ContextLensError } from './errors';
import { normaliseValues, redactTrace, scanValueSecrets } from './values';
import { toolsOf } from './evidence';
import { PreparedCache, assemblePrepared } from './prepare';
import type { Prepared } from './prepare';
import { countsExact } from '../core/tokens/exact';

export interface WorkspaceOptions {
  /** More folders whose files references may reach (the workspace folder is always one). */
  roots?: string[];
  /** Model used when neither the call, the template nor its config names one. */
  defaultModel?: string;
  /** Rule severity overrides, applied after each config's own `rules:` (e.g. `{ "injection-phrase": "off" }`). */
  rules?: Record<string, SeveritySetting>;
  /**
   * Milliseconds a template's binding (template, config, partials as read) is used without
   * re-reading them. Default 0: every call re-reads, so an edit is seen by the next call.
   */
  revalidateMs?: number;
  /**
   * Read the model files that apply to this folder, as the CLI and the editor do: the nearest
   * `.context-lens/models.yaml` up to the repository root, then the user's
   * `~/.config/context-lens/models.yaml` (docs/models.md). Default true. The model registry is one
   * per process (per thread): the files of the workspace opened last apply.
   */
  modelFiles?: boolean;
  /** Where problems of the model files go (an unreadable file, a bad entry, which is skipped); default `process.emitWarning`. */
  onWarning?: (message: string) => void;
}

export interface AssembleOptions {
  /**
   * Live slot values (slot name -> value), typed as a fixture's: a string is text, a list of
   * strings or of objects with `text`/`content` is a list of items with their metadata, anything
   * else is data. Replaces the fixture.
   */
  slots?: Record<string, unknown>;
  /**
   * The slot values as a JSON text (an object), instead of `slots`. For a `.prompty` template the
   * runtime then gets numbers as Python's json reads them: `1.0`, `-0.0` and `1e20` are floats and
   * print as such (`1.0`), which a JavaScript number cannot say (it is 1). Counts, hashes and the
   * trace read the plain values, as with `slots`.
   */
  slotsJson?: string;
  /**
   * With `slots`: the same values as the template's runtime reads them from the request's JSON
   * text (Python's floats and big integers, key order), by slot; used for a `.prompty` template
   * where the slot's value in `slots` is the one given. What `slotsJson` gives a caller that has
   * parsed the JSON already (the service).
   * @internal
   */
  slotsRuntime?: Record<string, unknown>;
  /** A fixture file (path relative to the workspace) or fixture name, or `sample`; default: the first matching fixture. */
  fixture?: string;
  /** Model overriding the template's and the config's. */
  model?: string;
  /** dotprompt's context data (`@state`, `@auth`, …). */
  context?: Record<string, unknown>;
  /** Reference time (ISO 8601) for expiry and recency, overriding `filters.now`. */
  now?: string;
  /** Also build the request body of this provider (`request` in the result). */
  provider?: Provider;
  /** Output limit of the provider body (default: the config's reserved output). */
  maxTokens?: number;
  /** Anthropic prompt caching: a breakpoint on the tools too, and the TTL of the breakpoints. */
  cache?: { tools?: boolean; ttl?: CacheControl['ttl'] };
  /** Hard filters layered over the config's `filters` for this call (e.g. `{ tenant, version }`). */
  filters?: Partial<Filters>;
  /** Caps the input limit for this call: the request is fitted into at most this many input tokens. */
  maxInputTokens?: number;
  /** Name of the values' fixture in the trace (default `values`). */
  name?: string;
  /** Whether `{ file: path }` values are read (inside the workspace); default true. */
  files?: boolean;
  /**
   * Secrets found in `slots` (the `secret-in-context` detection) are always reported as findings;
   * with this, they are also replaced by their redacted form before the request is built.
   */
  redactSecrets?: boolean;
}

export interface AssembleOutput {
  /** False when the request cannot be built (required content alone overflows the input budget). */
  ok: boolean;
  error?: string;
  /** The messages the model receives, with parts attributed to slots and items. */
  messages: RenderedMessage[];
  /** The provider's request body, when `provider` was given. */
  request?: ProviderBody;
  /** Function definitions of the template's tool slots. */
  tools: ToolDefinition[];
  trace: Trace;
  budget: BudgetReport;
  findings: Finding[];
  /** The values the request was assembled from (the fixture, or the live values as a fixture document). */
  fixture?: FixtureDoc;
  /** Declared version of the config or front matter (`version:`), when there is one. */
  declaredVersion?: string;
  /** The config the request was assembled with: the file's (or the zero-config defaults) with this call's filters and input cap. */
  config: ContextConfig;
}

export interface TemplateInfo {
  /** Absolute path. */
  path: string;
  /** The template's format (the registry's language id: `prompt`, `prompty`, `baml`, `plain`, `agent`). */
  format: TemplateFormat;
  /** Declared version of the config or front matter. */
  declaredVersion?: string;
  /** The model the template is assembled for (option, front matter, config, default). */
  model?: string;
  /** True when no context config applies (the front matter and the model registry set the request). */
  zeroConfig: boolean;
  /** Every slot of the config, then the slots the template uses without declaring them. */
  slots: Array<{ name: string; kind: SlotKind; trust?: 'trusted' | 'untrusted'; required: boolean; used: boolean }>;
  /** Findings of the template, its config and budget without values. */
  findings: Finding[];
}

export interface CountOptions {
  model?: string;
  tokenizer?: string;
}

export interface CountResult {
  tokens: number;
  tokenizer: string;
  /** True when the count equals the provider's tokenizer; false for estimates. */
  exact: boolean;
}

export interface CheckedFinding extends Finding {
  /** Zero-based line and UTF-16 character of the span's ends, as editors show them. */
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface CheckResult {
  files: Array<{ path: string; findings: CheckedFinding[] }>;
  summary: { errors: number; warnings: number; infos: number };
  /** No finding at error level. */
  ok: boolean;
}

/** Counts text with a model's tokenizer or a named one (default o200k_base), as `ctxlens count`. */
export function count(text: string, options: CountOptions = {}): CountResult {
  if (options.model && options.tokenizer) throw new ContextLensError('invalid-option', 'count takes a model or a tokenizer, not both');
  const model = options.model ? resolveModel(options.model) : undefined;
  if (options.model && !model) throw new ContextLensError('unknown-model', `Unknown model '${options.model}'`);
  const name = options.tokenizer ?? model?.tokenizer ?? 'o200k_base';
  const tokenizer = getTokenizer(name);
  if (!tokenizer) throw new ContextLensError('unknown-tokenizer', `Unknown tokenizer '${name}' (known: ${listTokenizers().join(', ')})`);
  return { tokens: tokenizer.count(text), tokenizer: tokenizer.name, exact: countsExact(tokenizer, model) };
}

export class Workspace {
  /** The workspace folder (absolute, with `/`). */
  readonly root: string;
  private readonly host: DiskFileHost;
  private readonly prepared: PreparedCache;

  constructor(dir: string, private readonly options: WorkspaceOptions = {}) {
    this.root = toPosix(nodePath.resolve(dir));
    this.host = new DiskFileHost([this.root, ...(options.roots ?? []).map((r) => toPosix(nodePath.resolve(this.root, r)))]);
    this.prepared = new PreparedCache(this.host, 256, options.revalidateMs ?? 0);
    if (options.modelFiles !== false) installModelFiles([this.root], options.onWarning ?? ((m) => process.emitWarning(m, 'ContextLensModelFile')));
  }

  /** Workspace roots references may resolve in. */
  get roots(): readonly string[] {
    return this.host.roots;
  }

  /** Absolute path of a workspace path; refuses paths outside every root. */
  resolve(p: string): string {
    const abs = toPosix(nodePath.resolve(this.root, p));
    if (!this.host.roots.some((r) => abs === r || abs.startsWith(r.endsWith('/') ? r : `${r}/`))) throw new ContextLensError('outside-workspace', `'${p}' is outside the workspace (${this.host.roots.join(', ')})`);
    return abs;
  }

  /**
   * Assembles a template: with `slots` (live values) or a fixture. Files that do not exist, a
   * config that cannot be used or a fixture that does not feed the template throw a
   * `ContextLensError`; bad values throw a `FixtureValueError` with the value's path.
   */
  assemble(templatePath: string, options: AssembleOptions = {}): AssembleOutput {
    if (options.slots !== undefined && options.slotsJson !== undefined) throw new ContextLensError('invalid-option', 'give slots or slotsJson, not both');
    if ((options.slots !== undefined || options.slotsJson !== undefined) && options.fixture !== undefined) throw new ContextLensError('invalid-option', 'give slots or a fixture, not both');
    if (options.provider !== undefined && !PROVIDERS.includes(options.provider)) throw new ContextLensError('invalid-option', `provider must be one of ${PROVIDERS.join(', ')}`);
    if (options.maxInputTokens !== undefined && !(Number.isInteger(options.maxInputTokens) && options.maxInputTokens > 0)) throw new ContextLensError('invalid-option', 'maxInputTokens must be a positive whole number');
    const path = this.resolve(templatePath);
    if (classifyFile(path) !== 'template') throw new ContextLensError('not-a-template', `'${templatePath}' is not a template (.prompt or .prompty)`);
    // A BAML function (`baml_src/x.baml#F`) exists where its file does.
    if (this.host.size(templateFileOf(path)) === undefined) throw new ContextLensError('not-found', `Template '${templatePath}' does not exist`);
    const severities = this.options.rules;
    const prepOptions = { model: options.model, defaultModel: this.options.defaultModel, severities };

    let result: AssemblyResult;
    let config: ContextConfig | undefined;
    let findings: Finding[];
    let fixture: FixtureDoc | undefined;
    let prep: Prepared | undefined;
    const overrides = options.now !== undefined || options.filters !== undefined || options.maxInputTokens !== undefined || options.context !== undefined;
    if (options.slots !== undefined || options.slotsJson !== undefined) {
      prep = this.prepared.get(path, prepOptions);
      const valuesPath = `${path}#${options.name ?? 'values'}`;
      // Prompty and plain prompt files are rendered by Python libraries: values as Python gets them.
      const runtime = prep.template.format === 'prompty' || prep.template.format === 'plain';
      const json = options.slotsJson !== undefined ? slotsFromJson(options.slotsJson, runtime) : runtime && options.slotsRuntime && options.slots ? { plain: options.slots, typed: options.slotsRuntime } : undefined;
      const slots = json?.plain ?? options.slots ?? {};
      // Run-time values: list slots as lists of items, turns in the roles their slot allows, secrets found (values.ts).
      const scanned = scanValueSecrets(normaliseValues(slots, prep.config.slots), valuesPath, options.redactSecrets === true);
      // A slot no config declares takes the template's plain data as its runtime would get it (Prompty prints a null as None).
      const declared = prep.config.slots ?? {};
      let doc = fixtureFromValues(options.name ?? 'values', scanned.values, {
        path: valuesPath,
        context: options.context,
        files: options.files,
        undeclared: (slot) => !Object.hasOwn(declared, slot),
        nullIsValue: runtime,
      });
      if (options.files !== false) {
        const resolved = resolveFixtureFiles(doc, this.host);
        doc = resolved.doc;
      }
      // The values as Python's json reads the text, where the checks above kept the value as given.
      if (json?.typed) for (const [name, v] of Object.entries(doc.slots)) if ((v.type === 'data' || v.type === 'items') && Object.hasOwn(json.typed, name) && scanned.values[name] === slots[name]) withRuntimeValue(v, json.typed[name]);
      fixture = doc;
      ({ result, config } = this.run(prep, doc, options));
      findings = finish(dedupe([...prep.findings, ...doc.findings, ...scanned.findings, ...result.findings]), prep, severities);
    } else {
      const wanted = options.fixture === undefined ? undefined : options.fixture === SAMPLE_FIXTURE || !fs.existsSync(nodePath.resolve(this.root, options.fixture)) ? options.fixture : this.resolve(options.fixture);
      const a = analyzeTemplate(this.host, path, { fixture: wanted, model: options.model, defaultModel: this.options.defaultModel, severities });
      if (!a) throw new ContextLensError('not-found', `Template '${templatePath}' does not exist`);
      if (!a.assembly) throw new ContextLensError('config-invalid', `${templatePath} has no usable context config`, a.findings.filter((f) => f.severity === 'error'));
      if (wanted !== undefined && a.fixture?.path !== wanted && a.fixture?.name !== wanted) {
        throw new ContextLensError('fixture-not-found', `Fixture '${options.fixture}' cannot be used for ${templatePath} (known: ${a.fixtures.map((f) => f.name).join(', ') || 'none'})`);
      }
      fixture = a.fixture;
      findings = a.findings;
      if (overrides) {
        prep = this.prepared.get(path, prepOptions);
        const doc = fixture && options.context !== undefined ? { ...fixture, context: options.context } : fixture;
        ({ result, config } = this.run(prep, doc, options));
        findings = finish(dedupe([...a.findings, ...result.findings]), prep, severities);
      } else result = a.assembly;
    }
    prep ??= this.prepared.get(path, prepOptions);
    // The core's own validated definitions when it gives them (AssemblyResult.tools), else the tool slots' JSON.
    const tools = (result as { tools?: ToolDefinition[] }).tools ?? toolsOf(prep.config, fixture, result.trace);
    const out: AssembleOutput = { ok: result.ok, ...(result.error !== undefined ? { error: result.error } : {}), messages: result.messages, tools, trace: redactTrace(result.trace), budget: result.budget, findings, config: config ?? prep.config };
    if (options.provider) out.request = toProviderRequest(result, options.provider, { model: prep.modelName ?? prep.model?.name, maxTokens: options.maxTokens, tools, cache: options.cache });
    if (fixture) out.fixture = fixture;
    if (prep.declaredVersion !== undefined) out.declaredVersion = prep.declaredVersion;
    return out;
  }

  /** What a template takes: its slots (with kind and trust), version and model; throws like `assemble` for a missing template or unusable config. */
  describe(templatePath: string, options: { model?: string } = {}): TemplateInfo {
    const path = this.resolve(templatePath);
    if (classifyFile(path) !== 'template') throw new ContextLensError('not-a-template', `'${templatePath}' is not a template (.prompt or .prompty)`);
    const prep = this.prepared.get(path, { model: options.model, defaultModel: this.options.defaultModel, severities: this.options.rules });
    const used = new Set(prep.template.uses.map((u) => u.slot));
    const slots: TemplateInfo['slots'] = Object.entries(prep.config.slots ?? {}).map(([name, c]) => ({ name, kind: c.kind, ...(c.trust ? { trust: c.trust } : {}), required: c.required, used: used.has(name) }));
    for (const name of used) if (!slots.some((s) => s.name === name)) slots.push({ name, kind: 'other', required: false, used: true });
    const info: TemplateInfo = { path, format: prep.template.format, zeroConfig: prep.zeroConfig, slots, findings: prep.findings };
    if (prep.declaredVersion !== undefined) info.declaredVersion = prep.declaredVersion;
    const model = prep.modelName ?? prep.model?.name;
    if (model !== undefined) info.model = model;
    return info;
  }

  /**
   * An object that stays the same while the template's binding (its text, config and partials as
   * read) is unchanged: a key for caching results of this template.
   * @internal
   */
  bindingOf(templatePath: string, model?: string): object {
    return this.prepared.get(this.resolve(templatePath), { model, defaultModel: this.options.defaultModel, severities: this.options.rules });
  }

  /** The assembly of a prepared template with these values and this call's overrides. */
  private run(prep: Prepared, fixture: FixtureDoc | undefined, options: AssembleOptions): { result: AssemblyResult; config: ContextConfig } {
    let config = prep.config;
    // The hard filters read `filters.now` before the assembly's `now`, so the call's reference time is set there too.
    const filters = { ...stripUndefined(options.filters ?? {}), ...(options.now !== undefined ? { now: options.now } : {}) };
    if (Object.keys(filters).length || options.filters !== undefined) config = { ...config, filters: FiltersSchema.parse({ ...config.filters, ...filters }) };
    if (options.maxInputTokens !== undefined) config = capInput(config, prep, options.maxInputTokens);
    return { result: assemblePrepared(prep, fixture, config, options.now), config };
  }

  /** Findings of every template (with each of its fixtures), config and fixture under the paths (default: the workspace), as `ctxlens check`. */
  check(paths: string[] = ['.']): CheckResult {
    const files: string[] = [];
    for (const p of paths) {
      const abs = this.resolve(p);
      if (!fs.existsSync(abs)) throw new ContextLensError('not-found', `'${p}' does not exist`);
      if (fs.statSync(abs).isDirectory()) {
        for (const f of this.host.glob(abs, '**/*')) if (classifyFile(f)) files.push(f);
      } else if (classifyFile(abs)) files.push(abs);
      else throw new ContextLensError('not-a-template', `'${p}' is not a template, config or fixture`);
    }
    const byFile = checkFiles(this.host, files, { defaultModel: this.options.defaultModel, severities: this.options.rules });
    const summary = { errors: 0, warnings: 0, infos: 0 };
    const out: CheckResult['files'] = [];
    for (const [p, list] of [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const li = new LineIndex(this.host.readFile(p) ?? '');
      out.push({
        path: toPosix(nodePath.relative(this.root, p)) || '.',
        findings: list.map((f) => {
          if (f.severity === 'error') summary.errors++;
          else if (f.severity === 'warning') summary.warnings++;
          else summary.infos++;
          return { ...f, range: { start: li.positionAt(f.span.start), end: li.positionAt(f.span.end) } };
        }),
      });
    }
    return { files: out, summary, ok: summary.errors === 0 };
  }

  /** The budget equation of a template or a config, or undefined when none can be computed. */
  budget(path: string, options: { model?: string } = {}): BudgetReport | undefined {
    const abs = this.resolve(path);
    const kind = classifyFile(abs);
    if (kind === 'template') return analyzeTemplate(this.host, abs, { model: options.model, defaultModel: this.options.defaultModel })?.budget;
    if (kind === 'config') return analyzeConfig(this.host, abs, { model: options.model, defaultModel: this.options.defaultModel })?.budget;
    throw new ContextLensError('not-a-template', `'${path}' is not a template or *.context.yaml`);
  }

  /** Counts text with a model's tokenizer or a named one. */
  count(text: string, options: CountOptions = {}): CountResult {
    return count(text, options);
  }
}

/** Opens the folder `dir` as a workspace. Only the model files are read here; the rest when a method is called. */
export function openWorkspace(dir: string, options: WorkspaceOptions = {}): Workspace {
  return new Workspace(dir, options);
}

/**
 * The slots of a JSON text: plain values, and for a Prompty template the values as Python's json
 * reads them (floats written with a fraction or an exponent stay floats). Not JSON, or not an
 * object, is an `invalid-option` error.
 */
function slotsFromJson(text: string, runtime: boolean): { plain: Record<string, unknown>; typed?: Record<string, unknown> } {
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch (e) {
    throw new ContextLensError('invalid-option', `slotsJson is not JSON: ${(e as Error).message}`);
  }
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) throw new ContextLensError('invalid-option', 'slotsJson must be a JSON object of slot values (slot name -> value)');
  if (!runtime) return { plain: plain as Record<string, unknown> };
  let typed: unknown;
  try {
    typed = parseJsonValues(text);
  } catch {
    // Nested deeper than the engine reads: the plain values are checked (and refused) as any.
    typed = undefined;
  }
  return { plain: plain as Record<string, unknown>, ...(typed !== null && typeof typed === 'object' ? { typed: typed as Record<string, unknown> } : {}) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The config with its input limit capped at `max` tokens. A cap at or above the input budget the
 * config already has changes nothing (the config is the policy); a lower one becomes separate
 * limits (`limits.input = max`), which keeps the output reserve and checks the margin against the
 * capped input.
 */
function capInput(config: Prepared['config'], prep: Prepared, max: number): Prepared['config'] {
  const model = prep.model;
  const window = config.window ?? model?.window ?? 0;
  const current = config.limits?.input ?? model?.maxInput ?? (window > 0 ? window - (config.output ?? 0) : Number.POSITIVE_INFINITY);
  if (max >= current) return config;
  return { ...config, limits: { input: max, output: config.limits?.output ?? model?.maxOutput ?? config.output ?? 0 } };
}

/** Severity overrides (the config's, then the workspace's) on findings that did not pass through the analysis. */
function finish(findings: Finding[], prep: Prepared, severities: Record<string, SeveritySetting> | undefined): Finding[] {
  return applySeverities(findings, prep.zeroConfig ? undefined : prep.config.rules, severities);
}
