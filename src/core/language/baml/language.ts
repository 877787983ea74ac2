/**
 * BAML (`.baml` under `baml_src/`): typed functions whose prompt BAML's own runtime renders into
 * the provider's HTTP request (runtime.ts: lent by the Node host). A function is a template; its
 * address is the file's path and the function's name, `baml_src/answer.baml#Answer` (the file
 * alone stands for its first function). The document's text is the whole file, so every span is
 * the file's; `fileOf` gives the file of an address for reads.
 *
 * Parsing reads only spans (syntax.ts): the function's parameters are its slots, its prompt's
 * `_.role(…)` calls its messages, its client its model. Rendering hands the whole project (every
 * `.baml` file under the same `baml_src/`) and the values, as given, to `buildRequestSync`, and
 * reads the messages back out of the JSON body the runtime built for the client's provider
 * (`messages`, `input`, `contents` + `system_instruction`, `system`). `{{ ctx.output_format }}`
 * is located by a second build in which it is a sentinel, and becomes a part of its own
 * (`slot: 'ctx.output_format'`).
 */
import type { Role, SlotUse, Span, TemplateDoc, TemplateMessage } from '../../types';
import type { EngineIssue, EngineMessage, EnginePart } from '../engineTypes';
import type { LanguageRenderResult, TemplateLanguage } from '../language';
import { isStringable } from '../engineTypes';
import { finding } from '../../rules/registry';
import { finishUses } from '../shared';
import { plainOf, scanBaml } from './syntax';
import type { BamlFile, BamlFunction, BamlTest } from './syntax';
import { BAML_PACKAGE, BAML_TESTED_VERSION, bamlRuntime } from './runtime';
import type { BamlRequest, BamlRuntimeHost } from './runtime';

/** The pseudo-slot of the output format the runtime writes for `{{ ctx.output_format }}`. */
export const OUTPUT_FORMAT_SLOT = 'ctx.output_format';

/** The file and the function of an address (`x.baml#F`). */
export function bamlAddress(path: string): { file: string; fn?: string } {
  const i = path.lastIndexOf('#');
  if (i < 0 || !/\.baml$/i.test(path.slice(0, i))) return { file: path };
  return { file: path.slice(0, i), fn: path.slice(i + 1) };
}

const scans = new Map<string, BamlFile>();
/** The scan of a file's text (the last few texts kept: a keystroke scans once for every function of the file). */
export function scanOf(text: string): BamlFile {
  let s = scans.get(text);
  if (!s) {
    s = scanBaml(text);
    if (scans.size >= 16) scans.delete(scans.keys().next().value!);
    scans.set(text, s);
  }
  return s;
}

/** The function a document stands for. */
export function bamlFunctionOf(doc: Pick<TemplateDoc, 'path' | 'text'>): BamlFunction | undefined {
  const { fn } = bamlAddress(doc.path);
  const scan = scanOf(doc.text);
  return fn === undefined ? scan.functions[0] : scan.functions.find((f) => f.name === fn);
}

/** The tests of a file that name a function, in file order. */
export function bamlTestsOf(text: string, fn: string): BamlTest[] {
  return scanOf(text).tests.filter((t) => t.functions.includes(fn));
}

/** A test's arguments as plain values (BAML's literal syntax read). */
export function bamlTestArgs(test: BamlTest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of test.args?.entries ?? []) Object.defineProperty(out, e.key, { value: plainOf(e.value), enumerable: true, writable: true, configurable: true });
  return out;
}

const ROLE_CALL = /\{\{-?\s*_\.role\(\s*(?:role\s*=\s*)?["']([^"']*)["'][^}]*?-?\}\}/g;
const TAG = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

function roleOf(name: string): Role {
  const n = name.toLowerCase();
  return n === 'system' || n === 'user' || n === 'assistant' || n === 'developer' || n === 'tool' ? n : n === 'model' ? 'assistant' : 'user';
}

