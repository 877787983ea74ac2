/**
 * The dotprompt engine: renders a `.prompt` file as Google's `dotprompt` (npm 1.1.2, the runtime
 * Genkit uses) renders it, `new Dotprompt().render(source, data, { input: { default } })`, and
 * returns its `RenderedPrompt.messages` in the engine vocabulary (types.ts).
 *
 * It is a synchronous port of dotprompt's own pipeline over the real Handlebars 4.7.9:
 *   front matter / body split (`extractFrontmatterAndBody`, body trimmed when there is front matter),
 *   Handlebars with dotprompt's helpers and compile options (`knownHelpersOnly`, `noEscape`),
 *   data `{...input.default, ...input}` with `@metadata`/`@state`/`@auth`… as dotprompt passes them,
 *   then `toMessages` (role/history markers) and `insertHistory`.
 * dotprompt's own code is mirrored line for line where it decides anything (marker regexes, the
 * whitespace-only filter, `startsWith` tests, `split(' ')` of media/section markers), so its quirks
 * are reproduced rather than fixed: see the notes on each function.
 *
 * Differences from dotprompt, all reported as `unsupported-feature` at their span instead of being
 * silent: `@metadata.prompt` (dotprompt's resolved front matter incl. Picoschema — we pass a
 * best-effort value), front matter keys whose namespace is an `Object.prototype` member (dotprompt
 * writes into built-ins there), and the work limits (source size, nesting depth, partial depth,
 * loop iterations / output size, call stack).
 *
 * Isolation: one private Handlebars environment (`Handlebars.create()`), never the global one;
 * Handlebars' prototype-access restrictions stay at their defaults; partials come only from the
 * caller; the `log` helper is silenced (Handlebars' would write to stdout, the LSP channel); the
 * built-in `each` is wrapped only to count iterations for the work limits.
 */
// @ts-expect-error -- Handlebars ships no typings for its CommonJS build; the shape used is declared below.
import HandlebarsCjs from 'handlebars/dist/cjs/handlebars.js';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { redactQuoted } from '../../text/secrets';
import { dotpromptBodyLimit } from '../../text/nesting';
import type { Span } from '../../types';
import type { EngineIssue, EngineMessage, EnginePart, EngineResult } from '../engineTypes';
import { BoundedCache, cachedOrThrow } from '../../cache';

export interface DotpromptData {
  /** Template variables. */
  input: Record<string, unknown>;
  /** `@state`, `@auth`, … (dotprompt's `data.context`, spread into Handlebars' data frame). */
  context?: Record<string, unknown>;
  /** Conversation history (dotprompt's `data.messages`). */
  messages?: Array<{ role: string; content: Array<{ text: string }> }>;
  docs?: unknown;
}

export interface DotpromptOptions {
  /** Partial sources by name, for {{> name}} (the caller reads _name.prompt / name.prompt files). */
  partials?: Record<string, string>;
  /** front matter input.default, applied under data.input as Genkit does ({...inputDefault, ...input}). */
  inputDefault?: Record<string, unknown>;
  /**
   * Helpers the application registers in code (`defineHelper`, Genkit's `ai.defineHelper`): known
   * to the compiler as dotprompt knows them, but their code is not ours to run, so each call prints
   * a placeholder (`placeholderText`) and the result is marked an estimate.
   */
  codeHelpers?: readonly string[];
  /** Partials the application registers in code (`definePartial`) whose source is not given: a placeholder each. */
  codePartials?: readonly string[];
  /**
   * Render what the application may define in code instead of failing as a bare dotprompt would:
   * a helper nobody declared is an `unknown-helper` issue and prints a placeholder, a partial that
   * is neither given nor declared prints a placeholder (the caller reports it where it looked).
   */
  lenient?: boolean;
}

/** What a helper or partial registered in code prints in our render: visible, and never a marker dotprompt reads. */
export function placeholderText(kind: 'helper' | 'partial', name: string): string {
  return kind === 'helper' ? `\u27e6${name}\u27e7` : `\u27e6> ${name}\u27e7`;
}

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

/** Sources (template or partial) longer than this are not compiled. */
export const MAX_SOURCE_LENGTH = 1 << 20;
/** Nesting of blocks and sub-expressions (an `{{else if}}` chain does not nest). */
export const MAX_NESTING = 64;
/** Nesting including `{{else if}}` chains (the compiler recurses through them too). */
export const MAX_TOTAL_NESTING = 256;
/** Partials invoked inside partials. */
export const MAX_PARTIAL_DEPTH = 64;
/** Loop iterations plus partial invocations in one render. */
export const MAX_STEPS = 200_000;
/** Characters produced by loop bodies and partials in one render (nested output counts per level). */
export const MAX_OUTPUT = 32 * 1024 * 1024;
const CACHE_SIZE = 32;

// ---------------------------------------------------------------------------
// The Handlebars environment
// ---------------------------------------------------------------------------

interface Loc {
  start: { line: number; column: number };
  end: { line: number; column: number };
}
interface HbNode {
  type: string;
  loc?: Loc;
  [key: string]: unknown;
}
type HbTemplate = (context: unknown, options?: Record<string, unknown>) => string;
type HelperFn = (this: unknown, ...args: any[]) => unknown;
interface HelperOptions {
  fn?: (context: unknown, options?: unknown) => string;
  inverse: (context: unknown, options?: unknown) => string;
  hash: Record<string, unknown>;
}
interface HbEnv {
  create(): HbEnv;
  registerHelper(name: string, fn: HelperFn): void;
  helpers: Record<string, HelperFn>;
  SafeString: new (s: unknown) => object;
  parseWithoutProcessing(input: string): HbNode;
  parse(input: HbNode, options: object): HbNode;
  Compiler: new () => { compile(ast: HbNode, options: object): unknown };
  JavaScriptCompiler: new () => { compile(environment: unknown, options: object, context: undefined, asObject: true): unknown };
  template(spec: unknown): HbTemplate;
  Parser: { lexer?: { yylloc?: { first_line: number; last_line: number; first_column: number; last_column: number } } };
}

const hb: HbEnv = (HandlebarsCjs as HbEnv).create();

/**
 * The body parsed by Handlebars' own parser (the grammar of the runtime dotprompt renders with),
 * whitespace control applied as its compiler applies it. Throws Handlebars' parse errors, located
 * (`hash.loc`) even where its parser says where only in the message.
 */
export function parseHandlebars(source: string): unknown {
  try {
    return hb.parse(hb.parseWithoutProcessing(source), {});
  } catch (e) {
    // Its parser's errors say where only in the message; the lexer knows where it stopped.
    const l = hb.Parser.lexer?.yylloc;
    if (l && e && typeof e === 'object' && !('hash' in e) && !('lineNumber' in e)) {
      Object.assign(e, { hash: { loc: { first_line: l.first_line, first_column: l.first_column, last_line: l.last_line, last_column: l.last_column } } });
    }
    throw e;
  }
}

