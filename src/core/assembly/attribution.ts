/**
 * Slot attribution through the real template engines. The renderer passes the engine values whose
 * strings carry invisible marks (characters of the Unicode private use area): an open mark with the
 * slot and item it came from, the text, a close mark. The engine renders as it always does; the
 * marks travel with the text they belong to, so the rendered messages can be cut back into parts
 * (template text, slot text, item text). The marks are then removed, and the result is checked
 * against a render of the same values without marks: when a template compares or measures a
 * marked string (`ifEquals`, `length`, `tojson`), the two differ and the unmarked render is used,
 * without attribution (the caller reports that). What the model receives is therefore always the
 * engine's output for the real values.
 *
 * A template that only prints, loops over and tests its values (the engine's tree says so:
 * `printsValuesOnly`) renders a value's text without reading it, so a long text can go into the
 * engine as a reference instead (`ref`: a mark with the slot, item and field, and no text): the
 * engine renders a short string, and the text is put back where the reference is when the render
 * is cut into parts (`splitMarked` with a resolver) or expanded (`expandMarks`). The fit step's
 * probes then render and cut tens of kilobytes instead of the whole request, and count the same
 * text objects from one probe to the next.
 */

/** Opens a marked run: followed by 3 slot digits and 3 item digits (base 256 from MARK_DIGIT). */
export const MARK_OPEN = '\uE000';
/** Closes the innermost marked run. */
export const MARK_CLOSE = '\uE001';
/** A reference to a text (followed by 3 slot, 3 item and 1 field digits): stands for a marked run of that text. */
export const MARK_REF = '\uE002';
const MARK_DIGIT = 0xe100;
const HEADER = 7;
const REF_LENGTH = 8;
/** Every character the marks use; text that contains any of them cannot be attributed. */
export const MARK_CHARS = /[\uE000-\uE002\uE100-\uE1FF]/;
const MARK_CHARS_G = /[\uE000\uE001]|[\uE100-\uE1FF]/g;

/**
 * Where the next mark character is in `s` from `from`, or -1. A loop over the characters: the
 * texts it reads are flat (a split's pieces, or a text `indexOf` has already flattened), and in a
 * text of many short runs a regular expression's per-call cost dominates.
 */
function nextMark(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xe000 && (c <= 0xe002 || (c >= MARK_DIGIT && c <= MARK_DIGIT + 0xff))) return i;
  }
  return -1;
}

/** Whether `s` holds mark digits at every offset from `from` up to `to` (and is that long). */
function digitsUpTo(s: string, from: number, to: number): boolean {
  if (to > s.length) return false;
  for (let k = from; k < to; k++) {
    const d = s.charCodeAt(k);
    if (d < MARK_DIGIT || d > MARK_DIGIT + 0xff) return false;
  }
  return true;
}

/** Whether a whole reference (its mark and 7 digits) starts at `at`. */
function isRef(s: string, at: number): boolean {
  return s.charCodeAt(at) === 0xe002 && digitsUpTo(s, at + 1, at + REF_LENGTH);
}

/** The text a reference stands for (slot number, item number, field number), or undefined when there is none. */
export type RefResolver = (slot: number, item: number, field: number) => string | undefined;

function digits(n: number): string {
  return String.fromCharCode(MARK_DIGIT + ((n >> 16) & 0xff), MARK_DIGIT + ((n >> 8) & 0xff), MARK_DIGIT + (n & 0xff));
}

function readDigits(s: string, at: number): number {
  return ((s.charCodeAt(at) - MARK_DIGIT) << 16) | ((s.charCodeAt(at + 1) - MARK_DIGIT) << 8) | (s.charCodeAt(at + 2) - MARK_DIGIT);
}

/** `text` marked as coming from slot number `slot` (and item number `item`, 0-based; -1 for none). Empty text stays empty (so it stays falsy). */
export function mark(text: string, slot: number, item = -1): string {
  if (text === '') return text;
  return MARK_OPEN + digits(slot) + digits(item + 1) + text + MARK_CLOSE;
}

/**
 * A reference to the text of field `field` of item `item` of slot `slot`: it renders, cuts and
 * expands as `mark(text, slot, item)` would where the template only prints it. The text must be
 * one that `refable` accepts.
 */
export function ref(slot: number, item: number, field: number): string {
  return MARK_REF + digits(slot) + digits(item + 1) + String.fromCharCode(MARK_DIGIT + field);
}

/**
 * Whether a text can go into a printing-only template as a reference: it is not blank (dotprompt
 * drops blank pieces between markers, and a reference is never blank) and has no `<` or `>`, so it
 * cannot take part in a dotprompt marker (`<<<dotprompt:…>>>`) that the reference would hide.
 */
export function refable(text: string): boolean {
  return text.trim() !== '' && !/[<>]/.test(text) && !MARK_CHARS.test(text);
}

/** The text without any marks (the text must hold no references: see `expandMarks`). */
export function unmark(text: string): string {
  return text.indexOf(MARK_OPEN) < 0 && text.indexOf(MARK_CLOSE) < 0 ? text : text.replace(MARK_CHARS_G, '');
}

/**
 * The text without marks, each reference replaced by the text it stands for: what a render of
 * the plain values gives where the template only prints them. A reference that cannot be resolved
 * (damaged) is dropped, which the attribution check then sees as a difference.
 */
export function expandMarks(text: string, resolve: RefResolver): string {
  if (text.indexOf(MARK_REF) < 0) return unmark(text);
  let out = '';
  let i = 0;
  for (let at = nextMark(text, 0); at >= 0; at = nextMark(text, i)) {
    out += text.slice(i, at);
    if (isRef(text, at)) {
      out += resolve(readDigits(text, at + 1), readDigits(text, at + 4) - 1, text.charCodeAt(at + 7) - MARK_DIGIT) ?? '';
      i = at + REF_LENGTH;
    } else i = at + 1;
  }
  return out + text.slice(i);
}

