/**
 * promptflow's own loader of `.prompty` files (`promptflow.core.Prompty`, promptflow-core 1.18),
 * the parts that differ from Prompty's runtimes: its front matter split and YAML 1.2 reader, its
 * `${env:…}` / `${file:…}` references, the model configuration it requires, how it picks the
 * input values (`inputs:` or the sample's names, the sample only when no value is given), the
 * escaping of role lines inside string values, and its
 * chat parser (`system`, `user`, `assistant`, `function`, `tool`, with `name:` / `tool_call_id:`
 * blocks). The engine (engine.ts renderPromptflow) renders the Jinja body between these steps.
 */
import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { PY_WS, pyStrip } from '../jinja/pystr';
import { PY_KEY_ORDER, PyFloat, orderedEntries, setKeyOrder } from '../jinja/values';
import type { EngineMessage, EnginePart } from '../engineTypes';

/** A failure of promptflow's, in its words (`Type: message`). */
export class PromptflowFailure extends Error {
  constructor(
    readonly pyType: string,
    message: string,
    /** Where: `front-matter`, `inputs`, `body`, `model`. */
    readonly where: 'front-matter' | 'inputs' | 'body' | 'model' = 'body',
  ) {
    super(message);
  }
}

/** Something promptflow does that the engine does not reproduce. */
export class PromptflowUnsupported extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof PyFloat);
}

/**
 * `Prompty._parse_prompty`: `-{3,}\n(.*)-{3,}\n(.*)` searched with DOTALL, so the front matter runs
 * from the first fence to the LAST `---` line of the file, and the template starts right after it.
 */
export function splitPromptflow(text: string): { yaml: string; yamlStart: number; body: string; bodyStart: number } | undefined {
  const m = /-{3,}\n([\s\S]*)-{3,}\n([\s\S]*)/.exec(text);
  if (!m) return undefined;
  const yamlStart = m.index + m[0].indexOf('\n') + 1;
  return { yaml: m[1], yamlStart, body: m[2], bodyStart: text.length - m[2].length };
}

const MAX_DEPTH = 64;