/**
 * Processed trees (or the parse error) by body source: the one parse of a body, shared by the slot
 * body reader (body.ts reads the tree) and the compiler (which compiles a copy: Handlebars' compiler
 * rewrites literal paths in place). A keystroke parses its new body once, not once per reader.
 */
const trees = new BoundedCache<string, { value: HbNode } | { error: unknown }>(CACHE_SIZE, 4 * MAX_SOURCE_LENGTH);

/** The body's processed tree, parsed once per source (see `trees`). Throws the parse error. Never mutate it. */
export function bodyTree(source: string): unknown {
  return cachedOrThrow(trees, source, () => parseHandlebars(source) as HbNode, source.length);
}
const { SafeString } = hb;

// dotprompt's helpers (src/helpers.ts), same semantics.
function json(serializable: unknown, options: { hash: { indent?: unknown } }): object {
  return new SafeString(JSON.stringify(serializable, null, (options.hash.indent as number) || 0));
}
function role(role: unknown): object {
  return new SafeString(`<<<dotprompt:role:${role}>>>`);
}
function history(): object {
  return new SafeString('<<<dotprompt:history>>>');
}
function section(name: unknown): object {
  return new SafeString(`<<<dotprompt:section ${name}>>>`);
}
function media(options: { hash: { url?: unknown; contentType?: unknown } }): object {
  return new SafeString(`<<<dotprompt:media:url ${options.hash.url}${options.hash.contentType ? ` ${options.hash.contentType}` : ''}>>>`);
}
function ifEquals(this: unknown, arg1: unknown, arg2: unknown, options: HelperOptions): unknown {
  return arg1 === arg2 ? options.fn!(this) : options.inverse(this);
}
function unlessEquals(this: unknown, arg1: unknown, arg2: unknown, options: HelperOptions): unknown {
  return arg1 !== arg2 ? options.fn!(this) : options.inverse(this);
}
const DOTPROMPT_HELPERS: Record<string, HelperFn> = { history, ifEquals, json, media, role, section, unlessEquals };
for (const [name, fn] of Object.entries(DOTPROMPT_HELPERS)) hb.registerHelper(name, fn);

// `log` prints nothing either way; Handlebars' own writes to the console (stdout for level info).
hb.registerHelper('log', () => undefined);

// `each` (also reached by `{{#list}}` sections) counts its iterations and their output.
const builtinEach = hb.helpers.each;
hb.registerHelper('each', function (this: unknown, context: unknown, options: HelperOptions | undefined) {
  if (options && typeof options.fn === 'function') {
    const fn = options.fn;
    const counted = function (this: unknown, ...args: [unknown, unknown?]): string {
      step();
      return produced(fn.apply(this, args));
    };
    // keep the program's own properties (program, depth, blockParams, inline partials)
    options = Object.assign({}, options, { fn: Object.assign(counted, fn) });
  }
  return builtinEach.call(this, context, options);
});

const COMPILE_OPTIONS = {
  knownHelpers: Object.fromEntries(Object.keys(DOTPROMPT_HELPERS).map((k) => [k, true])),
  knownHelpersOnly: true,
  noEscape: true,
};

/** Helpers every Handlebars compiler knows (its compiler's own list) and dotprompt's: never placeholders. */
const BUILTIN_HELPERS = new Set(['helperMissing', 'blockHelperMissing', 'each', 'if', 'unless', 'with', 'log', 'lookup', ...Object.keys(DOTPROMPT_HELPERS)]);

/**
 * Handlebars' `compile` without its laziness (so errors surface here): the same steps as its
 * compileInput. `processed` says the tree already had whitespace control applied (bodyTree): it is
 * compiled as it is (applying it twice strips twice).
 */
function compileAst(ast: HbNode, extraHelpers: readonly string[] = [], processed = false): HbTemplate {
  const knownHelpers: Record<string, boolean> = { ...COMPILE_OPTIONS.knownHelpers };
  for (const name of extraHelpers) knownHelpers[name] = true;
  const options: Record<string, unknown> = { ...COMPILE_OPTIONS, knownHelpers, data: true };
  const tree = processed ? ast : hb.parse(ast, options);
  const environment = new hb.Compiler().compile(tree, options);
  const spec = new hb.JavaScriptCompiler().compile(environment, options, undefined, true);
  return hb.template(spec);
}

// ---------------------------------------------------------------------------
// Per-render state (renders are synchronous and never nest)
// ---------------------------------------------------------------------------

class LimitError extends Error {}

interface RenderState {
  steps: number;
  output: number;
  partialStack: string[];
  /** The partial chain the first failing error was thrown in. */
  errorChain?: string[];
  /** `@metadata` uses met in partials (the main template's are known before rendering). */
  partialMetadataUses: string[];
  /** Placeholders printed (`helper:<name>`, `partial:<name>`), with the partial chain of the first one. */
  placeholders: Map<string, string[]>;
  /** Undeclared helpers first met in a partial, with the partial chain (lenient only). */
  unknownInPartials: Map<string, string[]>;
}
let active: RenderState | undefined;