/** Messages and slot uses of a function's prompt, from its text (spans only; the runtime renders). */
function readPrompt(fn: BamlFunction, fileText: string): { messages: TemplateMessage[]; uses: SlotUse[] } {
  const messages: TemplateMessage[] = [];
  const uses: SlotUse[] = [];
  const p = fn.prompt;
  if (!p) return { messages, uses };
  const base = p.span.start;
  const text = p.text;
  // BAML's default role is the client's (`system` unless the client says otherwise).
  let current: TemplateMessage = { role: 'system', markerSpan: { start: base, end: base }, span: { start: base, end: p.span.end }, nodes: [] };
  messages.push(current);
  for (const m of text.matchAll(ROLE_CALL)) {
    const at = base + m.index;
    current.span.end = at;
    current = { role: roleOf(m[1]), markerSpan: { start: at, end: at + m[0].length }, span: { start: at, end: p.span.end }, nodes: [] };
    messages.push(current);
  }
  if (messages.length > 1 && messages[0].span.end === messages[0].span.start) messages.shift();
  const names = new Set(fn.params.map((x) => x.name));
  for (const tag of text.matchAll(TAG)) {
    const body = tag[0];
    if (ROLE_CALL.test(body)) {
      ROLE_CALL.lastIndex = 0;
      continue;
    }
    ROLE_CALL.lastIndex = 0;
    const form: SlotUse['form'] = /^\{%-?\s*for\b/.test(body) ? 'each' : /^\{%-?\s*(el)?if\b/.test(body) ? 'if' : 'var';
    const at = base + tag.index;
    let role: Role = 'system';
    for (const msg of messages) if (msg.span.start <= at) role = msg.role;
    const seen = new Set<string>();
    // Names in the tag that are parameters (not attributes of something else, not inside quotes).
    const stripped = body.replace(/"[^"]*"|'[^']*'/g, (s) => ' '.repeat(s.length));
    for (const w of stripped.matchAll(/(?<![.\w])([A-Za-z_]\w*)/g)) {
      const name = w[1];
      if (name === 'ctx' && /^ctx\s*\.\s*output_format/.test(stripped.slice(w.index))) {
        uses.push({ slot: OUTPUT_FORMAT_SLOT, span: { start: at + w.index, end: at + w.index + (/^ctx\s*\.\s*output_format/.exec(stripped.slice(w.index))![0].length) }, role, form: 'var' });
        continue;
      }
      if (!names.has(name) || seen.has(name)) continue;
      // `for x in evidence`: the loop variable `x` is not a use even where it shares a name.
      if (form === 'each' && new RegExp(`for\\s+${name}\\b`).test(stripped)) continue;
      seen.add(name);
      uses.push({ slot: name, span: { start: at + w.index, end: at + w.index + name.length }, role, form });
    }
  }
  // Delimiters around each use (`<question>{{ question }}</question>`), read as for every format.
  return { messages, uses: finishUses(fileText, messages, uses.map((u) => ({ slot: u.slot, span: u.span, form: u.form })), 'system') };
}

/** The model of a client as written (`gpt-4o`), following a fallback or round-robin client to its first client. */
export function bamlModel(scan: BamlFile[], client: string | undefined, depth = 0): { model?: string; provider?: string; primary?: string; roundRobin?: { client: string; primary: string } } {
  if (!client || depth > 8) return {};
  const slash = client.indexOf('/');
  if (slash > 0 && !scan.some((s) => s.clients.some((c) => c.name === client))) return { provider: client.slice(0, slash), model: client.slice(slash + 1) };
  for (const s of scan)
    for (const c of s.clients) {
      if (c.name !== client) continue;
      if ((c.provider === 'fallback' || c.provider === 'round-robin' || c.provider === 'baml-fallback' || c.provider === 'baml-round-robin') && c.strategy?.length) {
        const r = bamlModel(scan, c.strategy[0], depth + 1);
        const rr = c.provider.endsWith('round-robin') && !r.roundRobin ? { roundRobin: { client: c.name, primary: c.strategy[0] } } : {};
        return { ...r, primary: r.primary ?? c.strategy[0], ...rr };
      }
      return { ...(c.model ? { model: c.model.value } : {}), ...(c.provider ? { provider: c.provider } : {}) };
    }
  return {};
}

export const bamlLanguage: TemplateLanguage = {
  id: 'baml',
  name: 'BAML',
  globs: ['**/*.baml'],
  fallbackRole: 'system',
  claim(path) {
    return /\.baml(#[A-Za-z_]\w*)?$/i.test(path) ? 'template' : undefined;
  },
  fileOf(path) {
    return bamlAddress(path).file;
  },
  modelOf(doc, project) {
    const fn = bamlFunctionOf(doc);
    if (!fn) return undefined;
    const scans = Object.entries(project.files).map(([k, t]) => scanOf(k === project.self ? doc.text : t));
    return bamlModel(scans, fn.client?.value).model;
  },
  templatesIn(file, text) {
    return scanOf(text).functions.map((f) => `${bamlAddress(file).file}#${f.name}`);
  },
  projectOf(file) {
    // The runtime loads every file under the project's `baml_src/` (or the file's own folder), named `baml_src/<relative path>`.
    const i = file.lastIndexOf('/baml_src/');
    const root = i >= 0 ? file.slice(0, i + '/baml_src'.length) : file.startsWith('baml_src/') ? 'baml_src' : file.slice(0, Math.max(0, file.lastIndexOf('/')));
    return { root, glob: '**/*.baml', key: (rel) => `baml_src/${rel}` };
  },
  parse(path, text) {
    const scan = scanOf(text);
    const { fn: wanted } = bamlAddress(path);
    const fn = wanted === undefined ? scan.functions[0] : scan.functions.find((f) => f.name === wanted);
    const findings = [];
    const whole: Span = { start: 0, end: text.length };
    if (wanted !== undefined && !fn) findings.push(finding('template-invalid', path, { start: 0, end: Math.min(1, text.length) }, `This file has no function '${wanted}'.`));
    for (const g of scan.generators) {
      if (g.version && g.version.value !== BAML_TESTED_VERSION) {
        findings.push(
          finding(
            'unsupported-feature',
            path,
            g.version.span,
            `The generator '${g.name}' pins BAML ${g.version.value}; Context Lens renders with BAML's runtime ${BAML_TESTED_VERSION} (${BAML_PACKAGE}), so a request can differ where the two versions render differently.`,
            { severity: 'info' },
          ),
        );
      }
    }
    if (!fn) return { path, format: 'baml', text, bodySpan: whole, messages: [], uses: [], findings };
    const { messages, uses } = readPrompt(fn, text);
    const { model } = bamlModel([scan], fn.client?.value);
    const inputs: Record<string, Span> = {};
    for (const p of fn.params) inputs[p.name] = p.span;
    const modelSpan = fn.client?.span ?? fn.nameSpan;
    return {
      path,
      format: 'baml',
      text,
      frontMatter: { data: {}, span: fn.nameSpan, inputs, ...(model ? { model: { value: model, span: modelSpan } } : {}) },
      bodySpan: fn.prompt?.span ?? fn.span,
      messages,
      uses,
      findings,
    };
  },
  fixtures(doc) {
    const fn = bamlFunctionOf(doc);
    if (!fn) return [];
    return bamlTestsOf(doc.text, fn.name).map((t) => ({ name: t.name, values: bamlTestArgs(t), span: t.args?.span ?? t.nameSpan }));
  },
  render(doc, v) {
    return renderBaml(doc, v.input, v.defaults, v.project, v.hasValues, v.unmarked);
  },
};

function issueResult(message: string, span: Span, rule: EngineIssue['rule'] = 'template-invalid'): LanguageRenderResult {
  return { rendered: '', messages: [], issues: [{ rule, message, span }], runtime: `BAML ${BAML_TESTED_VERSION}` };
}

/** The runtime's message without its backtrace. */
export function runtimeMessage(message: string): string {
  const cut = message.indexOf('\nStack backtrace:');
  let m = (cut >= 0 ? message.slice(0, cut) : message).replace(/^BamlError:\s*/, '').trim();
  if (m.length > 2000) m = m.slice(0, 2000) + '…';
  return m;
}

/** Where the runtime's message points (`--> baml_src/x.baml:12`), when in this file: the line's span. */
export function runtimeSpan(message: string, selfKey: string, text: string): Span | undefined {
  // The first place in this file the message names.
  const m = [...message.matchAll(/-->\s*(\S+?):(\d+)/g)].find((x) => x[1] === selfKey);
  if (!m) return undefined;
  const line = Number(m[2]);
  let start = 0;
  for (let i = 1; i < line; i++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) return undefined;
    start = nl + 1;
  }
  const nl = text.indexOf('\n', start);
  const end = nl < 0 ? text.length : nl;
  const indent = /^[ \t]*/.exec(text.slice(start, end))![0].length;
  return { start: start + indent, end: Math.max(start + indent, end) };
}

/** The values of a parameter as the runtime takes them: printing objects (the assembly's items) as their text or fields. */
function toPlain(v: unknown, type: string, depth = 0): unknown {
  if (depth > 64) return v;
  const t = type.trim();
  if (t.endsWith('?')) return v === undefined || v === null ? null : toPlain(v, t.slice(0, -1), depth + 1);
  if (t.endsWith('[]') && Array.isArray(v)) return Array.from(v, (x) => toPlain(x, t.slice(0, -2), depth + 1));
  if (t === 'string' && isStringable(v)) return String(v);
  if (Array.isArray(v)) return Array.from(v, (x) => toPlain(x, '', depth + 1));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: toPlain(x, '', depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

const MEDIA = /^(image|audio|pdf|video)\??$/;
/** Providers whose request builder downloads a media URL (Context Lens never lets anything leave the machine). */
const FETCHES_MEDIA = new Set(['google-ai', 'vertex-ai', 'aws-bedrock']);

const SENTINEL = '\uFFF9ctx.output_format\uFFFB';
/** Output formats found per project and function (the texts `{{ ctx.output_format }}` rendered to). */
const outputFormats = new Map<string, string[] | null>();

/**
 * What the prompt reads as a role (`_.role(turn.role)`, `_.role(r)`): the fields and parameters
 * whose strings must reach the runtime without marks (a marked role names no role).
 */
function roleReads(fn: BamlFunction): { fields: Set<string>; params: Set<string> } {
  const fields = new Set<string>();
  const params = new Set<string>();
  for (const m of (fn.prompt?.text ?? '').matchAll(/_\.role\(\s*(?:role\s*=\s*)?([A-Za-z_]\w*)(?:\s*\.\s*([A-Za-z_]\w*)|\s*\[\s*["']([^"']+)["']\s*\])?/g)) {
    const field = m[2] ?? m[3];
    if (field) fields.add(field);
    else params.add(m[1]);
  }
  return { fields, params };
}

function unmarkAll(v: unknown, unmarked: (s: string) => string, depth = 0): unknown {
  if (typeof v === 'string') return unmarked(v);
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => unmarkAll(x, unmarked, depth + 1));
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) o[k] = unmarkAll(o[k], unmarked, depth + 1);
  return o;
}

function unmarkRoles(v: unknown, fields: Set<string>, unmarked: (s: string) => string, depth = 0): unknown {
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => unmarkRoles(x, fields, unmarked, depth + 1));
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) o[k] = fields.has(k) && typeof o[k] === 'string' ? unmarked(o[k] as string) : unmarkRoles(o[k], fields, unmarked, depth + 1);
  return o;
}

function renderBaml(doc: TemplateDoc, input: Record<string, unknown>, defaults: Record<string, unknown>, project: { files: Record<string, string>; self: string } | undefined, hasValues: boolean, unmarked?: (s: string) => string): LanguageRenderResult {
  const fn = bamlFunctionOf(doc);
  const runtimeLabel = `BAML ${BAML_TESTED_VERSION}`;
  if (!fn) return { rendered: '', messages: [], issues: [], runtime: runtimeLabel };
  const at = fn.nameSpan;
  const rt = bamlRuntime();
  if ('reason' in rt) return issueResult(rt.reason, at, 'unsupported-feature');
  const { file } = bamlAddress(doc.path);
  const self = project?.self ?? `baml_src/${file.slice(file.lastIndexOf('/') + 1)}`;
  const files = { ...(project?.files ?? {}), [self]: doc.text };
  const scans = Object.entries(files).map(([k, t]) => (k === self ? scanOf(doc.text) : scanOf(t)));
  const client = bamlModel(scans, fn.client?.value);
  if (client.provider === 'vertex-ai')
    return issueResult(`The client of ${fn.name} is vertex-ai, whose request BAML's runtime builds only after fetching a Google access token over the network; Context Lens never sends anything, so this function is not rendered.`, fn.client?.span ?? at, 'unsupported-feature');
  const args: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const p of fn.params) {
    const v = Object.hasOwn(input, p.name) ? input[p.name] : defaults[p.name];
    if (v === undefined) {
      if (!p.type.trim().endsWith('?')) missing.push(p.name);
      continue;
    }
    if (MEDIA.test(p.type.trim()) && v !== null && typeof v === 'object' && typeof (v as { url?: unknown }).url === 'string' && FETCHES_MEDIA.has(client.provider ?? '')) {
      return issueResult(`The ${client.provider} request carries '${p.name}' inline, so BAML's runtime would download ${String((v as { url: string }).url)} to build it; Context Lens never sends anything. Give the test a base64 value ({ base64 "…" media_type "image/png" }).`, p.span, 'unsupported-feature');
    }
    // A media value is read, not printed (a URL, base64 data, a media type): it reaches the runtime unmarked.
    args[p.name] = MEDIA.test(p.type.trim()) && unmarked ? unmarkAll(toPlain(v, p.type), unmarked) : toPlain(v, p.type);
  }
  if (unmarked) {
    const roles = roleReads(fn);
    for (const [k, v] of Object.entries(args)) {
      if (roles.params.has(k) && typeof v === 'string') args[k] = unmarked(v);
      else if (roles.fields.size) args[k] = unmarkRoles(v, roles.fields, unmarked);
    }
  }
  if (missing.length && !hasValues) {
    const names = missing.map((n) => `'${n}'`).join(', ');
    return {
      rendered: '',
      messages: [],
      issues: [{ rule: 'value-missing', message: `No value for ${names}: no test of ${fn.name} and no fixture gives ${missing.length === 1 ? 'it' : 'them'}, so the request cannot be built. Add a test block with args.`, span: at }],
      runtime: runtimeLabel,
    };
  }
  // A round-robin client starts at a random client in BAML: the request is built with its first (the primary, labelled as such).
  const pin = client.roundRobin ? { primary: client.roundRobin.primary } : {};
  const label = client.roundRobin ? `${runtimeLabel}, round-robin ${client.roundRobin.client} as its first client ${client.roundRobin.primary}` : runtimeLabel;
  const built = rt.runtime.build(files, fn.name, args, pin);
  const goodKey = `${self}\u0000${fn.name}\u0000${JSON.stringify(args)}`;
  if (!built.ok) {
    const message = runtimeMessage(built.message);
    // A project that does not load: the same finding for every function of the file (one after dedupe), at the place in this file the runtime names, else the file's start.
    const span = runtimeSpan(message, self, doc.text) ?? (built.stage === 'load' ? { start: 0, end: Math.min(1, doc.text.length) } : at);
    const failed = issueResult(built.stage === 'load' ? `BAML: ${message}` : `BAML cannot build the request of ${fn.name}: ${message}`, span);
    // While the project does not load (a file being typed), the last request built for the same values stands, with the runtime's message.
    const good = built.stage === 'load' ? lastGood.get(goodKey) : undefined;
    return good ? { ...good, messages: good.messages.map((m) => ({ ...m, parts: m.parts.map((x) => ({ ...x })) })), issues: failed.issues } : failed;
  }
  const messages = messagesOf(built.request);
  if (!messages) return { ...issueResult(`The request BAML built for ${fn.name} (${built.request.url}) has no messages Context Lens can read; it is not counted.`, at, 'unsupported-feature') };
  const issues: EngineIssue[] = [];
  if (fn.prompt && /ctx\s*\.\s*output_format/.test(fn.prompt.text)) {
    const key = `${fn.name}\u0000${Object.entries(files)
      .map(([k, t]) => k + '\u0000' + t)
      .join('\u0000')}`;
    let formats = outputFormats.get(key);
    if (formats === undefined) {
      formats = findOutputFormats(rt.runtime, files, self, doc.text, fn, args, messages, pin);
      if (outputFormats.size >= 64) outputFormats.delete(outputFormats.keys().next().value!);
      outputFormats.set(key, formats);
    }
    if (formats) splitOutputFormat(messages, formats);
  }
  const rendered = messages.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')).join('\n');
  const result = { rendered, messages, issues, runtime: label, request: built.request };
  if (lastGood.size >= 64) lastGood.delete(lastGood.keys().next().value!);
  lastGood.set(goodKey, { ...result, messages: messages.map((m) => ({ ...m, parts: m.parts.map((x) => ({ ...x })) })) });
  return result;
}