/** ruamel.yaml's (YAML 1.2) reading of the front matter as Python values; throws PromptflowFailure. */
export function promptflowYaml(yaml: string): unknown {
  const doc = parseDocument(yaml, { version: '1.2', logLevel: 'silent', uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const dup = /duplicate/i.test(e.message);
    throw new PromptflowFailure(dup ? 'DuplicateKeyError' : 'YAMLError', e.message.split('\n')[0], 'front-matter');
  }
  return value12(doc.contents, 0, doc);
}

function value12(node: unknown, depth: number, doc: Document.Parsed): unknown {
  if (depth > MAX_DEPTH) throw new PromptflowUnsupported('a front matter nested deeper than 64 levels');
  const explicit = (node as { tag?: unknown } | null)?.tag;
  if (typeof explicit === 'string' && explicit !== '!') throw new PromptflowUnsupported(`the YAML tag '${explicit}' (ruamel.yaml's own types)`);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    const order: string[] = [];
    for (const pair of node.items) {
      const k = value12(pair.key, depth + 1, doc);
      if (k !== null && typeof k === 'object') throw new PromptflowUnsupported('a YAML mapping key that is not a scalar');
      const key = k instanceof PyFloat ? String(k.v) : String(k);
      if (typeof k !== 'string') throw new PromptflowUnsupported('a YAML mapping key that is not a string (ruamel.yaml keeps its type)');
      order.push(key);
      Object.defineProperty(out, key, { value: value12(pair.value, depth + 1, doc), enumerable: true, writable: true, configurable: true });
    }
    if (order.some((k) => /^(?:0|[1-9][0-9]*)$/.test(k))) setKeyOrder(out, order);
    return out;
  }
  if (isSeq(node)) return node.items.map((x) => value12(x, depth + 1, doc));
  if (isAlias(node)) return value12(node.resolve(doc), depth + 1, doc);
  if (!isScalar(node)) return null;
  const v = node.value;
  const src = typeof node.source === 'string' ? node.source : String(v);
  if (node.type !== 'PLAIN') return typeof v === 'string' ? v : src;
  if (typeof v === 'number') {
    if (/^[-+]?(?:0|[1-9][0-9_]*|0[0-7_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$/.test(src) && !/[.eE]/.test(src)) {
      const clean = src.replace(/_/g, '');
      if (!Number.isSafeInteger(v) && /^[-+]?[0-9]+$/.test(clean)) return BigInt(clean);
      return v;
    }
    return Number.isInteger(v) || !Number.isFinite(v) ? new PyFloat(v) : v;
  }
  if (typeof v === 'string' && /^[-+]?0b[01_]+$/.test(v)) {
    const neg = v.startsWith('-');
    const n = parseInt(v.replace(/^[-+]?0b/, '').replace(/_/g, ''), 2);
    return neg ? -n : n;
  }
  // ruamel.yaml reads a date or a timestamp (a datetime.date prints as written, its repr does not).
  if (typeof v === 'string' && /^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/.test(v)) throw new PromptflowUnsupported(`the YAML date '${v}' (ruamel.yaml makes a datetime of it)`);
  if (typeof v === 'string' && /^[-+]?[0-9][0-9_]*$/.test(v)) {
    // ruamel reads `1_000` as an integer.
    const n = Number(v.replace(/_/g, ''));
    return Number.isSafeInteger(n) ? n : BigInt(v.replace(/_/g, ''));
  }
  if (v instanceof Date) throw new PromptflowUnsupported(`the YAML timestamp '${src}' (ruamel.yaml reads a date)`);
  return v;
}

/**
 * `resolve_references`: a string that starts `${word:…}` (and has a `}` after) is an environment
 * variable (left as written when it is not set: the analysis never reads the environment) or a
 * file beside the template (`.json` / `.yaml` parsed, anything else its text; not resolved in turn).
 */
export function resolvePromptflowRefs(v: unknown, readFile: ((rel: string) => string | undefined) | undefined, env: ((name: string) => string | undefined) | undefined, parseJson: (text: string) => unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return v;
  if (typeof v === 'string') {
    const m = /^\$\{(\w+):([\s\S]*)\}/.exec(v);
    if (!m) return v;
    if (m[1] === 'env') return env?.(m[2]) ?? v;
    if (m[1] === 'file') {
      const rel = m[2];
      const text = rel.startsWith('/') || rel.split('/').includes('..') ? undefined : readFile?.(rel);
      if (text === undefined) {
        if (readFile) throw new PromptflowFailure('UserErrorException', `Cannot find the reference file ${rel}.`, 'front-matter');
        return v;
      }
      if (/\.json$/i.test(rel)) {
        try {
          return parseJson(text);
        } catch (e) {
          throw new PromptflowFailure('JSONDecodeError', e instanceof Error ? e.message : String(e), 'front-matter');
        }
      }
      if (/\.ya?ml$/i.test(rel)) return promptflowYaml(text);
      return text;
    }
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => resolvePromptflowRefs(x, readFile, env, parseJson, depth + 1));
  if (isRecord(v)) {
    const entries = orderedEntries(v);
    const out: Record<string, unknown> = {};
    for (const [k, x] of entries) out[k] = resolvePromptflowRefs(x, readFile, env, parseJson, depth + 1);
    return PY_KEY_ORDER in v ? setKeyOrder(out, entries.map((e) => e[0])) : out;
  }
  return v;
}

const MODEL_KEYS = ['api', 'configuration', 'parameters', 'response'];

/** `PromptyModelConfiguration(**configs["model"])` and its checks; the model's api. */
export function promptflowModel(configs: Record<string, unknown>): string {
  const model = configs.model ?? {};
  if (!isRecord(model)) throw new PromptflowFailure('TypeError', 'PromptyModelConfiguration() argument after ** must be a mapping', 'model');
  const unknown = Object.keys(model).find((k) => !MODEL_KEYS.includes(k));
  if (unknown !== undefined) throw new PromptflowFailure('TypeError', `PromptyModelConfiguration.__init__() got an unexpected keyword argument '${unknown}'`, 'model');
  const missing = ['configuration', 'parameters'].filter((k) => !(k in model));
  if (missing.length === 2) throw new PromptflowFailure('TypeError', "PromptyModelConfiguration.__init__() missing 2 required positional arguments: 'configuration' and 'parameters'", 'model');
  if (missing.length === 1) throw new PromptflowFailure('TypeError', `PromptyModelConfiguration.__init__() missing 1 required positional argument: '${missing[0]}'`, 'model');
  const conf = model.configuration;
  if (isRecord(conf) && conf.connection && Object.keys(conf).some((k) => /key|endpoint|api_base|base_url|organization|api_version|token_provider/i.test(k))) throw new PromptflowFailure('InvalidConnectionError', 'Cannot configure model config and connection in configuration at the same time.', 'model');
  return typeof model.api === 'string' ? model.api : 'chat';
}

/** `load_inputs_from_sample`: an inline mapping, or a `.json` file (read beside the template). */
/** Python's truth of a YAML value. */
function pyFalsy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof PyFloat) return v.v === 0;
  if (isRecord(v)) return Object.keys(v).length === 0;
  return false;
}

