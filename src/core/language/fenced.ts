/**
 * What the formats with a YAML front matter (dotprompt, Prompty) share when they parse a file: the
 * front matter once, then the body by the format's own parser, then the uses given their roles.
 */
import type { TemplateDoc, TemplateFormat, Role } from '../types';
import type { BodyResult } from './shared';
import type { ParsedFrontMatter } from './frontMatter';
import { finding } from '../rules/registry';
import { parseFrontMatter } from './frontMatter';
import { finishUses } from './shared';

export interface FencedFormat {
  format: TemplateFormat;
  fallbackRole: Role;
  /** A located reason not to parse the body at all (a body past the parser's limits). */
  bodyLimit?(text: string, bodyStart: number): { start: number; end: number; message: string } | undefined;
  body(path: string, text: string, bodyStart: number, fm: ParsedFrontMatter): BodyResult;
}

export function parseFenced(path: string, text: string, f: FencedFormat): TemplateDoc {
  const { format } = f;
  const fm = parseFrontMatter(path, text, format);
  const base = { path, format, text, ...(fm.frontMatter ? { frontMatter: fm.frontMatter } : {}), bodySpan: { start: fm.bodyStart, end: text.length } };
  const limit = f.bodyLimit?.(text, fm.bodyStart);
  if (limit) {
    const lf = finding('template-invalid', path, { start: limit.start, end: limit.end }, limit.message);
    return { ...base, messages: [], uses: [], findings: [...fm.findings, lf] };
  }
  const body = f.body(path, text, fm.bodyStart, fm);
  const findings = fm.findings.concat(body.findings);
  const uses = finishUses(text, body.messages, body.uses, f.fallbackRole);
  return { ...base, messages: body.messages, uses, findings };
}