/** The last request built per file, function and values: kept while the project does not load. */
const lastGood = new Map<string, LanguageRenderResult>();

/** The texts `{{ ctx.output_format }}` renders to in this function: a build with each one a sentinel, compared with the real build. */
function findOutputFormats(rt: BamlRuntimeHost, files: Record<string, string>, self: string, text: string, fn: BamlFunction, args: Record<string, unknown>, real: EngineMessage[], pin: { primary?: string }): string[] | null {
  // Every function of the file at once: one project with sentinels serves each function of the file
  // (the host keeps the loaded project by its files), so a keystroke loads it once, not once per function.
  const changed = text.replace(/ctx\s*\.\s*output_format(\s*\([^)]*\))?/g, JSON.stringify(SENTINEL));
  const b = rt.build({ ...files, [self]: changed }, fn.name, args, pin);
  if (!b.ok) return null;
  const marked = messagesOf(b.request);
  if (!marked || marked.length !== real.length) return null;
  const out: string[] = [];
  for (let i = 0; i < real.length; i++) {
    const a = textOf(real[i]);
    const s = textOf(marked[i]);
    const pieces = s.split(SENTINEL);
    if (pieces.length === 1) {
      if (a !== s) return null;
      continue;
    }
    let pos = 0;
    if (!a.startsWith(pieces[0])) return null;
    pos = pieces[0].length;
    for (let k = 1; k < pieces.length; k++) {
      const next = pieces[k];
      const end = k === pieces.length - 1 ? (a.endsWith(next) ? a.length - next.length : -1) : next ? a.indexOf(next, pos) : pos;
      if (end < pos) return null;
      const format = a.slice(pos, end);
      if (format) out.push(format);
      pos = end + next.length;
    }
  }
  return out;
}

