/**
 * The envelope around each item of a labelled slot (seed 002, "Order and represent the selected
 * context"): a stable id and provenance lines, then the content, then the closing delimiter.
 *
 *   bracket:  [EVIDENCE ev_0192]          xml:  <evidence id="ev_0192" title="..." source="..." version="...">
 *             Title: Retry behavior               ...content...
 *             Version: 4.2                        </evidence>
 *             Authority: Official documentation (0.95)
 *             Source: sdk-docs/retries
 *             Conflicts with: ev_0201 (version 3.9)
 *             Content:
 *             ...content...
 *             [/EVIDENCE]
 *
 * Lines whose metadata is absent are left out. The conflict note names the items an unresolved
 * contradiction opposes it to (stages/conflicts.ts), so the model is told of the disagreement
 * instead of having to find it in an unrelated block (seed 002: "label contradictions"). Metadata is
 * data too: in an untrusted slot it is flattened to one line and escaped like the content, so a
 * title cannot close the envelope.
 */
import type { ConflictNote, WorkItem } from './item';
import { escapeUntrusted } from './escape';

export type EnvelopeKind = 'bracket' | 'xml';

export interface Envelope {
  /** Everything before the content, ending with a line break. */
  open: string;
  /** Everything after the content, starting with a line break. */
  close: string;
}

/** official_documentation -> Official documentation. */
export function humanize(s: string): string {
  const t = s.replace(/[_-]+/g, ' ').trim();
  return t ? t[0].toUpperCase() + t.slice(1) : t;
}

function oneLine(s: string): string {
  return s.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
}

function xmlAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface EnvelopeOptions {
  kind: EnvelopeKind;
  label: string;
  /** Escape metadata (untrusted slot) with these delimiter names. */
  escapeWith?: readonly string[];
}

export function authorityLine(item: WorkItem): string | undefined {
  const type = item.source_type ? humanize(item.source_type) : undefined;
  const num = item.authority !== undefined ? String(item.authority) : undefined;
  if (type && num) return `${type} (${num})`;
  return type ?? num;
}

/**
 * The conflict note's text: `ev_0201 (version 3.9), ev_0255 (customer comment)`. Each item is
 * named with what tells it apart: its version when that differs from the item's own, else its
 * source type.
 */
export function conflictNote(notes: readonly ConflictNote[], ownVersion?: string): string {
  const shown = notes
    .slice(0, MAX_NOTED)
    .map((n) => (n.version !== undefined && n.version !== ownVersion ? `${n.id} (version ${n.version})` : n.source_type !== undefined ? `${n.id} (${humanize(n.source_type).toLowerCase()})` : n.id))
    .join(', ');
  return notes.length > MAX_NOTED ? `${shown} and ${notes.length - MAX_NOTED} more` : shown;
}

/** Items a conflict note names before it says "and N more". */
export const MAX_NOTED = 5;

/** Sources of the item, its own first, then those merged into it. */
export function sourcesOf(item: WorkItem): string[] {
  return [...(item.source !== undefined ? [item.source] : []), ...item.merged];
}

export function envelopeFor(item: WorkItem, opts: EnvelopeOptions): Envelope {
  const clean = (s: string) => {
    const line = oneLine(s);
    return opts.escapeWith ? escapeUntrusted(line, opts.escapeWith, { inline: true }) : line;
  };
  const sources = sourcesOf(item);
  if (opts.kind === 'xml') {
    const tag = opts.label.toLowerCase();
    const attrs: string[] = [`id="${xmlAttr(clean(item.id))}"`];
    if (item.title !== undefined) attrs.push(`title="${xmlAttr(clean(item.title))}"`);
    if (sources.length) attrs.push(`source="${xmlAttr(clean(sources.join('; ')))}"`);
    if (item.version !== undefined) attrs.push(`version="${xmlAttr(clean(item.version))}"`);
    const auth = authorityLine(item);
    if (auth !== undefined) attrs.push(`authority="${xmlAttr(clean(auth))}"`);
    if (item.conflicts?.length) attrs.push(`conflicts="${xmlAttr(clean(conflictNote(item.conflicts, item.version)))}"`);
    return { open: `<${tag} ${attrs.join(' ')}>\n`, close: `\n</${tag}>` };
  }
  const lines = [`[${opts.label} ${clean(item.id)}]`];
  if (item.title !== undefined) lines.push(`Title: ${clean(item.title)}`);
  if (item.version !== undefined) lines.push(`Version: ${clean(item.version)}`);
  const auth = authorityLine(item);
  if (auth !== undefined) lines.push(`Authority: ${clean(auth)}`);
  if (sources.length) lines.push(`Source: ${clean(sources.join('; '))}`);
  if (item.conflicts?.length) lines.push(`Conflicts with: ${clean(conflictNote(item.conflicts, item.version))}`);
  lines.push('Content:');
  return { open: lines.join('\n') + '\n', close: `\n[/${opts.label}]` };
}
