/**
 * The Prompty engine: what Prompty's Python runtimes render for a `.prompty` file and its inputs,
 * one engine per runtime line, because the two lines users run disagree on almost every step.
 *
 * - **0.1.x** (the `prompty` 0.1 releases; files with `model.api` / `model.configuration`,
 *   `sample:`): utils.parse's front matter regex gives the body; Jinja2 renders it
 *   (ImmutableSandboxedEnvironment, trailing newline dropped) or Prompty's own mustache.py does;
 *   PromptyChatParser splits the text with a role-line regex (`# system:` included), drops empty
 *   chunks, strips every message (`chunks[i+1].strip()`), and turns `![alt](url)` into image parts
 *   (local files inlined as base64 data URLs).
 * - **v2** (`prompty` 2.x; files with `model.id`, `inputs.*.kind`, `template: {format, parser}`):
 *   the same Jinja2 with keep_trailing_newline; strict mode (the default) writes a nonce into every
 *   literal role line before rendering and refuses a role line without it; the parser reads
 *   `str.splitlines()` lines, strips only the newlines at a message's edges, keeps role
 *   attributes as metadata (strict off), and leaves images as text; `thread`, `image`, `file` and
 *   `audio` inputs are markers in the text that become messages or media parts afterwards.
 *
 * The caller passes the values the runtime would render with (see `promptyRuntimeInputs` for the
 * runtimes' own rules on `sample:`, defaults and examples). What cannot be reproduced is a located
 * `unsupported-feature` issue; a print whose text cannot be known (a memory address) is rendered
 * with a placeholder and reported, so the rest of the request still renders.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import type { Span } from '../../types';
import { Interpreter, compileTemplate, unitOf, type RenderNote, type Unit } from '../jinja/interpreter';
import { PY_WS, isPySpaceCode, pySplitlines, pyStrip } from '../jinja/pystr';
import { LimitError, PY_KEY_ORDER, PyDict, PyError, PyFloat, Unsupported, fromJs, isMarkedTuple, markTuple, orderedEntries, pyStr as pyStrOf, setKeyOrder, type PyValue } from '../jinja/values';
import { renderMustache, tokenizeMustache, MustacheError, type MustacheDialect, type MustacheToken } from './mustache';
import type { EngineIssue, EngineMessage, EnginePart, EngineResult } from '../engineTypes';
import { ESCAPE_TOKEN, PromptflowFailure, PromptflowUnsupported, escapeRoles, parsePromptflowChat, promptflowModel, promptflowPreprocess, promptflowValues, promptflowYaml, resolvePromptflowRefs, splitPromptflow, unescapeRoles } from './promptflow';

/** The runtime line a file follows. */
export type PromptyLine = '0.1' | 'v2';

/** How the trace, the hover and the preview name a runtime line. */
export const PROMPTY_LINE_LABEL: Record<PromptyLine, string> = { '0.1': 'Prompty 0.1.x', v2: 'Prompty v2' };

/**
 * The program that loads a `.prompty` file: Prompty's own Python runtimes (the two lines), or
 * another loader of the format with rules of its own (promptflow's `Prompty`, azure-ai-inference's
 * `PromptTemplate`, Prompty's TypeScript and .NET runtimes). See docs/prompty-runtimes.md.
 */
export type PromptyLoader = 'prompty-0.1' | 'prompty-2' | 'promptflow' | 'azure-ai-inference' | 'typescript' | 'dotnet';
export const PROMPTY_LOADERS: readonly PromptyLoader[] = ['prompty-0.1', 'prompty-2', 'promptflow', 'azure-ai-inference', 'typescript', 'dotnet'];

/** How a loader is named in findings, the hover, the preview and the trace. */
export const PROMPTY_LOADER_LABEL: Record<PromptyLoader, string> = {
  'prompty-0.1': 'Prompty 0.1.x',
  'prompty-2': 'Prompty v2 (2.0.0b3)',
  promptflow: "promptflow's Prompty (promptflow-core 1.18)",
  'azure-ai-inference': "azure-ai-inference's PromptTemplate (1.0.0b9)",
  typescript: "Prompty's TypeScript runtime",
  dotnet: "Prompty's .NET runtime",
};

/** The loaders that read the file as one of Prompty's runtime lines reads it. */
function loaderLine(loader: PromptyLoader | undefined): PromptyLine | undefined {
  if (loader === 'prompty-0.1' || loader === 'azure-ai-inference' || loader === 'promptflow') return '0.1';
  if (loader === 'prompty-2') return 'v2';
  return undefined;
}

export interface PromptyOptions {
  /** Overrides the engine the front matter names (`template:`). */
  templateType?: 'jinja2' | 'mustache';
  /** Sources of other templates by name, for {% include "x" %} / {% import %} / {% extends %} (the caller reads them). */
  templates?: Record<string, string>;
  /**
   * The runtime line; by default the one the front matter's format targets (`promptyLineOf`).
   * Naming it asks for that Prompty runtime strictly: a bare `sample: sample.json` (promptflow's
   * form, which the analysis reads as promptflow does) then fails as 0.1.x's prepare() fails.
   */
  line?: PromptyLine;
  /**
   * Reads a file next to the template (path relative to its folder), for 0.1.x's local images.
   * Without it a local image is reported, not inlined.
   */
  readFile?: (relativePath: string) => string | undefined;
  /**
   * `lenient` renders a template whose values are missing (the analysis of a file without sample
   * data): an attribute of a missing value is missing too, instead of Jinja2's UndefinedError, and
   * the result names the missing values. The runtime itself fails there; the default renders as it does.
   */
  missingValues?: 'runtime' | 'lenient';
  /** The file's name (0.1.x's loader knows the template by it: `{{ self }}`). */
  fileName?: string;
  /** The application's environment, for load checks of `${env:…}` references (the analysis gives none). */
  env?: (name: string) => string | undefined;
  /**
   * The program that loads the file (docs/prompty-runtimes.md). Absent: Prompty's runtime line the
   * front matter targets. `azure-ai-inference` and `promptflow` read the older format with rules
   * of their own; `fromString` is azure-ai-inference's `PromptTemplate.from_string` (the source is
   * the template string, no front matter).
   */
  loader?: PromptyLoader;
  fromString?: boolean;
  /** Skip the Python runtime line's load checks (the TypeScript and .NET loaders read the file themselves). */
  skipLoadChecks?: boolean;
}

/** An engine result with what the runtime line adds. */
export interface PromptyResult extends EngineResult {
  line: PromptyLine;
  /** The loader that was followed, when the caller named one. */
  loader?: PromptyLoader;
  /** 0.1.x with `model.api` other than chat or `parser: NOOP`: the runtime returns the rendered text, not messages. */
  notChat?: boolean;
  /** False when a placeholder stands for text the runtime would print differently. */
  exact: boolean;
  /** Lenient mode: the names the template reads that have no value (printed as nothing). */
  missing?: string[];
}

/** Largest `.prompty` source the engine reads. */
export const MAX_SOURCE = 1_000_000;

/** The name the engine compiles a file's body under (the analysis shares its compiled unit). */
export const PROMPTY_MAIN = '\u0000main';
const MAIN = PROMPTY_MAIN;

// ---------------------------------------------------------------------------
// Reading the file and finding the body
// ---------------------------------------------------------------------------

interface Text {
  text: string;
  /** Text offsets after which a \r\n became one \n (sorted), to map offsets back to the source. */
  collapsed: number[];
}

/** Universal newlines, keeping a map back to source offsets. */
function readText(source: string): Text {
  if (!source.includes('\r')) return { text: source, collapsed: [] };
  const collapsed: number[] = [];
  let text = '';
  let last = 0;
  for (let i = 0; i < source.length; i++) {
    if (source.charCodeAt(i) !== 13) continue;
    text += source.slice(last, i) + '\n';
    if (source.charCodeAt(i + 1) === 10) {
      collapsed.push(text.length);
      i++;
    }
    last = i + 1;
  }
  text += source.slice(last);
  return { text, collapsed };
}

function toSource(t: Text, offset: number): number {
  let lo = 0;
  let hi = t.collapsed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t.collapsed[mid] <= offset) lo = mid + 1;
    else hi = mid;
  }
  return offset + lo;
}

/** utils.parse: `^\s*(?:---|\+\+\+)(.*?)(?:---|\+\+\+)\s*(.+)$` with re.S | re.M, searched. */
const FRONT_MATTER = new RegExp(`(?<![^\\n])[${PY_WS}]*(?:---|\\+\\+\\+)([\\s\\S]*?)(?:---|\\+\\+\\+)[${PY_WS}]*([\\s\\S]+)(?![^\\n])`);
/** v2 opens the front matter with `---` only. */
const FRONT_MATTER_V2 = new RegExp(`(?<![^\\n])[${PY_WS}]*---([\\s\\S]*?)(?:---|\\+\\+\\+)[${PY_WS}]*([\\s\\S]+)(?![^\\n])`);

/** Where the runtime's pattern finds a front matter block, in offsets of the file's text. */
export interface PromptyFrontMatterBlock {
  /** The opening fence. */
  start: number;
  /** The YAML between the fences. */
  yamlStart: number;
  yamlEnd: number;
  /** End of the closing fence. */
  end: number;
  /** Where the body the runtime renders starts: after the white space that follows the closing fence. */
  bodyStart: number;
}

const LEADING_WS = new RegExp(`^[${PY_WS}]*`);

/**
 * The front matter block as the runtime's own pattern finds it (0.1.x's `utils.parse`, searched:
 * it opens at any line that starts with `---` or `+++` after white space, and closes at the next
 * `---` or `+++`, wherever it stands; v2's pattern differs only in not opening with `+++`), or
 * undefined when the pattern finds none.
 */