function textOf(m: EngineMessage): string {
  return m.parts.map((p) => (p.type === 'text' ? p.text : '\u0000')).join('');
}

/** Cuts each output format out of the text parts it lies in, as a part of its own. */
function splitOutputFormat(messages: EngineMessage[], formats: string[]): void {
  const todo = [...new Set(formats)].sort((a, b) => b.length - a.length);
  for (const m of messages) {
    const parts: EnginePart[] = [];
    for (const part of m.parts) {
      if (part.type !== 'text' || part.slot) {
        parts.push(part);
        continue;
      }
      let rest = part.text;
      let found = true;
      while (found && rest) {
        found = false;
        for (const f of todo) {
          const i = rest.indexOf(f);
          if (i < 0) continue;
          if (i > 0) parts.push({ type: 'text', text: rest.slice(0, i) });
          parts.push({ type: 'text', text: f, slot: OUTPUT_FORMAT_SLOT });
          rest = rest.slice(i + f.length);
          found = true;
          break;
        }
      }
      if (rest) parts.push({ type: 'text', text: rest });
    }
    m.parts = parts;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The parts of one content value of a provider body (a string, a list of parts, Google's `parts`). */
function partsOf(content: unknown): EnginePart[] | undefined {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return undefined;
  const out: EnginePart[] = [];
  for (const p of content) {
    if (typeof p === 'string') out.push({ type: 'text', text: p });
    else if (isRecord(p) && typeof p.text === 'string') out.push({ type: 'text', text: p.text });
    else if (isRecord(p)) out.push(mediaOf(p));
  }
  return out;
}

function mediaOf(p: Record<string, unknown>): EnginePart {
  const img = p.image_url;
  if (isRecord(img) && typeof img.url === 'string') return { type: 'media', url: img.url, kind: 'image' };
  if (typeof img === 'string') return { type: 'media', url: img, kind: 'image' };
  const src = p.source;
  if (isRecord(src)) {
    if (typeof src.url === 'string') return { type: 'media', url: src.url, ...(typeof src.media_type === 'string' ? { contentType: src.media_type } : {}) };
    if (typeof src.data === 'string') return { type: 'media', url: `data:${String(src.media_type ?? '')};base64,${src.data}`, ...(typeof src.media_type === 'string' ? { contentType: src.media_type } : {}) };
  }
  const inline = p.inline_data ?? p.inlineData;
  if (isRecord(inline) && typeof inline.data === 'string') {
    const mime = String(inline.mime_type ?? inline.mimeType ?? '');
    return { type: 'media', url: `data:${mime};base64,${inline.data}`, ...(mime ? { contentType: mime } : {}) };
  }
  const fileData = p.file_data ?? p.fileData;
  if (isRecord(fileData) && typeof (fileData.file_uri ?? fileData.fileUri) === 'string') return { type: 'media', url: String(fileData.file_uri ?? fileData.fileUri) };
  if (typeof p.image_url === 'string') return { type: 'media', url: p.image_url };
  const audio = p.input_audio;
  if (isRecord(audio) && typeof audio.data === 'string') return { type: 'media', url: `data:audio/${String(audio.format ?? '')};base64,${audio.data}`, kind: 'audio' };
  return { type: 'media', url: JSON.stringify(p) };
}

/** The messages of the body the runtime built, in the provider's shape. Undefined when the body is none of them. */
export function messagesOf(request: BamlRequest): EngineMessage[] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    return undefined;
  }
  if (!isRecord(body)) return undefined;
  const out: EngineMessage[] = [];
  // Anthropic and Bedrock: `system` beside the messages; Google: `system_instruction`.
  const system = body.system ?? body.system_instruction ?? body.systemInstruction;
  if (system !== undefined) {
    const parts = typeof system === 'string' ? partsOf(system) : isRecord(system) ? partsOf(system.parts) : partsOf(system);
    if (parts) out.push({ role: 'system', parts });
  }
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : Array.isArray(body.contents) ? body.contents : undefined;
  if (!list) {
    if (typeof body.prompt === 'string') return [...out, { role: 'user', parts: [{ type: 'text', text: body.prompt }] }];
    return out.length ? out : undefined;
  }
  for (const m of list) {
    if (!isRecord(m)) continue;
    const role = typeof m.role === 'string' ? m.role : 'user';
    const parts = partsOf(m.content ?? m.parts);
    if (parts) out.push({ role, parts });
  }
  return out;
}
