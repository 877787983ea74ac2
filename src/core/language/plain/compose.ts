/**
 * A request composed of plain prompt files: a context config's `messages` list, in order, each
 * `{ role, file }` or `{ role, text }` with its format. A file may be a key of a YAML, JSON or TOML
 * file (`prompts.yaml#agent.system`), or a LangChain serialized prompt (`.yaml` / `.json` with
 * `_type: prompt` or `chat`), read as `load_prompt` reads it. The result is the plain file's own
 * document with every message of the request (`composition`), so the assembly renders the whole
 * request and the rules see every slot use (another file's uses carry that file's path).
 */
import type { JinjaSettingsConfig, MessageEntry } from '../../config/schema';
import type { Finding, Role, Span, TemplateDoc } from '../../types';
import type { ComposeInput, ComposeResult } from '../language';
import type { JinjaSettings, PlainFormat, PlainPart } from './parts';
import { finding } from '../../rules/registry';
import { basename } from '../../paths';
import { findAt, nodeSpan, parseYaml } from '../../text/yaml';
import { viewPart } from './parts';
import { readTomlKey } from './toml';

/** A document of the plain language: the file, and the request it is part of. */
export interface PlainDoc extends TemplateDoc {
  composition?: Composition;
}

export interface Composition {
  /** The config that composes the request (absent: the file alone). */
  configPath?: string;
  parts: PlainPart[];
}


type Loader = 'langchain' | 'jinja2' | 'text' | undefined;

/** The format of a file by its extension and the application's loader. */
export function formatOf(path: string, loader: Loader): PlainFormat {
  if (/\.(j2|jinja2?)$/i.test(path)) return 'jinja2';
  if (/\.mustache$/i.test(path)) return 'mustache';
  return loader === 'langchain' ? 'f-string' : 'text';
}

/** The Environment settings: the config's, then the message's; sandboxed as LangChain renders unless said. */
function jinjaOf(top: JinjaSettingsConfig | undefined, own: JinjaSettingsConfig | undefined, loader: Loader): JinjaSettings {
  const merged = { ...(top ?? {}), ...(own ?? {}) };
  return { ...merged, sandboxed: merged.sandboxed ?? loader === 'langchain' };
}

function runtimeOf(format: PlainFormat, loader: Loader, jinja: JinjaSettings): string {
  if (format === 'f-string') return "LangChain PromptTemplate (f-string)";
  if (format === 'mustache') return "LangChain PromptTemplate (mustache)";
  if (format === 'jinja2') return loader === 'langchain' || jinja.sandboxed ? 'jinja2 (SandboxedEnvironment)' : 'jinja2';
  return 'text';
}

/** The standalone part of a plain file: the whole file, in the format of its extension. */
export function standalonePart(path: string, text: string, role: Role): PlainPart {
  const format = formatOf(path, undefined);
  return { role, format, source: text, path, offset: 0, at: { start: 0, end: Math.min(text.length, 1) }, jinja: {}, runtime: runtimeOf(format, undefined, {}) };
}

const KEYED = /\.(ya?ml|json|toml)$/i;