export function promptyFrontMatterBlock(source: string): PromptyFrontMatterBlock | undefined {
  const t = readText(source);
  const m = FRONT_MATTER.exec(t.text);
  if (!m) return undefined;
  const fence = m.index + (LEADING_WS.exec(m[0])?.[0].length ?? 0);
  const yamlStart = fence + 3;
  const yamlEnd = yamlStart + m[1].length;
  const at = (o: number) => toSource(t, o);
  return { start: at(fence), yamlStart: at(yamlStart), yamlEnd: at(yamlEnd), end: at(yamlEnd + 3), bodyStart: at(m.index + m[0].length - m[2].length) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The front matter as plain data (undefined when it is not a YAML mapping), typed as PyYAML types it. */
function frontMatterData(yamlText: string): Record<string, unknown> | undefined {
  if (FM_CACHE.has(yamlText)) return FM_CACHE.get(yamlText);
  let out: Record<string, unknown> | undefined;
  // Front matters the analysis reads are bounded there; here a very large one is not typed.
  if (yamlText.length <= MAX_FRONT_MATTER) {
    try {
      const doc = parseDocument(yamlText, { version: '1.1', logLevel: 'silent', uniqueKeys: false, merge: true });
      if (doc.errors.length) out = { [YAML_ERROR]: doc.errors[0].message };
      else {
        const notes: YamlNote[] = [];
        const d = pyYamlValue(doc.contents, 0, doc, notes);
        out = isRecord(d) ? d : undefined;
        if (out && notes.length) {
          // The tag (`!!set`, `!!python/tuple`) is written before the node's own range.
          for (const n of notes) {
            if (n.kind === 'too-deep' || n.kind === 'key-types') continue;
            const bang = yamlText.lastIndexOf('!', n.range[0]);
            if (bang >= 0) n.range[0] = yamlText[bang - 1] === '!' ? bang - 1 : bang;
          }
          Object.defineProperty(out, YAML_NOTES, { value: notes, enumerable: false });
        }
      }
    } catch {
      out = undefined;
    }
  }
  if (FM_CACHE.size >= 16) FM_CACHE.delete(FM_CACHE.keys().next().value as string);
  FM_CACHE.set(yamlText, out);
  return out;
}

/**
 * The Python type of a front matter YAML reads as something other than a mapping or nothing
 * (`[1, 2]` a list, `just text` a str), or undefined. v2's loader stores the body into what
 * yaml returned (`content["instructions"] = body`), which fails on any such value.
 */
function frontMatterNonMapping(yamlText: string): string | undefined {
  if (yamlText.length > MAX_FRONT_MATTER) return undefined;
  try {
    const doc = parseDocument(yamlText, { version: '1.1', logLevel: 'silent', uniqueKeys: false });
    if (doc.errors.length) return undefined;
    const v = pyYamlValue(doc.contents, 0, doc);
    if (v === null || v === undefined || isRecord(v)) return undefined;
    if (Array.isArray(v)) return 'list';
    if (typeof v === 'string') return 'str';
    if (typeof v === 'boolean') return 'bool';
    if (typeof v === 'number' || typeof v === 'bigint') return 'int';
    if (v instanceof PyFloat) return 'float';
    return 'object';
  } catch {
    return undefined;
  }
}

/** The YamlNotes of a front matter, on its data (not enumerable). */
const YAML_NOTES: unique symbol = Symbol('yaml-notes');

function yamlNotesOf(fm: Record<string, unknown> | undefined): YamlNote[] {
  const n = fm ? (fm as { [YAML_NOTES]?: YamlNote[] })[YAML_NOTES] : undefined;
  return n ?? [];
}

/** Key of the data standing for a front matter YAML cannot parse (the message is its value). */
const YAML_ERROR = '\u0000yaml-error';

/** Every render of a file reads its front matter; the assembly renders the same file several times. */
const FM_CACHE = new Map<string, Record<string, unknown> | undefined>();
const MAX_FRONT_MATTER = 200_000;

/** PyYAML's implicit float and int patterns (YAML 1.1): `1e3` is a string there, `1.0e+3` a float. */
const PY_YAML_FLOAT = /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const PY_YAML_INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const PY_YAML_BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;

/** A value Python prints as `text` (a date, a datetime, bytes). */
class PyText {
  constructor(private readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** str() of the date or datetime PyYAML makes of a timestamp. */
function timestampText(source: string, d: Date): string {
  if (/^\d{4}-\d\d?-\d\d?$/.test(source)) return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const tz = /(Z|[-+]\d\d?(?::?\d\d)?)$/.exec(source.trim());
  let offsetMin = 0;
  let suffix = '';
  if (tz) {
    if (tz[1] === 'Z') suffix = '+00:00';
    else {
      const m = /^([-+])(\d\d?)(?::?(\d\d))?$/.exec(tz[1])!;
      offsetMin = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
      suffix = `${m[1]}${pad(Number(m[2]))}:${pad(Number(m[3] ?? 0))}`;
    }
  }
  const local = new Date(d.getTime() + offsetMin * 60_000);
  const ms = local.getUTCMilliseconds();
  return `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${ms ? '.' + pad(ms * 1000, 6) : ''}${suffix}`;
}

/** A tag of the front matter the engine reads differently from one runtime line (offsets in the YAML text). */
interface YamlNote {
  /**
   * `python-tag`: a `!!python/…` tag 0.1.x's FullLoader types as this engine does (tuple, str, unicode);
   * `python-other`: another `!!python/…` tag (a complex, a name…), not reproduced on 0.1.x;
   * `unknown-tag`: a tag neither loader has a constructor for; `set`: a `!!set`.
   * v2's `yaml.safe_load` refuses every `!!python/…` tag. `key-types`: a mapping whose keys are
   * of different Python types (`1:` an int beside `"1":` a str), which this engine keys by text.
   */
  kind: 'python-tag' | 'python-other' | 'unknown-tag' | 'set' | 'too-deep' | 'key-types';
  tag: string;
  range: [number, number];
}

/** The tags PyYAML's SafeLoader constructs (and so 0.1.x's FullLoader too). */
const SAFE_TAGS = new Set(['null', 'bool', 'int', 'float', 'binary', 'timestamp', 'omap', 'pairs', 'set', 'str', 'seq', 'map'].map((t) => `tag:yaml.org,2002:${t}`));
const PYTHON_TAG = 'tag:yaml.org,2002:python/';
/** FullLoader's `!!python/str` and `!!python/unicode` give the str this engine reads. */
const FULL_LOADER_SCALARS = new Set(['str', 'unicode']);

/** The node's range in the YAML text (its tag lies before it; frontMatterData widens the range to it). */
function tagRange(node: { range?: [number, number, number] | null }): [number, number] {
  const [start, end] = node.range ?? [0, 0];
  return [start, end];
}

/** A YAML node as PyYAML's safe-ish loader would type it, as plain values (floats as PyFloat). */
function pyYamlValue(node: unknown, depth: number, doc: Document.Parsed, notes?: YamlNote[]): unknown {
  if (depth > 64) {
    // Read as None here; PyYAML reads it. Reported once, at the node.
    if (notes && !notes.some((n) => n.kind === 'too-deep')) notes.push({ kind: 'too-deep', tag: '', range: tagRange(node as { range?: [number, number, number] | null }) });
    return null;
  }
  const tag = (node as { tag?: unknown } | null)?.tag;
  if (notes && typeof tag === 'string' && tag !== '!' && !SAFE_TAGS.has(tag) && tag !== 'tag:yaml.org,2002:python/tuple') {
    const kind = !tag.startsWith(PYTHON_TAG) ? 'unknown-tag' : FULL_LOADER_SCALARS.has(tag.slice(PYTHON_TAG.length)) && isScalar(node) ? 'python-tag' : 'python-other';
    notes.push({ kind, tag, range: tagRange(node as { range?: [number, number, number] | null }) });
  }
  if (isMap(node)) {
    // !!set: a Python set, whose order follows Python's string hashing; it is read as a mapping and reported.
    if (node.tag === 'tag:yaml.org,2002:set') notes?.push({ kind: 'set', tag: node.tag, range: tagRange(node) });
    const out: Record<string, unknown> = {};
    const order: string[] = [];
    const keyTypes = new Set<string>();
    for (const pair of node.items) {
      // YAML 1.1 merge keys (`<<: *base`, or a list of them): the merged entries lie under the map's own.
      if (isScalar(pair.key) && pair.key.source === '<<' && pair.key.type === 'PLAIN') {
        const from = pyYamlValue(pair.value, depth + 1, doc, notes);
        for (const m of Array.isArray(from) ? from : [from]) {
          if (!isRecord(m)) continue;
          for (const [k, v] of orderedEntries(m)) {
            if (k in out) continue;
            order.push(k);
            Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
          }
        }
        continue;
      }
      const k = pyYamlValue(pair.key, depth + 1, doc, notes);
      keyTypes.add(typeof k === 'string' ? 'str' : typeof k === 'bigint' ? 'number' : k instanceof PyFloat ? 'float' : typeof k);
      const key = k instanceof PyFloat ? String(k.v) : String(k);
      if (!Object.prototype.hasOwnProperty.call(out, key)) order.push(key);
      Object.defineProperty(out, key, { value: pyYamlValue(pair.value, depth + 1, doc, notes), enumerable: true, writable: true, configurable: true });
    }
    if (keyTypes.size > 1) notes?.push({ kind: 'key-types', tag: '', range: tagRange(node) });
    // A JS object lists integer-like keys first; the dict PyYAML builds keeps the file's order.
    if (order.some((k) => /^(?:0|[1-9][0-9]*)$/.test(k))) setKeyOrder(out, order);
    return out;
  }
  if (isSeq(node)) {
    // !!omap and !!pairs: a list of (key, value) tuples (PyYAML's construct_yaml_omap / construct_yaml_pairs).
    if (node.tag === 'tag:yaml.org,2002:omap' || node.tag === 'tag:yaml.org,2002:pairs') return node.items.map((x) => (isPair(x) ? markTuple([pyYamlValue(x.key, depth + 1, doc, notes), pyYamlValue(x.value, depth + 1, doc, notes)]) : pyYamlValue(x, depth + 1, doc, notes)));
    const items = node.items.map((x) => pyYamlValue(x, depth + 1, doc, notes));
    // !!python/tuple: FullLoader's tuple (0.1.x loads with it; v2's safe_load refuses the tag).
    if (node.tag === 'tag:yaml.org,2002:python/tuple') {
      notes?.push({ kind: 'python-tag', tag: node.tag, range: tagRange(node) });
      return markTuple(items);
    }
    return items;
  }
  if (isAlias(node)) return pyYamlValue(node.resolve(doc), depth + 1, doc, notes);
  if (!isScalar(node)) return null;
  const v = node.value;
  const src = typeof node.source === 'string' ? node.source : undefined;
  if (node.tag === 'tag:yaml.org,2002:float') return new PyFloat(Number(v));
  if (node.tag === 'tag:yaml.org,2002:str') return String(v);
  if (typeof v === 'boolean' && src !== undefined && node.type === 'PLAIN' && !PY_YAML_BOOL.test(src)) return src;
  if (typeof v === 'number' && src !== undefined && node.type === 'PLAIN') {
    if (PY_YAML_FLOAT.test(src)) return new PyFloat(v);
    if (!PY_YAML_INT.test(src)) return src;
    // Python's int is exact at any size; a decimal beyond 2^53 keeps its digits.
    if (!Number.isSafeInteger(v) && /^[-+]?[0-9][0-9_]*$/.test(src)) return BigInt(src.replace(/_/g, ''));
    return v;
  }
  if (v instanceof Date) return new PyText(timestampText(src ?? '', v));
  if (v instanceof Uint8Array) return new PyText(`b'${Array.from(v, (b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('')}'`);
  return v;
}

/**
 * The runtime line a front matter targets: v2 for its keys (`model` as a string or with `id`,
 * `template` as a mapping with `format`/`parser`, `inputs` as a list or with `kind`), else 0.1.x.
 */
export function promptyLineOf(fm: unknown): PromptyLine {
  if (!isRecord(fm)) return '0.1';
  const model = fm.model;
  if (typeof model === 'string') return 'v2';
  if (isRecord(model)) {
    if ('id' in model) return 'v2';
    if ('api' in model || 'configuration' in model) return '0.1';
  }
  if (isRecord(fm.template) && ('format' in fm.template || 'parser' in fm.template)) return 'v2';
  if (Array.isArray(fm.inputs)) return 'v2';
  if (isRecord(fm.inputs)) for (const v of Object.values(fm.inputs)) if (isRecord(v) && 'kind' in v) return 'v2';
  return '0.1';
}

// ---------------------------------------------------------------------------
// Role-word matching as Python's (?i) does it
// ---------------------------------------------------------------------------

/** Characters `(?i)` lets match each letter of the role names (Python's re, including İ ı ſ). */
const CASE: Record<string, string> = { i: 'Iiİı', s: 'Ssſ' };
function caseless(word: string): string {
  return [...word].map((c) => `[${CASE[c] ?? c.toUpperCase() + c}]`).join('');
}
const WS = `[${PY_WS}]`;
const WORD_CLASS = '[\\p{L}\\p{N}_]';

// ---------------------------------------------------------------------------
// Markdown images (0.1.x): `(?P<alt>!\[[^\]]*\])\((?P<filename>.*?)(?=\"|\))\)`, linearly
// ---------------------------------------------------------------------------

interface ImageMatch {
  start: number;
  end: number;
  alt: string;
  filename: string;
}

/**
 * re.findall of the image pattern in one pass. `[^\]]*` stops at the first `]`, so a match at `![`
 * needs `(` right after that `]`; `.*?(?="|\))\)` is the text up to the first `)` on the same line
 * (the lookahead adds nothing). Precomputed next-`]` and next-`)`-or-newline positions make every
 * start O(1), where Python's backtracking takes quadratic time on `![(![(…`.
 */
export function findImages(s: string): ImageMatch[] {
  const n = s.length;
  const nextBracket = new Int32Array(n + 1);
  const nextClose = new Int32Array(n + 1);
  nextBracket[n] = -1;
  nextClose[n] = -1;
  for (let i = n - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    nextBracket[i] = c === 93 ? i : nextBracket[i + 1];
    nextClose[i] = c === 41 || c === 10 ? i : nextClose[i + 1];
  }
  const out: ImageMatch[] = [];
  let i = 0;
  while (i < n - 1) {
    if (s.charCodeAt(i) === 33 && s.charCodeAt(i + 1) === 91) {
      const j = nextBracket[i + 2];
      if (j >= 0 && s.charCodeAt(j + 1) === 40) {
        const k = nextClose[j + 2];
        if (k >= 0 && s.charCodeAt(k) === 41) {
          out.push({ start: i, end: k + 1, alt: s.slice(i, j + 1), filename: s.slice(j + 2, k) });
          i = k + 1;
          continue;
        }
      }
    }
    i++;
  }
  return out;
}

/**
 * Python's strip of message text, with the attribution marks of the assembly (private use
 * characters U+E000–U+E1FF around slot text, see assembly/attribution.ts) transparent: the marks
 * stay and the white space beside them goes, so a marked render strips exactly what the plain
 * render strips. `newlinesOnly` is v2's `strip("\n")`.
 */
function stripText(s: string, newlinesOnly = false): string {
  const drop = (c: number): boolean => (newlinesOnly ? c === 10 : isPySpaceCode(c));
  if (!/[\uE000-\uE1FF]/.test(s)) return newlinesOnly ? pyStrip(s, '\n', true, true) : pyStrip(s, null, true, true);
  const marks = markMap(s);
  const isMarkAt = (i: number): boolean => marks[i] === 1;
  const keep = new Uint8Array(s.length).fill(1);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isMarkAt(i)) continue;
    if (!drop(c)) break;
    keep[i] = 0;
  }
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (isMarkAt(i)) continue;
    if (!drop(c) || !keep[i]) break;
    keep[i] = 0;
  }
  let out = '';
  for (let i = 0; i < s.length; i++) if (keep[i]) out += s[i];
  return out;
}

/**
 * Which characters of `s` are the assembly's attribution marks (1): an open mark U+E000 with its six
 * digits (U+E100–U+E1FF), or a close mark U+E001. A private-use character of the text itself (a
 * lone U+E000, a digit character without its open mark) is text, as Python reads it.
 */
function markMap(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0xe001) out[i] = 1;
    else if (c === 0xe000 && i + 6 < s.length) {
      let digits = true;
      for (let k = i + 1; k <= i + 6; k++) {
        const d = s.charCodeAt(k);
        if (!(d >= 0xe100 && d <= 0xe1ff)) digits = false;
      }
      if (digits) {
        out.fill(1, i, i + 7);
        i += 6;
      }
    }
  }
  return out;
}

