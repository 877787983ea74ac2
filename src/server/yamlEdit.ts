/**
 * Small, layout-preserving text edits of a context config, computed from the spans the core's
 * config parser reports: set a field of a slot entry, add a slot entry, replace a value. Block and
 * flow mappings are both handled; the user's formatting and comments are left as they are.
 */
import type { ConfigDoc, Span } from '../core/types';
import { classifyFile } from '../core/analyze';
import { slotFieldEdit } from '../core/config/edit';

export interface TextEditSpan {
  span: Span;
  newText: string;
}

function lineStartOf(text: string, offset: number): number {
  const nl = text.lastIndexOf('\n', offset - 1);
  return nl + 1;
}

function columnOf(text: string, offset: number): number {
  return offset - lineStartOf(text, offset);
}

function lineEndOf(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl > 0 && text[nl - 1] === '\r' ? nl - 1 : nl;
}

function eol(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** Offset just after the last non-space character before `offset`. */
function trimBack(text: string, offset: number, floor: number): number {
  let i = offset;
  while (i > floor && /\s/.test(text[i - 1])) i--;
  return i;
}

/** Inserts `key: value` into the mapping whose value span is `v` (flow or block). */
function insertIntoMapping(text: string, v: Span, entry: string): TextEditSpan {
  if (text[v.start] === '{') {
    const close = text.lastIndexOf('}', v.end);
    const before = trimBack(text, close, v.start + 1);
    const empty = before === v.start + 1;
    return { span: { start: before, end: before }, newText: empty ? ` ${entry} ` : `, ${entry}` };
  }
  // Block mapping: the new entry goes first, at the column of the existing first key.
  const indent = ' '.repeat(columnOf(text, v.start));
  return { span: { start: v.start, end: v.start }, newText: `${entry}${eol(text)}${indent}` };
}

/** Offset after the `:` that follows a key, or undefined when it cannot be found on the line. */
function colonAfter(text: string, key: Span): number | undefined {
  const end = lineEndOf(text, key.end);
  const i = text.indexOf(':', key.end);
  return i >= 0 && i < end ? i + 1 : undefined;
}

/**
 * Sets `slots.<slot>.<field>` to the string `value` (a plain YAML scalar): the core's node-exact
 * edit (config/edit.ts: trailing commas, comments inside flow mappings, read back before it is
 * offered), or no edit when that cannot be done safely.
 */
export function setSlotField(doc: ConfigDoc, slot: string, field: string, value: string): TextEditSpan | undefined {
  const r = slotFieldEdit(doc.path, doc.text, slot, field, value, value, { inline: classifyFile(doc.path) === 'template' });
  if (r.edits?.length === 1) return { span: r.edits[0].span, newText: r.edits[0].newText };
  return undefined;
}

/** Adds `slots.<name>: <entry>` (entry is a flow mapping's text). */
export function addSlot(doc: ConfigDoc, name: string, entry: string): TextEditSpan {
  const text = doc.text;
  const nl = eol(text);
  const slotsKey = doc.keySpan(['slots']);
  const v = doc.valueSpan(['slots']);
  if (!slotsKey) {
    const end = text.length;
    const lead = end === 0 || text.endsWith('\n') ? '' : nl;
    return { span: { start: end, end }, newText: `${lead}slots:${nl}  ${name}: ${entry}${nl}` };
  }
  if (v && v.end > v.start && text[v.start] === '{') return insertIntoMapping(text, v, `${name}: ${entry}`);
  if (v && v.end > v.start) {
    // After the last entry, at the column of the first one, so the slot reads as the newest.
    const indent = ' '.repeat(columnOf(text, v.start));
    const after = trimBack(text, v.end, v.start);
    return { span: { start: after, end: after }, newText: `${nl}${indent}${name}: ${entry}` };
  }
  const colon = colonAfter(text, slotsKey) ?? slotsKey.end;
  const keyIndent = ' '.repeat(columnOf(text, slotsKey.start) + 2);
  return { span: { start: colon, end: v?.end ?? colon }, newText: `${nl}${keyIndent}${name}: ${entry}` };
}

/**
 * Appends `value` (a plain YAML scalar) to the top-level list `key` of a config (`helpers:`,
 * `partials:`), flow or block, or adds `key: [value]` at the end of the file when the key is absent.
 */
export function addListEntry(doc: ConfigDoc, key: string, value: string): TextEditSpan {
  const text = doc.text;
  const nl = eol(text);
  const keySpan = doc.keySpan([key]);
  const v = doc.valueSpan([key]);
  if (!keySpan) {
    const end = text.length;
    const lead = end === 0 || text.endsWith('\n') ? '' : nl;
    return { span: { start: end, end }, newText: `${lead}${key}: [${value}]${nl}` };
  }
  if (v && v.end > v.start && text[v.start] === '[') {
    const close = text.lastIndexOf(']', v.end);
    const before = trimBack(text, close, v.start + 1);
    return { span: { start: before, end: before }, newText: before === v.start + 1 ? value : `, ${value}` };
  }
  if (v && v.end > v.start && text[v.start] === '-') {
    // After the last item, at the column of the first one.
    const indent = ' '.repeat(columnOf(text, v.start));
    const after = trimBack(text, v.end, v.start);
    return { span: { start: after, end: after }, newText: `${nl}${indent}- ${value}` };
  }
  // `key:` with no value (or a scalar, which the schema rejects anyway): the list replaces it.
  const colon = colonAfter(text, keySpan) ?? keySpan.end;
  return { span: { start: colon, end: v && v.end > v.start ? v.end : colon }, newText: ` [${value}]` };
}
