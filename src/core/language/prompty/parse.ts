/**
 * The body of a `.prompty` file, parsed once by the engine that renders it: Jinja2 (jinjaBody.ts,
 * over the Jinja engine's tree) or, for `template: mustache`, Mustache.
 */
import type { Span } from '../../types';
import type { BodyResult } from '../shared';
import { promptyLineOf } from './engine';
import { parseJinjaBody } from './jinjaBody';
import { parseMustacheBody } from './mustacheBody';

/** The `template:` engine a Prompty front matter names (`template: mustache`, `template: { format|type: … }`). */
export function promptyTemplateType(data: Record<string, unknown> | undefined): string | undefined {
  const t = data?.template;
  if (typeof t === 'string') return t;
  if (t && typeof t === 'object') {
    const r = t as Record<string, unknown>;
    const v = r.format ?? r.type;
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/**
 * The body of a `.prompty` file (from `bodyStart`), parsed by the engine its front matter names:
 * Jinja2 by default, Mustache for `template: mustache`.
 */
export function parsePromptyBody(path: string, text: string, bodyStart: number, inputs: Record<string, Span>, data: Record<string, unknown> | undefined): BodyResult {
  const line = promptyLineOf(data);
  if (promptyTemplateType(data) === 'mustache') return parseMustacheBody(path, text, bodyStart, inputs, line);
  return parseJinjaBody(path, text, bodyStart, line);
}
