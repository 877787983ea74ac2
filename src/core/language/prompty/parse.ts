/**
 * The body of a `.prompty` file, parsed once by the engine that renders it: Jinja2 (jinjaBody.ts,
 * over the Jinja engine's tree) or, for `template: mustache`, Mustache.
 */
import type { Span, TemplateDoc } from '../../types';
import { isPySpaceCode } from '../jinja/pystr';
import type { BodyResult } from '../shared';
import { parseFenced } from '../fenced';
import { PROMPTY_LOADERS, promptyLineOf, promptyTemplateFormat, type PromptyLoader } from './engine';
import { parseJinjaBody } from './jinjaBody';
import { parseMustacheBody } from './mustacheBody';

/**
 * The `template:` engine a Prompty front matter names, as the file's runtime line reads it
 * (engine.ts promptyTemplateFormat): `mustache`, `jinja2`, …
 */
export function promptyTemplateType(data: Record<string, unknown> | undefined): string {
  return promptyTemplateFormat(data);
}

/**
 * The body of a `.prompty` file (from `bodyStart`), parsed by the engine its front matter names:
 * Jinja2 by default, Mustache for `template: mustache`.
 */
export function parsePromptyBody(path: string, text: string, bodyStart: number, inputs: Record<string, Span>, data: Record<string, unknown> | undefined, loader?: PromptyLoader): BodyResult {
  const line = promptyLineOf(data);
  // Prompty's front matter pattern skips the whitespace after the closing fence: the body the
  // runtime renders (and the engine parses) starts at the first other character.
  let start = bodyStart;
  while (start < text.length - 1 && isPySpaceCode(text.charCodeAt(start))) start++;
  // azure-ai-inference renders every file as mustache unless its front matter names another engine.
  const azure = (loader ?? pinnedLoader(text)) === 'azure-ai-inference' && data?.template === undefined;
  if (azure || promptyTemplateFormat(data, line) === 'mustache') return parseMustacheBody(path, text, start, inputs, line);
  return parseJinjaBody(path, text, start, line);
}

function pinnedLoader(text: string): PromptyLoader | undefined {
  const pin = promptyLoaderPin(text);
  return pin && 'loader' in pin ? pin.loader : undefined;
}

/**
 * A `.prompty` file as one document, its body parsed by the engine its loader renders it with
 * (`loader`: the one the project runs, when the binding knows it; else the file's pin or format).
 */
export function parsePromptyDoc(path: string, text: string, loader?: PromptyLoader): TemplateDoc {
  return parseFenced(path, text, {
    format: 'prompty',
    fallbackRole: 'system',
    body: (p, t, start, fm) => parsePromptyBody(p, t, start, fm.frontMatter?.inputs ?? {}, fm.frontMatter?.data, loader),
  });
}

/** `# prompty-loader: <loader>` in the front matter (a YAML comment: no loader reads it). */
const PIN = /^[ \t]*#[ \t]*prompty-loader[ \t]*:[ \t]*([A-Za-z0-9.-]+)[ \t]*$/m;

/** The pin a file carries in its front matter, if any. */
export function promptyLoaderPin(source: string): { loader: PromptyLoader; span: Span } | { invalid: string; span: Span } | undefined {
  const fence = /^\uFEFF?[ \t]*---[ \t]*\r?\n/.exec(source);
  if (!fence) return undefined;
  const end = source.indexOf('\n---', fence[0].length - 1);
  const head = source.slice(0, end < 0 ? Math.min(source.length, 20_000) : end);
  const m = PIN.exec(head);
  if (!m) return undefined;
  const span = { start: m.index, end: m.index + m[0].length };
  const v = m[1] as PromptyLoader;
  return PROMPTY_LOADERS.includes(v) ? { loader: v, span } : { invalid: m[1], span };
}

