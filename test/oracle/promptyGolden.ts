/**
 * The golden renderings of Prompty's runtimes (test/oracle/prompty-golden/, see its README) and
 * how a case is compared with what the engine renders: reading a line (floats written `2.0`
 * stay floats), rendering it in process the way the line's runtime does, turning the engine's
 * messages into the runtime's own serialisation (0.1.x `{role, content}` with `type` parts, v2
 * `Message.to_text_content()` with `kind` parts and `metadata`), masking what the golden files
 * mask, and sorting the outcome into buckets.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PyFloat } from '../../src/core/language/jinja/values';
import { promptyRuntimeInputs, renderPrompty, type PromptyLine, type PromptyLoader, type PromptyResult } from '../../src/core/language/prompty/engine';
import type { EngineMessage, EnginePart } from '../../src/core/language/engineTypes';

export interface GoldenCase {
  id: string;
  runtime: string;
  files: Record<string, string>;
  inputs?: Record<string, unknown>;
  status: 'ok' | 'ok-not-chat' | 'load-error' | 'prepare-error';
  messages?: unknown;
  error?: string;
  features: string[];
  env_dummies?: string[];
  /** v2, family:asked: each message's parts as the runtime's ContentPart.save() writes them. */
  message_parts?: unknown[][];
  /** v2, family:asked: the `messages` the runtime's OpenAI executor builds. */
  provider_messages?: unknown[];
  /** azure-ai-inference: `from_string` instead of `from_prompty` (the template is files["template.txt"]). */
  call?: { method: string; api?: string; model_name?: string };
  /** promptflow: the innermost cause of the error. */
  error_cause?: string;
}

export const GOLDEN_DIR = path.join(__dirname, 'prompty-golden');
export const GOLDEN_FILES = ['golden-v0_1.jsonl', 'golden-v2.jsonl'];

/**
 * JSON.parse, except that a number written with a fraction or exponent whose value is whole
 * (`2.0`, `1e3`) becomes a PyFloat: Python's json gives a float there, and Jinja prints `2.0`.
 */
export function parseJsonKeepingFloats(text: string): unknown {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        const k = value() as string;
        ws();
        i++; // :
        Object.defineProperty(o, k, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i++] === '}') return o;
      }
    }
    if (c === '[') {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i++] === ']') return a;
      }
    }
    if (c === '"') {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i));
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) throw new Error(`bad JSON at ${i}`);
    i += m[0].length;
    const v: unknown = JSON.parse(m[0]);
    if (typeof v === 'number' && /[.eE]/.test(m[0]) && Number.isInteger(v)) return new PyFloat(v);
    // Python's json reads any integer exactly.
    if (typeof v === 'number' && !/[.eE]/.test(m[0]) && !Number.isSafeInteger(v)) return BigInt(m[0]);
    return v;
  };
  return value();
}

