/**
 * The body of a `.prompty` file, parsed once by the engine that renders it: Jinja2 (jinjaBody.ts,
 * over the Jinja engine's tree) or, for `template: mustache`, Mustache.
 */
import type { Span } from '../../types';
import { isPySpaceCode } from '../jinja/pystr';
import type { BodyResult } from '../shared';
import { promptyLineOf, promptyTemplateFormat } from './engine';
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
export function parsePromptyBody(path: string, text: string, bodyStart: number, inputs: Record<string, Span>, data: Record<string, unknown> | undefined): BodyResult {
  const line = promptyLineOf(data);
  // Prompty's front matter pattern skips the whitespace after the closing fence: the body the
  // runtime renders (and the engine parses) starts at the first other character.
  let start = bodyStart;
  while (start < text.length - 1 && isPySpaceCode(text.charCodeAt(start))) start++;
  if (promptyTemplateFormat(data, line) === 'mustache') return parseMustacheBody(path, text, start, inputs, line);
  return parseJinjaBody(path, text, start, line);
}