/** Text with the attribution marks removed, to test whether a chunk is empty as the plain render would. */
function unmarked(s: string): string {
  if (!/[\uE000\uE001]/.test(s)) return s;
  const marks = markMap(s);
  let out = '';
  for (let i = 0; i < s.length; i++) if (!marks[i]) out += s[i];
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i];
    const b = i + 1 < bytes.length ? bytes[i + 1] : 0;
    const c = i + 2 < bytes.length ? bytes[i + 2] : 0;
    out += B64[a >> 2] + B64[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < bytes.length ? B64[((b & 15) << 2) | (c >> 6)] : '=';
    out += i + 2 < bytes.length ? B64[c & 63] : '=';
  }
  return out;
}

class RuntimeFailure extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
  }
}

/** PromptyChatParser.inline_image of 0.1.x. */
function inlineImage(item: string, readFile: PromptyOptions['readFile']): string {
  if (item.startsWith('http') || item.startsWith('data')) return item;
  const dot = item.lastIndexOf('.');
  const slash = Math.max(item.lastIndexOf('/'), item.lastIndexOf('\\'));
  const suffix = dot > slash + 1 ? item.slice(dot) : '';
  if (!readFile) throw new Unsupported(`the local image '${item}' (its file is not read here)`);
  const text = readFile(item);
  if (text === undefined) throw new RuntimeFailure('FileNotFoundError', `No such file or directory: '${item}'`);
  const data = base64(new TextEncoder().encode(text));
  if (suffix === '.png') return `data:image/png;base64,${data}`;
  if (suffix === '.jpg' || suffix === '.jpeg') return `data:image/jpeg;base64,${data}`;
  throw new RuntimeFailure('ValueError', `Invalid image format ${suffix} - currently only .png and .jpg / .jpeg are supported.`);
}

/** PromptyChatParser.parse_content of 0.1.x: a string, or parts when an image pattern matched. */
function parseContent01(content: string, readFile: PromptyOptions['readFile'], imagesAsWritten = false): EnginePart[] {
  const matches = findImages(content);
  if (!matches.length) return [{ type: 'text', text: content }];
  // re.split with two groups: text, alt, filename, text, …
  const chunks: string[] = [];
  let last = 0;
  for (const m of matches) {
    chunks.push(content.slice(last, m.start), m.alt, m.filename);
    last = m.end;
  }
  chunks.push(content.slice(last));
  const items: EnginePart[] = [];
  let cur = 0;
  for (const chunk of chunks) {
    if (cur < matches.length && chunk === matches[cur].alt) {
      const item = pyStrip(matches[cur].filename.split(' ')[0], null, true, true);
      items.push({ type: 'media', url: imagesAsWritten ? item : inlineImage(item, readFile) });
    } else if (cur < matches.length && chunk === matches[cur].filename) cur++;
    else {
      const t = stripText(chunk);
      if (unmarked(t).length > 0) items.push({ type: 'text', text: t });
    }
  }
  return items;
}

// ---------------------------------------------------------------------------
// PromptyChatParser of 0.1.x
// ---------------------------------------------------------------------------

const ROLES_01 = ['assistant', 'function', 'system', 'user'];

/**
 * `(?i)^\s*#?\s*(assistant|function|system|user)\s*:\s*\n` with re.MULTILINE, tried at one line
 * start (sticky).
 */
const SEPARATOR_01 = new RegExp(`${WS}*#?${WS}*(${ROLES_01.map(caseless).join('|')})${WS}*:${WS}*\\n`, 'uy');
const WS_RUN = new RegExp(`${WS}*`, 'uy');

function isRole01(chunk: string): boolean {
  return ROLES_01.includes(pyStrip(chunk, null, true, true).toLowerCase());
}

/**
 * re.split(separator, data): the text between role lines and the role words, alternating. The
 * pattern is tried at each line start, except that a failed try at line start p also rules out
 * every line start inside p's whitespace run (from any of them the pattern meets the same first
 * non-space character), so the scan is linear: trying each of them re-scanned the rest of a long
 * blank run (16 KB of blank lines took a minute; found by the fuzz suite). The splits are the same.
 */
function splitRoles01(data: string): string[] {
  const out: string[] = [];
  let last = 0;
  let p = 0;
  while (p <= data.length) {
    SEPARATOR_01.lastIndex = p;
    const m = SEPARATOR_01.exec(data);
    if (m) {
      out.push(data.slice(last, p), m[1]);
      // A match ends with a line break, so the next try is a line start.
      last = p = p + m[0].length;
      continue;
    }
    WS_RUN.lastIndex = p;
    WS_RUN.exec(data);
    const nl = data.indexOf('\n', WS_RUN.lastIndex);
    if (nl < 0) break;
    p = nl + 1;
  }
  out.push(data.slice(last));
  return out;
}

function parseChat01(data: string, readFile: PromptyOptions['readFile'], imagesAsWritten = false): EngineMessage[] {
  const chunks = splitRoles01(data).filter((c) => pyStrip(unmarked(c), null, true, true).length > 0);
  if (!chunks.length) throw new RuntimeFailure('IndexError', 'list index out of range (the template renders to nothing: Prompty 0.1 cannot parse it)');
  if (!isRole01(chunks[0])) chunks.unshift('system');
  if (isRole01(chunks[chunks.length - 1])) chunks.pop();
  if (chunks.length % 2 !== 0) throw new RuntimeFailure('ValueError', 'Invalid prompt format (Prompty 0.1 fails on an empty message or a role line with nothing after it)');
  const messages: EngineMessage[] = [];
  for (let i = 0; i < chunks.length; i += 2) {
    const role = pyStrip(chunks[i], null, true, true).toLowerCase();
    const content = stripText(chunks[i + 1]);
    const parts = parseContent01(content, readFile, imagesAsWritten);
    const m: EngineMessage = { role, parts };
    if (parts.length !== 1 || parts[0].type !== 'text' || parts[0].text !== content) m.contentList = true;
    messages.push(m);
  }
  return messages;
}

// ---------------------------------------------------------------------------
// PromptyChatParser of v2
// ---------------------------------------------------------------------------

const ROLES_V2 = ['assistant', 'developer', 'system', 'user'];
/**
 * `(?im)^\s*#?\s*(roles)(\[(?:\w++\s*+=\s*+(?:"[^"]*"|[^",\]]*+)\s*+,?+\s*+)+\])?\s*:\s*$` on a
 * stripped line. The possessive `[^",\]]*+` is written as an atomic group (a lookahead and a
 * backreference); the other possessive parts border disjoint classes, where greedy is the same.
 */
const BOUNDARY_V2 = new RegExp(`^${WS}*#?${WS}*(${ROLES_V2.map(caseless).join('|')})(\\[(?:${WORD_CLASS}+${WS}*=${WS}*(?:"[^"]*"|(?=([^",\\]]*))\\3)${WS}*,?${WS}*)+\\])?${WS}*:${WS}*$`, 'u');

/** `_parse_attrs`: `(\w+)\s*=\s*"?([^",]*)"?` over the text inside the brackets, values coerced. */
function parseAttrsV2(raw: string): Map<string, string | number | boolean> {
  const inner = pyStrip(raw, '[]', true, true);
  const out = new Map<string, string | number | boolean>();
  const re = new RegExp(`(${WORD_CLASS}+)${WS}*=${WS}*"?([^",]*)"?`, 'gu');
  for (const m of inner.matchAll(re)) {
    const v = pyStrip(m[2], null, true, true);
    const lower = v.toLowerCase();
    if (lower === 'true' || lower === 'false') out.set(m[1], lower === 'true');
    else if (/^[+-]?\d+(?:_\d+)*$/.test(v)) out.set(m[1], Number(v.replace(/_/g, '')));
    else if (/^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?$/.test(v)) out.set(m[1], Number(v.replace(/_/g, '')));
    else out.set(m[1], v);
  }
  return out;
}

interface V2Message {
  role: string;
  parts: EnginePart[];
  metadata: Record<string, unknown>;
}

function parseChatV2(text: string, nonce: string | undefined): V2Message[] {
  const out: V2Message[] = [];
  let buffer: string[] = [];
  let role = 'system';
  let attrs = new Map<string, string | number | boolean>();
  let hasBoundary = false;
  const flush = (): void => {
    const content = stripText(buffer.join('\n'), true);
    if (nonce !== undefined && hasBoundary) {
      const got = attrs.get('nonce');
      attrs.delete('nonce');
      if (String(got) !== nonce) throw new RuntimeFailure('ValueError', 'Nonce mismatch — possible prompt injection detected (strict mode is enabled). A template variable may be injecting role markers.');
    }
    const metadata: Record<string, unknown> = {};
    for (const [k, v] of attrs) if (k !== 'nonce') metadata[k] = v;
    out.push({ role, parts: [{ type: 'text', text: content }], metadata });
    buffer = [];
  };
  for (const line of pySplitlines(text)) {
    const m = BOUNDARY_V2.exec(pyStrip(line, null, true, true));
    if (m) {
      if (buffer.length) flush();
      role = m[1].toLowerCase();
      attrs = m[2] ? parseAttrsV2(m[2]) : new Map();
      hasBoundary = true;
      continue;
    }
    buffer.push(line);
  }
  if (buffer.length) flush();
  return out;
}

/** A nonce of 16 hex digits from the template text (deterministic, with a letter so it never reads as a number). */
function nonceOf(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
    h2 = Math.imul(h2 ^ c, 2246822519) >>> 0;
  }
  return 'a' + (h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0')).slice(1);
}

/** pre_render: every literal role line of the template becomes `role[nonce="…"]:`. */
function preRenderV2(template: string, nonce: string): string {
  let out = '';
  for (const line of pySplitlines(template, true)) {
    const m = BOUNDARY_V2.exec(pyStrip(line, null, true, true));
    out += m ? `${m[1].toLowerCase()}[nonce="${nonce}"]:\n` : line;
  }
  return out;
}

const RICH_KINDS = new Set(['thread', 'image', 'file', 'audio']);
const MARKER_PREFIX = '__PROMPTY_THREAD_';

function markerOf(name: string, nonce: string): string {
  return `${MARKER_PREFIX}${nonce.slice(0, 8)}_${name}__`;
}

/** `_dict_content_to_part`. */
function partOfDict(d: Record<string, unknown>): EnginePart {
  const kind = d.kind ?? d.type ?? 'text';
  if (kind === 'text') return { type: 'text', text: pyText(d.value ?? d.text ?? '') };
  if (kind === 'image' || kind === 'image_url') {
    let source: unknown = d.source ?? '';
    if (!source && 'image_url' in d) source = isRecord(d.image_url) ? d.image_url.url ?? '' : pyText(d.image_url);
    return media('image', pyText(source), d.detail, d.mediaType ?? d.media_type);
  }
  if (kind === 'file' || kind === 'audio') return media(kind, pyText(d.source ?? ''), undefined, d.mediaType ?? d.media_type);
  return { type: 'text', text: pyDictText(d) };
}

function media(kind: 'image' | 'file' | 'audio', url: string, detail: unknown, mediaType: unknown): EnginePart {
  const p: EnginePart = { type: 'media', url, kind };
  if (detail !== undefined && detail !== null) p.detail = pyText(detail);
  if (mediaType !== undefined && mediaType !== null) p.contentType = pyText(mediaType);
  return p;
}

/** Python's str() of a plain value (what the v2 runtime does with non-string content). */
function pyText(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    const py = fromJs(v);
    return py instanceof PyDict || Array.isArray(py) || typeof py !== 'string' ? strOf(py) : py;
  } catch {
    return String(v);
  }
}

function strOf(v: PyValue): string {
  // values.pyStr is Python's str() of our values
  return pyStrOf(v);
}

function pyDictText(d: Record<string, unknown>): string {
  return strOf(fromJs(d));
}

/** `_dict_to_message`. */
function messageOfDict(d: Record<string, unknown>): V2Message {
  const role = 'role' in d ? pyText(d.role) : 'user';
  const content = 'content' in d ? d.content : '';
  let parts: EnginePart[];
  if (typeof content === 'string') parts = [{ type: 'text', text: content }];
  else if (Array.isArray(content)) parts = content.map((item) => (isRecord(item) ? partOfDict(item) : { type: 'text', text: pyText(item) }));
  else parts = [{ type: 'text', text: pyText(content) }];
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) if (k !== 'role' && k !== 'content' && k !== 'parts') metadata[k] = v;
  return { role, parts, metadata };
}