export function readGolden(file: string): GoldenCase[] {
  return fs
    .readFileSync(path.join(GOLDEN_DIR, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => parseJsonKeepingFloats(l) as GoldenCase);
}

export function lineOf(c: GoldenCase): PromptyLine {
  return c.runtime === 'prompty v2' ? 'v2' : '0.1';
}

/** The loader whose answer a case holds (undefined: Prompty's own runtime line). */
export function loaderOf(c: GoldenCase): PromptyLoader | undefined {
  if (c.runtime.startsWith('promptflow')) return 'promptflow';
  if (c.runtime.startsWith('azure-ai-inference')) return 'azure-ai-inference';
  return undefined;
}

/** The golden files of the other loaders (same line schema). */
export const LOADER_FILES = ['golden-promptflow.jsonl', 'golden-azure-inference.jsonl'];

/** Renders a case as its runtime line does, in process; files are read from the case itself. */
export function renderCase(c: GoldenCase): PromptyResult {
  const loader = loaderOf(c);
  if (loader) return renderLoaderCase(c, loader);
  const line = lineOf(c);
  const source = c.files['case.prompty'];
  const readFile = (rel: string): string | undefined => {
    const key = path.posix.normalize(rel.replace(/\\/g, '/'));
    return Object.prototype.hasOwnProperty.call(c.files, key) ? c.files[key] : undefined;
  };
  // render.py gave `${env:NAME}` without a default the value dummy-NAME while the file loaded.
  const env = (name: string): string | undefined => (c.env_dummies?.includes(name) ? `dummy-${name}` : undefined);
  const data = promptyRuntimeInputs(source, c.inputs, readFile, line, env);
  // 0.1.x's DictLoader holds the prompty files of the chain by file name; v2's the one template as "prompt".
  return renderPrompty(source, data, { line, readFile, env, templates: {}, fileName: 'case.prompty' });
}

/**
 * A case of another loader's file: no environment variable is set for them (no dummies), and
 * azure-ai-inference's `from_string` cases render the template string.
 */
function renderLoaderCase(c: GoldenCase, loader: PromptyLoader): PromptyResult {
  const readFile = (rel: string): string | undefined => {
    const key = path.posix.normalize(rel.replace(/\\/g, '/'));
    return Object.prototype.hasOwnProperty.call(c.files, key) ? c.files[key] : undefined;
  };
  const env = (): string | undefined => undefined;
  if (c.call?.method === 'from_string') {
    const data = c.inputs && typeof c.inputs.data === 'object' && c.inputs.data !== null && !Array.isArray(c.inputs.data) ? (c.inputs.data as Record<string, unknown>) : (c.inputs ?? {});
    return renderPrompty(c.files['template.txt'], data, { loader, fromString: true });
  }
  const source = c.files['case.prompty'];
  const data = promptyRuntimeInputs(source, c.inputs, readFile, undefined, env, loader);
  return renderPrompty(source, data, { loader, readFile, env, templates: {}, fileName: 'case.prompty' });
}

function partOf(p: EnginePart, line: PromptyLine): unknown {
  if (line === '0.1') return p.type === 'text' ? { type: 'text', text: p.text } : p.type === 'media' ? { type: 'image_url', image_url: p.detail !== undefined ? { url: p.url, detail: p.detail } : { url: p.url } } : { type: 'section', name: p.name };
  if (p.type === 'text') return { kind: 'text', value: p.text };
  if (p.type === 'media') {
    const d: Record<string, unknown> = { kind: p.kind ?? 'image', source: p.url };
    if (p.detail !== undefined) d.detail = p.detail;
    if (p.contentType !== undefined) d.mediaType = p.contentType;
    return d;
  }
  return { kind: 'section' };
}

/** The runtime's serialisation of the engine's messages (0.1.x content a string unless it holds an image). */
export function serialise(messages: EngineMessage[], line: PromptyLine): unknown[] {
  return messages.map((m) => {
    const allText = m.parts.every((p) => p.type === 'text');
    const texts = m.parts.map((p) => (p.type === 'text' ? p.text : ''));
    const content = line === '0.1' ? (allText && m.parts.length === 1 && !m.contentList ? texts[0] : m.parts.map((p) => partOf(p, line))) : allText ? texts.join('') : m.parts.map((p) => partOf(p, line));
    const out: Record<string, unknown> = { role: m.role, content };
    if (line === 'v2' && m.metadata && Object.keys(m.metadata).length) out.metadata = m.metadata;
    // promptflow's messages carry name / tool_call_id beside role and content (before content).
    if (line === '0.1' && m.metadata) return { role: m.role, ...m.metadata, content };
    return out;
  });
}

/** Each message's parts in the runtime's own form (`message_parts` of the golden files). */
export function partsOf(messages: EngineMessage[], line: PromptyLine): unknown[][] {
  return messages.map((m) => m.parts.map((p) => partOf(p, line)));
}

/** What the golden files mask: v2's nonces. (Addresses are printed as 0xADDR by the engine itself.) */
export function mask(s: string): string {
  return s
    .replace(/e5ca9e00-0000-4000-8000-e5ca9e[0-9a-f]{6}/gi, 'UUID').replace(/nonce=\\?"[0-9a-f]{16}\\?"/g, (m) => m.replace(/[0-9a-f]{16}/, 'NONCE')).replace(/__PROMPTY_THREAD_[0-9a-f]{8}_/g, '__PROMPTY_THREAD_NONCE_');
}

function canon(v: unknown): string {
  return mask(JSON.stringify(v, (_k, x: unknown) => (x instanceof PyFloat ? x.v : x)));
}

export type Bucket = 'exact' | 'reported' | 'error-agrees' | 'whitespace-only' | 'different' | 'refused-where-runtime-renders' | 'rendered-where-runtime-fails';

export interface Outcome {
  bucket: Bucket;
  got?: string;
  want?: string;
  issue?: string;
}

export function compare(c: GoldenCase, r: PromptyResult): Outcome {
  const runtimeRenders = c.status === 'ok' || c.status === 'ok-not-chat';
  const invalid = r.issues.find((i) => i.rule === 'template-invalid');
  const unsupported = r.issues.find((i) => i.rule === 'unsupported-feature');
  const issue = (invalid ?? unsupported)?.message;
  if (!runtimeRenders) return invalid || unsupported || r.messages.length === 0 ? { bucket: 'error-agrees', issue } : { bucket: 'rendered-where-runtime-fails', got: canon(serialise(r.messages, lineOf(c))), want: c.error };
  if (invalid || (!r.messages.length && unsupported && c.status === 'ok' && (c.messages as unknown[]).length > 0)) return { bucket: unsupported && !invalid ? 'reported' : 'refused-where-runtime-renders', issue };
  const got = c.status === 'ok-not-chat' ? canon(r.notChat ? r.rendered : serialise(r.messages, lineOf(c))) : canon(serialise(r.messages, lineOf(c)));
  const want = canon(c.messages);
  if (got === want) return { bucket: 'exact', got, want };
  // A located unsupported-feature makes a difference a reported one (never silently wrong).
  if (unsupported && unsupported.span.end >= unsupported.span.start) return { bucket: 'reported', got, want, issue };
  const squash = (s: string): string => s.replace(/\\[nrtvf]|\\u[0-9a-f]{4}|\s/g, '');
  return { bucket: squash(got) === squash(want) ? 'whitespace-only' : 'different', got, want };
}