/** The composition of a config, seen from the plain file `doc` (one of its files). */
export function compose(doc: TemplateDoc, input: ComposeInput): ComposeResult {
  const { config, configDoc, configPath } = input;
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const parts: PlainPart[] = [];
  const texts = new Map<string, string>([[doc.path, doc.text]]);
  // A config beside the file without `messages`: the file alone, read with the config's loader and Environment.
  const entries: MessageEntry[] = config.messages?.length ? config.messages : [{ role: 'system', file: basename(doc.path) }];
  entries.forEach((entry, i) => {
    const where = configDoc.valueSpan(['messages', i, entry.file !== undefined ? 'file' : 'text']) ?? configDoc.valueSpan(['messages', i]) ?? { start: 0, end: 0 };
    const bad = (message: string, rule = 'config-invalid') => findings.push(finding(rule, configPath, where, message));
    const loader: Loader = entry.loader ?? config.loader;
    const jinja = jinjaOf(config.jinja, entry.jinja, loader);
    const common = { role: entry.role as Role, jinja, ...(entry.replace ? { replace: entry.replace } : {}), ...(entry.strip ? { strip: entry.strip } : {}) };
    if ((entry.file === undefined) === (entry.text === undefined)) {
      bad(`Message ${i + 1} needs exactly one of file: or text:.`);
      return;
    }
    if (entry.text !== undefined) {
      const format = entry.format ?? (loader === 'langchain' ? 'f-string' : 'text');
      parts.push({ ...common, format, source: entry.text, path: configPath, at: where, runtime: runtimeOf(format, loader, jinja) });
      return;
    }
    const file = entry.file!;
    const hash = file.indexOf('#');
    const ref = hash >= 0 ? file.slice(0, hash) : file;
    const key = hash >= 0 ? file.slice(hash + 1) : undefined;
    const got = input.read(ref);
    if ('error' in got) {
      bad(`Message ${i + 1}: ${got.error}.`, 'file-reference');
      return;
    }
    dependencies.push(got.path);
    const text = got.path === doc.path ? doc.text : got.text;
    texts.set(got.path, text);
    if (key !== undefined) {
      const value = readKey(got.path, text, key);
      if ('error' in value) {
        bad(`Message ${i + 1}: ${basename(got.path)}#${key}: ${value.error}.`, 'file-reference');
        return;
      }
      const format = entry.format ?? (loader === 'langchain' ? 'f-string' : 'text');
      parts.push({ ...common, format, source: value.text, path: got.path, at: value.span, runtime: runtimeOf(format, loader, jinja) });
      return;
    }
    if (KEYED.test(got.path) && !/\.toml$/i.test(got.path)) {
      const lc = langchainPrompt(got.path, text, input);
      if ('error' in lc) {
        bad(`Message ${i + 1}: ${basename(got.path)} is read as LangChain's load_prompt reads it, which raises ${lc.error}.`, 'template-invalid');
        return;
      }
      if (lc.templatePath) dependencies.push(lc.templatePath);
      parts.push({ ...common, jinja: { ...jinja, sandboxed: true }, format: lc.format, source: lc.template, path: lc.templatePath ?? got.path, ...(lc.templatePath ? { offset: 0 } : {}), at: lc.span, runtime: `LangChain load_prompt (${lc.format})`, ...(lc.partials ? { partials: lc.partials } : {}) });
      return;
    }
    const format = entry.format ?? formatOf(got.path, loader);
    parts.push({ ...common, format, source: text, path: got.path, offset: 0, at: { start: 0, end: Math.min(text.length, 1) }, runtime: runtimeOf(format, loader, jinja) });
  });

  // The document: this file's messages and uses at their own spans, the other files' uses with their paths.
  const messages: TemplateDoc['messages'] = [];
  const uses: TemplateDoc['uses'] = [];
  const own: Finding[] = [];
  for (const part of parts) {
    const mine = part.path === doc.path;
    const view = viewPart(part, part.offset !== undefined ? texts.get(part.path ?? '') : undefined);
    if (mine) {
      messages.push(view.message);
      for (const u of view.uses) uses.push(u);
      for (const f of view.findings) own.push(f);
    } else {
      for (const u of view.uses) uses.push({ ...u, path: part.path ?? configPath });
      for (const f of view.findings) findings.push(f);
    }
  }
  const composed: PlainDoc = { ...doc, messages, uses, findings: own, composition: { configPath, parts } };
  return { doc: composed, findings, dependencies };
}