interface Marker {
  marker: true;
  name: string;
  kind: string;
}

/** `_inject_thread_markers` then `_expand_thread_markers`. */
function finishV2(messages: V2Message[], markers: Map<string, string>, kinds: Map<string, string>, inputs: Record<string, unknown>, issues: EngineIssue[], span: Span): V2Message[] {
  const withMarkers: Array<V2Message | Marker> = [];
  for (const msg of messages) {
    const text = msg.parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
    const found = [...markers].filter(([m]) => text.includes(m));
    if (!found.length) {
      withMarkers.push(msg);
      continue;
    }
    if (found.length > 1) {
      // Python takes the first marker in the iteration order of a set of names: its string hashing.
      issues.push({ rule: 'unsupported-feature', message: `Two rich inputs (${found.map(([, n]) => `'${n}'`).join(', ')}) are placed in one message: Prompty v2 expands only one of them, chosen by Python's string hashing; the first written is expanded here.`, span });
    }
    found.sort((a, b) => text.indexOf(a[0]) - text.indexOf(b[0]));
    const [marker, name] = found[0];
    const at = text.indexOf(marker);
    const before = stripText(text.slice(0, at));
    const after = stripText(text.slice(at + marker.length));
    if (unmarked(before)) withMarkers.push({ role: msg.role, parts: [{ type: 'text', text: before }], metadata: { ...msg.metadata } });
    withMarkers.push({ marker: true, name, kind: kinds.get(name) ?? 'thread' });
    if (unmarked(after)) withMarkers.push({ role: msg.role, parts: [{ type: 'text', text: after }], metadata: { ...msg.metadata } });
  }
  const expanded: V2Message[] = [];
  let markerFound = false;
  const thread = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    for (const m of value) if (isRecord(m)) expanded.push(messageOfDict(m));
  };
  for (const item of withMarkers) {
    if (!('marker' in item)) {
      expanded.push(item);
      continue;
    }
    markerFound = true;
    const value = inputs[item.name];
    if (item.kind === 'thread') thread(value);
    else {
      const source = value === undefined || value === null || value === '' || value === false || value === 0 || (Array.isArray(value) && !value.length) || (isRecord(value) && !Object.keys(value).length) ? '' : pyText(value);
      const part: EnginePart = { type: 'media', url: source, kind: item.kind as 'image' | 'file' | 'audio' };
      const prev = expanded[expanded.length - 1];
      if (prev && prev.role === 'user') prev.parts.push(part);
      else expanded.push({ role: 'user', parts: [part], metadata: {} });
    }
  }
  if (!markerFound) for (const [name, kind] of kinds) if (kind === 'thread' && name in inputs) thread(inputs[name]);
  return expanded;
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

/** The span of the front matter (between the fences), in source offsets. */
function frontMatterSpan(t: Text, m: RegExpExecArray): Span {
  const start = toSource(t, m.index);
  const end = toSource(t, m.index + m[0].length - m[2].length);
  return { start, end: Math.max(start, end) };
}

function failure(line: PromptyLine, rule: EngineIssue['rule'], message: string, span: Span, rendered = ''): PromptyResult {
  return { rendered, messages: [], issues: [{ rule, message, span }], line, exact: false };
}

/** What the front matter says about rendering (the engine reads it itself, so every caller agrees). */
interface Settings {
  line: PromptyLine;
  format: string;
  /** v2's parser kind. */
  parser: string;
  /** v2 inputs marked `required` that have no default. */
  required: string[];
  strict: boolean;
  kinds: Map<string, string>;
  defaults: Record<string, unknown>;
  notChat: boolean;
}

/** The entries of a v2 `inputs` (the mapping form or the list form). */
function v2Inputs(fm: Record<string, unknown> | undefined, ctx: RefContext): Array<[string, Record<string, unknown>]> {
  let inputs = fm?.inputs;
  if (typeof inputs === 'string') inputs = resolveV2(inputs, ctx, 'inputs');
  const entries: Array<[string, unknown]> = Array.isArray(inputs) ? inputs.filter(isRecord).map((e) => [String(e.name ?? ''), e]) : isRecord(inputs) ? Object.entries(inputs) : [];
  return entries.filter((e): e is [string, Record<string, unknown>] => isRecord(e[1]));
}

/**
 * The template engine a front matter names, as the runtime line reads it: 0.1.x `template: <type>`
 * or `template: {type}`, v2 `template: {format: <kind> | {kind}}`; `jinja2` when none is named.
 */
export function promptyTemplateFormat(fm: Record<string, unknown> | undefined, line: PromptyLine = promptyLineOf(fm)): string {
  const t = fm?.template;
  if (line === '0.1') {
    const type = typeof t === 'string' ? t : isRecord(t) ? t.type : undefined;
    return typeof type === 'string' ? type : 'jinja2';
  }
  const f = isRecord(t) ? (isRecord(t.format) ? t.format.kind : t.format) : undefined;
  return typeof f === 'string' && f !== '' && f !== '*' ? f : 'jinja2';
}

function settingsOf(fm: Record<string, unknown> | undefined, options: PromptyOptions): Settings {
  const line = options.line ?? promptyLineOf(fm);
  const t = fm?.template;
  let format = promptyTemplateFormat(fm, line);
  let parser = 'prompty';
  let strict = true;
  let notChat = false;
  if (line === '0.1') {
    const p = isRecord(t) ? t.parser : undefined;
    if (p === 'NOOP') notChat = true;
    const api = isRecord(fm?.model) ? (fm?.model as Record<string, unknown>).api : undefined;
    if (typeof api === 'string' && ['completion', 'embedding', 'image'].includes(api)) notChat = true;
  } else {
    const p = isRecord(t) ? (isRecord(t.parser) ? t.parser.kind : t.parser) : undefined;
    if (typeof p === 'string' && p !== '' && p !== '*') parser = p;
    if (isRecord(t) && isRecord(t.format) && typeof t.format.strict === 'boolean') strict = t.format.strict;
  }
  // The caller's engine type only stands in for a front matter that names none.
  const named = line === '0.1' ? t !== undefined && (typeof t === 'string' || (isRecord(t) && 'type' in t)) : isRecord(t) && 'format' in t;
  if (options.templateType && !named) format = options.templateType;
  const kinds = new Map<string, string>();
  const defaults: Record<string, unknown> = {};
  const required: string[] = [];
  if (line === 'v2') {
    for (const [name, e] of v2Inputs(fm, { readFile: options.readFile, dir: '', depth: 0 })) {
      if (typeof e.kind === 'string' && RICH_KINDS.has(e.kind)) kinds.set(name, e.kind);
      if (e.default !== undefined && e.default !== null) defaults[name] = resolveV2(e.default, { readFile: options.readFile, dir: '', depth: 0 }, 'default');
      else if (e.required === true) required.push(name);
    }
  }
  return { line, format, parser, strict, kinds, defaults, required, notChat };
}

/** source: the WHOLE .prompty file text; data: the inputs. */
export function renderPrompty(source: string, data: Record<string, unknown>, options: PromptyOptions = {}): PromptyResult {
  const loader = options.loader;
  if (loader === undefined) return renderLine(source, data, options);
  if (loader === 'azure-ai-inference' && options.fromString) return { ...renderAzureString(source, data), loader };
  if (loader === 'promptflow') return { ...renderPromptflow(source, data, options), loader };
  const line = loaderLine(loader) ?? options.line;
  const r = renderLine(source, data, { ...options, ...(line ? { line } : {}) });
  if (loader !== 'typescript' && loader !== 'dotnet') return { ...r, loader };
  // Prompty's TypeScript and .NET runtimes: rendered as Prompty's Python runtime line renders the
  // file (a nunjucks template by the Jinja2 interpreter, never by nunjucks itself, which compiles
  // templates to JavaScript), and said so once; no Python runtime's load error is theirs.
  const fmKey = fmKeySpan(source, 'template') ?? fmKeySpan(source, 'model') ?? { start: 0, end: Math.min(source.length, 3) };
  const note: EngineIssue = {
    rule: 'unsupported-feature',
    message:
      loader === 'typescript'
        ? `${PROMPTY_LOADER_LABEL.typescript} renders this template with nunjucks (autoescaping what it prints); Context Lens renders it with its Jinja2 interpreter, escaping what it prints as nunjucks does (it never runs nunjucks, which compiles a template to JavaScript). Text, strings, integers, loops and conditions print as nunjucks prints them; booleans, null, lists, objects, floats and Python methods do not, nor a mustache template (mustache.js). The counts are an estimate.`
        : `${PROMPTY_LOADER_LABEL.dotnet} is not reproduced: the file is rendered as ${PROMPTY_LINE_LABEL[r.line]} renders it, and the counts are an estimate.`,
    span: fmKey,
  };
  const pythonOnly = r.issues.filter((i) => !(i.rule === 'template-invalid' && /cannot load this file|has no renderer|has no parser|refuses to render without/.test(i.message)));
  if (pythonOnly.length < r.issues.length && r.messages.length === 0) {
    // The Python runtime refused to load it: render the body as that line would without its loader's checks.
    const again = renderLine(source, data, { ...options, line: r.line, templateType: 'jinja2', skipLoadChecks: true });
    return { ...again, issues: [note, ...again.issues.filter((i) => !(i.rule === 'template-invalid' && /cannot load this file/.test(i.message)))], loader, exact: false, estimate: true };
  }
  return { ...r, issues: [note, ...pythonOnly], loader, exact: false, estimate: true };
}

const NUNJUCKS_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', "'": '&#39;', '<': '&lt;', '>': '&gt;' };

