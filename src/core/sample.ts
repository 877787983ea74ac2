/**
 * The template's own data and settings, for analysis without a context config:
 *
 * - the implicit fixture `sample`: Prompty `sample:` (inline, or `${file:sample.json}` inside the
 *   workspace), Prompty `inputs.<name>.sample`, and the defaults below;
 * - front matter defaults the runtime applies under any fixture: dotprompt `input.default`,
 *   Prompty `inputs.<name>.default`;
 * - the request settings: the model (Prompty `model.configuration.name` / `azure_deployment`,
 *   dotprompt `model:` with a provider prefix), the output reserve (Prompty
 *   `model.parameters.max_tokens`, dotprompt `config.maxOutputTokens`).
 *
 * `${env:NAME}` values are references to the environment of the application, never read here.
 */
import { stringify } from 'yaml';
import type { FileHost } from './host';
import type { Finding, FixtureDoc, Span, TemplateDoc } from './types';
import { parseFixture } from './fixture';
import { withRuntimeValue } from './fixture/values';
import { resolveInWorkspace } from './paths';
import { finding } from './rules/registry';
import { ENV_REFERENCE } from './models';
import { parseYaml, toJs } from './text/yaml';
import { promptyRuntimeInputs } from './language/prompty/engine';
import { PyFloat, Unsupported } from './language/jinja/values';
import { languageFor } from './language/registry';
import { choosePromptyLoader, type PromptyLoaderPins } from './language/prompty/loader';
import { PROMPTY_LOADER_LABEL, type PromptyLoader } from './language/prompty/engine';

/** The name of the implicit fixture in pickers, the CLI and the trace. */
export const SAMPLE_FIXTURE = 'sample';
/** The pseudo-path of the implicit fixture in a template's fixture list. */
export function samplePath(templatePath: string): string {
  return `${templatePath}#${SAMPLE_FIXTURE}`;
}

const MAX_SAMPLE_BYTES = 5 * 1024 * 1024;

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function at(data: unknown, path: readonly string[]): unknown {
  let v = data;
  for (const k of path) v = isRecord(v) ? v[k] : undefined;
  return v;
}

/** Front matter defaults the runtime applies under the fixture's values. */
export function templateDefaults(template: TemplateDoc): Record<string, unknown> {
  const data = template.frontMatter?.data;
  if (!data) return {};
  if (template.format === 'prompt') {
    const d = at(data, ['input', 'default']);
    return isRecord(d) ? { ...d } : {};
  }
  const out: Record<string, unknown> = {};
  const inputs = data.inputs;
  if (isRecord(inputs)) for (const [k, v] of Object.entries(inputs)) if (isRecord(v) && 'default' in v) out[k] = stripDeep(v.default);
  return out;
}

/**
 * What the runtime places under a fixture's values: dotprompt's `input.default`; for Prompty the
 * input defaults and the sample, which Prompty's prepare() hoists under the inputs of every run.
 * The editor analysis and every variant of it (eval, diff, the preview's compare mode) use this.
 */
export function runtimeDefaults(template: TemplateDoc, sample: Pick<SampleResult, 'values' | 'under'>): Record<string, unknown> {
  if (template.format !== 'prompty') return templateDefaults(template);
  // What the file's Prompty runtime line places under explicit inputs (0.1.x hoists its sample; v2 fills its defaults itself).
  return sample.under ?? { ...templateDefaults(template), ...sample.values };
}

export interface SampleResult {
  fixture?: FixtureDoc;
  /** The sample as plain values. Prompty hoists them under the inputs of every run (prepare: param_hoisting(inputs, sample)). */
  values: Record<string, unknown>;
  /**
   * Prompty: what the file's runtime line renders under explicit inputs, loaded as that runtime
   * loads it (language/prompty/engine.ts promptyRuntimeInputs): the 0.1.x sample, stripped; nothing for v2.
   */
  under?: Record<string, unknown>;
  findings: Finding[];
  dependencies: string[];
  /** The template's own fixtures where its format has them (BAML's `test` blocks), by name; `fixture` is the first. */
  tests?: Array<{ name: string; fixture: FixtureDoc }>;
}

/** The path of a template's own fixture in its fixture list (`baml_src/x.baml#F#TestName`). */
export function ownFixturePath(templatePath: string, name: string): string {
  return `${templatePath}#${name}`;
}