function step(): void {
  if (active && ++active.steps > MAX_STEPS) throw new LimitError(`the render takes more than ${MAX_STEPS} loop iterations and partial calls`);
}
function produced<T>(out: T): T {
  if (active && typeof out === 'string' && (active.output += out.length) > MAX_OUTPUT) {
    throw new LimitError(`the render produces more than ${MAX_OUTPUT} characters`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Front matter (dotprompt's parse.ts)
// ---------------------------------------------------------------------------

const RESERVED_METADATA_KEYWORDS = ['config', 'description', 'ext', 'input', 'model', 'name', 'output', 'raw', 'toolDefs', 'tools', 'variant', 'version'];

const isWs = (s: string, i: number): boolean => i < s.length && /\s/.test(s[i]);
const isNl = (s: string, i: number): boolean => s[i] === '\n' || s[i] === '\r';

/**
 * Exactly `source.match(/^---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)([\s\S]*)$/)`
 * (dotprompt's FRONTMATTER_AND_BODY_REGEX), in linear time: the regex backtracks quadratically on
 * a long blank run after the opening `---` when there is no closing fence.
 */
export function matchFrontMatter(source: string): { frontmatter: string; frontmatterStart: number; body: string; bodyStart: number } | undefined {
  if (!source.startsWith('---')) return undefined;
  const n = source.length;
  // Closing fences: `e` is the line break before `---`; the body starts after the last line break
  // of the whitespace run that follows the `---`.
  const closings: number[] = [];
  const bodyStarts: number[] = [];
  for (let e = source.indexOf('---', 4); e !== -1; e = source.indexOf('---', e + 1)) {
    let runEnd = e + 3;
    while (isWs(source, runEnd)) runEnd++;
    let last = runEnd - 1;
    while (last >= e + 3 && !isNl(source, last)) last--;
    if (last < e + 3) continue;
    const before = e - 1;
    if (source[before] === '\n' && source[before - 1] === '\r') {
      closings.push(before - 1, before);
      bodyStarts.push(last + 1, last + 1);
    } else if (isNl(source, before)) {
      closings.push(before);
      bodyStarts.push(last + 1);
    }
  }
  let r = 3;
  while (isWs(source, r)) r++;
  for (let s = r - 1; s >= 3; s--) {
    const starts: number[] = [];
    if (source[s] === '\r' && source[s + 1] === '\n') starts.push(s + 2);
    if (isNl(source, s)) starts.push(s + 1);
    for (const g of starts) {
      // first closing e >= g
      let lo = 0;
      let hi = closings.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (closings[mid] < g) lo = mid + 1;
        else hi = mid;
      }
      if (lo < closings.length) {
        const bodyStart = Math.min(bodyStarts[lo], n);
        return { frontmatter: source.slice(g, closings[lo]), frontmatterStart: g, body: source.slice(bodyStart), bodyStart };
      }
    }
  }
  return undefined;
}

interface PreparedSource {
  /** The Handlebars template dotprompt compiles. */
  template: string;
  /** Offset of `template` in the source. */
  offset: number;
  /** Parsed front matter (when it parsed). */
  raw?: Record<string, unknown>;
  issues: EngineIssue[];
}

const leadingWs = (s: string): number => s.length - s.trimStart().length;

/**
 * `yaml.parse(text)` as dotprompt calls it, duplicate keys included (they throw), in linear time:
 * the yaml package checks duplicates by scanning every earlier key, which takes seconds on a front
 * matter of 35,000 keys, so the check is a set per mapping here.
 */
function parseFrontMatterYaml(text: string): unknown {
  const doc = parseDocument(text, { logLevel: 'error', uniqueKeys: false });
  if (doc.errors.length) throw doc.errors[0];
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) throw new Error('Map keys must be unique');
        seen.add(key);
        stack.push(pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) stack.push(item);
  }
  return doc.toJS({ maxAliasCount: 100 });
}

/** Parsed front matters (or their error) by text: an edit of the body, or a thousand templates of one header, parse it once. */
const frontMatters = new BoundedCache<string, { value: unknown } | { error: unknown }>(CACHE_SIZE, MAX_SOURCE_LENGTH);

/** `parseFrontMatterYaml`, once per text. The value is shared: nothing here changes it (prepareSource copies its top level). */
function frontMatterYaml(text: string): unknown {
  return cachedOrThrow(frontMatters, text, () => parseFrontMatterYaml(text), text.length);
}

/** dotprompt's parseDocument, as far as rendering depends on it. */
function prepareSource(source: string): PreparedSource {
  const match = matchFrontMatter(source);
  if (!match || !match.frontmatter) return { template: source, offset: 0, issues: [] };
  const { frontmatter, frontmatterStart: fmStart, body, bodyStart } = match;
  let parsed: unknown;
  try {
    parsed = frontMatterYaml(frontmatter);
  } catch {
    // dotprompt logs the error and renders the whole file (front matter included), trimmed.
    return { template: source.trim(), offset: leadingWs(source), issues: [] };
  }
  const issues: EngineIssue[] = [];
  const raw: Record<string, unknown> = { ...(parsed as object) };
  for (const key in raw) {
    if (RESERVED_METADATA_KEYWORDS.includes(key) || !key.includes('.')) continue;
    const ns = key.substring(0, key.lastIndexOf('.'));
    if (ns in Object.prototype) {
      const at = Math.max(0, frontmatter.indexOf(key));
      issues.push({
        rule: 'unsupported-feature',
        message: `dotprompt stores the namespaced front matter key "${key}" into the built-in Object.prototype.${ns}; Context Lens does not reproduce that`,
        span: { start: fmStart + at, end: fmStart + at + key.length },
      });
    }
  }
  // dotprompt's resolveTools: `tools.map(…)`, and `toolDefs.push(…)` for names it finds in its
  // (empty, plain-object) tool registry, which are exactly the Object.prototype members.
  const { tools, toolDefs } = raw;
  const toolsFail = tools && !Array.isArray(tools);
  const toolDefsFail = Array.isArray(tools) && toolDefs && !Array.isArray(toolDefs) && tools.some((t) => String(t) in Object.prototype);
  if (toolsFail || toolDefsFail) {
    const key = toolsFail ? 'tools' : 'toolDefs';
    const at = Math.max(0, frontmatter.indexOf(key));
    return {
      template: '',
      offset: bodyStart,
      issues: [{ rule: 'template-invalid', message: toolsFail ? 'dotprompt fails on a front matter `tools` that is not a list' : 'dotprompt fails on a front matter `toolDefs` that is not a list', span: { start: fmStart + at, end: fmStart + at + key.length } }],
    };
  }
  const template = body.trim();
  return { template, offset: bodyStart + leadingWs(body), raw, issues };
}

/** A best-effort `@metadata.prompt` (dotprompt's resolved metadata without tools and Picoschema resolution). */
function promptMetadata(raw: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ext: {}, metadata: {}, config: {} };
  if (!raw) return out;
  const ext: Record<string, Record<string, unknown>> = {};
  for (const key of Object.keys(raw)) {
    if (RESERVED_METADATA_KEYWORDS.includes(key)) out[key] = raw[key];
    else if (key.includes('.')) {
      const dot = key.lastIndexOf('.');
      const ns = key.substring(0, dot);
      if (ns in Object.prototype) continue;
      (ext[ns] ??= {})[key.substring(dot + 1)] = raw[key];
    }
  }
  return { ...out, raw, ext, config: { ...((out.config as object) || {}) } };
}

// ---------------------------------------------------------------------------
// Static checks over the Handlebars AST
// ---------------------------------------------------------------------------

interface Analysis {
  /** Depth problem, if any. */
  tooDeep?: { message: string; loc?: Loc };
  /** Partial calls; `block` for `{{#> name}}…{{/name}}`, which renders its own content when the partial is missing. */
  partials: Array<{ name: string; loc?: Loc; block: boolean }>;
  blocks: Array<{ name: string; params: number; loc?: Loc }>;
  /** Data paths that reach dotprompt's `@metadata` (beyond `docs` and `messages`). */
  metadataUses: Array<{ original: string; loc?: Loc }>;
  /**
   * Calls that may reach a helper, as Handlebars' compiler classifies them (`classifySexpr`): a
   * simple id that is not a block parameter; `definite` when it is a helper whatever is registered
   * (a sub-expression, or params / hash), else only when a helper of that name is known.
   */
  helperCalls: Array<{ name: string; definite: boolean; loc?: Loc }>;
  /**
   * The template hands a value to something that reads its text: a helper's parameter or hash
   * (other than the one value of `each`, `with`, `if` and `unless`, which only loop or test
   * truthiness), a sub-expression, a partial or decorator, or a property lookup that measures or
   * indexes (`x.length`, `x.[0]`). When false, a render with marked strings (the assembly's slot
   * attribution) equals the render of the plain values once the marks are removed.
   */
  readsValues: boolean;
}

/** Blocks that only loop over or test their one value (Handlebars' own). */
const PRINTING_BLOCKS = new Set(['each', 'with', 'if', 'unless']);

