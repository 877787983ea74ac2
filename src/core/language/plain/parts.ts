/**
 * One message of a plain prompt: a template source in one of the plain formats, parsed for the
 * editor (slot uses, nodes, findings) and rendered as the application's library renders it:
 *
 * - `f-string`: Python's `str.format` as LangChain's PromptTemplate reads it (fstring.ts);
 * - `jinja2`: the project's Jinja2 interpreter (jinja/) with the Environment's settings
 *   (`trim_blocks`, `lstrip_blocks`, `keep_trailing_newline`, `undefined`), sandboxed as LangChain's
 *   `SandboxedEnvironment` or plain as `jinja2.Environment`;
 * - `mustache`: langchain_core.utils.mustache (chevron's algorithm, prompty/mustache.ts);
 * - `text`: the text as it is, with the named replacements an application makes with
 *   `str.replace` (in order), and no placeholders otherwise.
 */
import type { Finding, Role, Span, TemplateMessage } from '../../types';
import type { EngineIssue } from '../engineTypes';
import type { RawUse } from '../shared';
import { finding } from '../../rules/registry';
import { finishUses } from '../shared';
import { compileTemplate, Interpreter, unitOf } from '../jinja/interpreter';
import { LimitError, PyDict, PyError, Unsupported, fromJs, pyStr, withStrictUndefined, type PyValue } from '../jinja/values';
import { isPySpaceCode } from '../jinja/pystr';
import { parseJinjaBody } from '../prompty/jinjaBody';
import { parseMustacheBody } from '../prompty/mustacheBody';
import { MustacheError, renderMustache, tokenizeMustache } from '../prompty/mustache';
import { undeclaredVariables } from '../jinja/meta';
import { FormatError, formatFString, langchainRefusal, parseFString } from './fstring';

export type PlainFormat = 'f-string' | 'jinja2' | 'mustache' | 'text';

/** The jinja2 Environment a file is rendered with (the config's `jinja:`). */
export interface JinjaSettings {
  trim_blocks?: boolean;
  lstrip_blocks?: boolean;
  keep_trailing_newline?: boolean;
  undefined?: 'default' | 'strict';
  /** LangChain renders with jinja2's SandboxedEnvironment; an application's own Environment is not sandboxed. */
  sandboxed?: boolean;
  /** Filters the application registers on its Environment (rendered as the value they filter, an estimate). */
  filters?: readonly string[];
}

/** One message of a composed request, as the config lists it. */
export interface PlainPart {
  role: Role;
  format: PlainFormat;
  /** The template source the library renders (the file, or its key, or the config's `text`). */
  source: string;
  /** The file the source is read from (absent for the config's `text`). */
  path?: string;
  /** Where the source lies in that file: `offset` when the source is the file's own text from there, else the span its findings go to. */
  offset?: number;
  at: Span;
  jinja: JinjaSettings;
  /** `text` format: literal text -> value name, replaced in order. */
  replace?: Record<string, string>;
  strip?: 'file' | 'output';
  /** How the message's source was read, for the trace (`LangChain PromptTemplate`, `jinja2`). */
  runtime: string;
  /** Values the source gives itself (LangChain's `partial_variables`). */
  partials?: Record<string, unknown>;
}

