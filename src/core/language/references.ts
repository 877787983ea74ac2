/**
 * The other templates a template names, read from the trees its engine renders (never from the
 * raw text): dotprompt partial calls (`{{> name}}`, `{{#> name}}…{{/name}}`) from Handlebars' tree
 * (dotprompt/engine.ts `bodyTree`, the one cached parse the renderer compiles), Jinja `include`,
 * `import`, `from … import` and `extends` from the Jinja parser's tree (jinja/parser.ts
 * `parseJinja`, shared with the renderer and the editor's body reader). So a call inside a comment,
 * a raw block or an escaped tag names nothing, as it renders nothing.
 *
 * What the engine cannot know before it renders is not followed: a dynamic partial
 * (`{{> (which)}}`), a Jinja name that is not a constant. A body Handlebars refuses names nothing
 * (dotprompt renders no part of it); a broken Jinja body is read from the parser's recovering tree.
 * partials.ts resolves, reads and reports what these name.
 */
import type { Span, TemplateDoc } from '../types';
import { dotpromptBodyLimit } from '../text/nesting';
import { LineIndex } from '../text/lineIndex';
import { renderedBody } from './dotprompt/body';
import { MAX_SOURCE_LENGTH, bodyTree } from './dotprompt/engine';
import { normalizeTemplate } from './jinja/lexer';
import { parseJinja, type Expr, type Stmt } from './jinja/parser';
import { isPySpaceCode } from './jinja/pystr';
import { jinjaSourceOffsets } from './shared';
import { stmtChildren } from './jinja/symbols';
import { promptyLineOf, promptyTemplateFormat, type PromptyLine } from './prompty/engine';

/** A template another one names. */
export interface TemplateReference {
  /**
   * The names the engine looks up, in order: one, or the constant names of a Jinja list
   * (`{% include ["a", "b"] %}`), of which the first found is rendered.
   */
  names: string[];
  /** The name in the text read (inside its quotes); for a Jinja list, the whole list. */
  span: Span;
  /** `{% include … ignore missing %}`: when no name is found, the include renders nothing. */
  optional: boolean;
}

// ---------------------------------------------------------------------------
// dotprompt: Handlebars' tree
// ---------------------------------------------------------------------------

interface HbPosition {
  line: number;
  column: number;
}
interface HbNode {
  type: string;
  loc?: { start: HbPosition; end: HbPosition };
  [key: string]: unknown;
}

/** A body as Handlebars parses it and where it starts in the text read. */
interface HbBody {
  program: HbNode;
  /** Offset of the body in the text its spans refer to. */
  start: number;
  lines: LineIndex;
  /** End of the text the spans refer to (spans are clamped to it). */
  end: number;
}

/**
 * Handlebars' tree of `source` (a body starting at `start` in a text ending at `end`), or
 * undefined when Handlebars refuses it or it is over the bounds the renderer refuses before parsing.
 * The lexer counts columns with `.`, which stops at U+2028 / U+2029: where those occur, the tree
 * is taken of a copy with them as spaces (whitespace to Handlebars as well, so the same tree),
 * whose columns are right.
 */
function handlebarsBody(source: string, start: number, end: number): HbBody | undefined {
  if (source.length > MAX_SOURCE_LENGTH || dotpromptBodyLimit(source, 0)) return undefined;
  const feed = /[\u2028\u2029]/.test(source) ? source.replace(/[\u2028\u2029]/g, ' ') : source;
  try {
    return { program: bodyTree(feed) as HbNode, start, lines: new LineIndex(feed), end };
  } catch {
    return undefined;
  }
}

/** The body of a `.prompt` file as dotprompt renders it: after the front matter, trimmed (dotprompt/body.ts parseDotpromptBody). */
function dotpromptMainBody(template: TemplateDoc): HbBody | undefined {
  const { body, start } = renderedBody(template.text, template.bodySpan.start);
  return handlebarsBody(body, start, template.text.length);
}

function hbOffset(body: HbBody, p: HbPosition): number {
  return Math.min(body.start + body.lines.offsetAt({ line: p.line - 1, character: p.column }), body.end);
}