/**
 * Whether `plain` equals `expandMarks(marked, resolve)`, compared in place: the expansion of a
 * whole request is not built to be compared.
 */
export function isExpansion(plain: string, marked: string, resolve: RefResolver): boolean {
  if (marked.indexOf(MARK_REF) < 0 && marked.indexOf(MARK_OPEN) < 0 && marked.indexOf(MARK_CLOSE) < 0) return plain === marked;
  let at = 0;
  let i = 0;
  // A slice and an equality (the first slice flattens a rope; startsWith on one is slower).
  const matches = (piece: string): boolean => {
    if (plain.slice(at, at + piece.length) !== piece) return false;
    at += piece.length;
    return true;
  };
  for (let k = nextMark(marked, 0); k >= 0; k = nextMark(marked, i)) {
    if (k > i && !matches(marked.slice(i, k))) return false;
    if (isRef(marked, k)) {
      const target = resolve(readDigits(marked, k + 1), readDigits(marked, k + 4) - 1, marked.charCodeAt(k + 7) - MARK_DIGIT);
      if (target !== undefined && !matches(target)) return false;
      i = k + REF_LENGTH;
    } else i = k + 1;
  }
  return (i >= marked.length || matches(marked.slice(i))) && at === plain.length;
}

export interface MarkedRun {
  text: string;
  /** Slot number, or -1 for template text. */
  slot: number;
  /** Item number, or -1. */
  item: number;
}

/**
 * Cuts marked text into runs by their innermost mark. Unbalanced marks (a template that sliced a
 * marked string) are tolerated: a stray close ends nothing, an open without close runs to the end.
 * Returns undefined when a header is cut short, i.e. the marks were damaged.
 */
export function splitMarked(text: string, resolve?: RefResolver): MarkedRun[] | undefined {
  const out: MarkedRun[] = [];
  const ok = scanMarked(text, resolve, (piece, slot, item) => {
    const last = out[out.length - 1];
    if (last && last.slot === slot && last.item === item) last.text += piece;
    else out.push({ text: piece, slot, item });
  });
  return ok ? out : undefined;
}

/**
 * The texts of marked text's runs in order, without their attribution and unmerged: what counting
 * needs of a fit probe (their concatenation is the runs'). Undefined where `splitMarked` is.
 */
export function markedTexts(text: string, resolve?: RefResolver): string[] | undefined {
  const out: string[] = [];
  return scanMarked(text, resolve, (piece) => out.push(piece)) ? out : undefined;
}

/** Reads marked text, giving each piece of text with the slot and item of its innermost mark; false when the marks are damaged. */
function scanMarked(text: string, resolve: RefResolver | undefined, emit: (text: string, slot: number, item: number) => void): boolean {
  // No marks at all (this search also flattens a rope before the loop below reads its characters).
  if (!MARK_CHARS.test(text)) {
    if (text) emit(text, -1, -1);
    return true;
  }
  const stack: Array<{ slot: number; item: number }> = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0xe000) {
      if (!digitsUpTo(text, i + 1, i + HEADER)) return false;
      stack.push({ slot: readDigits(text, i + 1), item: readDigits(text, i + 4) - 1 });
      i += HEADER;
      continue;
    }
    if (c === 0xe001) {
      stack.pop();
      i++;
      continue;
    }
    if (c === 0xe002) {
      // A reference: the run of the text it stands for (the innermost mark, as a marked text would be).
      if (!resolve || !isRef(text, i)) return false;
      const slot = readDigits(text, i + 1);
      const item = readDigits(text, i + 4) - 1;
      const target = resolve(slot, item, text.charCodeAt(i + 7) - MARK_DIGIT);
      if (target === undefined) return false;
      emit(target, slot, item);
      i += REF_LENGTH;
      continue;
    }
    if (c >= MARK_DIGIT && c <= MARK_DIGIT + 0xff) return false;
    // The run up to the next mark, in one slice.
    const next = nextMark(text, i + 1);
    const j = next < 0 ? text.length : next;
    const top = stack[stack.length - 1];
    emit(text.slice(i, j), top ? top.slot : -1, top ? top.item : -1);
    i = j;
  }
  return true;
}

/**
 * A value that prints as `unit` (its envelope and text) and whose own enumerable properties are its
 * fields, for `{{this.title}}` / `{{ d.source }}`. The engines print it through `toString`, like a
 * Python object with `__str__` (engine/types.ts, isStringable).
 */
export class ItemValue {
  declare private readonly unit: string;
  constructor(unit: string, fields: Record<string, unknown>) {
    Object.defineProperty(this, 'unit', { value: unit, enumerable: false });
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) (this as unknown as Record<string, unknown>)[k] = v;
  }
  toString(): string {
    return this.unit;
  }
}

/** A slot's kept items: iterable like any list, printed as the items separated by `separator`. */
export class ItemList extends Array<ItemValue> {
  declare private readonly separator: string;
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }
  /** The items, printed with `separator` between them. */
  static joined(items: readonly ItemValue[], separator: string): ItemList {
    const list = new ItemList();
    for (const it of items) list.push(it);
    Object.defineProperty(list, 'separator', { value: separator, enumerable: false });
    return list;
  }
  override toString(): string {
    let s = '';
    for (let i = 0; i < this.length; i++) s += (i ? this.separator : '') + this[i].toString();
    return s;
  }
}