/** The template's own fixtures (language.ts `fixtures`: BAML's tests), each as a fixture located at its arguments. */
function ownFixtures(template: TemplateDoc, own: Array<{ name: string; values: Record<string, unknown>; span: Span }>): SampleResult {
  const tests: Array<{ name: string; fixture: FixtureDoc }> = [];
  for (const t of own) {
    const text = stringify({ name: t.name, slots: t.values }, { aliasDuplicateObjects: false });
    const doc = respan(parseFixture(template.path, text), t.span) as FixtureDoc;
    doc.text = text;
    doc.path = template.path;
    doc.name = t.name;
    doc.findings = doc.findings.filter((f) => f.rule !== 'fixture-invalid').map((f) => ({ ...f, path: template.path }));
    // Each text is the test's own string (YAML does not always give back the text written).
    for (const [name, v] of Object.entries(doc.slots)) if (v.type === 'text' && !v.fileRef && typeof t.values[name] === 'string') v.text = t.values[name];
    tests.push({ name: t.name, fixture: doc });
  }
  const first = tests[0];
  return { ...(first ? { fixture: first.fixture } : {}), tests, values: own[0]?.values ?? {}, findings: [], dependencies: [] };
}

/** The implicit `sample` fixture, or no fixture when the template carries no data. */
export function sampleFixture(host: FileHost, template: TemplateDoc): SampleResult {
  const own = languageFor(template).fixtures?.(template);
  if (own) return ownFixtures(template, own);
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const fm = template.frontMatter;
  // A Prompty file's values are read by the runtime's own loader (runtimeLoaded), which finds the
  // front matter as the runtime does, also where the template scanner does not (an unclosed fence).
  if (!fm && template.format !== 'prompty') return { findings, dependencies, values: {} };
  const span: Span = fm?.span ?? { start: 0, end: 0 };
  let values: Record<string, unknown> = {};
  let origin = template.path;
  // A promptflow sample file (`sample: sample.json`) follows promptflow's loader, not Prompty's.
  let promptflow = false;
  if (template.format === 'prompty' && fm) {
    // Prompty normalises every front matter value on load (strings are stripped, recursively).
    // Prompty's loader normalises the whole front matter (Prompty.normalize): `${file:x.json}`
    // anywhere in it, a sample value included, is replaced by the JSON file's (normalised) value.
    const files = new FileValues(host, template, span, findings, dependencies);
    const inputs = fm.data.inputs;
    if (isRecord(inputs)) for (const [k, v] of Object.entries(inputs)) if (isRecord(v) && 'sample' in v) values[k] = files.normalize(v.sample);
    const sample = fm.data.sample;
    if (typeof sample === 'string') {
      const m = /^\$\{file:(.+)\}$/.exec(sample.trim());
      const flow = m ? undefined : PROMPTFLOW_SAMPLE.exec(sample.trim());
      if (m || flow) {
        const read = files.read(m ? m[1].trim() : flow![1]);
        if (read && !isRecord(read.value)) findings.push(finding('fixture-invalid', read.path, { start: 0, end: Math.min(1, read.text.length) }, 'A Prompty sample file is a JSON (or YAML) object of input values.'));
        else if (read) {
          values = { ...values, ...((m ? files.normalize(read.value) : read.value) as Record<string, unknown>) };
          origin = read.path;
        }
        if (flow) {
          promptflow = true;
          // Prompty's runtimes never read a bare file name; promptflow's Prompty loader does
          // (load_inputs_from_sample: a string ending in .json, optionally `file:`-prefixed, is a JSON file of inputs).
          findings.push(
            finding(
              'unsupported-feature',
              template.path,
              span,
              `sample: ${sample.trim()} is promptflow's sample file: this file follows promptflow's Prompty loader, which reads it as a JSON object of inputs (Prompty's own runtimes do not read a bare file name). Context Lens reads it beside the template; promptflow opens it relative to the working directory.`,
              { severity: 'info' },
            ),
          );
        }
      } else if (ENV_REFERENCE.test(sample.trim())) {
        findings.push(finding('unsupported-feature', template.path, span, `sample: ${sample.trim()} reads the application's environment, which Context Lens never reads; the sample is left empty.`, { severity: 'info' }));
      }
    } else if (isRecord(sample)) values = { ...values, ...(files.normalize(sample) as Record<string, unknown>) };
  }
  let under: Record<string, unknown> | undefined;
  let typed: Record<string, unknown> | undefined;
  const loaded = template.format === 'prompty' && !promptflow ? runtimeLoaded(host, template) : undefined;
  if (loaded) {
    // The values as the file's own runtime line loads them (0.1.x: the sample, strings stripped the
    // Python way, `inputs.*.default` ignored; v2: each input's default, else its example); the pass
    // above only locates the files it reads and what cannot be read.
    values = loaded.values;
    typed = loaded.typed;
    under = loaded.under;
    for (const ref of environmentReferences(values)) {
      const i = template.text.indexOf(ref);
      findings.push(
        finding(
          'unsupported-feature',
          template.path,
          i >= 0 ? { start: i, end: i + ref.length } : span,
          `${ref} reads the application's environment, which Context Lens never reads: the value is the reference as written, where Prompty's runtime reads the variable when it loads the file.`,
          { severity: 'info' },
        ),
      );
    }
  } else {
    // Defaults fill what the sample leaves out (the runtime applies them too, see templateDefaults).
    const defaults = templateDefaults(template);
    for (const [k, v] of Object.entries(defaults)) if (!(k in values)) values[k] = v;
  }
  if (!Object.keys(values).length) return { findings, dependencies, values, ...(under ? { under } : {}) };

  const text = stringify({ name: SAMPLE_FIXTURE, slots: values }, { aliasDuplicateObjects: false });
  const parsed = parseFixture(origin, text);
  // The values live in the template (or its sample file), not in this synthetic text: every span
  // points at the front matter (or the start of the sample file).
  const here = origin === template.path ? span : { start: 0, end: 0 };
  const doc = respan(parsed, here) as FixtureDoc;
  doc.text = text;
  doc.path = origin;
  doc.name = SAMPLE_FIXTURE;
  doc.findings = doc.findings.filter((f) => f.rule !== 'fixture-invalid').map((f) => ({ ...f, path: origin }));
  // The plain values went through YAML, which keeps no Python float (`2.0` is read back as 2), tuple
  // or key order: data and list values keep the runtime's own value beside them for the engine.
  if (typed) {
    for (const [name, v] of Object.entries(doc.slots)) if ((v.type === 'data' || v.type === 'items') && Object.hasOwn(typed, name)) withRuntimeValue(v, typed[name]);
  }
  // A text read back from YAML is not always the text written (a block scalar of `"  \n"` loses its
  // leading spaces): each text slot is the sample's own string. A value the runtime loads as
  // something else than a string (a date, bytes, an integer beyond 2^53) is the runtime's value, as data: `{{ [v] }}`
  // prints `[datetime.date(2024, 1, 2)]`, not the date's text in quotes.
  for (const [name, v] of Object.entries(doc.slots)) {
    if (v.type !== 'text' || v.fileRef) continue;
    const t = typed && Object.hasOwn(typed, name) ? typed[name] : undefined;
    if ((t !== null && typeof t === 'object') || typeof t === 'bigint') doc.slots[name] = withRuntimeValue({ type: 'data', value: values[name], span: v.span }, t);
    else if (typeof values[name] === 'string') v.text = values[name];
  }
  return { fixture: doc, findings, dependencies, values, ...(under ? { under } : {}) };
}