/** Every statement of the tree with the inline partials (`{{#*inline "x"}}`) in scope where it stands. */
function* hbStatements(program: HbNode): Generator<{ node: HbNode; inline: ReadonlySet<string> }> {
  const stack: Array<{ program: HbNode; inline: ReadonlySet<string> }> = [{ program, inline: new Set() }];
  while (stack.length) {
    const { program: p, inline: outer } = stack.pop()!;
    const body = Array.isArray(p.body) ? (p.body as HbNode[]) : [];
    // An inline partial is registered for the whole program it stands in (Handlebars runs a
    // program's decorators before its statements), nested programs and partial calls included.
    let inline = outer;
    for (const s of body) {
      const name = s.type === 'DecoratorBlock' ? inlineName(s) : undefined;
      if (name !== undefined) inline = new Set([...inline, name]);
    }
    for (const s of body) {
      yield { node: s, inline };
      for (const key of ['program', 'inverse'] as const) {
        const child = s[key] as HbNode | undefined;
        if (child && child.type === 'Program') stack.push({ program: child, inline });
      }
    }
  }
}

/** The name an `{{#*inline "name"}}` decorator block registers, when it is a literal. */
function inlineName(s: HbNode): string | undefined {
  const path = s.path as HbNode | undefined;
  const first = (s.params as HbNode[] | undefined)?.[0];
  if (path?.type !== 'PathExpression' || path.original !== 'inline' || !first) return undefined;
  return /Literal$/.test(first.type) ? String(first.value) : undefined;
}