const NESTING = new Set(['BlockStatement', 'SubExpression', 'PartialBlockStatement', 'DecoratorBlock']);

function analyze(ast: HbNode): Analysis {
  const result: Analysis = { partials: [], blocks: [], metadataUses: [], helperCalls: [], readsValues: false };
  const stack: Array<{ node: unknown; nest: number; total: number; chained: boolean; params: readonly string[] }> = [{ node: ast, nest: 0, total: 0, chained: false, params: [] }];
  while (stack.length) {
    const { node, nest: outerNest, total: outerTotal, chained, params: outerParams } = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], nest: outerNest, total: outerTotal, chained, params: outerParams });
      continue;
    }
    if (!node || typeof node !== 'object') continue;
    const n = node as HbNode;
    // Block parameters (`as |x|`) are in scope inside their program; a call on one is never a helper.
    const blockParams = n.type === 'Program' && Array.isArray(n.blockParams) ? (n.blockParams as string[]) : [];
    const params = blockParams.length ? [...outerParams, ...blockParams] : outerParams;
    let nest = outerNest;
    let total = outerTotal;
    if (NESTING.has(n.type)) {
      total++;
      if (!(chained && n.type === 'BlockStatement')) nest++;
      if (!result.tooDeep && nest > MAX_NESTING) result.tooDeep = { message: `blocks and sub-expressions nest deeper than ${MAX_NESTING} levels`, loc: n.loc };
      if (!result.tooDeep && total > MAX_TOTAL_NESTING) result.tooDeep = { message: `blocks and {{else if}} chains nest deeper than ${MAX_TOTAL_NESTING} levels`, loc: n.loc };
      if (result.tooDeep) return result;
    }
    const path = n.path as HbNode | undefined;
    if ((n.type === 'BlockStatement' || n.type === 'MustacheStatement' || n.type === 'SubExpression') && path?.type === 'PathExpression') {
      // Handlebars' simpleId: one part, not scoped (`this`, `./`), no `../`.
      const parts = path.parts as string[];
      const simple = parts.length === 1 && !/^\.|this\b/.test(String(path.original)) && !path.depth;
      const blockParam = simple && params.includes(parts[0]);
      const definite = !blockParam && (n.type === 'SubExpression' || (n.params as unknown[]).length > 0 || !!n.hash);
      // A definite call on a longer path (`{{a.b x}}`) is the helper named by its first part, too.
      if (parts.length > 0 && (definite || (simple && !blockParam))) result.helperCalls.push({ name: parts[0], definite, loc: n.loc });
    }
    if (!result.readsValues) result.readsValues = readsValues(n);
    if (n.type === 'BlockStatement' || n.type === 'MustacheStatement') {
      if (path?.type === 'PathExpression') result.blocks.push({ name: String(path.original), params: (n.params as unknown[]).length, loc: n.loc });
    } else if (n.type === 'PartialStatement' || n.type === 'PartialBlockStatement') {
      const name = n.name as HbNode;
      if (name.type !== 'SubExpression') result.partials.push({ name: String(name.original), loc: n.loc, block: n.type === 'PartialBlockStatement' });
    } else if (n.type === 'PathExpression' && n.data) {
      const parts = n.parts as string[];
      let i = 0;
      while (parts[i] === '_parent') i++;
      const reachesFrame = i === parts.length && (i > 0 || (n.depth as number) > 0 || parts.length === 0);
      const reachesMetadata = parts[i] === 'metadata' && parts[i + 1] !== 'docs' && parts[i + 1] !== 'messages';
      if (reachesFrame || reachesMetadata) result.metadataUses.push({ original: String(n.original), loc: n.loc });
    }
    // The body of a chained inverse program is the `{{else if}}` block.
    const chainedBody = n.type === 'Program' && n.chained === true;
    for (const key of Object.keys(n)) {
      if (key === 'loc') continue;
      const child = n[key];
      if (child && typeof child === 'object') stack.push({ node: child, nest, total, chained: chainedBody && key === 'body', params });
    }
  }
  return result;
}