/** nunjucks' `escape` (its default environment autoescapes what `{{ }}` prints). */
function nunjucksEscape(s: string): string {
  return /[&"'<>]/.test(s) ? s.replace(/[&"'<>]/g, (c) => NUNJUCKS_ESCAPES[c]) : s;
}

function renderLine(source: string, data: Record<string, unknown>, options: PromptyOptions): PromptyResult {
  const whole: Span = { start: 0, end: source.length };
  const azure = options.loader === 'azure-ai-inference';
  const foreign = options.loader === 'typescript' || options.loader === 'dotnet';
  const t = readText(source);
  const fmMatch = (options.line === 'v2' ? FRONT_MATTER_V2 : FRONT_MATTER).exec(t.text);
  let fm = fmMatch ? frontMatterData(fmMatch[1]) : undefined;
  // 0.1.x: a `base:` file lends its attributes and is a template the body may include.
  let bases: BaseFile[] = [];
  if (fm && typeof fm.base === 'string' && options.line !== 'v2' && promptyLineOf(fm) === '0.1') {
    try {
      bases = baseChain(fm, options.readFile);
    } catch (e) {
      if (e instanceof RuntimeFailure) return failure('0.1', 'template-invalid', `${PROMPTY_LINE_LABEL['0.1']} cannot load this file: ${e.pyType}: ${e.message}`, { start: 0, end: Math.min(source.length, 3) });
      throw e;
    }
    fm = withBases(fm, bases);
  }
  const s = settingsOf(fm, options);
  // azure-ai-inference renders mustache unless the front matter names another engine (which it then lacks).
  if (azure) s.format = azureTemplateType(fm);
  // nunjucks (Prompty's TypeScript runtime) is rendered by the Jinja2 interpreter.
  if (foreign && (s.format === 'nunjucks' || s.format === '*')) s.format = 'jinja2';
  if (foreign) s.parser = 'prompty';
  const label = options.loader ? PROMPTY_LOADER_LABEL[options.loader] : PROMPTY_LINE_LABEL[s.line];
  if (source.length > MAX_SOURCE) return failure(s.line, 'unsupported-feature', `The file is larger than ${MAX_SOURCE} characters; it is not rendered.`, whole);
  const m = s.line === 'v2' && !options.line ? FRONT_MATTER_V2.exec(t.text) : fmMatch;
  if (!m) {
    if (s.line === 'v2') return failure(s.line, 'unsupported-feature', 'A Prompty v2 file without front matter is read as YAML as a whole; Context Lens does not render such a file.', { start: 0, end: Math.min(source.length, 3) });
    return failure(s.line, 'template-invalid', 'Prompty finds no front matter (a block between --- lines at the top): it cannot load this file.', { start: 0, end: Math.min(source.length, 3) });
  }
  const notes = fmMatch ? yamlNotesOf(fm) : [];
  const fmOffset = fmMatch ? fmMatch.index + fmMatch[0].indexOf(fmMatch[1]) : 0;
  const noteSpan = (n: YamlNote): Span => {
    const start = toSource(t, fmOffset + n.range[0]);
    return { start, end: Math.max(start, toSource(t, fmOffset + n.range[1])) };
  };
  const safeLoader = s.line === 'v2' || azure;
  const badTag = notes.find((n) => n.kind === 'unknown-tag' || (safeLoader && (n.kind === 'python-tag' || n.kind === 'python-other')));
  if (badTag) return failure(s.line, 'template-invalid', `${label} cannot load this file: its YAML loader (${safeLoader ? 'yaml.safe_load' : "PyYAML's FullLoader"}) has no constructor for the tag '${badTag.tag}' (ConstructorError).`, noteSpan(badTag));
  if (s.line === 'v2' && !fm) {
    const type = frontMatterNonMapping(m[1]);
    if (type !== undefined) return failure(s.line, 'template-invalid', `${label} cannot load this file: its front matter is a ${type}, not a mapping (TypeError: ${type === 'list' ? 'list indices must be integers or slices, not str' : `'${type}' object does not support item assignment`}).`, frontMatterSpan(t, m));
  }
  const body = m[2];
  const bodyStart = m.index + m[0].length - body.length;
  const bodySpan: Span = { start: toSource(t, bodyStart), end: source.length };
  const mapSpan = (sp: Span | undefined): Span => {
    if (!sp) return bodySpan;
    const start = toSource(t, Math.min(bodyStart + sp.start, t.text.length));
    const end = toSource(t, Math.min(bodyStart + Math.max(sp.end, sp.start), t.text.length));
    return { start, end: Math.max(start, end) };
  };
  if (fmMatch && !fm && s.line === '0.1' && /^\s*$/.test(fmMatch[1])) return failure(s.line, 'template-invalid', `${label} cannot load this file: its front matter is empty (TypeError: argument of type 'NoneType' is not iterable).`, frontMatterSpan(t, fmMatch));
  if (fm && !options.skipLoadChecks) {
    let err: string | undefined;
    try {
      err = azure ? loadErrorAzure(fm, options.readFile, options.env) : loadError(fm, s.line, options.readFile, options.env, options.line !== undefined);
    } catch (e) {
      if (e instanceof Unsupported) return failure(s.line, 'unsupported-feature', `Not rendered: ${e.message}.`, frontMatterSpan(t, m));
      throw e;
    }
    if (err) return failure(s.line, 'template-invalid', `${label} cannot load this file: ${err}`, frontMatterSpan(t, m));
  }
  const inputs: Record<string, unknown> = s.line === 'v2' ? { ...s.defaults, ...(data ?? {}) } : { ...(data ?? {}) };
  if (s.line === 'v2') {
    const missing = s.required.find((n) => !(n in inputs));
    if (missing !== undefined) return failure(s.line, 'template-invalid', `Prompty v2 refuses to render without the required input '${missing}' (it has no default): ValueError: Required input '${missing}' not provided and has no default value.`, frontMatterSpan(t, m));
    if (s.parser !== 'prompty') return failure(s.line, 'template-invalid', `Prompty v2 has no parser '${s.parser}' (InvokerError: No parser found).`, frontMatterSpan(t, m));
  }
  const issues: EngineIssue[] = [];
  let exact = true;
  // Values the loader types as Python objects this engine does not make: rendered, and reported at the tag.
  for (const n of notes) {
    if (n.kind === 'python-other') issues.push({ rule: 'unsupported-feature', message: `PyYAML's FullLoader makes a Python object of the tag '${n.tag}', which Context Lens does not reproduce: the value is read as plain YAML, so what the template prints of it may differ from Prompty.`, span: noteSpan(n) });
    else if (n.kind === 'too-deep') issues.push({ rule: 'unsupported-feature', message: 'The front matter nests values deeper than 64 levels: Context Lens reads what lies deeper as None, so what the template prints of it may differ from Prompty.', span: noteSpan(n) });
    else if (n.kind === 'key-types') issues.push({ rule: 'unsupported-feature', message: "This YAML mapping has keys of different Python types (an integer key beside a string key): Python keeps them apart, and sorting or serialising them fails there (TypeError), while Context Lens reads every key as its text, so what the template prints of it may differ from Prompty.", span: noteSpan(n) });
    else if (n.kind === 'set') issues.push({ rule: 'unsupported-feature', message: "A YAML !!set is a Python set, whose order follows Python's string hashing: Context Lens reads it as a mapping of its members to None, so what the template prints of it may differ from Prompty.", span: noteSpan(n) });
    else continue;
    exact = false;
  }
  let missing: string[] | undefined;

  // v2: strict mode's nonce and the rich inputs' markers
  const nonce = nonceOf(body);
  const renderInputs: Record<string, unknown> = { ...inputs };
  const markers = new Map<string, string>();
  if (s.line === 'v2') {
    for (const name of s.kinds.keys()) {
      const marker = markerOf(name, nonce);
      markers.set(marker, name);
      renderInputs[name] = marker;
    }
  }
  const template = s.line === 'v2' && s.strict && s.format !== 'mustache' ? preRenderV2(body, nonce) : body;
  const known = azure ? ['mustache', 'NOOP'] : s.line === '0.1' ? ['jinja2', 'mustache', 'NOOP'] : ['jinja2', 'jinja', 'mustache'];
  if (!known.includes(s.format)) return failure(s.line, 'template-invalid', `${label} has no renderer '${s.format}' (it renders ${known.join(', ')}${azure ? ': ValueError: Renderer ' + s.format + ' not found' : ''}).`, azure ? templateKeySpan(source, t, m) : frontMatterSpan(t, m));

  let rendered: string;
  if (azure && 'data' in renderInputs && !isRecord(renderInputs.data)) return failure(s.line, 'template-invalid', `${label} takes a value named 'data' as all the values (create_messages(data=…)), and this one is not a mapping (TypeError: '${pyTypeName01(renderInputs.data)}' object is not a mapping).`, bodySpan);
  if (s.format === 'NOOP') rendered = body;
  else if (s.format === 'mustache') {
    const attr = azure ? mustachePythonAttribute(body, renderInputs) : undefined;
    if (attr) return failure(s.line, 'unsupported-feature', `Not rendered exactly as ${label} would: the mustache key '${attr.key}' reads a Python attribute of a value that is not a mapping (Python's getattr prints a class or a method with its memory address).`, mapSpan({ start: attr.start, end: attr.end }));
    try {
      rendered = renderMustache(s.line === 'v2' && s.strict ? preRenderV2(body, nonce) : body, renderInputs, (s.line === '0.1' ? 'prompty-0.1' : 'chevron') as MustacheDialect);
    } catch (e) {
      if (e instanceof MustacheError) return failure(s.line, 'template-invalid', `The mustache renderer refuses this template: ${e.message}`, mapSpan(e.span));
      if (e instanceof Unsupported) return failure(s.line, 'unsupported-feature', `Not rendered exactly as Prompty would: ${e.message}.`, bodySpan);
      throw e;
    }
  } else {
    try {
      const main = compileTemplate(MAIN, template, s.line === 'v2' || options.loader === 'typescript');
      const cache = new Map<string, Unit>();
      const templates: Record<string, string> = { ...(options.templates ?? {}) };
      // 0.1.x's loader holds each file of the `base:` chain by its name with its body (front matter
      // removed), whatever the caller read for that name (the whole file, for an include beside it).
      for (const b of bases) templates[b.name] = b.body;
      const interp = new Interpreter((name) => {
        if (!Object.prototype.hasOwnProperty.call(templates, name)) return undefined;
        let u = cache.get(name);
        if (!u) {
          const src = templates[name];
          if (typeof src !== 'string') return undefined;
          u = compileTemplate(name, src, s.line === 'v2' || options.loader === 'typescript');
          cache.set(name, u);
        }
        return u;
      });
      if (options.missingValues === 'lenient') interp.lenient = true;
      // 0.1.x renders with jinja2.Environment, v2 with the ImmutableSandboxedEnvironment.
      interp.sandboxed = s.line === 'v2';
      // Prompty's TypeScript runtime: nunjucks' default environment autoescapes what it prints.
      if (options.loader === 'typescript') interp.outputEscape = nunjucksEscape;
      // 0.1.x's DictLoader names the template by its file name, v2's by "prompt".
      interp.mainName = s.line === 'v2' ? 'prompt' : options.fileName ?? null;
      const vars = new Map<string, PyValue>();
      const py = fromJs(renderInputs);
      if (py instanceof PyDict) for (const [k, v] of py.entries()) if (typeof k === 'string') vars.set(k, v);
      rendered = interp.render(main, vars);
      if (interp.missing.size) missing = [...interp.missing].sort();
      for (const note of interp.notes) {
        exact = false;
        issues.push({ rule: 'unsupported-feature', message: noteMessage(note), span: note.unit === MAIN && template === body ? mapSpan(note.span) : bodySpan });
      }
    } catch (e) {
      if (e instanceof PyError || e instanceof Unsupported || e instanceof LimitError) {
        const inMain = (unitOf(e) === undefined || unitOf(e) === MAIN) && template === body;
        const span = inMain ? mapSpan(e.span) : bodySpan;
        if (e instanceof PyError) return failure(s.line, 'template-invalid', `Jinja2 refuses this template: ${e.pyType}: ${e.message}`, span);
        if (e instanceof LimitError) return failure(s.line, 'unsupported-feature', `Not rendered: ${e.message}.`, span);
        return failure(s.line, 'unsupported-feature', `Not rendered exactly as Prompty would: ${e.message}.`, span);
      }
      if (e instanceof RangeError) return failure(s.line, 'unsupported-feature', 'Not rendered: the template nests too deeply.', bodySpan);
      return failure(s.line, 'unsupported-feature', `Not rendered: internal error (${e instanceof Error ? e.message : String(e)}).`, bodySpan);
    }
  }

  try {
    if (s.line === '0.1') {
      const estimate = { ...(exact ? {} : { estimate: true as const }), ...(missing ? { missing } : {}) };
      if (s.notChat) return { rendered, messages: [{ role: 'user', parts: [{ type: 'text', text: rendered }] }], issues, line: s.line, notChat: true, exact, ...estimate };
      return { rendered, messages: parseChat01(rendered, options.readFile), issues, line: s.line, exact, ...estimate };
    }
    const parsed = parseChatV2(rendered, s.strict ? nonce : undefined);
    const finished = markers.size ? finishV2(parsed, markers, s.kinds, inputs, issues, bodySpan) : parsed;
    const messages = finished.map((msg) => {
      const out: EngineMessage = { role: msg.role, parts: msg.parts };
      if (Object.keys(msg.metadata).length) out.metadata = msg.metadata;
      return out;
    });
    const isExact = exact && !issues.some((i) => i.rule === 'unsupported-feature');
    return { rendered, messages, issues, line: s.line, exact: isExact, ...(isExact ? {} : { estimate: true as const }), ...(missing ? { missing } : {}) };
  } catch (e) {
    if (e instanceof RuntimeFailure) return failure(s.line, 'template-invalid', `${label} fails on the rendered text: ${e.pyType}: ${e.message}`, bodySpan, rendered);
    if (e instanceof Unsupported) return failure(s.line, 'unsupported-feature', `Not rendered exactly as Prompty would: ${e.message}.`, bodySpan, rendered);
    throw e;
  }
}

// ---------------------------------------------------------------------------
// azure-ai-inference's PromptTemplate (1.0.0b9, `azure.ai.inference.prompts`)
// ---------------------------------------------------------------------------

/** The engine azure-ai-inference renders with: `template:` as a string or `{type}`, else mustache. */
function azureTemplateType(fm: Record<string, unknown> | undefined): string {
  const t = fm?.template;
  if (typeof t === 'string') return t;
  if (isRecord(t)) return typeof t.type === 'string' ? t.type : 'mustache';
  if (t !== undefined && t !== null) return String(t);
  return 'mustache';
}

/** Where a top-level key of the front matter is written (its line), else the whole front matter. */
function templateKeySpan(source: string, _value: unknown, m: RegExpExecArray): Span {
  return fmKeySpan(source, 'template') ?? { start: 0, end: Math.min(source.length, m[0].length) };
}

/** The span of `key:` at the start of a line of the front matter, or undefined. */
export function fmKeySpan(source: string, key: string): Span | undefined {
  const block = promptyFrontMatterBlock(source);
  if (!block) return undefined;
  const re = new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \t]*:`, 'm');
  const yaml = source.slice(block.yamlStart, block.yamlEnd);
  const k = re.exec(yaml);
  if (!k) return undefined;
  const start = block.yamlStart + k.index;
  const eol = source.indexOf('\n', start);
  return { start, end: eol < 0 ? block.yamlEnd : Math.min(eol, block.yamlEnd) };
}

const AZURE_TOP = new Set(['name', 'description', 'authors', 'tags', 'version', 'base', 'basePrompty', 'model', 'sample', 'inputs', 'outputs', 'template', 'file', 'content']);
const AZURE_MODEL = new Set(['api', 'configuration', 'parameters', 'response']);
const AZURE_TEMPLATE = new Set(['type', 'parser']);
const AZURE_PROPERTY = new Set(['type', 'default', 'description']);

/**
 * What azure-ai-inference's load() refuses: the attributes are normalized (`${env:NAME[:default]}`,
 * `${file:x.json}`, any other `${…}` is an invalid attribute) and loaded into dataclasses, so an
 * unknown key of the file, of `model`, of `template` or of an input fails, as does an input
 * without `type`.
 */
function loadErrorAzure(fm: Record<string, unknown>, readFile: PromptyOptions['readFile'], env?: EnvReader): string | undefined {
  if (YAML_ERROR in fm) return `YAMLError: ${String(fm[YAML_ERROR]).split('\n')[0]}`;
  try {
    normalizeAzure(fm, { readFile, env, dir: '', depth: 0, strict: true });
  } catch (e) {
    if (e instanceof RuntimeFailure) return `${e.pyType}: ${e.message}`;
    throw e;
  }
  const model = fm.model;
  if (model !== undefined) {
    if (!isRecord(model)) return `ValueError: Error in model settings: ModelSettings() argument after ** must be a mapping, not ${pyTypeName01(model)}`;
    const bad = Object.keys(model).find((k) => !AZURE_MODEL.has(k));
    if (bad !== undefined) return `ValueError: Error in model settings: ModelSettings.__init__() got an unexpected keyword argument '${bad}'`;
  }
  const t = fm.template;
  if (isRecord(t)) {
    const bad = Object.keys(t).find((k) => !AZURE_TEMPLATE.has(k));
    if (bad !== undefined) return `ValueError: Error in template loader: TemplateSettings.__init__() got an unexpected keyword argument '${bad}'`;
  }
  for (const key of ['inputs', 'outputs']) {
    if (!(key in fm)) continue;
    const props = fm[key];
    if (!isRecord(props)) return `ValueError: Error in ${key}: '${pyTypeName01(props)}' object has no attribute 'items'`;
    for (const v of Object.values(props)) {
      if (!isRecord(v)) return `ValueError: Error in ${key}: azure.ai.inference.prompts._core.PropertySettings() argument after ** must be a mapping, not ${pyTypeName01(v)}`;
      const bad = Object.keys(v).find((k) => !AZURE_PROPERTY.has(k));
      if (bad !== undefined) return `ValueError: Error in ${key}: PropertySettings.__init__() got an unexpected keyword argument '${bad}'`;
      if (!('type' in v)) return `ValueError: Error in ${key}: PropertySettings.__init__() missing 1 required positional argument: 'type'`;
    }
  }
  const bad = Object.keys(fm).find((k) => !AZURE_TOP.has(k));
  if (bad !== undefined) return `TypeError: Prompty.__init__() got an unexpected keyword argument '${bad}'`;
  // prepare(): the parser `<template.parser>.<model.api>` (only prompty.chat is registered; NOOP parses nothing).
  const parser = isRecord(t) ? (typeof t.parser === 'string' ? t.parser : '') : 'prompty';
  const api = isRecord(model) ? String(model.api ?? '') : '';
  if (parser !== 'NOOP' && `${parser}.${api}` !== 'prompty.chat' && !(parser === 'prompty' && ['completion', 'embedding', 'image'].includes(api))) return `ValueError: Parser ${parser}.${api} not found`;
  if ('sample' in fm) {
    const sample = normalizeAzure(fm.sample, { readFile, dir: '', depth: 0 });
    if (!isRecord(sample)) return `AttributeError: '${pyTypeName01(sample)}' object has no attribute 'items'`;
  }
  return undefined;
}

const PY_ATTRIBUTES = /^(?:_.*|real|imag|numerator|denominator|conjugate|hex|fromhex|is_integer|as_integer_ratio|bit_length|bit_count|to_bytes|from_bytes|append|extend|insert|remove|pop|clear|index|count|sort|reverse|copy|keys|values|items|get|setdefault|update|popitem|fromkeys|capitalize|casefold|center|encode|endswith|expandtabs|find|format|format_map|isalnum|isalpha|isascii|isdecimal|isdigit|isidentifier|islower|isnumeric|isprintable|isspace|istitle|isupper|join|ljust|lower|lstrip|maketrans|partition|removeprefix|removesuffix|replace|rfind|rindex|rjust|rpartition|rsplit|rstrip|split|splitlines|startswith|strip|swapcase|title|translate|upper|zfill)$/;

/**
 * A mustache key that reads a Python attribute of a value that is not a mapping (`{{ s.__class__ }}`,
 * `{{ flag.real }}`, `{{ items.pop }}`): chevron falls back to getattr there, and prints what Python
 * makes of the attribute (a class, a bound method with its address). Not reproduced: the key, or undefined.
 */
function mustachePythonAttribute(template: string, data: Record<string, unknown>): MustacheToken | undefined {
  let tokens: MustacheToken[];
  try {
    tokens = tokenizeMustache(template);
  } catch {
    return undefined;
  }
  for (const tok of tokens) {
    if (tok.type !== 'variable' && tok.type !== 'no escape' && tok.type !== 'section' && tok.type !== 'inverted section') continue;
    const parts = tok.key.split('.');
    if (parts.length < 2) continue;
    let scope: unknown = data;
    for (const part of parts) {
      if (isRecord(scope) && !(scope instanceof PyFloat) && Object.getPrototypeOf(scope) === Object.prototype) {
        if (!Object.prototype.hasOwnProperty.call(scope, part)) break;
        scope = scope[part];
        continue;
      }
      if (Array.isArray(scope) && /^[+-]?\d+$/.test(part.trim())) {
        const i = Number(part);
        scope = scope[i < 0 ? scope.length + i : i];
        continue;
      }
      if (scope !== null && scope !== undefined && PY_ATTRIBUTES.test(part)) return tok;
      break;
    }
  }
  return undefined;
}

/**
 * azure-ai-inference's Prompty.normalize: every string stripped; `${env:NAME}` / `${env:NAME:default}`
 * (a default only when not empty), `${file:path}` (JSON, relative to the template's folder, nested
 * references too), and any other `${…}` an invalid attribute. Without the application's
 * environment (the analysis) a reference to it stays as written.
 */
function normalizeAzure(v: unknown, ctx: RefContext): unknown {
  if (ctx.depth > 900) throw new RuntimeFailure('RecursionError', 'maximum recursion depth exceeded');
  if (typeof v === 'string') {
    const s = pyStrip(v, null, true, true);
    if (!(s.startsWith('${') && s.endsWith('}'))) return s;
    const parts = s.slice(2, -1).split(':');
    if (parts[0] === 'env' && parts.length > 1) {
      const value = ctx.env?.(parts[1]);
      if (value !== undefined) return value;
      if (parts.length > 2 && parts[2]) return parts[2];
      if (ctx.strict && ctx.env) throw new RuntimeFailure('ValueError', `Variable ${parts[1]} not found in environment`);
      return s;
    }
    if (parts[0] === 'file' && parts.length > 1) {
      const rel = parts[1];
      const full = joinPath('', rel);
      const text = full === '..' || full.startsWith('../') ? undefined : ctx.readFile?.(full);
      if (text === undefined) {
        if (ctx.strict && ctx.readFile) throw new RuntimeFailure('FileNotFoundError', `File ${rel} not found`);
        return s;
      }
      let parsed: unknown;
      try {
        parsed = parseJsonValues(text);
      } catch (e) {
        if (ctx.strict && e instanceof Unsupported) throw e;
        if (ctx.strict) throw new RuntimeFailure('JSONDecodeError', `the file ${rel} is not JSON`);
        return s;
      }
      if (Array.isArray(parsed) || isRecord(parsed)) return normalizeAzure(parsed, { ...ctx, depth: ctx.depth + 1 });
      return parsed;
    }
    if (ctx.strict) throw new RuntimeFailure('ValueError', `Invalid attribute format (${s})`);
    return s;
  }
  if (isMarkedTuple(v)) return v;
  if (Array.isArray(v)) return v.map((x) => normalizeAzure(x, { ...ctx, depth: ctx.depth + 1 }));
  if (isRecord(v) && Object.getPrototypeOf(v) === Object.prototype) {
    const entries = orderedEntries(v);
    const out = Object.fromEntries(entries.map(([k, x]) => [k, normalizeAzure(x, { ...ctx, depth: ctx.depth + 1 })]));
    return PY_KEY_ORDER in v ? setKeyOrder(out, entries.map((e) => e[0])) : out;
  }
  return v;
}

/**
 * azure-ai-inference's remove_leading_empty_space: leading blank lines go, and every line loses
 * the smallest indentation of the non-blank lines (a tab after the indentation counts two more).
 */
function azureDedent(template: string): string {
  const lines = pySplitlines(template);
  let start = 0;
  while (start < lines.length && pyStrip(lines[start], null, true, true) === '') start++;
  let min = Number.MAX_SAFE_INTEGER;
  for (const line of lines.slice(start)) {
    if (pyStrip(line, null, true, true).length === 0) continue;
    const rest = pyStrip(line, null, true, false);
    const spaces = line.length - rest.length + (rest.split('\t').length - 1) * 2;
    min = Math.min(min, spaces);
  }
  return lines
    .slice(start)
    .map((l) => l.slice(min))
    .join('\n');
}

/** azure-ai-inference's `PromptTemplate.from_string(t).create_messages(**data)`: mustache, then the chat parser (no image files read). */
function renderAzureString(template: string, data: Record<string, unknown>): PromptyResult {
  const whole: Span = { start: 0, end: template.length };
  const label = PROMPTY_LOADER_LABEL['azure-ai-inference'];
  let rendered: string;
  try {
    rendered = renderMustache(azureDedent(template), data, 'prompty-0.1');
  } catch (e) {
    if (e instanceof MustacheError) return failure('0.1', 'template-invalid', `The mustache renderer refuses this template: ${e.message}`, e.span ?? whole);
    if (e instanceof Unsupported) return failure('0.1', 'unsupported-feature', `Not rendered exactly as ${label} would: ${e.message}.`, whole);
    throw e;
  }
  try {
    return { rendered, messages: parseChat01(rendered, undefined, true), issues: [], line: '0.1', exact: true };
  } catch (e) {
    if (e instanceof RuntimeFailure) return failure('0.1', 'template-invalid', `${label} fails on the rendered text: ${e.pyType}: ${e.message}`, whole, rendered);
    throw e;
  }
}

// ---------------------------------------------------------------------------
// promptflow's Prompty (promptflow-core)
// ---------------------------------------------------------------------------

/**
 * promptflow's `Prompty.load(path).render(**values)` (promptflow.ts holds its steps): the front
 * matter up to the file's last `---` line, ruamel's YAML 1.2, the model's required keys, the
 * values it picks, Jinja2 in its mutable SandboxedEnvironment with trim_blocks and
 * keep_trailing_newline, role words escaped inside string values, and its chat parser.
 */
function renderPromptflow(source: string, data: Record<string, unknown>, options: PromptyOptions): PromptyResult {
  const label = PROMPTY_LOADER_LABEL.promptflow;
  const t = readText(source);
  const split = splitPromptflow(t.text);
  const head: Span = { start: 0, end: Math.min(source.length, 3) };
  if (!split) return failure('0.1', 'template-invalid', `${label} cannot load this file: UserErrorException: Illegal formatting of prompty (it needs a front matter between --- lines, then the template).`, head);
  const fmSpan: Span = { start: toSource(t, Math.max(0, split.yamlStart - 4)), end: toSource(t, split.bodyStart) };
  const bodySpan: Span = { start: toSource(t, split.bodyStart), end: source.length };
  const where = (w: PromptflowFailure['where']): Span => (w === 'body' ? bodySpan : w === 'inputs' ? fmKeySpan(source, 'inputs') ?? fmKeySpan(source, 'sample') ?? fmSpan : w === 'model' ? fmKeySpan(source, 'model') ?? fmSpan : fmSpan);
  let configs: Record<string, unknown>;
  let api: string;
  try {
    const raw = promptflowYaml(split.yaml);
    if (!isRecord(raw)) return failure('0.1', 'template-invalid', `${label} cannot load this file: its front matter is not a mapping (AttributeError).`, fmSpan);
    configs = resolvePromptflowRefs(raw, options.readFile, options.env, parseJsonValues) as Record<string, unknown>;
    api = promptflowModel(configs);
  } catch (e) {
    if (e instanceof PromptflowFailure) return failure('0.1', 'template-invalid', `${label} cannot load this file: ${e.pyType}: ${e.message}`, where(e.where));
    if (e instanceof PromptflowUnsupported) return failure('0.1', 'unsupported-feature', `Not rendered as ${label} would: ${e.message}.`, fmSpan);
    throw e;
  }
  const mapSpan = (sp: Span | undefined): Span => {
    if (!sp) return bodySpan;
    const start = toSource(t, Math.min(split.bodyStart + sp.start, t.text.length));
    const end = toSource(t, Math.min(split.bodyStart + Math.max(sp.end, sp.start), t.text.length));
    return { start, end: Math.max(start, end) };
  };
  let values: Record<string, unknown>;
  try {
    values = promptflowValues(configs, data ?? {}, options.readFile, parseJsonValues);
  } catch (e) {
    if (e instanceof PromptflowFailure) return failure('0.1', 'template-invalid', `${label} refuses to render: ${e.pyType}: ${e.message}`, where(e.where));
    if (e instanceof PromptflowUnsupported) return failure('0.1', 'unsupported-feature', `Not rendered as ${label} would: ${e.message}.`, where('inputs'));
    if (e instanceof SyntaxError) return failure('0.1', 'template-invalid', `${label} cannot read the sample file: JSONDecodeError: ${e.message}`, where('inputs'));
    throw e;
  }
  const body = promptflowPreprocess(split.body);
  const { values: escaped, escapes } = api === 'completion' ? { values, escapes: new Map<string, string>() } : escapeRoles(values);
  let rendered: string;
  const issues: EngineIssue[] = [];
  let exact = true;
  try {
    const main = compileTrimmed(MAIN, body);
    const interp = new Interpreter(() => undefined);
    interp.sandboxed = true;
    interp.mutable = true;
    if (options.missingValues === 'lenient') interp.lenient = true;
    const vars = new Map<string, PyValue>();
    const py = fromJs(escaped);
    if (py instanceof PyDict) for (const [k, v] of py.entries()) if (typeof k === 'string') vars.set(k, v);
    rendered = interp.render(main, vars);
    for (const note of interp.notes) {
      exact = false;
      issues.push({ rule: 'unsupported-feature', message: noteMessage(note), span: body === split.body ? mapSpan(note.span) : bodySpan });
    }
  } catch (e) {
    if (e instanceof PyError || e instanceof Unsupported || e instanceof LimitError) {
      const span = body === split.body && (unitOf(e) === undefined || unitOf(e) === MAIN) ? mapSpan(e.span) : bodySpan;
      if (e instanceof PyError) return failure('0.1', 'template-invalid', `Jinja2 refuses this template (${label} renders it): ${e.pyType}: ${unescapeRoles(e.message, escapes)}`, span);
      return failure('0.1', 'unsupported-feature', `Not rendered exactly as ${label} would: ${e.message}.`, span);
    }
    if (e instanceof RangeError) return failure('0.1', 'unsupported-feature', 'Not rendered: the template nests too deeply.', bodySpan);
    throw e;
  }
  if (api === 'completion') return { rendered, messages: [{ role: 'user', parts: [{ type: 'text', text: rendered }] }], issues, line: '0.1', notChat: true, exact, ...(exact ? {} : { estimate: true as const }) };
  let messages: EngineMessage[];
  try {
    messages = parsePromptflowChat(rendered, escapes);
  } catch (e) {
    if (e instanceof PromptflowFailure) return failure('0.1', 'template-invalid', `${label} fails on the rendered text: ${e.pyType}: ${e.message}`, bodySpan, rendered);
    if (e instanceof PromptflowUnsupported) return failure('0.1', 'unsupported-feature', `Not rendered as ${label} would: ${e.message}.`, bodySpan, rendered);
    throw e;
  }
  // A role word's stand-in a filter changed (`|upper`, `|length`) stays in the text: Python prints a random uuid there.
  if (messages.some((m) => m.parts.some((p) => p.type === 'text' && new RegExp(ESCAPE_TOKEN.source, 'i').test(p.text)))) {
    exact = false;
    issues.push({ rule: 'unsupported-feature', message: `${label} swaps role words inside values for random uuids while it renders; a filter changed one here, so the request holds a uuid Context Lens cannot know.`, span: bodySpan });
  }
  return { rendered, messages, issues, line: '0.1', exact, ...(exact ? {} : { estimate: true as const }) };
}

/** compileTemplate for jinja2's `trim_blocks=True, keep_trailing_newline=True` (promptflow's environment). */
function compileTrimmed(name: string, source: string): Unit {
  return compileTemplate(name, source, true, { trimBlocks: true });
}

/** The values promptflow's render gets before its own choice (promptflowValues): the caller's, as given. */
function promptflowInputs(source: string, explicit: Record<string, unknown> | undefined, readFile?: (relativePath: string) => string | undefined): Record<string, unknown> {
  void source;
  void readFile;
  return { ...(explicit ?? {}) };
}

function noteMessage(note: RenderNote): string {
  return `Not reproduced exactly: ${note.message}. The rest of the request is rendered as Prompty renders it.`;
}

// ---------------------------------------------------------------------------
// The values the runtime renders with
// ---------------------------------------------------------------------------

/** A 0.1.x `base:` file as its loader reads it: front matter, body and folder. */
interface BaseFile {
  name: string;
  fm: Record<string, unknown>;
  body: string;
  dir: string;
}

/**
 * The chain of 0.1.x `base:` files (nearest first), read next to the template. A base that is
 * missing is a FileNotFoundError of the runtime's load().
 */
function baseChain(fm: Record<string, unknown> | undefined, readFile: PromptyOptions['readFile']): BaseFile[] {
  const out: BaseFile[] = [];
  let cur = fm;
  let dir = '';
  while (cur && typeof cur.base === 'string' && readFile && out.length < 8) {
    const path = joinPath(dir, pyStrip(cur.base, null, true, true));
    const text = readFile(path);
    if (text === undefined) throw new RuntimeFailure('FileNotFoundError', `No such file or directory: '${path}'`);
    const t = readText(text);
    const m = FRONT_MATTER.exec(t.text);
    const data = m ? frontMatterData(m[1]) : undefined;
    const slash = path.lastIndexOf('/');
    dir = slash < 0 ? '' : path.slice(0, slash);
    out.push({ name: path.slice(slash + 1), fm: data ?? {}, body: m ? m[2] : '', dir });
    cur = data;
  }
  return out;
}

/** The front matter with its bases' keys under its own (0.1.x merges a base's attributes below the file's). */
function withBases(fm: Record<string, unknown>, chain: BaseFile[]): Record<string, unknown> {
  let merged: Record<string, unknown> = { ...fm };
  for (const b of chain) merged = { ...b.fm, ...merged };
  delete merged.base;
  return merged;
}

/** Reads the environment of the application (the analysis never does; a test may). */
export type EnvReader = (name: string) => string | undefined;

interface RefContext {
  readFile?: (relativePath: string) => string | undefined;
  env?: EnvReader;
  /** Fail as the runtime does on a file it cannot read or parse (load checks), instead of keeping the reference. */
  strict?: boolean;
  /** Folder of the file the value came from, relative to the template's folder ('' for the template). */
  dir: string;
  depth: number;
}

function joinPath(dir: string, rel: string): string {
  if (!dir) return rel;
  const parts = `${dir}/${rel}`.split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..' && out.length && out[out.length - 1] !== '..') out.pop();
    else if (p !== '.' && p !== '') out.push(p);
  }
  return out.join('/');
}

/**
 * What the runtime's load() refuses in a front matter, in the runtime's words (`Type: message`),
 * or undefined. 0.1.50 rejects its parser/renderer names and a sample it cannot load; v2
 * validates the model, template, inputs and tools shapes.
 */
function loadError(fm: Record<string, unknown>, line: PromptyLine, readFile: PromptyOptions['readFile'], env?: EnvReader, strictLine = false): string | undefined {
  if (YAML_ERROR in fm) return `YAMLError: ${String(fm[YAML_ERROR]).split('\n')[0]}`;
  try {
    if (line === '0.1') {
      const t = fm.template;
      const type = typeof t === 'string' ? t : isRecord(t) && typeof t.type === 'string' ? t.type : 'jinja2';
      if (!['jinja2', 'mustache', 'NOOP'].includes(type)) return `ValueError: Renderer ${type} not found`;
      // A template mapping without a parser names none; a model without `api` names no api.
      const parser = isRecord(t) ? (typeof t.parser === 'string' ? t.parser : '') : 'prompty';
      const api = isRecord(fm.model) ? String(fm.model.api ?? '') : '';
      if (parser !== 'NOOP' && `${parser}.${api}` !== 'prompty.chat' && !(parser === 'prompty' && ['completion', 'embedding', 'image'].includes(api))) return `ValueError: Parser ${parser}.${api} not found`;
      const inputsError = propertiesError01(fm);
      if (inputsError) return inputsError;
      // promptflow's loader reads a bare `sample: sample.json`; Prompty's prepare() fails on it. A
      // caller that names the runtime line asks for that runtime and gets its failure; otherwise the
      // file is left to the analysis, which knows which loader the file follows (sample.ts).
      const promptflowSample = !strictLine && typeof fm.sample === 'string' && !fm.sample.trim().startsWith('${') && /\.(?:json|ya?ml)$/i.test(fm.sample.trim());
      if ('sample' in fm && !promptflowSample) {
        const sample = normalize01(fm.sample, { readFile, env, dir: '', depth: 0, strict: true });
        // A reference the engine was given no reader for is the caller's to resolve.
        const unresolved = typeof sample === 'string' && sample.startsWith('${') && (!readFile || !env);
        if (!isRecord(sample) && !unresolved) return `AttributeError: '${sample === null || sample === undefined ? 'NoneType' : Array.isArray(sample) ? 'list' : typeof sample === 'string' ? 'str' : typeof sample} object' has no attribute 'items'`;
      }
      // load() normalizes every attribute: an environment reference the application's environment
      // does not hold (and that names no default) fails there, wherever it is.
      if (env) for (const [k, v] of Object.entries(fm)) if (k !== 'sample') normalize01(v, { env, dir: '', depth: 0, strict: true });
      return undefined;
    }
    if (env) {
      const unset = unsetEnvV2(fm, env, '');
      if (unset) return `ValueError: Environment variable '${unset[0]}' not set for key '${unset[1]}'`;
    }
    const model = fm.model;
    if (Array.isArray(model)) return `ValueError: Invalid data for Model`;
    if (isRecord(model) && 'connection' in model && !(isRecord(model.connection) && typeof model.connection.kind === 'string' && model.connection.kind.trim())) return `ValueError: Invalid Connection discriminator field 'kind': expected non-blank string`;
    if ('template' in fm) {
      const t = fm.template;
      if (!isRecord(t)) return `ValueError: Invalid data for Template: ${t === null ? 'None' : String(t)}`;
      if (!('format' in t)) return 'ValueError: template.format: missing required field';
      if (!('parser' in t)) return 'ValueError: template.parser: missing required field';
    }
    if ('inputs' in fm) {
      let inputs = fm.inputs;
      if (typeof inputs === 'string') inputs = resolveV2(inputs, { readFile, dir: '', depth: 0, strict: true }, 'inputs');
      if (inputs === null || inputs === undefined) return "TypeError: 'NoneType' object is not iterable";
      const entries: Array<[string, unknown]> = Array.isArray(inputs) ? inputs.map((e) => [isRecord(e) ? String(e.name ?? '') : '', e]) : isRecord(inputs) ? Object.entries(inputs) : [];
      for (const [name, e] of entries) {
        if (Array.isArray(e)) return `TypeError: inputs.${name}: invalid named collection entry category array`;
        const err = propertyError(e, `inputs.${name}`);
        if (err) return err;
        if (isRecord(e)) for (const k of ['default', 'example']) if (k in e) resolveV2(e[k], { readFile, dir: '', depth: 0, strict: true }, k);
      }
    }
    const tools = fm.tools;
    const toolList: unknown[] = Array.isArray(tools) ? tools : isRecord(tools) ? Object.values(tools) : [];
    for (let i = 0; i < toolList.length; i++) {
      const tool = toolList[i];
      if (typeof tool === 'string') continue;
      if (!isRecord(tool) || typeof tool.kind !== 'string' || !tool.kind.trim()) return "ValueError: Invalid Tool discriminator field 'kind': expected non-blank string";
      if (tool.kind === 'mcp' && !('connection' in tool)) return `ValueError: tools[${i}].connection: missing required field`;
      const params = tool.parameters;
      if (isRecord(params)) for (const [pn, pv] of Object.entries(params)) {
        const err = propertyError(pv, `tools[${i}].parameters.${pn}`);
        if (err) return err;
      }
    }
    return undefined;
  } catch (e) {
    if (e instanceof RuntimeFailure) return `${e.pyType}: ${e.message}`;
    throw e;
  }
}

/** v2's `${env:NAME}` without a default whose variable the environment does not hold: [name, key]. */
function unsetEnvV2(v: unknown, env: EnvReader, key: string, depth = 0): [string, string] | undefined {
  if (depth > 64) return undefined;
  if (typeof v === 'string') {
    const m = /^\$\{env:([^:}]*)\}$/i.exec(v);
    return m && env(m[1]) === undefined ? [m[1], key] : undefined;
  }
  if (Array.isArray(v)) {
    for (const x of v) {
      const r = unsetEnvV2(x, env, key, depth + 1);
      if (r) return r;
    }
  } else if (isRecord(v))
    for (const [k, x] of Object.entries(v)) {
      const r = unsetEnvV2(x, env, k, depth + 1);
      if (r) return r;
    }
  return undefined;
}

/**
 * 0.1.x's `inputs:` and `outputs:`: each loader builds `{k: PropertySettings(**v) for k, v in
 * inputs.items()}`. 0.1.50's PropertySettings is a dataclass (`type` required; `default` and
 * `description` the only other fields, no validation); 0.1.24's, which reads a file 0.1.50 could
 * not load, a pydantic model (`type` one of five names, `default` a str/int/float/list/dict/bool,
 * `description` a str; other keys ignored). The file fails to load only where both fail.
 */
function propertiesError01(fm: Record<string, unknown>): string | undefined {
  for (const key of ['inputs', 'outputs']) {
    if (!(key in fm)) continue;
    const label = key === 'inputs' ? 'inputs' : 'outputs';
    const props = fm[key];
    if (!isRecord(props)) return `ValueError: Error in ${label}: '${pyTypeName01(props)}' object has no attribute 'items'`;
    for (const v of Object.values(props)) {
      if (!isRecord(v)) return `ValueError: Error in ${label}: PropertySettings() argument after ** must be a mapping, not ${pyTypeName01(v)}`;
      if (!('type' in v)) return `ValueError: Error in ${label}: PropertySettings is missing its required field 'type'`;
      const unknownKey = Object.keys(v).some((k) => !['type', 'default', 'description'].includes(k));
      if (!unknownKey) continue;
      // 0.1.50 refuses the unknown key; 0.1.24 loads the file unless its validation fails.
      const d = v.default;
      const validDefault = !('default' in v) || typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean' || d instanceof PyFloat || typeof d === 'bigint' || Array.isArray(d) || (isRecord(d) && Object.getPrototypeOf(d) === Object.prototype);
      const valid = typeof v.type === 'string' && ['string', 'number', 'array', 'object', 'boolean'].includes(v.type) && validDefault && (!('description' in v) || typeof v.description === 'string');
      if (!valid) return `ValueError: Error in ${label}: 1 validation error for PropertySettings`;
    }
  }
  return undefined;
}

function pyTypeName01(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint') return 'int';
  if (v instanceof PyFloat) return 'float';
  return isRecord(v) ? 'dict' : 'object';
}

/** A v2 Property: a mapping with a `kind`; an `array` needs `items`. */
function propertyError(e: unknown, where: string): string | undefined {
  if (!isRecord(e) || typeof e.kind !== 'string' || !e.kind.trim()) return "ValueError: Invalid Property discriminator field 'kind': expected non-blank string";
  if (e.kind === 'array' && !('items' in e)) return `ValueError: ${where}.items: missing required field`;
  return undefined;
}

/**
 * v2's references in front matter values: `${env:NAME[:default]}` (the protocol in any case) and
 * `${file:path}` (`.json` parsed, `.yaml`/`.yml` read as YAML, anything else its text), relative to
 * the template's folder and never outside it; other `${…}` stay as written.
 */
function resolveV2(v: unknown, ctx: RefContext, key: string): unknown {
  if (typeof v !== 'string') return v;
  const s = v;
  if (!(s.startsWith('${') && s.endsWith('}'))) return s;
  const inner = s.slice(2, -1);
  const colon = inner.indexOf(':');
  if (colon < 0) return s;
  const protocol = inner.slice(0, colon).toLowerCase();
  const rest = inner.slice(colon + 1);
  if (protocol === 'env') {
    const c = rest.indexOf(':');
    const name = c < 0 ? rest : rest.slice(0, c);
    const value = ctx.env?.(name);
    if (value !== undefined) return value;
    return c < 0 ? s : rest.slice(c + 1);
  }
  if (protocol === 'file') {
    const path = joinPath(ctx.dir, rest);
    if (path === '..' || path.startsWith('../') || rest.startsWith('/')) {
      if (ctx.strict) throw new RuntimeFailure('ValueError', `File reference '${rest}' resolves outside allowed roots`);
      return s;
    }
    const text = ctx.readFile?.(path);
    if (text === undefined) {
      if (ctx.strict && ctx.readFile) throw new RuntimeFailure('FileNotFoundError', `Referenced file '${rest}' not found for key '${key}'`);
      return s;
    }
    if (/\.json$/i.test(rest)) {
      try {
        return parseJsonValues(text);
      } catch (e) {
        if (!ctx.strict) return s;
        if (e instanceof Unsupported) throw e;
        throw new RuntimeFailure('JSONDecodeError', `the file ${rest} is not JSON`);
      }
    }
    if (/\.ya?ml$/i.test(rest)) {
      const doc = parseDocument(text, { version: '1.1', logLevel: 'silent', uniqueKeys: false });
      if (doc.errors.length && ctx.strict) throw new RuntimeFailure('YAMLError', `the file ${rest} is not YAML: ${doc.errors[0].message.split('\n')[0]}`);
      return doc.errors.length ? text : pyYamlValue(doc.contents, 0, doc);
    }
    return text;
  }
  return s;
}

/**
 * 0.1.x's normalize(): every string is stripped, and a whole-value reference is resolved:
 * `${env:NAME}` / `${env:NAME:default}`, `${file:path}` (a JSON file is parsed and normalized in
 * turn, relative to its own folder; any other file is its text), and 0.1.24's `${NAME:default}`.
 * Without an environment reader a reference to the environment takes its default, else stays.
 */
function normalize01(v: unknown, ctx: RefContext): unknown {
  if (ctx.depth > 16) return v;
  if (typeof v === 'string') {
    const s = pyStrip(v, null, true, true);
    if (!(s.startsWith('${') && s.endsWith('}'))) return s;
    const parts = s.slice(2, -1).split(':');
    if (parts[0] === 'file' && parts.length >= 2) {
      const rel = parts.slice(1).join(':');
      const full = joinPath(ctx.dir, rel);
      const text = full === '..' || full.startsWith('../') ? undefined : ctx.readFile?.(full);
      if (text === undefined) {
        if (ctx.strict && ctx.readFile) throw new RuntimeFailure('FileNotFoundError', `File ${rel} not found`);
        return s;
      }
      // 0.1.x reads every referenced file as JSON, whatever its extension.
      let parsed: unknown;
      try {
        parsed = parseJsonValues(text);
      } catch (e) {
        if (ctx.strict && e instanceof Unsupported) throw e;
        if (ctx.strict) throw new RuntimeFailure('JSONDecodeError', `the file ${rel} is not JSON`);
        return s;
      }
      const slash = full.lastIndexOf('/');
      return normalize01(parsed, { ...ctx, dir: slash < 0 ? '' : full.slice(0, slash), depth: ctx.depth + 1 });
    }
    const [name, fallback] = parts[0] === 'env' ? [parts[1] ?? '', parts.slice(2).join(':')] : [parts[0], parts.slice(1).join(':')];
    const hasDefault = parts[0] === 'env' ? parts.length > 2 : parts.length > 1;
    const value = ctx.env?.(name);
    if (value !== undefined) return value;
    if (!hasDefault && ctx.strict && ctx.env) throw new RuntimeFailure('ValueError', `Variable ${name} not found in environment`);
    return hasDefault ? fallback : s;
  }
  // normalize() recurses into lists and dicts only: a tuple (and the strings in it) stays as loaded.
  if (isMarkedTuple(v)) return v;
  if (Array.isArray(v)) return v.map((x) => normalize01(x, ctx));
  if (isRecord(v) && Object.getPrototypeOf(v) === Object.prototype) {
    const entries = orderedEntries(v);
    const out = Object.fromEntries(entries.map(([k, x]) => [k, normalize01(x, ctx)]));
    return PY_KEY_ORDER in v ? setKeyOrder(out, entries.map((e) => e[0])) : out;
  }
  return v;
}

/**
 * JSON as Python's json reads it: a number written with a fraction or an exponent is a float
 * (Jinja prints `2.0` where JSON.parse gives the integer 2), and an object keeps its keys in the
 * file's order (a JS object lists integer-like keys first; see PY_KEY_ORDER). JSON.parse checks
 * the text; the values are then built from its tokens in order, without recursion.
 */
const MAX_JSON_DEPTH = 800;

export function parseJsonValues(text: string): unknown {
  JSON.parse(text);
  type Frame = { obj: Record<string, unknown>; order: string[]; key?: string } | { arr: unknown[] };
  const stack: Frame[] = [];
  let root: unknown;
  const add = (v: unknown): void => {
    const top = stack[stack.length - 1];
    if (!top) root = v;
    else if ('arr' in top) top.arr.push(v);
    else {
      const key = top.key ?? '';
      if (!Object.prototype.hasOwnProperty.call(top.obj, key)) top.order.push(key);
      Object.defineProperty(top.obj, key, { value: v, enumerable: true, writable: true, configurable: true });
      top.key = undefined;
    }
  };
  const re = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]]|true|false|null/g;
  for (const m of text.matchAll(re)) {
    const tok = m[0];
    const c = tok[0];
    if ((c === '{' || c === '[') && stack.length >= MAX_JSON_DEPTH) throw new Unsupported(`a JSON file nested deeper than ${MAX_JSON_DEPTH} levels (Python's json stops at its recursion limit, about 1,000 levels less what the caller uses)`);
    if (c === '{') stack.push({ obj: {}, order: [] });
    else if (c === '[') stack.push({ arr: [] });
    else if (c === '}' || c === ']') {
      const f = stack.pop()!;
      if ('arr' in f) add(f.arr);
      else add(f.order.some((k) => /^(?:0|[1-9][0-9]*)$/.test(k)) ? setKeyOrder(f.obj, f.order) : f.obj);
    } else if (c === '"') {
      const top = stack[stack.length - 1];
      const str = JSON.parse(tok) as string;
      // In an object, a string with no key pending is the next key.
      if (top && 'obj' in top && top.key === undefined) top.key = str;
      else add(str);
    } else if (tok === 'true' || tok === 'false' || tok === 'null') add(tok === 'true' ? true : tok === 'false' ? false : null);
    else {
      const v = Number(tok);
      // A float written whole stays a float (`2.0`); Python reads any integer exactly.
      add(/[.eE]/.test(tok) ? (Number.isInteger(v) ? new PyFloat(v) : v) : Number.isSafeInteger(v) ? v : BigInt(tok));
    }
  }
  return root;
}

