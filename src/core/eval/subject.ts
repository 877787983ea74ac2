/**
 * A template prepared for repeated assembly: the inputs `analyzeTemplate` binds (template, config,
 * tokenizer, model, partials, front matter defaults) held once, so eval cases, ablations, position
 * variants and diffs can call `assemble` many times with a transformed config or fixture and
 * everything else held fixed. Nothing here changes how a request is assembled: the config and the
 * fixture given to `assemble` are the only levers.
 */
import type { FileHost } from '../host';
import type { ContextConfig } from '../config/schema';
import type { AssemblyResult, ConfigDoc, FixtureDoc, FixtureItem, FixtureValue, ModelInfo, TemplateDoc, Tokenizer } from '../types';
import type { TemplateAnalysis } from '../analyze';
import type { TemplateBinding } from '../project';
import type { RenderOptions } from '../assembly';
import { stringify } from 'yaml';
import { analyzeTemplate } from '../analyze';
import { assembleBound } from '../project';
import { ContextConfigSchema } from '../config/schema';
import { parseFixture, resolveFixtureFiles } from '../fixture';
import { SAMPLE_FIXTURE } from '../sample';
import { isInside, resolveInWorkspace } from '../paths';

export interface Subject {
  path: string;
  analysis: TemplateAnalysis;
  /** The analysis's binding: the one setup every assembly of the template starts from. */
  binding: TemplateBinding;
  template: TemplateDoc;
  config: ContextConfig;
  configPath?: string;
  configText?: string;
  configDoc?: ConfigDoc;
  tokenizer: Tokenizer;
  model?: ModelInfo;
  modelName?: string;
  render: RenderOptions;
  /** Tokens the endpoint adds per message (config overhead, else the model's). */
  messageOverhead: number;
}

export type Prepared = { subject: Subject; error?: undefined } | { subject?: undefined; error: string };

/** Binds a template as the analysis does (without choosing a fixture). */
export function prepareSubject(host: FileHost, path: string, options: { model?: string } = {}): Prepared {
  const analysis = analyzeTemplate(host, path, { model: options.model, autoFixture: false });
  if (!analysis) return { error: `cannot read ${path}` };
  return subjectFromAnalysis(host, analysis, options, path);
}

/**
 * The subject of a template analysis made elsewhere (the language server's, with a fixture chosen):
 * what `prepareSubject` binds, without analysing the template again.
 */
export function subjectFromAnalysis(host: FileHost, analysis: TemplateAnalysis, options: { model?: string } = {}, path = analysis.path): Prepared {
  if (!analysis.assembly) {
    const why = analysis.findings.filter((f) => f.severity === 'error').map((f) => `${f.rule}: ${f.message}`)[0];
    return { error: `${path} has no usable context config${why ? ` (${why})` : ''}` };
  }
  const config = analysis.zeroConfig?.config ?? analysis.config?.doc.config;
  if (!config) return { error: `${path} has no usable context config` };
  const binding = analysis.binding;
  if (!binding) return { error: `${path} was not analysed in full` };
  const subject: Subject = {
    path,
    analysis,
    binding,
    template: analysis.template,
    config,
    tokenizer: binding.tokenizer,
    model: analysis.model,
    modelName: analysis.model?.name ?? options.model ?? analysis.assembly.trace.model,
    render: binding.render,
    messageOverhead: config.overhead?.message ?? analysis.model?.messageOverhead ?? 0,
  };
  if (binding.config) {
    if (!binding.config.inline) subject.configPath = binding.config.path;
    subject.configText = binding.config.doc.text;
    subject.configDoc = binding.config.doc;
  }
  return { subject };
}

/**
 * Assembles the subject with a fixture and, optionally, another config (an ablation or a what-if),
 * with the request's cost on the trace. The config as written keeps its document, so findings are
 * located as the editor locates them; a transformed config is hashed as canonical JSON.
 */
export function assembleWith(subject: Subject, fixture: FixtureDoc | undefined, config: ContextConfig = subject.config): AssemblyResult {
  return assembleBound(subject.binding, fixture, config);
}