/** Whether this one node reads the text of a value (see `Analysis.readsValues`). */
function readsValues(n: HbNode): boolean {
  switch (n.type) {
    case 'SubExpression':
    case 'PartialStatement':
    case 'PartialBlockStatement':
    case 'Decorator':
    case 'DecoratorBlock':
      return true;
    case 'PathExpression':
      return (n.parts as unknown[]).some((p) => p === 'length' || (typeof p === 'string' && /^\d+$/.test(p)));
    case 'MustacheStatement':
    case 'BlockStatement': {
      const params = n.params as HbNode[];
      const pairs = ((n.hash as HbNode | undefined)?.pairs as HbNode[] | undefined) ?? [];
      const values = [...params, ...pairs.map((p) => p.value as HbNode)].filter((v) => v.type === 'PathExpression' || v.type === 'SubExpression');
      if (!values.length) return false;
      const path = n.path as HbNode;
      const name = path.type === 'PathExpression' && (path.parts as unknown[]).length === 1 ? String(path.original) : undefined;
      return !(n.type === 'BlockStatement' && name !== undefined && PRINTING_BLOCKS.has(name) && params.length === 1 && !pairs.length);
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------
// Compiled templates, cached by (source, partials, helpers registered in code)
// ---------------------------------------------------------------------------

interface Compiled {
  prepared: PreparedSource;
  analysis?: Analysis;
  template?: HbTemplate;
  /** The template's text pieces, which its compiled code reads from `@CONTENT_KEY` (`contentAsData`). */
  contents?: readonly string[];
  /** Issues that stop the render (parse/compile errors, limits). */
  fatal: EngineIssue[];
  partials?: Record<string, HbTemplate>;
  /** Helpers compiled as known that print a placeholder: the declared ones and, when lenient, the undeclared. */
  placeholderHelpers: readonly string[];
  /** Undeclared helpers the template calls (lenient only), with their first call. */
  unknownHelpers: ReadonlyMap<string, Loc | undefined>;
}

/** What decides a compile besides the source and the partials. */
interface CodeRegistered {
  helpers: readonly string[];
  partials: readonly string[];
  lenient: boolean;
}

/** Compiled templates by source, partials and declarations (least recently used first out). */
const cache = new BoundedCache<string, Compiled>(CACHE_SIZE);

function cacheKey(source: string, partials: Record<string, string> | undefined, code: CodeRegistered): string {
  const names = partials ? Object.keys(partials).sort() : [];
  return JSON.stringify([source, names.map((k) => [k, partials![k]]), code.helpers, code.partials, code.lenient]);
}

/** The helpers a source's calls need beyond the declared ones: undeclared definite calls (lenient only). */
function undeclaredHelpers(analysis: Analysis, code: CodeRegistered): Map<string, Loc | undefined> {
  const out = new Map<string, Loc | undefined>();
  if (!code.lenient) return out;
  for (const c of analysis.helperCalls) {
    if (c.definite && !BUILTIN_HELPERS.has(c.name) && !code.helpers.includes(c.name) && !out.has(c.name)) out.set(c.name, c.loc);
  }
  return out;
}

/** Offset into `text` of a Handlebars (jison) line (1-based) and column (0-based). */
function lineColOffset(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.slice(offset).search(/\r\n?|\n/);
    if (next === -1) return text.length;
    offset += next + (text[offset + next] === '\r' && text[offset + next + 1] === '\n' ? 2 : 1);
  }
  return Math.min(text.length, offset + column);
}

function locSpan(prepared: PreparedSource, loc: Loc | undefined): Span {
  const { template, offset } = prepared;
  if (!loc) return { start: offset, end: offset + template.length };
  const start = offset + lineColOffset(template, loc.start.line, loc.start.column);
  const end = offset + lineColOffset(template, loc.end.line, loc.end.column);
  return { start, end: Math.max(start, end) };
}

/** A Handlebars parse error's place (jison throws a plain Error; parseHandlebars attached where its lexer stopped). */
function parseErrorLoc(err: unknown): Loc | undefined {
  const l = (err as { hash?: { loc?: { first_line: number; first_column: number; last_line?: number; last_column?: number } } })?.hash?.loc;
  if (!l) return undefined;
  return { start: { line: l.first_line, column: l.first_column }, end: { line: l.last_line ?? l.first_line, column: l.last_column ?? l.first_column } };
}

function errorLoc(err: unknown): Loc | undefined {
  const e = err as { lineNumber?: unknown; column?: unknown; endLineNumber?: unknown; endColumn?: unknown };
  if (typeof e?.lineNumber === 'number' && typeof e.column === 'number') {
    return {
      start: { line: e.lineNumber, column: e.column },
      end: { line: typeof e.endLineNumber === 'number' ? e.endLineNumber : e.lineNumber, column: typeof e.endColumn === 'number' ? e.endColumn : e.column },
    };
  }
  return undefined;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Where a template's compiled code finds its text pieces: a data variable (`@…`) that no template
 * can name, since it starts with a noncharacter. Set after the caller's context, so it always wins.
 */
const CONTENT_KEY = '\uFDD0content';

/**
 * A copy of the processed tree with every text piece replaced by a lookup of its number in
 * `@CONTENT_KEY`, and the pieces. Whitespace control has already shaped the pieces, and a text
 * piece compiles to nothing but appending it, so the compiled code of the shape renders the
 * template exactly when it is given the pieces: two templates that differ only in their text (an
 * edit of the prose, a thousand variants of one template) share one compile. The copy leaves the
 * shared tree as parsed (Handlebars' compiler also rewrites literal paths in place); locations
 * are shared, never changed.
 */
function contentAsData(tree: HbNode, take = true): { shape: HbNode; contents: string[] } {
  const contents: string[] = [];
  const copy = (v: unknown, depth: number): unknown => {
    if (!v || typeof v !== 'object') return v;
    // Bounded before it gets here (MAX_NESTING, MAX_TOTAL_NESTING); each level is a few objects deep.
    if (depth > 8 * (MAX_TOTAL_NESTING + MAX_NESTING)) throw new LimitError('the template nests too deep');
    if (Array.isArray(v)) return v.map((x) => copy(x, depth + 1));
    const n = v as HbNode;
    if (take && n.type === 'ContentStatement' && typeof n.value === 'string' && n.value !== '') {
      const i = contents.push(n.value) - 1;
      const loc = n.loc;
      return { type: 'MustacheStatement', path: { type: 'PathExpression', data: true, depth: 0, parts: [CONTENT_KEY, String(i)], original: `@${CONTENT_KEY}.${i}`, loc }, params: [], escaped: false, strip: { open: false, close: false }, loc };
    }
    const out: HbNode = { type: n.type };
    for (const key of Object.keys(n)) out[key] = key === 'loc' ? n.loc : copy(n[key], depth + 1);
    return out;
  };
  return { shape: copy(tree, 0) as HbNode, contents };
}

/**
 * Compiled code by shape (the tree without its text and locations) and the helpers compiled as
 * known. Locations only reach helpers' `options.loc`, which no helper here reads.
 */
const shapes = new BoundedCache<string, HbTemplate>(CACHE_SIZE * 2, 4 * MAX_SOURCE_LENGTH);

function compileShape(shape: HbNode, extraHelpers: readonly string[]): HbTemplate {
  const key = JSON.stringify([extraHelpers, shape], (k, v: unknown) => (k === 'loc' ? undefined : v));
  const hit = shapes.get(key);
  if (hit) return hit;
  const template = compileAst(shape, extraHelpers, true);
  shapes.set(key, template, key.length);
  return template;
}

/** Parses, checks and compiles a template or partial source. Throws the error Handlebars would, or a LimitError. */
function compileChecked(source: string, what: string, code: CodeRegistered): { template: HbTemplate; analysis: Analysis; unknown: Map<string, Loc | undefined> } {
  if (source.length > MAX_SOURCE_LENGTH) throw new LimitError(`${what} is longer than ${MAX_SOURCE_LENGTH} characters`);
  // The one parse of this text (the reference reader read the same tree); the compiler gets a copy.
  const tree = bodyTree(source) as HbNode;
  const analysis = analyze(tree);
  if (analysis.tooDeep) throw Object.assign(new LimitError(`${what}: ${analysis.tooDeep.message}`), { loc: analysis.tooDeep.loc });
  const unknown = undeclaredHelpers(analysis, code);
  // A partial keeps its text in its code: it renders in its caller's data frame, whose pieces are the caller's.
  return { template: compileAst(contentAsData(tree, false).shape, [...code.helpers, ...unknown.keys()], true), analysis, unknown };
}

function compile(source: string, partials: Record<string, string> | undefined, code: CodeRegistered): Compiled {
  const key = cacheKey(source, partials, code);
  const hit = cache.get(key);
  if (hit) return hit;
  const compiled = compileUncached(source, partials, code);
  cache.set(key, compiled);
  return compiled;
}

function compileUncached(source: string, partials: Record<string, string> | undefined, code: CodeRegistered): Compiled {
  const none = { placeholderHelpers: [], unknownHelpers: new Map<string, Loc | undefined>() };
  if (source.length > MAX_SOURCE_LENGTH) {
    const prepared: PreparedSource = { template: source, offset: 0, issues: [] };
    return { prepared, ...none, fatal: [{ rule: 'unsupported-feature', message: `The file is longer than ${MAX_SOURCE_LENGTH} characters; it is not rendered`, span: { start: 0, end: source.length } }] };
  }
  // Nesting and tag counts are bounded before Handlebars parses: its parser is superlinear in them (text/nesting.ts).
  const limit = dotpromptBodyLimit(source, 0);
  if (limit) return { prepared: { template: source, offset: 0, issues: [] }, ...none, fatal: [{ rule: 'unsupported-feature', message: limit.message, span: { start: limit.start, end: limit.end } }] };
  const prepared = prepareSource(source);
  if (prepared.issues.some((i) => i.rule === 'template-invalid')) return { prepared, ...none, fatal: [] };
  let ast: HbNode;
  try {
    // The tree body.ts already read for this body (parsed once); the compiler gets a copy (contentAsData).
    ast = bodyTree(prepared.template) as HbNode;
  } catch (err) {
    const loc = errorLoc(err) ?? (/^(Parse|Lexical) error/.test(messageOf(err)) ? parseErrorLoc(err) : undefined);
    // Handlebars quotes a window of the source around the error: no piece of a secret in it.
    return { prepared, ...none, fatal: [{ rule: 'template-invalid', message: redactQuoted(messageOf(err), prepared.template), span: locSpan(prepared, loc) }] };
  }
  const analysis = analyze(ast);
  if (analysis.tooDeep) {
    return { prepared, analysis, ...none, fatal: [{ rule: 'unsupported-feature', message: `The template's ${analysis.tooDeep.message}; it is not rendered`, span: locSpan(prepared, analysis.tooDeep.loc) }] };
  }
  const unknownHelpers = undeclaredHelpers(analysis, code);
  const placeholderHelpers = [...code.helpers, ...unknownHelpers.keys()];
  let template: HbTemplate;
  const { shape, contents } = contentAsData(ast); // a copy: the tree stays as parsed
  try {
    template = compileShape(shape, placeholderHelpers);
  } catch (err) {
    const rule = err instanceof RangeError ? 'unsupported-feature' : 'template-invalid';
    return { prepared, analysis, ...none, fatal: [{ rule, message: messageOf(err), span: locSpan(prepared, errorLoc(err)) }] };
  }
  const given = partials ?? {};
  const compiledPartials = makePartials(given, code);
  // Partials registered in code without a source, and (lenient) partials nobody gave: a placeholder each.
  const placeholders = new Set(code.partials);
  if (code.lenient) for (const name of referencedPartials(analysis, given)) placeholders.add(name);
  for (const name of placeholders) {
    if (name === '__proto__' || Object.prototype.hasOwnProperty.call(given, name)) continue;
    compiledPartials[name] = placeholderPartial(name);
  }
  return { prepared, analysis, template, contents, fatal: [], placeholderHelpers, unknownHelpers, partials: Object.keys(compiledPartials).length || partials ? compiledPartials : undefined };
}

/** Partial names the template and the given partials (transitively) refer to. A partial that does not parse fails later, at its call. */
function referencedPartials(analysis: Analysis, given: Record<string, string>): Set<string> {
  const out = new Set<string>();
  // A partial block needs no placeholder: without the partial it renders its own content, as dotprompt does.
  const queue = analysis.partials.filter((p) => !p.block).map((p) => p.name);
  while (queue.length && out.size < 1024) {
    const name = queue.shift()!;
    if (out.has(name)) continue;
    out.add(name);
    if (!Object.prototype.hasOwnProperty.call(given, name) || given[name].length > MAX_SOURCE_LENGTH) continue;
    try {
      const inner = analyze(bodyTree(given[name]) as HbNode);
      if (!inner.tooDeep) for (const p of inner.partials) if (!p.block) queue.push(p.name);
    } catch {
      // The partial's own call reports its parse error.
    }
  }
  return out;
}

/** A helper registered in code: prints its placeholder (a block helper also its body, once) and records that it ran. */
function placeholderHelper(name: string): HelperFn {
  return function (this: unknown, ...args: unknown[]): string {
    const options = args[args.length - 1] as HelperOptions | undefined;
    if (active && !active.placeholders.has(`helper:${name}`)) active.placeholders.set(`helper:${name}`, [...active.partialStack]);
    const text = placeholderText('helper', name);
    return options && typeof options.fn === 'function' ? text + produced(options.fn(this)) : text;
  };
}

function placeholderPartial(name: string): HbTemplate {
  return function (): string {
    step();
    if (active && !active.placeholders.has(`partial:${name}`)) active.placeholders.set(`partial:${name}`, [...active.partialStack]);
    return placeholderText('partial', name);
  };
}

/** Partials as Handlebars receives them, compiled on first use (as Handlebars compiles registered ones) and counted. */
function makePartials(sources: Record<string, string>, code: CodeRegistered): Record<string, HbTemplate> {
  const out: Record<string, HbTemplate> = {};
  for (const name of Object.keys(sources)) {
    // Handlebars' registerPartial('__proto__', …) is a no-op assignment; such a partial is never found.
    if (name === '__proto__') continue;
    const source = sources[name];
    let compiled: ReturnType<typeof compileChecked> | undefined;
    out[name] = function (context: unknown, options?: Record<string, unknown>): string {
      const st = active;
      if (!st) throw new Error('partial called outside a render');
      step();
      if (st.partialStack.length >= MAX_PARTIAL_DEPTH) throw new LimitError(`partials nest deeper than ${MAX_PARTIAL_DEPTH} levels`);
      st.partialStack.push(name);
      try {
        compiled ??= compileChecked(source, `partial "${name}"`, code);
        for (const use of compiled.analysis.metadataUses) st.partialMetadataUses.push(`${use.original} (in partial "${name}")`);
        let runtime = options;
        if (compiled.unknown.size) {
          // Helpers only this partial calls print placeholders too.
          const helpers: Record<string, unknown> = { ...((options?.helpers as Record<string, unknown>) ?? {}) };
          for (const helper of compiled.unknown.keys()) {
            if (!st.unknownInPartials.has(helper)) st.unknownInPartials.set(helper, [...st.partialStack]);
            helpers[helper] = placeholderHelper(helper);
          }
          runtime = { ...options, helpers };
        }
        return produced(compiled.template(context, runtime));
      } catch (err) {
        st.errorChain ??= [...st.partialStack];
        throw err;
      } finally {
        st.partialStack.pop();
      }
    };
  }
  return out;
}

// ---------------------------------------------------------------------------
// Messages (dotprompt's toMessages / insertHistory / toParts, mirrored)
// ---------------------------------------------------------------------------

const ROLE_MARKER_PREFIX = '<<<dotprompt:role:';
const HISTORY_MARKER_PREFIX = '<<<dotprompt:history';
const MEDIA_MARKER_PREFIX = '<<<dotprompt:media:';
const SECTION_MARKER_PREFIX = '<<<dotprompt:section';
const ROLE_AND_HISTORY_MARKER_REGEX = /(<<<dotprompt:(?:role:[a-z]+|history))>>>/g;

type DpPart = { text?: unknown; media?: { url?: unknown; contentType?: unknown }; metadata?: { purpose?: unknown; pending?: unknown } };
interface DpMessage {
  role: string;
  content: DpPart[];
  metadata?: Record<string, unknown>;
}
interface MessageSource {
  role: string;
  source?: string;
  content?: DpPart[];
  metadata?: Record<string, unknown>;
}

const nonBlank = (pieces: string[]): string[] => pieces.filter((s) => s.trim() !== '');

/**
 * `source.split(/(<<<dotprompt:(?:media:url|section).*?)>>>/g)`, in linear time (`.` stops at line
 * terminators, so an unclosed marker scans only to the end of its line).
 */
export function splitMediaAndSection(source: string): string[] {
  const MEDIA = '<<<dotprompt:media:url';
  const SECTION = '<<<dotprompt:section';
  const out: string[] = [];
  const terminator = /[\n\r\u2028\u2029]/g;
  // Cached next occurrences (recomputed only once passed), so the scan stays linear.
  let media = -2;
  let sect = -2;
  let gt = -2;
  let nl = -2;
  let last = 0;
  let from = 0;
  for (;;) {
    if (media !== -1 && media < from) media = source.indexOf(MEDIA, from);
    if (sect !== -1 && sect < from) sect = source.indexOf(SECTION, from);
    const start = media === -1 ? sect : sect === -1 ? media : Math.min(media, sect);
    if (start === -1) break;
    const prefixEnd = start + (start === media ? MEDIA.length : SECTION.length);
    if (gt !== -1 && gt < prefixEnd) gt = source.indexOf('>>>', prefixEnd);
    if (nl !== -1 && nl < prefixEnd) {
      terminator.lastIndex = prefixEnd;
      nl = terminator.exec(source)?.index ?? -1;
    }
    if (gt !== -1 && (nl === -1 || gt < nl)) {
      out.push(source.slice(last, start), source.slice(start, gt));
      last = from = gt + 3;
    } else {
      from = start + 1;
    }
  }
  out.push(source.slice(last));
  return out;
}

function toParts(source: string): DpPart[] {
  return nonBlank(splitMediaAndSection(source)).map((piece) => {
    if (piece.startsWith(MEDIA_MARKER_PREFIX)) {
      const [, url, contentType] = piece.split(' ');
      const part: DpPart = { media: { url } };
      if (contentType) part.media!.contentType = contentType;
      return part;
    }
    if (piece.startsWith(SECTION_MARKER_PREFIX)) {
      const [, sectionType] = piece.split(' ');
      return { metadata: { purpose: sectionType, pending: true } };
    }
    return { text: piece };
  });
}

function toMessages(rendered: string, messages: DpMessage[] | undefined): DpMessage[] {
  let current: MessageSource = { role: 'user', source: '' };
  const sources: MessageSource[] = [current];
  for (const piece of nonBlank(rendered.split(ROLE_AND_HISTORY_MARKER_REGEX))) {
    if (piece.startsWith(ROLE_MARKER_PREFIX)) {
      const role = piece.substring(ROLE_MARKER_PREFIX.length);
      if (current.source?.trim()) {
        current = { role, source: '' };
        sources.push(current);
      } else {
        current.role = role;
      }
    } else if (piece.startsWith(HISTORY_MARKER_PREFIX)) {
      sources.push(...(messages ?? []).map((m) => ({ ...m, metadata: { ...m.metadata, purpose: 'history' } })));
      current = { role: 'model', source: '' };
      sources.push(current);
    } else {
      current.source += piece;
    }
  }
  const out = sources
    .filter((ms) => ms.content || ms.source)
    .map((m) => {
      const msg: DpMessage = { role: m.role, content: m.content || toParts(m.source || '') };
      if (m.metadata) msg.metadata = m.metadata;
      return msg;
    });
  return insertHistory(out, messages);
}

/** Without a {{history}} marker, history goes before the last message when that one is the user's, else at the end — as given, not marked as history. */
function insertHistory(messages: DpMessage[], history: DpMessage[] = []): DpMessage[] {
  if (!history || messages.some((m) => m.metadata?.purpose === 'history')) return messages;
  if (messages.length === 0) return history;
  const last = messages.at(-1)!;
  if (last.role === 'user') return [...messages.slice(0, -1), ...history, last];
  return [...messages, ...history];
}

function toEngineMessages(messages: DpMessage[], issue: (message: string) => void): EngineMessage[] {
  return messages.map((m) => {
    const parts: EnginePart[] = [];
    for (const p of Array.isArray(m.content) ? m.content : []) {
      if (p && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
      else if (p?.media) {
        const { url, contentType } = p.media;
        if (typeof url !== 'string') issue('A media marker without a URL (the literal text "<<<dotprompt:media:url>>>") gives dotprompt a media part whose url is undefined');
        parts.push(contentType !== undefined ? { type: 'media', url: String(url ?? ''), contentType: String(contentType) } : { type: 'media', url: String(url ?? '') });
      } else if (p?.metadata?.pending) {
        const name = p.metadata.purpose;
        if (typeof name !== 'string') issue('A section marker without a name (the literal text "<<<dotprompt:section>>>") gives dotprompt a section whose purpose is undefined');
        parts.push({ type: 'section', name: String(name ?? '') });
      } else issue('A history message part that is neither text, media nor a section is left out');
    }
    const out: EngineMessage = { role: m.role, parts };
    if (m.metadata?.purpose === 'history') out.purpose = 'history';
    return out;
  });
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

/** The sources of the partials a render error passed through, joined, or undefined when it came from the template itself. */
function chainSources(partials: Record<string, string> | undefined, chain: string[] | undefined): string | undefined {
  if (!chain?.length || !partials) return undefined;
  return chain.map((name) => (Object.prototype.hasOwnProperty.call(partials, name) ? partials[name] : '')).join('\n');
}

/** Where a render error points: its own location, the partial it came from, or the helper it names. */
function renderErrorSpan(compiled: Compiled, err: unknown, chain: string[] | undefined): { span: Span; prefix: string } {
  const { prepared, analysis } = compiled;
  if (chain?.length) {
    const call = analysis?.partials.find((p) => p.name === chain[0]);
    return { span: locSpan(prepared, call?.loc), prefix: `in partial ${chain.map((c) => `"${c}"`).join(' > ')}: ` };
  }
  const loc = errorLoc(err) ?? (err as { loc?: Loc })?.loc;
  if (loc) return { span: locSpan(prepared, loc), prefix: '' };
  const message = messageOf(err);
  const partial = /^The partial (.*) could not be found$/.exec(message);
  if (partial) return { span: locSpan(prepared, analysis?.partials.find((p) => p.name === partial[1])?.loc), prefix: '' };
  const helper = /^(?:Must pass iterator to #(each)|#(if|unless|with) requires exactly one argument)$/.exec(message);
  if (helper) {
    const name = helper[1] ?? helper[2];
    const block = analysis?.blocks.find((b) => b.name === name && (name === 'each' ? b.params === 0 : b.params !== 1));
    return { span: locSpan(prepared, block?.loc), prefix: '' };
  }
  return { span: locSpan(prepared, undefined), prefix: '' };
}

/** What the options register in code, as the compile cache keys it. */
function codeRegistered(options: DotpromptOptions): CodeRegistered {
  return {
    // A declared name dotprompt or Handlebars already defines keeps its own, runnable, definition.
    helpers: [...new Set(options.codeHelpers ?? [])].filter((h) => h && !BUILTIN_HELPERS.has(h)).sort(),
    partials: [...new Set(options.codePartials ?? [])].filter((p) => p && p !== '__proto__').sort(),
    lenient: options.lenient === true,
  };
}

/**
 * Whether `renderDotprompt(source, …, options)` will say `printsValuesOnly`, from the compiled
 * tree alone (the compile is cached; nothing is rendered): the template compiles and only prints,
 * loops over and tests its values.
 */
export function dotpromptPrintsValuesOnly(source: string, options: DotpromptOptions = {}): boolean {
  try {
    const { template, analysis } = compile(source, options.partials, codeRegistered(options));
    return !!template && !!analysis && !analysis.readsValues;
  } catch {
    return false;
  }
}

/**
 * Renders a whole `.prompt` file as dotprompt 1.1.2 does. Never throws: a template dotprompt would
 * reject gives a `template-invalid` issue and no messages; what cannot be reproduced exactly is an
 * `unsupported-feature` issue.
 */
export function renderDotprompt(source: string, data: DotpromptData, options: DotpromptOptions = {}): EngineResult {
  const code = codeRegistered(options);
  let compiled: Compiled;
  try {
    compiled = compile(source, options.partials, code);
  } catch (err) {
    return { rendered: '', messages: [], issues: [{ rule: 'template-invalid', message: messageOf(err), span: { start: 0, end: source.length } }] };
  }
  const { prepared, analysis, template } = compiled;
  const issues: EngineIssue[] = [...prepared.issues, ...compiled.fatal];
  if (!template || !analysis) return { rendered: '', messages: [], issues };

  const context = data.context || {};
  const metadataShadowed = Object.prototype.hasOwnProperty.call(context, 'metadata');
  if (!metadataShadowed) {
    for (const use of analysis.metadataUses) {
      issues.push({ rule: 'unsupported-feature', message: `"${use.original}" reaches dotprompt's @metadata.prompt (the resolved front matter); Context Lens renders a best-effort value`, span: locSpan(prepared, use.loc) });
    }
  }

  for (const [name, loc] of compiled.unknownHelpers) issues.push({ rule: 'unknown-helper', message: unknownHelperMessage(name), span: locSpan(prepared, loc) });

  const state: RenderState = { steps: 0, output: 0, partialStack: [], partialMetadataUses: [], placeholders: new Map(), unknownInPartials: new Map() };
  let rendered: string;
  active = state;
  try {
    const runtime: Record<string, unknown> = {
      data: {
        metadata: { prompt: promptMetadata(prepared.raw), docs: data.docs, messages: data.messages },
        ...context,
        [CONTENT_KEY]: compiled.contents ?? [],
      },
    };
    if (compiled.partials) runtime.partials = compiled.partials;
    if (compiled.placeholderHelpers.length) runtime.helpers = Object.fromEntries(compiled.placeholderHelpers.map((h) => [h, placeholderHelper(h)]));
    rendered = template({ ...(options.inputDefault || {}), ...data.input }, runtime);
  } catch (err) {
    const { span, prefix } = renderErrorSpan(compiled, err, state.errorChain);
    if (err instanceof LimitError) issues.push({ rule: 'unsupported-feature', message: `${prefix}${err.message}; the template is not rendered`, span });
    else if (err instanceof RangeError) issues.push({ rule: 'unsupported-feature', message: `${prefix}the render exhausts the call stack (${err.message}); the template is not rendered`, span });
    else {
      // A partial's parse error quotes a window of the partial's source.
      const quoted = chainSources(options.partials, state.errorChain);
      issues.push({ rule: 'template-invalid', message: prefix + (quoted ? redactQuoted(messageOf(err), quoted) : messageOf(err)), span });
    }
    return { rendered: '', messages: [], issues };
  } finally {
    active = undefined;
  }
  if (!metadataShadowed) {
    for (const use of new Set(state.partialMetadataUses)) {
      issues.push({ rule: 'unsupported-feature', message: `"${use}" reaches dotprompt's @metadata.prompt (the resolved front matter); Context Lens renders a best-effort value`, span: locSpan(prepared, undefined) });
    }
  }
  for (const [name, chain] of state.unknownInPartials) {
    const call = analysis.partials.find((p) => p.name === chain[0]);
    issues.push({ rule: 'unknown-helper', message: `in partial ${chain.map((c) => `"${c}"`).join(' > ')}: ${unknownHelperMessage(name)}`, span: locSpan(prepared, call?.loc) });
  }
  // Placeholders of what the application registers in code: located at the first call, counted as an estimate.
  for (const [used, chain] of state.placeholders) {
    const [kind, name] = [used.slice(0, used.indexOf(':')), used.slice(used.indexOf(':') + 1)] as ['helper' | 'partial', string];
    const declared = kind === 'helper' ? code.helpers.includes(name) : code.partials.includes(name);
    if (!declared) continue; // undeclared: the unknown-helper issue, or the caller's unknown-partial finding, says so
    // The template's own call, else (met only inside a partial) the template's call of that partial.
    const own = kind === 'helper' ? analysis.helperCalls.find((c) => c.name === name)?.loc : analysis.partials.find((p) => p.name === name)?.loc;
    const loc = own ?? (chain.length ? analysis.partials.find((p) => p.name === chain[0])?.loc : undefined);
    issues.push({
      rule: 'code-registered',
      message: `${kind === 'helper' ? `Helper '${name}'` : `Partial '${name}'`} is registered in the application's code, which Context Lens does not run: its output is shown as ${placeholderText(kind, name)} and the token counts are an estimate.${kind === 'partial' ? ' Give its file under `partials:` in the context config to render it.' : ''}`,
      span: locSpan(prepared, loc),
    });
  }
  const seen = new Set<string>();
  const messages = toEngineMessages(toMessages(rendered, data.messages as DpMessage[] | undefined), (message) => {
    if (seen.has(message)) return;
    seen.add(message);
    issues.push({ rule: 'unsupported-feature', message, span: locSpan(prepared, undefined) });
  });
  const result: EngineResult = { rendered, messages, issues, ...(state.placeholders.size ? { estimate: true } : {}) };
  if (!analysis.readsValues) {
    result.printsValuesOnly = true;
    // The render of the values with `f` applied to each of their strings, for a template that only
    // prints them: this render's text with `f` applied, split into messages as dotprompt splits it.
    result.splitWith = (f) => {
      const history = (data.messages as DpMessage[] | undefined)?.map((m) => ({ ...m, content: (m.content ?? []).map((p) => (typeof p?.text === 'string' ? { ...p, text: f(p.text) } : p)) }));
      return toEngineMessages(toMessages(f(rendered), history), () => undefined);
    };
  }
  return result;
}

function unknownHelperMessage(name: string): string {
  return `'${name}' is not a dotprompt helper: unless the application registers it in code (defineHelper), dotprompt refuses the template ("unknown helper ${name}"). If it does, declare it under \`helpers:\` in the context config (or the contextLens.dotprompt.helpers setting); its output is shown as ${placeholderText('helper', name)} meanwhile.`;
}