/**
 * The inputs a runtime renders with when the caller gives `explicit` (or nothing): 0.1.x hoists
 * the inputs over the file's `sample:` (inline, or `${file:…}` JSON next to the file), with
 * every sample string stripped and references resolved as its normalize() does; v2 takes the
 * explicit inputs, or each declared input's `default`, else its `example` (what Prompty's preview
 * does; prepare() fills defaults itself). `readFile` reads next to the template.
 */
export function promptyRuntimeInputs(source: string, explicit: Record<string, unknown> | undefined, readFile?: (relativePath: string) => string | undefined, line?: PromptyLine, env?: EnvReader, loader?: PromptyLoader): Record<string, unknown> {
  if (loader === 'promptflow') return promptflowInputs(source, explicit, readFile);
  // create_messages(data=None, **kwargs): a value named `data` is taken as all the values.
  if (loader === 'azure-ai-inference' && explicit && isRecord(explicit.data)) explicit = explicit.data;
  line = loaderLine(loader) ?? line;
  const t = readText(source);
  const m = (line === 'v2' ? FRONT_MATTER_V2 : FRONT_MATTER).exec(t.text);
  const fm = m ? frontMatterData(m[1]) : undefined;
  const l = line ?? promptyLineOf(fm);
  if (l === 'v2') {
    if (explicit) return { ...explicit };
    const out: Record<string, unknown> = {};
    const ctx: RefContext = { readFile, env, dir: '', depth: 0 };
    for (const [name, e] of v2Inputs(fm, ctx)) {
      if (e.default !== undefined && e.default !== null) out[name] = resolveV2(e.default, ctx, 'default');
      else if (e.example !== undefined && e.example !== null) out[name] = resolveV2(e.example, ctx, 'example');
    }
    return out;
  }
  const norm = loader === 'azure-ai-inference' ? normalizeAzure : normalize01;
  let own: unknown;
  try {
    own = norm(fm?.sample, { readFile, env, dir: '', depth: 0 });
  } catch {
    own = undefined;
  }
  let values: Record<string, unknown> = isRecord(own) ? own : {};
  // Each base's sample lies under the file's own (param_hoisting).
  let chain: BaseFile[] = [];
  try {
    chain = fm && typeof fm.base === 'string' ? baseChain(fm, readFile) : [];
  } catch {
    chain = [];
  }
  for (const b of chain) {
    try {
      own = norm(b.fm.sample, { readFile, env, dir: b.dir, depth: 0 });
    } catch {
      own = undefined;
    }
    if (isRecord(own)) values = { ...own, ...values };
  }
  return { ...values, ...(explicit ?? {}) };
}

/** The role names each runtime line's chat parser starts a message at (the body builders read role lines with them, prompty/body.ts). */
export const PROMPTY_ROLES: Readonly<Record<PromptyLine, readonly string[]>> = { '0.1': ROLES_01, v2: ROLES_V2 };