/** A config patched with a partial config (deep merge of mappings; lists and scalars replace), validated. */
export function patchConfig(config: ContextConfig, patch: Record<string, unknown>): { config?: ContextConfig; error?: string } {
  const merged = deepMerge(config as unknown as Record<string, unknown>, patch);
  const r = ContextConfigSchema.safeParse(merged);
  if (!r.success) return { error: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  return { config: r.data };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepMerge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = isRecord(v) && isRecord(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Fixtures of eval cases
// ---------------------------------------------------------------------------

/** The fixture file of a template a case names: a fixture name, `sample`, or a path relative to `fromFile`. */
export function findFixture(host: FileHost, subject: Subject, fromFile: string, wanted: string): { fixture?: FixtureDoc; error?: string } {
  if (wanted === SAMPLE_FIXTURE) {
    const a = analyzeTemplate(host, subject.path, { fixture: SAMPLE_FIXTURE, model: subject.modelName });
    return a?.fixture ? { fixture: a.fixture } : { error: `${subject.path} has no sample data` };
  }
  const known = subject.analysis.fixtures.find((f) => f.name === wanted || f.path === wanted || f.path.endsWith('/' + wanted.replace(/^\.\//, '')));
  let path = known?.path;
  if (!path && wanted.startsWith('/') && host.roots.some((root) => isInside(root, wanted)) && host.size(wanted) !== undefined) path = wanted;
  if (!path && !wanted.startsWith('/')) {
    const r = resolveInWorkspace(host, fromFile, wanted);
    if (r.path && host.size(r.path) !== undefined) path = r.path;
  }
  if (!path) {
    const names = subject.analysis.fixtures.map((f) => f.name).join(', ') || 'none';
    return { error: `fixture '${wanted}' is neither a fixture of ${subject.path} (known: ${names}) nor a file next to ${fromFile}` };
  }
  const text = host.readFile(path);
  if (text === undefined) return { error: `cannot read fixture ${path}` };
  const parsed = parseFixture(path, text);
  const invalid = parsed.findings.find((f) => f.severity === 'error');
  if (invalid) return { error: `fixture ${path}: ${invalid.message}` };
  return { fixture: resolveFixtureFiles(parsed, host).doc };
}

/** The slot a case's `question:` fills: the config's user slot (`question` first), else `question`. */
export function questionSlot(config: ContextConfig): string {
  const users = Object.entries(config.slots ?? {})
    .filter(([, s]) => s.kind === 'user')
    .map(([n]) => n);
  return users.includes('question') ? 'question' : (users[0] ?? 'question');
}

/**
 * Slot values written inline (as in a fixture's `slots:`) over a base fixture: the inline values
 * replace the base's values of the same slots. `{ file }` references resolve relative to `fromFile`.
 */
export function withInlineSlots(host: FileHost, base: FixtureDoc | undefined, fromFile: string, label: string, values: Record<string, unknown>): { fixture?: FixtureDoc; error?: string } {
  if (!Object.keys(values).length) return { fixture: base };
  const text = stringify({ slots: values });
  const parsed = parseFixture(`${fromFile}#${label}`, text);
  const invalid = parsed.findings.find((f) => f.severity === 'error');
  if (invalid) return { error: `${label}: ${invalid.message}` };
  const inline = resolveFixtureFiles(parsed, host).doc;
  const missing = inline.findings.find((f) => f.rule === 'file-reference');
  if (missing) return { error: `${label}: ${missing.message}` };
  const merged: FixtureDoc = {
    path: base?.path ?? inline.path,
    text: `${base?.text ?? ''}\n# ${label}\n${text}`,
    name: base?.name ?? label,
    slots: { ...(base?.slots ?? {}), ...inline.slots },
    slotKeySpans: { ...(base?.slotKeySpans ?? {}) },
    findings: [],
  };
  if (base?.template) merged.template = base.template;
  if (base?.context) merged.context = base.context;
  return { fixture: merged };
}

/** A fixture with its list items mapped (undefined drops an item) and a marker in its text, so cache keys differ. */
export function mapItems(fixture: FixtureDoc, marker: string, fn: (item: FixtureItem, slot: string) => FixtureItem | undefined): FixtureDoc {
  const slots: Record<string, FixtureValue> = {};
  for (const [name, value] of Object.entries(fixture.slots)) {
    if (value.type !== 'items') {
      slots[name] = value;
      continue;
    }
    const items: FixtureItem[] = [];
    for (const item of value.items) {
      const next = fn(item, name);
      if (next) items.push(next);
    }
    slots[name] = { ...value, items };
  }
  return { ...fixture, text: `${fixture.text}\n# ${marker}`, slots };
}

/** A fixture without some slots' values (they render empty). */
export function withoutSlots(fixture: FixtureDoc, slots: readonly string[], marker: string): FixtureDoc {
  const rest: Record<string, FixtureValue> = {};
  for (const [name, value] of Object.entries(fixture.slots)) if (!slots.includes(name)) rest[name] = value;
  return { ...fixture, text: `${fixture.text}\n# ${marker}`, slots: rest };
}