/** The whole-value `${…}` references other than files that a runtime's loader left as written (the environment is never read). */
function environmentReferences(values: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      if (/^\$\{[^}]*\}$/.test(v) && !/^\$\{file:/i.test(v)) out.add(v);
      return;
    }
    if (depth > 64 || v === null || typeof v !== 'object') return;
    for (const x of Object.values(v as Record<string, unknown>)) walk(x, depth + 1);
  };
  walk(values, 0);
  return [...out].slice(0, 16);
}

/** Plain data of a runtime value: Python floats as numbers, big integers as strings of their digits, dates and bytes as their text. */
function plainData(v: unknown, depth = 0): unknown {
  if (v instanceof PyFloat) return v.v;
  if (typeof v === 'bigint') return v.toString();
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => plainData(x, depth + 1));
  // A value of the runtime's own type (a date, bytes) is its text.
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return String(v);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) Object.defineProperty(out, k, { value: plainData(x, depth + 1), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * A Prompty file's values as its runtime line loads them, through the engine's loader, with files
 * read beside the template inside the workspace. Undefined when the runtime cannot load the file
 * (the engine reports why when it renders).
 */
function runtimeLoaded(host: FileHost, template: TemplateDoc): { values: Record<string, unknown>; typed: Record<string, unknown>; under: Record<string, unknown> } | undefined {
  const read = besideTemplate(host, template.path);
  // The application's environment is never read: `${env:…}` stays a reference.
  const noEnv = () => undefined;
  try {
    const typed = promptyRuntimeInputs(template.text, undefined, read, undefined, noEnv);
    const values = plainData(typed) as Record<string, unknown>;
    const under = promptyRuntimeInputs(template.text, {}, read, undefined, noEnv);
    return { values, typed, under };
  } catch {
    return undefined;
  }
}

/** Largest file beside a template that is read for it (samples, `base:` files, local images). */
const MAX_BESIDE_BYTES = 4 * 1024 * 1024;

/**
 * A reader of files beside a template (paths relative to its folder), inside the workspace only
 * and bounded in size: what the Prompty engine reads (sample files, `base:` files, 0.1.x's local
 * images). Hosts read text, so a binary file is reported, never sent altered.
 */
export function besideTemplate(host: FileHost, templatePath: string): (relativePath: string) => string | undefined {
  return (relativePath) => {
    const r = resolveInWorkspace(host, templatePath, relativePath);
    if (!r.path) return undefined;
    const size = host.size(r.path);
    const text = size === undefined || size > MAX_BESIDE_BYTES ? undefined : host.readFile(r.path);
    if (text !== undefined && text.includes('\uFFFD')) throw new Unsupported(`the file '${relativePath}' (it is binary, and Context Lens reads files beside a template as text)`);
    return text;
  };
}

/** promptflow's bare sample file: `sample.json` or `file:sample.json` (a string ending in .json). */
const PROMPTFLOW_SAMPLE = /^(?:file:)?([^\s${}][^${}]*\.json)$/;
/** Files `${file:…}` values may read in one front matter (each read once). */
const MAX_SAMPLE_FILES = 32;

/**
 * `${file:…}` values of a Prompty front matter, read as Prompty's loader reads them
 * (`Prompty._process_file`: JSON, its strings normalised in turn, relative to the template's
 * folder), through the host and inside the workspace only. A missing or unreadable file is a
 * located `file-reference` finding and leaves the reference as written.
 */
class FileValues {
  private readonly cache = new Map<string, { path: string; text: string; value: unknown } | undefined>();
  constructor(
    private readonly host: FileHost,
    private readonly template: TemplateDoc,
    private readonly span: Span,
    private readonly findings: Finding[],
    private readonly dependencies: string[],
  ) {}

  /** A file's parsed value, or undefined (with a finding) when it cannot be read. */
  read(ref: string): { path: string; text: string; value: unknown } | undefined {
    if (this.cache.has(ref)) return this.cache.get(ref);
    let out: { path: string; text: string; value: unknown } | undefined;
    const r = resolveInWorkspace(this.host, this.template.path, ref);
    if (this.cache.size >= MAX_SAMPLE_FILES) this.findings.push(finding('file-reference', this.template.path, this.span, `Sample file '${ref}' is not read: the front matter refers to more than ${MAX_SAMPLE_FILES} files.`));
    else if (!r.path) this.findings.push(finding('file-reference', this.template.path, this.span, `Sample file '${ref}': ${r.error ?? 'cannot be resolved'}.`));
    else {
      this.dependencies.push(r.path);
      const size = this.host.size(r.path);
      const text = size !== undefined && size <= MAX_SAMPLE_BYTES ? this.host.readFile(r.path) : undefined;
      if (text === undefined) this.findings.push(finding('file-reference', this.template.path, this.span, size === undefined ? `Sample file '${ref}' does not exist.` : `Sample file '${ref}' is over ${MAX_SAMPLE_BYTES.toLocaleString('en-US')} bytes or unreadable; it is not read.`));
      else {
        const src = parseYaml(text.replace(/^\uFEFF/, ''));
        const value = src.doc.errors.length ? undefined : toJs(src, src.doc.contents);
        if (value === undefined) this.findings.push(finding('fixture-invalid', r.path, { start: 0, end: Math.min(1, text.length) }, `Sample file '${ref}' is not valid JSON.`));
        else out = { path: r.path, text, value };
      }
    }
    this.cache.set(ref, out);
    return out;
  }

  /** Prompty's `normalize`: strings stripped, `${file:…}` replaced by the file's value, in lists and mappings too. */
  normalize(v: unknown, depth = 0): unknown {
    if (typeof v === 'string') {
      const t = v.trim();
      const m = /^\$\{file:(.+)\}$/.exec(t);
      if (!m || depth > 16) return t;
      const read = this.read(m[1].trim());
      return read ? this.normalize(read.value, depth + 1) : t;
    }
    if (depth > 64 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => this.normalize(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = this.normalize(x, depth + 1);
    return out;
  }
}

/** Prompty's `normalize`: every string stripped, in lists and mappings too. */
function stripDeep(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return v.trim();
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => stripDeep(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = stripDeep(x, depth + 1);
  return out;
}

/** A copy of a parsed fixture with every span replaced by `span`. */
function respan(v: unknown, span: Span, depth = 0): unknown {
  if (depth > 200 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => respan(x, span, depth + 1));
  const o = v as Record<string, unknown>;
  if (typeof o.start === 'number' && typeof o.end === 'number' && Object.keys(o).length === 2) return { ...span };
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) out[k] = k === 'text' && typeof x === 'string' ? x : respan(x, span, depth + 1);
  return out;
}

export interface RequestSettings {
  /** The model as the template names it (provider prefix kept), when it names one that can be resolved. */
  model?: string;
  modelSpan?: Span;
  /** `${env:…}` or another reference the template uses instead of a model name. */
  unresolved?: string;
  /** Output tokens the template asks for. */
  maxOutput?: number;
}

/** The model and output reserve the template's own front matter asks for. */
export function requestSettings(template: TemplateDoc): RequestSettings {
  const out: RequestSettings = {};
  const m = template.frontMatter?.model;
  if (m) {
    if (ENV_REFERENCE.test(m.value.trim()) || /\$\{[^}]*\}/.test(m.value)) out.unresolved = m.value.trim();
    else {
      out.model = m.value.trim();
      out.modelSpan = m.span;
    }
  }
  const data = template.frontMatter?.data;
  // dotprompt `config.maxOutputTokens`; Prompty 0.1.x `model.parameters.max_tokens`, v2 `model.options.maxOutputTokens`.
  const n =
    template.format === 'prompt'
      ? at(data, ['config', 'maxOutputTokens'])
      : (at(data, ['model', 'parameters', 'max_tokens']) ?? at(data, ['model', 'parameters', 'max_completion_tokens']) ?? at(data, ['model', 'options', 'maxOutputTokens']));
  if (typeof n === 'number' && Number.isInteger(n) && n > 0) out.maxOutput = n;
  return out;
}

/**
 * The loader a `.prompty` file is rendered as (language/prompty/loader.ts): its pin, a pin by
 * glob, what the workspace around it runs (read through the host), else its own format. Where
 * that is only a guess, one `loader-guessed` finding with quick fixes that pin it (a YAML comment
 * in the front matter, which no loader reads).
 */
export function promptyLoaderOf(host: FileHost, template: TemplateDoc, findings: Finding[], pins?: PromptyLoaderPins, config?: { loader: PromptyLoader; path: string }): { id: PromptyLoader; reason: string; source: 'pin' | 'workspace' | 'file'; guessed: boolean } {
  const choice = choosePromptyLoader(template.path, template.text, template.frontMatter?.data, { host, ...(pins ? { pins } : {}), ...(config ? { config } : {}) });
  if (choice.guessed) {
    const fence = /^\uFEFF?[ \t]*---[ \t]*\r?\n/.exec(template.text);
    const at = fence ? fence[0].length : 0;
    const span: Span = template.frontMatter?.span ?? { start: 0, end: Math.min(template.text.length, 3) };
    const others: PromptyLoader[] = choice.loader === 'prompty-0.1' || choice.loader === 'prompty-2' ? ['promptflow', 'azure-ai-inference'] : [choice.loader === 'typescript' ? 'prompty-2' : 'prompty-0.1'];
    const pin = (l: PromptyLoader, preferred: boolean) => ({ title: `Pin the loader: ${PROMPTY_LOADER_LABEL[l]}`, edits: [{ path: template.path, span: { start: at, end: at }, newText: `# prompty-loader: ${l}\n` }], ...(preferred ? { preferred: true } : {}) });
    findings.push(
      finding('loader-guessed', template.path, { start: span.start, end: Math.min(span.end, span.start + 3) }, `This file is rendered as ${PROMPTY_LOADER_LABEL[choice.loader]} loads it, but that is a guess: ${choice.reason}. Pin the loader the project runs ('# prompty-loader: <loader>' in the front matter) so the rendering and the counts follow it.`, {
        fixes: fence ? [pin(choice.loader, true), ...others.map((l) => pin(l, false))] : [],
      }),
    );
  }
  return { id: choice.loader, reason: choice.reason, source: choice.source, guessed: choice.guessed };
}
