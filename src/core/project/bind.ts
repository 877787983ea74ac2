/**
 * One setup for every assembly. `bindTemplate` binds a parsed template to everything an assembly
 * needs except its values — the context config (or the zero-config defaults), the model, the
 * tokenizer and whether its counts are exact, the budget, the template's sample and defaults, its
 * partials — and `toAssembleInput` turns a binding and a fixture into the assembly's input. The
 * editor analysis, the CLI, the library, `eval`/`diff` and the service all call these two, and
 * `assembleBound` adds the request's cost in the one place it is added.
 */
import type { FileHost } from '../host';
import type { ContextConfig } from '../config/schema';
import type { AssembleInput, RenderOptions } from '../assembly';
import type { AssemblyResult, BudgetReport, ConfigDoc, Finding, FixtureDoc, ModelInfo, Span, TemplateDoc, Tokenizer } from '../types';
import type { SampleResult } from '../sample';
import type { CodeRegistrySetting, Partials } from '../language/partials';
import { parseInlineConfig } from '../config/parse';
import { findAt } from '../text/yaml';
import { ContextConfigSchema } from '../config/schema';
import { dirname, isInside, resolveInWorkspace } from '../paths';
import type { ComposeResult } from '../language/language';
import { getTokenizer } from '../tokens';
import { countsExact } from '../tokens/exact';
import { defaultOutputReserve, nearestModels, resolveModel } from '../models';
import { familyEstimate, modelRetired } from '../models/findings';
import type { ModelWhere } from '../models/findings';
import { budgetFindings } from '../budget';
import { assemble } from '../assembly';
import { budgetFor } from '../budget/remainder';
import { configRules, templateRules } from '../rules/templateRules';
import { configMissing, configReference, configUnresolved, tokenizerEstimate, unknownModel, unknownTokenizer, unresolvedModel } from '../rules/projectRules';
import { promptyDocForLoader, type PromptyLoaderPins } from '../language/prompty/loader';
import type { PromptyLoader } from '../language/prompty/engine';
import { besideTemplate, promptyLoaderOf, requestSettings, runtimeDefaults, sampleFixture } from '../sample';
import { codeRegistry, codeRenderOptions, readPartials, withoutHelperCalls } from '../language/partials';
import { withCost } from '../cost';
import { cachePrefixFindings } from '../prefix';
import { scanHiddenCharacters, scanSecrets } from '../text/scan';
import { append, readConfig, scanConfig } from './files';
import { languageFor, templateFileOf } from '../language';

/** Files of a template's project the runtime loads with it (BAML's `baml_src/`), bounded. */
const MAX_PROJECT_FILES = 512;
const MAX_PROJECT_CHARS = 8 * 1024 * 1024;

/** The project the template's language loads with it (language.ts `projectOf`), read through the host. */
function projectOf(host: FileHost, template: TemplateDoc): { project?: { files: Record<string, string>; self: string }; paths: Record<string, string> } {
  const language = languageFor(template);
  const file = templateFileOf(template.path);
  const p = language.projectOf?.(file);
  if (!p) return { paths: {} };
  const rel = (path: string): string => {
    if (p.root && path.startsWith(p.root + '/')) return path.slice(p.root.length + 1);
    const name = p.root.slice(p.root.lastIndexOf('/') + 1);
    const i = name ? path.lastIndexOf(`/${name}/`) : -1;
    return i >= 0 ? path.slice(i + name.length + 2) : path.slice(path.lastIndexOf('/') + 1);
  };
  const files: Record<string, string> = {};
  const paths: Record<string, string> = {};
  let chars = 0;
  let n = 0;
  for (const path of p.root || file.includes('/') ? host.glob(p.root || '.', p.glob).sort() : []) {
    if (++n > MAX_PROJECT_FILES) break;
    const text = host.readFile(path);
    if (text === undefined || (chars += text.length) > MAX_PROJECT_CHARS) continue;
    files[p.key(rel(path))] = text;
    paths[p.key(rel(path))] = path;
  }
  return { project: { files, self: p.key(rel(file)) }, paths };
}

/** The tokenizer counts fall back to when neither the config nor the model names one. */
export const FALLBACK_TOKENIZER = 'o200k_base';