function sampleValues(sample: unknown, readFile: ((rel: string) => string | undefined) | undefined, parseJson: (text: string) => unknown): Record<string, unknown> {
  if (pyFalsy(sample)) return {};
  if (isRecord(sample)) return sample;
  if (typeof sample === 'string' && /\.json$/i.test(sample)) {
    const text = readFile?.(sample.replace(/^file:/, ''));
    if (text === undefined) throw new PromptflowFailure('InvalidSampleError', `Cannot find sample file ${sample}.`, 'front-matter');
    const v: unknown = parseJson(text);
    if (!isRecord(v)) throw new PromptflowUnsupported('a sample file that is not a JSON object');
    return v;
  }
  throw new PromptflowFailure('InvalidSampleError', 'Only dict and json file are supported as sample in prompty.', 'front-matter');
}

/**
 * `Prompty._resolve_inputs`: without any value the sample gives them; only the inputs the file
 * declares reach the template (`inputs:`, else the sample's names), each from the values or its
 * `default`; a declared input with neither is `MissingRequiredInputError`.
 */
export function promptflowValues(configs: Record<string, unknown>, given: Record<string, unknown>, readFile: ((rel: string) => string | undefined) | undefined, parseJson: (text: string) => unknown): Record<string, unknown> {
  let values = given;
  const sample = configs.sample;
  if (Object.keys(values).length === 0 && !pyFalsy(sample)) values = sampleValues(sample, readFile, parseJson);
  const declared = isRecord(configs.inputs) && Object.keys(configs.inputs).length ? configs.inputs : !pyFalsy(sample) ? Object.fromEntries(orderedEntries(sampleValues(sample, readFile, parseJson)).map(([k]) => [k, {}])) : {};
  const out: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, spec] of Object.entries(declared)) {
    const hasDefault = isRecord(spec) && 'default' in spec;
    if (!Object.prototype.hasOwnProperty.call(values, name) && !hasDefault) {
      missing.push(name);
      continue;
    }
    out[name] = Object.prototype.hasOwnProperty.call(values, name) ? values[name] : (spec as Record<string, unknown>).default ?? null;
  }
  // build_messages(prompt, images, image_detail, **values): a value of one of those names collides.
  const clash = Object.keys(out).find((k) => k === 'prompt' || k === 'images' || k === 'image_detail');
  if (clash !== undefined) throw new PromptflowFailure('TypeError', `promptflow.core._prompty_utils.build_messages() got multiple values for keyword argument '${clash}'`, 'inputs');
  if (missing.length) throw new PromptflowFailure('MissingRequiredInputError', `Missing required inputs: [${missing.map((m) => `'${m}'`).join(', ')}]`, 'inputs');
  for (const v of Object.values(out)) if (typeof v === 'string' && /^data:image\/[^;]*;(?:path|base64|url)\s*:/i.test(v)) throw new PromptflowUnsupported("an image input ('data:image/…;path: …'): promptflow makes an Image object of it");
  return out;
}

/** `preprocess_template_string`: `![image]({{ x }})` becomes `{{ x }}` on a line of its own. */
export function promptflowPreprocess(template: string): string {
  const re = /!\[(\s*image\s*)\]\(\{\{(\s*[^\s{}]+\s*)\}\}\)/g;
  let out = template;
  for (const m of [...template.matchAll(re)]) out = out.split(`![${m[1]}]({{${m[2]}}})`).join(`\n{{${m[2]}}}\n`);
  return out;
}

const ROLES = ['system', 'user', 'assistant', 'function', 'tool'];
const WS = `[${PY_WS}]`;
const ROLE_WORD = `(${ROLES.map((r) => [...r].map((c) => `[${c.toUpperCase()}${c}]`).join('')).join('|')})`;
/** `(?i)^\s*#?\s*(system|user|assistant|function|tool)\s*:\s*\n`, multiline. */
const SEPARATOR = new RegExp(`^${WS}*#?${WS}*${ROLE_WORD}${WS}*:${WS}*\\n`, 'gm');

/** A stand-in for promptflow's uuid4 per escaped role word (36 characters, as a uuid). */
function token(i: number): string {
  return `e5ca9e00-0000-4000-8000-${(0xe5ca9e000000 + i).toString(16).padStart(12, '0')}`;
}
export const ESCAPE_TOKEN = /e5ca9e00-0000-4000-8000-e5ca9e[0-9a-f]{6}/gi;

/**
 * `build_escape_dict` / `escape_roles`: the role words of role lines inside string values (and
 * strings of list values) are swapped for uuids while the template renders, every occurrence of
 * the word as written; lists of mappings (chat history) are not escaped.
 */