/** The partial calls of a Handlebars body: the names Handlebars looks up (its compiler's `partial.name.original`). */
function partialCalls(body: HbBody, source: string): TemplateReference[] {
  const out: TemplateReference[] = [];
  for (const { node, inline } of hbStatements(body.program)) {
    if (node.type !== 'PartialStatement' && node.type !== 'PartialBlockStatement') continue;
    const name = node.name as HbNode;
    // A sub-expression is looked up by the name it returns when it renders.
    if (!name || name.type === 'SubExpression' || !name.loc) continue;
    const text = String(name.original);
    // `@partial-block` is the block of the partial call being rendered; inline partials are the template's own.
    if (text === '@partial-block' || inline.has(text)) continue;
    let start = hbOffset(body, name.loc.start);
    let end = hbOffset(body, name.loc.end);
    // A string literal's location takes in its quotes; the span is the name.
    if (name.type === 'StringLiteral' && end - start >= 2 && /["']/.test(source.charAt(start))) {
      start++;
      end--;
    }
    // A partial block renders its own content when the partial is missing (Handlebars' fallback).
    out.push({ names: [text], span: { start, end }, optional: node.type === 'PartialBlockStatement' });
  }
  return out.sort((a, b) => a.span.start - b.span.start);
}

/**
 * The spans of the bare helper-call candidates of a `.prompt` body: `{{name}}` (also `{{{name}}}`)
 * whose path is one simple id (no `this`, `./`, `../`, no dotted path) and that has no
 * parameters or hash. Handlebars calls a helper of that name there when one is registered (its
 * compiler's classifySexpr), and looks the name up otherwise. Keys are `start:end` of the path.
 * Undefined when the body does not parse (dotprompt renders none of it).
 */
export function bareMustachePaths(template: TemplateDoc): Set<string> | undefined {
  if (template.format !== 'prompt') return new Set();
  const body = dotpromptMainBody(template);
  if (!body) return undefined;
  const out = new Set<string>();
  for (const { node } of hbStatements(body.program)) {
    if (node.type !== 'MustacheStatement') continue;
    const path = node.path as HbNode;
    const parts = path.parts as unknown[] | undefined;
    // Handlebars' simpleId: one part, no depth, not scoped (its scopedId test, unanchored `this\b` included).
    const simple = path.type === 'PathExpression' && !path.depth && parts?.length === 1 && !/^\.|this\b/.test(String(path.original));
    if (!simple || !path.loc || (node.params as unknown[]).length > 0 || node.hash) continue;
    out.add(`${hbOffset(body, path.loc.start)}:${hbOffset(body, path.loc.end)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Prompty: the Jinja tree
// ---------------------------------------------------------------------------

/** Every statement kind of the Jinja tree (a Record, so the compiler says when one is added). */
const STATEMENT_KINDS: Record<Stmt['k'], true> = {
  Output: true,
  For: true,
  If: true,
  Macro: true,
  CallBlock: true,
  FilterBlock: true,
  With: true,
  Block: true,
  Extends: true,
  Include: true,
  Import: true,
  FromImport: true,
  Assign: true,
  AssignBlock: true,
  Autoescape: true,
};
const isStatement = (n: { k: string }): n is Stmt => Object.prototype.hasOwnProperty.call(STATEMENT_KINDS, n.k);

/** The constant names of a template expression (the interpreter's getTemplate: a string, or a list or tuple of them), or undefined when not constant. */
function constantNames(e: Expr): string[] | undefined {
  if (e.k === 'Const') return typeof e.value === 'string' ? [e.value] : [];
  if (e.k !== 'List' && e.k !== 'Tuple') return undefined;
  const names: string[] = [];
  for (const item of e.items) {
    if (item.k !== 'Const') return undefined;
    // A name that is not a string is skipped when the engine looks the names up.
    if (typeof item.value === 'string') names.push(item.value);
  }
  return names;
}


/** The templates a Jinja source names (`source` starts at `start` in `text`). */
function jinjaReferences(text: string, start: number, keepTrailingNewline: boolean): TemplateReference[] {
  const source = normalizeTemplate(text.slice(start), keepTrailingNewline);
  const parsed = parseJinja(source);
  const at = jinjaSourceOffsets(text, start);
  const out: TemplateReference[] = [];
  const stack: Stmt[] = [...parsed.body];
  while (stack.length) {
    const s = stack.pop()!;
    if (s.k === 'Include' || s.k === 'Import' || s.k === 'FromImport' || s.k === 'Extends') {
      const names = constantNames(s.template);
      if (!names?.length) continue;
      let { start: a, end: b } = s.template.span;
      if (s.template.k === 'Const' && b - a >= 2 && /["']/.test(source.charAt(a)) && source.charAt(b - 1) === source.charAt(a)) {
        a++;
        b--;
      }
      out.push({ names, span: { start: at(a), end: at(b) }, optional: s.k === 'Include' && s.ignoreMissing });
      continue;
    }
    for (const c of stmtChildren(s)) if (isStatement(c)) stack.push(c);
  }
  return out.sort((x, y) => x.span.start - y.span.start);
}

/** How a `.prompty` body is rendered: with Jinja (and which runtime line), or not at all by Jinja. */
function promptyJinja(template: TemplateDoc): { line: PromptyLine } | undefined {
  const data = template.frontMatter?.data;
  const line = promptyLineOf(data);
  const format = promptyTemplateFormat(data, line);
  return format === 'jinja2' || format === 'jinja' ? { line } : undefined;
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/** The templates a parsed template's body names, with spans in `template.text`. */
export function templateReferences(template: TemplateDoc): TemplateReference[] {
  if (template.format === 'prompt') {
    const body = dotpromptMainBody(template);
    return body ? partialCalls(body, template.text) : [];
  }
  const jinja = promptyJinja(template);
  if (!jinja) return [];
  // Prompty's body starts after the whitespace that follows the closing fence (prompty/parse.ts).
  let start = template.bodySpan.start;
  while (start < template.text.length - 1 && isPySpaceCode(template.text.charCodeAt(start))) start++;
  return jinjaReferences(template.text, start, jinja.line === 'v2');
}

/**
 * The templates a partial or included file names, as its engine reads it: the whole file (the
 * renderers compile what they are given for the name), with spans in `text`. `template` is the
 * template that (transitively) uses the file: its format and runtime line decide the engine.
 */
export function fileReferences(template: TemplateDoc, text: string): TemplateReference[] {
  if (template.format === 'prompt') {
    const body = handlebarsBody(text, 0, text.length);
    return body ? partialCalls(body, text) : [];
  }
  const jinja = promptyJinja(template);
  return jinja ? jinjaReferences(text, 0, jinja.line === 'v2') : [];
}