export interface BindOptions {
  /** Model name overriding the config's (editor setting or CLI flag). */
  model?: string;
  /** Model used when neither the option, the template nor the config names one. */
  defaultModel?: string;
  /** dotprompt helpers and partials the editor setting declares as registered in code (after the config's). */
  codeRegistered?: CodeRegistrySetting;
  /** The loader of `.prompty` files by glob (editor setting), over what the workspace runs (language/prompty/loader.ts). */
  promptyLoaders?: PromptyLoaderPins;
}

/** Where a template's config comes from. */
export interface ConfigBinding {
  config?: { path: string; inline: boolean; doc: ConfigDoc };
  findings: Finding[];
  dependencies: string[];
}

/** A template bound for assembly: everything but the values. */
export interface TemplateBinding {
  template: TemplateDoc;
  /** The config file (or inline config) the template binds to, when there is one. */
  config?: { path: string; inline: boolean; doc: ConfigDoc };
  /** False when a config exists but cannot be used (invalid): its findings say why; nothing is assembled. */
  usable: boolean;
  /** The config the request is assembled with: the file's, or the zero-config defaults. */
  effective: ContextConfig;
  /** Set when no context config applies: the request comes from the front matter, the registry and the sample. */
  zeroConfig?: { config: ContextConfig; maxOutput?: number };
  model: { name?: string; info?: ModelInfo };
  tokenizer: Tokenizer;
  exact: boolean;
  /** The budget equation with the history remainder (seed 000, 3.4); absent for an unusable config. */
  budget?: BudgetReport;
  /** The template's own sample data (Prompty `sample:`, input defaults). */
  sample: SampleResult;
  partials: Partials;
  /** What the engine gets besides the values: partials, the runtime's defaults, escaping. */
  render: RenderOptions;
  /** The config file whose prices the request's cost is computed from. */
  costConfigPath?: string;
  /** Declared version: the config's `version`, else the front matter's `version`. */
  declaredVersion?: string;
  /** Findings of the template, its config, model, budget, sample and partials, without any values. */
  findings: Finding[];
  /** Every file read for the binding: re-bind when one changes. */
  dependencies: string[];
}

/** How far up from a plain prompt file a config that composes it is looked for (its folder and three above). */
const COMPOSE_LEVELS = 4;

/**
 * The config whose `messages` compose a request of this file (a plain prompt file), searched in
 * its folder and the folders above it inside the workspace, nearest first; else `<name>.context.yaml`
 * beside it. Undefined for a format that is not composed.
 */