/** Python's str.strip(). */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPySpaceCode(s.charCodeAt(a))) a++;
  while (b > a && isPySpaceCode(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

/** What the editor reads of a part's source: messages (one, of the part's role), raw uses and findings, in the file's offsets. */
export interface PartView {
  message: TemplateMessage;
  uses: ReturnType<typeof finishUses>;
  findings: Finding[];
}

/**
 * Parses a part for the editor. `fileText` is the whole file the part's source is in (when the
 * source is that file's text from `offset`), so spans are the file's.
 */
export function viewPart(part: PlainPart, fileText: string | undefined): PartView {
  const path = part.path ?? '';
  const exact = fileText !== undefined && part.offset !== undefined;
  const text = exact ? fileText : part.source;
  const base = exact ? part.offset! : 0;
  const end = base + part.source.length;
  const relocate = (s: Span): Span => (exact ? s : part.at);
  let raw: RawUse[] = [];
  let findings: Finding[] = [];
  let nodes: TemplateMessage['nodes'] = [];
  if (part.format === 'jinja2') {
    const body = parseJinjaBody(path, text, base, 'v2');
    raw = body.uses;
    findings = body.findings;
    nodes = body.messages.flatMap((m) => m.nodes);
  } else if (part.format === 'mustache') {
    const body = parseMustacheBody(path, text, base, {}, 'v2');
    raw = body.uses;
    findings = body.findings;
    nodes = body.messages.flatMap((m) => m.nodes);
  } else if (part.format === 'f-string') {
    const p = parseFString(part.source);
    for (const piece of p.pieces) {
      const lit = { start: base + piece.literalSpan.start, end: base + piece.literalSpan.end };
      if (piece.literal) nodes.push({ type: 'text', text: piece.literal, span: lit });
      const f = piece.field;
      if (!f) continue;
      const slot = /^[^.[]*/.exec(f.name)![0];
      const span = { start: base + f.nameSpan.start, end: base + f.nameSpan.end };
      nodes.push({ type: 'var', path: [slot], span: { start: base + f.span.start, end: base + f.span.end }, raw: true });
      if (slot) raw.push({ slot, span, form: 'var' });
    }
    const refusal = langchainRefusal(p);
    if (refusal) findings.push(finding('template-invalid', path, { start: base + refusal.span.start, end: base + refusal.span.end }, `LangChain refuses this f-string template: ValueError: ${refusal.message}${part.format === 'f-string' && /Single|expected/.test(refusal.message) ? ' (write {{ and }} for literal braces)' : ''}`));
  } else {
    nodes.push({ type: 'text', text: part.source, span: { start: base, end } });
    for (const [needle, slot] of Object.entries(part.replace ?? {})) {
      if (!needle) continue;
      for (let i = part.source.indexOf(needle); i >= 0; i = part.source.indexOf(needle, i + needle.length)) raw.push({ slot, span: { start: base + i, end: base + i + needle.length }, form: 'var' });
    }
  }
  const message: TemplateMessage = { role: part.role, markerSpan: { start: base, end: base }, span: { start: base, end }, nodes };
  const uses = finishUses(text, [message], raw, part.role).map((u) => ({ ...u, span: relocate(u.span) }));
  if (!exact) {
    findings = findings.map((f) => ({ ...f, span: part.at }));
    message.span = part.at;
    message.markerSpan = { start: part.at.start, end: part.at.start };
    message.nodes = [];
  }
  return { message, uses, findings };
}

export interface PartRender {
  text: string;
  issues: EngineIssue[];
  missing: string[];
  /** Rendered with a placeholder for what only the application's code does (a registered filter). */
  estimate?: true;
}

/** The values of these names (the names a template reads). */
function pick(input: Record<string, unknown>, names: Iterable<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of names) if (Object.prototype.hasOwnProperty.call(input, n)) out[n] = input[n];
  return out;
}

/** The first segment of every key a Mustache template names (what its scope chain can reach at the top). */
function mustacheNames(source: string): Set<string> {
  const names = new Set<string>();
  try {
    for (const t of tokenizeMustache(source)) if (t.type !== 'literal' && t.type !== 'comment' && t.key !== '.') names.add(t.key.split('.')[0]);
  } catch {
    // The render reports the template's own error.
  }
  return names;
}

/** Renders one part with the values (defaults under them). Never throws. */
export function renderPart(part: PlainPart, values: Record<string, unknown>, lenient: boolean): PartRender {
  const issues: EngineIssue[] = [];
  const at = (s?: Span): Span => (s && part.offset !== undefined ? { start: part.offset + s.start, end: part.offset + s.end } : part.at);
  // Python reads a file in text mode (universal newlines): \r\n and \r are \n (jinja2 does the same itself).
  const read = part.path !== undefined && part.format !== 'jinja2' ? part.source.replace(/\r\n?/g, '\n') : part.source;
  const source = part.strip === 'file' ? pyStrip(read) : read;
  const shift = part.strip === 'file' ? part.source.length - part.source.trimStart().length : 0;
  const atSrc = (s?: Span): Span => at(s ? { start: s.start + shift, end: s.end + shift } : undefined);
  const input = { ...(part.partials ?? {}), ...values };
  const fail = (rule: EngineIssue['rule'], message: string, span: Span): PartRender => ({ text: '', issues: [...issues, { rule, message, span }], missing: [] });
  let text: string;
  let missing: string[] = [];
  let estimate = false;
  try {
    if (part.format === 'text') {
      text = source;
      for (const [needle, name] of Object.entries(part.replace ?? {})) {
        if (!needle) continue;
        const v = input[name];
        if (v === undefined) {
          if (lenient) missing.push(name);
          else continue;
        }
        text = text.split(needle).join(v === undefined ? '' : pyStr(fromJs(v)));
      }
    } else if (part.format === 'f-string') {
      const p = parseFString(source);
      const refusal = langchainRefusal(p);
      if (refusal) return fail('template-invalid', `LangChain refuses this f-string template: ValueError: ${refusal.message}`, atSrc(refusal.span));
      const r = formatFString(p, input, lenient);
      text = r.text;
      missing = r.missing;
    } else if (part.format === 'mustache') {
      // Only the names the template reads are converted (a 1 MB evidence list another file prints is not).
      text = renderMustache(source, pick(input, mustacheNames(source)), 'langchain');
    } else {
      const filters = part.jinja.filters ?? [];
      const env = { trimBlocks: part.jinja.trim_blocks === true, lstripBlocks: part.jinja.lstrip_blocks === true, ...(filters.length ? { filters } : {}) };
      const unit = compileTemplate('\u0000plain', source, part.jinja.keep_trailing_newline === true, env);
      const interp = new Interpreter(() => undefined);
      for (const f of filters) interp.codeFilters.add(f);
      interp.sandboxed = part.jinja.sandboxed !== false;
      if (lenient) interp.lenient = true;
      const vars = new Map<string, PyValue>();
      const py = fromJs(pick(input, undeclaredVariables(unit)));
      if (py instanceof PyDict) for (const [k, v] of py.entries()) if (typeof k === 'string') vars.set(k, v);
      text = withStrictUndefined(part.jinja.undefined === 'strict' && !lenient, () => interp.render(unit, vars));
      if (interp.missing.size) missing = [...interp.missing].sort();
      if (interp.codeFilterCalls.size) {
        estimate = true;
        const names = [...interp.codeFilterCalls].map((n) => `'${n}'`).join(', ');
        issues.push({ rule: 'code-registered', message: `The filter ${names} is registered by the application in code: Context Lens cannot run it, so the value it filters is shown as it is and the counts are an estimate.`, span: part.at });
      }
      for (const note of interp.notes) {
        estimate = true;
        issues.push({ rule: 'unsupported-feature', message: `Not rendered exactly as jinja2 would: ${note.message}.`, span: atSrc(note.span) });
      }
    }
  } catch (e) {
    if (e instanceof FormatError) {
      if (e.unsupported) return fail('unsupported-feature', `Not rendered exactly as Python's str.format would: ${e.message.replace(/^unsupported: /, '')}.`, atSrc(e.span));
      return fail('template-invalid', `LangChain's f-string format raises ${e.message}${/^KeyError/.test(e.message) ? ': no value is given for it' : ''}.`, atSrc(e.span));
    }
    if (e instanceof MustacheError) return fail('template-invalid', `LangChain's mustache refuses this template: ${e.message}`, atSrc(e.span));
    if (e instanceof PyError) {
      const unknown = /^No filter named '(.+)'\.?( found\.)?$/.exec(e.message);
      if (unknown) return fail('unknown-helper', `Unknown Jinja2 filter '${unknown[1]}': jinja2 raises ${e.pyType} unless the application registers it on its Environment. If it does, declare it in the context config (jinja: { filters: [${unknown[1]}] }).`, atSrc((e as { span?: Span }).span));
      return fail('template-invalid', `Jinja2 refuses this template: ${e.pyType}: ${e.message}`, unitOf(e) === undefined || unitOf(e) === '\u0000plain' ? atSrc((e as { span?: Span }).span) : part.at);
    }
    if (e instanceof LimitError) return fail('unsupported-feature', `Not rendered: ${e.message}.`, atSrc((e as { span?: Span }).span));
    if (e instanceof Unsupported) return fail('unsupported-feature', `Not rendered exactly as the library would: ${e.message}.`, atSrc((e as { span?: Span }).span));
    if (e instanceof RangeError) return fail('unsupported-feature', 'Not rendered: the template nests too deeply.', part.at);
    return fail('unsupported-feature', `Not rendered: internal error (${e instanceof Error ? e.message : String(e)}).`, part.at);
  }
  if (part.strip === 'output') text = pyStrip(text);
  return { text, issues, missing, ...(estimate ? { estimate: true as const } : {}) };
}