/** A string at a key path (`a.b.0.c`) of a YAML, JSON or TOML file. */
function readKey(path: string, text: string, key: string): { text: string; span: Span } | { error: string } {
  if (/\.toml$/i.test(path)) return readTomlKey(text, key);
  const src = parseYaml(text);
  if (src.doc.errors.length) return { error: `the file is not valid ${/\.json$/i.test(path) ? 'JSON' : 'YAML'} (${src.doc.errors[0].message.split('\n')[0]})` };
  const segs = key.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const node = findAt(src, segs).node as { value?: unknown } | undefined;
  if (!node) return { error: 'no such key' };
  if (typeof node.value !== 'string') return { error: 'the value is not a string' };
  return { text: node.value, span: nodeSpan(src, node) ?? { start: 0, end: 0 } };
}

interface LangchainPrompt {
  format: PlainFormat;
  template: string;
  /** A `template_path` file the template was read from. */
  templatePath?: string;
  span: Span;
  partials?: Record<string, unknown>;
}

/** LangChain's load_prompt (langchain_core.prompts.loading) of a `.yaml` / `.json` file. */
function langchainPrompt(path: string, text: string, input: ComposeInput): LangchainPrompt | { error: string } {
  const src = parseYaml(text);
  if (src.doc.errors.length) return { error: `an error: the file does not parse (${src.doc.errors[0].message.split('\n')[0]})` };
  const data = src.doc.toJS() as unknown;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { error: 'an error: the file is not a mapping' };
  const config = data as Record<string, unknown>;
  const type = config._type ?? 'prompt';
  const spanOf = (k: string) => nodeSpan(src, findAt(src, [k]).node) ?? { start: 0, end: 0 };
  if (type === 'chat') {
    const messages = config.messages;
    const first = Array.isArray(messages) ? (messages[0] as { prompt?: { template?: unknown } } | undefined) : undefined;
    const template = first?.prompt?.template;
    if (typeof template !== 'string' || !template) return { error: "ValueError: Can't load chat prompt without template" };
    const format = config.template_format ?? 'f-string';
    if (format !== 'f-string' && format !== 'mustache' && format !== 'jinja2') return { error: `ValueError: Unsupported template format: ${String(format)}` };
    return { format: format as PlainFormat, template, span: nodeSpan(src, findAt(src, ['messages', 0, 'prompt', 'template']).node) ?? spanOf('messages') };
  }
  if (type !== 'prompt') return { error: `ValueError: Loading ${String(type)} prompt not supported${type === 'few_shot' ? ' by Context Lens (few-shot prompts are not read yet)' : ''}` };
  const format = config.template_format ?? 'f-string';
  if (format === 'jinja2') return { error: "ValueError: Loading templates with 'jinja2' format is no longer supported since it can lead to arbitrary code execution" };
  if (format !== 'f-string' && format !== 'mustache') return { error: `ValueError: Unsupported template format: ${String(format)}` };
  const partials = config.partial_variables && typeof config.partial_variables === 'object' ? (config.partial_variables as Record<string, unknown>) : undefined;
  if (typeof config.template_path === 'string') {
    if ('template' in config) return { error: 'ValueError: Both `template_path` and `template` cannot be provided.' };
    const p = config.template_path;
    if (p.startsWith('/') || p.split(/[\\/]/).includes('..')) return { error: `ValueError: Path '${p}' is absolute or contains '..' components` };
    if (!/\.txt$/.test(p)) return { error: `ValueError: Unsupported template file format: '${/\.[^./]*$/.exec(p)?.[0] ?? ''}'` };
    // LangChain resolves template_path against the process's working directory: the project's root, where the application runs.
    const got = input.read(p, input.root !== undefined ? `${input.root.replace(/\/$/, '')}/_` : path);
    if ('error' in got) return { error: `FileNotFoundError: ${got.error}` };
    return { format: format as PlainFormat, template: got.text, templatePath: got.path, span: { start: 0, end: Math.min(got.text.length, 1) }, ...(partials ? { partials } : {}) };
  }
  if (typeof config.template !== 'string') return { error: 'a ValidationError: template is required' };
  return { format: format as PlainFormat, template: config.template, span: spanOf('template'), ...(partials ? { partials } : {}) };
}