function composingConfig(host: FileHost, template: TemplateDoc, dependencies: string[]): { path: string; doc: ConfigDoc } | undefined {
  const language = languageFor(template);
  if (!language.composedBy) return undefined;
  let dir = dirname(template.path);
  for (let level = 0; level < COMPOSE_LEVELS && host.roots.some((r) => isInside(r, dir)); level++) {
    for (const p of host.glob(dir, '*.context.{yaml,yml}').sort()) {
      const doc = readConfig(host, p);
      const config = doc?.config;
      if (!doc || !config?.messages?.length) continue;
      if (language.composedBy(config, p, template.path, (ref) => resolveInWorkspace(host, p, ref).path)) {
        dependencies.push(p);
        return { path: p, doc };
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const stem = template.path.replace(/\.[^./]+$/, '');
  for (const candidate of [`${stem}.context.yaml`, `${stem}.context.yml`]) {
    dependencies.push(candidate);
    const doc = readConfig(host, candidate);
    if (doc) return { path: candidate, doc };
  }
  return undefined;
}

/** The request a config composes of a plain prompt file and others (the language's `compose`), or undefined. */
function composeTemplate(host: FileHost, template: TemplateDoc, binding: ConfigBinding): ComposeResult | undefined {
  const language = languageFor(template);
  const cfg = binding.config;
  if (!language.compose || !cfg || cfg.inline || !cfg.doc.config) return undefined;
  return language.compose(template, {
    configPath: cfg.path,
    config: cfg.doc.config,
    configDoc: cfg.doc,
    ...(host.roots.find((r) => isInside(r, cfg.path)) !== undefined ? { root: host.roots.find((r) => isInside(r, cfg.path)) } : {}),
    read(ref, from) {
      const r = resolveInWorkspace(host, from ?? cfg.path, ref);
      if (!r.path) return { error: r.error ?? `'${ref}' cannot be resolved` };
      const text = host.readFile(r.path);
      return text === undefined ? { error: `'${ref}' does not exist` } : { path: r.path, text };
    },
  });
}

/** Finds a template's config: front matter `context:` (path or inline), else `<name>.context.yaml` beside it; for a plain prompt file, the config that composes it. */
export function bindConfig(host: FileHost, template: TemplateDoc): ConfigBinding {
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  if (languageFor(template).composedBy) {
    // A plain prompt file needs no config: alone it is counted for the default model.
    const c = composingConfig(host, template, dependencies);
    return c ? { config: { path: c.path, inline: false, doc: c.doc }, findings, dependencies } : { findings, dependencies };
  }
  const ctx = template.frontMatter?.context;
  if (ctx && typeof ctx.value === 'object') {
    // The `context:` mapping of the front matter as the template parser read it (never parsed twice).
    const yaml = template.frontMatter?.yaml;
    const node = yaml ? findAt(yaml, ['context']).node : undefined;
    const doc = node ? parseInlineConfig(template.path, template.text, node, yaml!.base, yaml) : parseInlineConfig(template.path, template.text, ctx.span);
    return { config: { path: template.path, inline: true, doc }, findings, dependencies };
  }
  if (ctx && typeof ctx.value === 'string') {
    const resolved = resolveInWorkspace(host, template.path, ctx.value);
    if (!resolved.path) {
      findings.push(configUnresolved(template, ctx.span, ctx.value, resolved.error));
      return { findings, dependencies };
    }
    dependencies.push(resolved.path);
    const doc = readConfig(host, resolved.path);
    if (!doc) {
      findings.push(configReference(template, ctx.span, ctx.value, 'does not exist'));
      return { findings, dependencies };
    }
    return { config: { path: resolved.path, inline: false, doc }, findings, dependencies };
  }
  // A template inside a file (BAML's `answer.baml#Answer`): `answer.Answer.context.yaml`, else the file's `answer.context.yaml`.
  const file = templateFileOf(template.path);
  const fileStem = file.replace(/\.(prompt|prompty|baml)$/i, '');
  const inner = file !== template.path ? template.path.slice(file.length + 1) : undefined;
  const stem = inner ? `${fileStem}.${inner}` : fileStem;
  const stems = inner ? [stem, fileStem] : [stem];
  for (const candidate of stems.flatMap((x) => [`${x}.context.yaml`, `${x}.context.yml`])) {
    dependencies.push(candidate);
    const doc = readConfig(host, candidate);
    if (doc) return { config: { path: candidate, inline: false, doc }, findings, dependencies };
  }
  // A coding agent's instruction file is no application's template: it has no config to miss.
  if (template.format !== 'agent') findings.push(configMissing(template, stem));
  return { findings, dependencies };
}

/** Where a model finding goes: the template's `model:`, else the config's `model:`/`tokenizer:`, else the front matter; with the texts its quick fixes edit. */
function modelSpan(template: TemplateDoc, cfgDoc: ConfigDoc | undefined, explicitModel: boolean): ModelWhere {
  const declare = cfgDoc && !cfgDoc.keySpan(['models']) ? { declareIn: { path: cfgDoc.path, text: cfgDoc.text } } : {};
  if (!explicitModel && template.frontMatter?.model) return { path: template.path, span: template.frontMatter.model.span, text: template.text, ...declare };
  const s = cfgDoc?.valueSpan(['model']) ?? cfgDoc?.valueSpan(['tokenizer']);
  if (cfgDoc && s && cfgDoc.path !== template.path) return { path: cfgDoc.path, span: s, text: cfgDoc.text, ...declare };
  return { path: template.path, span: template.frontMatter?.span ?? { start: 0, end: 0 }, ...declare };
}

/** The model, tokenizer and exactness a config (and the names asked for) gives, with the findings of a name or tokenizer that cannot be used. */
export function bindModel(
  config: ContextConfig | undefined,
  name: string | undefined,
  where: () => ModelWhere,
  tokenizerWhere: () => { path: string; span: Span } | undefined,
  inConfig = false,
): { model: { name?: string; info?: ModelInfo }; tokenizer: Tokenizer; exact: boolean; findings: Finding[] } {
  const findings: Finding[] = [];
  const info = name ? resolveModel(name, config?.models) : undefined;
  if (name && !info && !config?.tokenizer) {
    const at = where();
    findings.push(unknownModel(at, name, FALLBACK_TOKENIZER, inConfig, nearestModels(name, config?.models)));
  }
  const retired = info?.retired ? modelRetired(where().path, where().span, info) : undefined;
  if (retired) findings.push(retired);
  const family = info?.estimate && !config?.tokenizer ? familyEstimate(where(), info, nearestModels(name!, config?.models)) : undefined;
  if (family) findings.push(family);
  const tokenizerName = config?.tokenizer ?? info?.tokenizer ?? FALLBACK_TOKENIZER;
  let tokenizer = getTokenizer(tokenizerName);
  if (!tokenizer) {
    const at = tokenizerWhere();
    if (at) findings.push(unknownTokenizer(at.path, at.span, tokenizerName));
    tokenizer = getTokenizer(FALLBACK_TOKENIZER)!;
  }
  const exact = countsExact(tokenizer, info, { configTokenizer: !!config?.tokenizer, unknownModel: !!name && !info });
  return { model: { ...(name !== undefined ? { name } : {}), ...(info ? { info } : {}) }, tokenizer, exact, findings };
}

/** The config a template without one is assembled with: the front matter's output reserve, the registry's window. */
function zeroConfigOf(maxOutput: number | undefined, model: { name?: string; info?: ModelInfo }): ContextConfig {
  return ContextConfigSchema.parse({
    output: maxOutput ?? defaultOutputReserve(model.info),
    ...(model.info || !model.name ? {} : { window: 128_000 }),
  });
}

/** The loader a `.prompty` template's context config names (`prompty.loader`), with the config's path. */
function promptyConfigLoader(b: ConfigBinding): { loader: PromptyLoader; path: string } | undefined {
  const loader = b.config?.doc.config?.prompty?.loader;
  return loader && b.config ? { loader, path: b.config.path } : undefined;
}

/**
 * Binds a parsed template. `host` is read for the config, the sample and the partials; pass a
 * recording host to learn which reads decided the binding.
 */
export function bindTemplate(host: FileHost, parsed: TemplateDoc, options: BindOptions = {}): TemplateBinding {
  // A .prompty file is parsed by the engine of the loader its project runs (azure-ai-inference: mustache).
  // The config a template binds to depends on its path and front matter only, not on its body's parse.
  const first = bindConfig(host, parsed);
  const configLoader = promptyConfigLoader(first);
  const given = promptyDocForLoader(host, parsed, options.promptyLoaders, configLoader);
  const binding = given === parsed ? first : bindConfig(host, given);
  // A plain prompt file composed by a config is the whole request the config lists.
  const composed = composeTemplate(host, given, binding);
  const template = composed?.doc ?? given;
  const path = template.path;
  const findings: Finding[] = [...template.findings];
  append(findings, scanHiddenCharacters(path, template.text), scanSecrets(path, template.text));
  append(findings, binding.findings);
  const dependencies = [...binding.dependencies];
  if (composed) {
    append(findings, composed.findings);
    append(dependencies, composed.dependencies);
  }
  const cfgDoc = binding.config?.doc;
  const config = cfgDoc?.config;
  if (cfgDoc && !binding.config?.inline) append(findings, cfgDoc.findings, scanConfig(cfgDoc));
  else if (cfgDoc) append(findings, cfgDoc.findings);

  // Model: explicit option, then template front matter, then config, then the editor default.
  // The template's project (BAML's baml_src/): its runtime loads it, and a client defined in another file names the model.
  const project = projectOf(host, template);
  if (project.project) for (const k of Object.keys(project.project.files)) if (k !== project.project.self) dependencies.push(project.paths[k]);
  const settings = requestSettings(template);
  if (settings.model === undefined && !settings.unresolved && project.project) {
    const m = languageFor(template).modelOf?.(template, project.project);
    if (m) settings.model = m;
  }
  if (settings.unresolved && !options.model && template.frontMatter?.model) {
    findings.push(unresolvedModel(template, settings.unresolved, config?.model ?? options.defaultModel ?? `the ${FALLBACK_TOKENIZER} tokenizer`));
  }
  const modelName = options.model ?? settings.model ?? config?.model ?? options.defaultModel;
  const bound = bindModel(
    config,
    modelName,
    () => modelSpan(template, cfgDoc, !!options.model),
    () => {
      const span = cfgDoc?.valueSpan(['tokenizer']);
      return cfgDoc && span ? { path: cfgDoc.path, span } : undefined;
    },
  );
  append(findings, bound.findings);
  const { model, tokenizer, exact } = bound;
  if (!exact && config && !model.info?.estimate) {
    const at = modelSpan(template, cfgDoc, !!options.model);
    findings.push(tokenizerEstimate(at.path, at.span, tokenizer.name, model.name));
  }

  const usable = !(binding.config && (!config || !cfgDoc));
  const zero = !config;
  const effective = config ?? zeroConfigOf(settings.maxOutput, model);
  const sample = sampleFixture(host, template);
  const registry = codeRegistry(config, binding.config && !binding.config.inline ? binding.config.path : undefined, options.codeRegistered);
  const partials = readPartials(host, template, registry);
  const costConfigPath = binding.config && !binding.config.inline ? binding.config.path : undefined;
  const fmVersion = template.frontMatter?.data.version;
  const declared = effective.version ?? (typeof fmVersion === 'string' || typeof fmVersion === 'number' ? fmVersion : undefined);
  const out: TemplateBinding = {
    template,
    ...(binding.config ? { config: binding.config } : {}),
    usable,
    effective,
    ...(zero && usable ? { zeroConfig: { config: effective, ...(settings.maxOutput !== undefined ? { maxOutput: settings.maxOutput } : {}) } } : {}),
    model,
    tokenizer,
    exact,
    sample,
    partials,
    // Defaults under the fixture's values: dotprompt's input.default (as Genkit passes it); for Prompty the
    // input defaults and the sample, which Prompty's prepare() hoists under the inputs of every run.
    render: {
      partials: partials.sources,
      defaults: runtimeDefaults(template, sample),
      // Values are neutralised with or without a config; only a config declares what is untrusted.
      escape: true,
      ...(zero ? { trustKnown: false } : {}),
      ...codeRenderOptions(registry, partials),
      ...(template.format === 'prompty' ? { readFile: besideTemplate(host, template.path), loader: promptyLoaderOf(host, template, findings, options.promptyLoaders, configLoader) } : {}),
      ...(project.project ? { project: project.project } : {}),
    },
    ...(costConfigPath !== undefined ? { costConfigPath } : {}),
    ...(declared !== undefined ? { declaredVersion: String(declared) } : {}),
    findings,
    dependencies,
  };
  if (!usable) return out;

  out.budget = budgetFor(effective, model.info, { name: tokenizer.name, exact });
  if (cfgDoc) {
    append(findings, budgetFindings(out.budget, cfgDoc, model.info));
    append(findings, templateRules({ template: withoutHelperCalls(template, registry), config: effective, configDoc: cfgDoc, inline: binding.config!.inline }));
    append(findings, cachePrefixFindings(template, effective, cfgDoc));
  }
  append(findings, sample.findings);
  append(dependencies, sample.dependencies);
  return out;
}

/** Options of one assembly of a binding. */
export interface AssembleExtra {
  /** Reference time (ISO 8601) for expiry and recency. */
  now?: string;
  /**
   * The config is the file's with call-time settings (the library's filters, `now`, input cap):
   * the trace still names and hashes the file as written.
   */
  sameDocument?: boolean;
  /** False: the request's cost is not put on the trace (a caller that reads only findings, `ctxlens check`). */
  cost?: boolean;
}

/**
 * The assembly input of a binding with these values. `config` replaces the bound config (an
 * ablation, a what-if, a call's filters); the config as written keeps its document, so findings
 * are located as the editor locates them, and a transformed one is hashed as canonical JSON.
 */
export function toAssembleInput(b: TemplateBinding, fixture: FixtureDoc | undefined, config: ContextConfig = b.effective, extra: AssembleExtra = {}): AssembleInput {
  const doc = b.config?.doc;
  const same = config === b.effective || extra.sameDocument === true;
  return {
    template: b.template,
    config,
    ...(b.config ? { configPath: b.config.inline ? undefined : b.config.path } : {}),
    ...(doc && same ? { configText: doc.text, configDoc: doc } : {}),
    fixture,
    tokenizer: b.tokenizer,
    model: b.model.info,
    modelName: b.model.name,
    exact: b.exact,
    render: b.render,
    ...(config === b.effective && b.budget ? { budget: b.budget } : {}),
    ...(b.zeroConfig ? { zeroConfig: true } : {}),
    ...(extra.now !== undefined ? { now: extra.now } : {}),
  };
}

/** Assembles a binding with these values, with the request's cost at its model's price on the trace. */
export function assembleBound(b: TemplateBinding, fixture: FixtureDoc | undefined, config: ContextConfig = b.effective, extra: AssembleExtra = {}): AssemblyResult {
  const result = assemble(toAssembleInput(b, fixture, config, extra));
  return extra.cost === false ? result : withCost(result, config, b.costConfigPath);
}

/** Rules a config gets when no template uses it yet (re-exported for the config analysis). */
export { configRules };
