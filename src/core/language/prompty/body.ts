/**
 * What the two Prompty body builders share (jinjaBody.ts over the Jinja engine's tree,
 * mustacheBody.ts over chevron's tokens): role lines as the file's runtime line reads them, the
 * split of the top level into messages, Prompty's chat-history loop, and how a tag is quoted in a
 * finding.
 */
import { redactPieces, secretsOf } from '../../text/secrets';
import type { Role, Span, TemplateMessage, TemplateNode } from '../../types';
import { blankNodes, normalizeRole } from '../shared';
import type { EachNode } from '../shared';
import { PROMPTY_ROLES, type PromptyLine } from './engine';

/** A role line found in top-level text, before the messages are split. */
export interface RoleMark {
  type: 'role';
  role: Role;
  markerSpan: Span;
}
export type Item = TemplateNode | RoleMark;

/** Deepest block nesting kept as nodes; deeper blocks are read inline (renderers recurse). */
export const MAX_BLOCK_DEPTH = 64;

export const DEPTH_MESSAGE = `Blocks are nested more than ${MAX_BLOCK_DEPTH} levels deep; deeper blocks are read inline.`;

/**
 * A role line as the file's runtime line reads it (engine.ts PROMPTY_ROLES): 0.1.x starts messages
 * at system/user/assistant/function, with an optional leading `#`; v2 at system/user/assistant/
 * developer, also with `[key=value]` attributes.
 */
export function roleLinePattern(line: PromptyLine): RegExp {
  const names = PROMPTY_ROLES[line].join('|');
  const attrs = line === 'v2' ? '(?:\\[[^\\]\\r\\n]*\\])?' : '';
  return new RegExp(`^([ \\t]*)(#?[ \\t]*(${names})${attrs}[ \\t]*:)[ \\t]*(\\r\\n|\\r|\\n|$)`, 'gim');
}

/**
 * Top-level text `[start, end)` of the template, split at its role lines: text nodes (whose text is
 * what renders of the source between) and role marks. A role line must stand alone on its line
 * once rendered: `tailBreaks` says whether what renders right after this text starts a new line
 * (a role line at the very end of the text needs that).
 */
export function splitRoles(text: string, bodyStart: number, start: number, end: number, roleLine: RegExp, rendered: (from: number, to: number) => string, tailBreaks = false): Item[] {
  const out: Item[] = [];
  const push = (from: number, to: number) => {
    if (to <= from) return;
    const s = rendered(from, to);
    if (s !== '') out.push({ type: 'text', text: s, span: { start: from, end: to } });
  };
  const slice = text.slice(start, end);
  let from = start;
  roleLine.lastIndex = 0;
  for (let m = roleLine.exec(slice); m; m = roleLine.exec(slice)) {
    const lineStart = start + m.index;
    const atLineStart = lineStart === bodyStart || /[\r\n]/.test(text.charAt(lineStart - 1));
    const afterEnd = lineStart + m[0].length;
    const alone = m[4] !== '' || (afterEnd === end && tailBreaks);
    if (!atLineStart || !alone) continue;
    const markerStart = lineStart + m[1].length;
    push(from, lineStart);
    out.push({ type: 'role', role: normalizeRole(m[3]) as Role, markerSpan: { start: markerStart, end: markerStart + m[2].length } });
    from = afterEnd;
  }
  push(from, end);
  return out;
}

/** Splits the top level into messages at role lines; text before the first is `system`. */
export function toMessages(items: readonly Item[], bodyStart: number, end: number): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  let cur = { role: 'system' as Role, markerSpan: { start: bodyStart, end: bodyStart }, start: bodyStart, nodes: [] as TemplateNode[], explicit: false };
  const flush = (to: number) => {
    if (cur.explicit || !blankNodes(cur.nodes)) out.push({ role: cur.role, markerSpan: cur.markerSpan, span: { start: cur.start, end: to }, nodes: cur.nodes });
  };
  for (const item of items) {
    if (item.type === 'role') {
      flush(item.markerSpan.start);
      cur = { role: item.role, markerSpan: item.markerSpan, start: item.markerSpan.start, nodes: [], explicit: true };
    } else {
      cur.nodes.push(item);
    }
  }
  flush(end);
  return out;
}

/**
 * Prompty's chat-history idiom, a loop that writes role lines itself:
 * `{% for item in history %}{{item.role}}:\n{{item.content}}{% endfor %}`. The role placeholder
 * must make a line of its own once rendered (`{{m.role}}:` alone on its line), as Prompty only
 * splits at such lines; `[{{t.at}}] {{t.role}}: {{t.text}}` is a transcript.
 */
export function isHistoryLoop(text: string, node: EachNode): boolean {
  const body = node.body;
  const itemRoot = node.alias ?? 'this';
  return body.some((n, k) => {
    if (n.type !== 'var' || n.path.length !== 2 || n.path[0] !== itemRoot || n.path[1] !== 'role') return false;
    const before = text.slice(k > 0 ? body[k - 1].span.start : node.headSpan.end, n.span.start);
    const next = body[k + 1];
    const after = next?.type === 'text' ? text.slice(next.span.start, next.span.end) : '';
    return /(^|[\r\n])[ \t]*#?[ \t]*$/.test(before) && /^[ \t]*:[ \t]*(\r\n|\r|\n|$)/.test(after);
  });
}

/** A tag as a finding quotes it: whitespace folded, secrets redacted, at most 60 characters. */
export function quoteTag(text: string, span: Span): string {
  // Redacted, and cleared of any piece of a secret around it: a span can cut a secret short, and a
  // cut secret is no longer recognised (an unterminated comment quoted the first 40 characters).
  const around = text.slice(Math.max(0, span.start - 512), Math.min(text.length, span.end + 512));
  const s = redactPieces(text.slice(span.start, span.end).replace(/\s+/g, ' '), secretsOf(around));
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