export function escapeRoles(values: Record<string, unknown>): { values: Record<string, unknown>; escapes: Map<string, string> } {
  const escapes = new Map<string, string>();
  const scan = (s: string): void => {
    // The pattern's search (re.findall) restarts after each match, as a global regex does.
    const re = new RegExp(`(?:^|(?<=\\n))${WS}*#?${WS}*${ROLE_WORD}${WS}*:${WS}*\\n`, 'g');
    for (const m of s.matchAll(re)) if (!escapes.has(m[1])) escapes.set(m[1], token(escapes.size));
  };
  // Only strings are escaped: a list (chat history) is passed as it is.
  for (const v of Object.values(values)) if (typeof v === 'string') scan(v);
  if (!escapes.size) return { values, escapes };
  const esc = (s: string): string => {
    for (const [role, t] of escapes) s = s.split(role).join(t);
    return s;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    out[k] = typeof v === 'string' ? esc(v) : v;
  }
  return { values: out, escapes };
}

export function unescapeRoles(s: string, escapes: Map<string, string>): string {
  for (const [role, t] of escapes) s = s.split(t).join(role);
  return s;
}

function toContent(chunk: string): string {
  return pyStrip(chunk, null, true, true);
}

/**
 * `parse_chat`: the text split at role lines; text before the first role line (not blank) is an
 * invalid role; `name:`/`content:` blocks give a message's name, a tool message needs
 * `tool_call_id:`/`content:`, an assistant's `tool_calls:` list is not reproduced.
 */
export function parsePromptflowChat(text: string, escapes: Map<string, string>): EngineMessage[] {
  const chunks: string[] = [];
  let last = 0;
  SEPARATOR.lastIndex = 0;
  for (const m of text.matchAll(SEPARATOR)) {
    chunks.push(text.slice(last, m.index), m[1]);
    last = m.index + m[0].length;
  }
  chunks.push(text.slice(last));
  type Msg = { role: string; name?: string; tool_call_id?: string; content?: string };
  const list: Msg[] = [];
  for (const chunk of chunks) {
    const lastMsg = list[list.length - 1];
    if (lastMsg && lastMsg.role === 'tool' && lastMsg.content === undefined) {
      const t = /\n*#{0,2}\s*tool_call_id\s*:\s*\n+\s*(\S+)\s*\n*#{0,2}\s*content\s*:\s*\n?([\s\S]*)/.exec(chunk);
      if (!t) throw new PromptflowFailure('ChatAPIToolRoleInvalidFormat', "Failed to parse tool role prompt. Please make sure the prompt follows the format: 'tool_call_id:\\ntool_call_id\\ncontent:\\ntool_content'.");
      lastMsg.tool_call_id = t[1];
      lastMsg.content = toContent(t[2]);
      continue;
    }
    if (lastMsg && lastMsg.role === 'assistant' && /\n*#{0,2}\s*tool_calls\s*:\s*\n+\s*(\[[\s\S]*?\])/.test(chunk)) throw new PromptflowUnsupported("an assistant's 'tool_calls:' block (promptflow evaluates it as a Python expression)");
    if (lastMsg && lastMsg.content === undefined) {
      const n = /\n*#{0,2}\s*name\s*:\s*\n+\s*(\S+)\s*\n*#{0,2}\s*content\s*:\s*\n?([\s\S]*)/.exec(chunk);
      if (!n) {
        if (lastMsg.role === 'function') throw new PromptflowFailure('ChatAPIFunctionRoleInvalidFormat', "Failed to parse function role prompt. Please make sure the prompt follows the format: 'name:\\nfunction_name\\ncontent:\\nfunction_content'.");
        lastMsg.content = toContent(chunk);
      } else {
        lastMsg.name = n[1];
        lastMsg.content = toContent(n[2]);
      }
      continue;
    }
    if (pyStrip(chunk, null, true, true) === '') continue;
    const role = pyStrip(chunk, null, true, true).toLowerCase();
    if (!ROLES.includes(role)) {
      const shown = unescapeRoles(role, escapes).slice(0, 60);
      throw new PromptflowFailure('ChatAPIInvalidRoleError', `The Chat API requires a specific format for prompt definition, and the prompt should include separate lines as role delimiters: ${ROLES.map((r) => `'${r}:\\n'`).join(',')}. Current parsed role '${shown}' does not meet the requirement.`);
    }
    list.push({ role });
  }
  return list.map((m) => {
    const parts: EnginePart[] = [{ type: 'text', text: unescapeRoles(m.content ?? '', escapes) }];
    const out: EngineMessage = { role: m.role, parts };
    const meta: Record<string, unknown> = {};
    if (m.name !== undefined) meta.name = unescapeRoles(m.name, escapes);
    if (m.tool_call_id !== undefined) meta.tool_call_id = unescapeRoles(m.tool_call_id, escapes);
    if (Object.keys(meta).length) out.metadata = meta;
    return out;
  });
}
