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
 */

/** Opens a marked run: followed by 3 slot digits and 3 item digits (base 256 from MARK_DIGIT). */
export const MARK_OPEN = '\uE000';
/** Closes the innermost marked run. */
export const MARK_CLOSE = '\uE001';
const MARK_DIGIT = 0xe100;
const HEADER = 7;
/** Every character the marks use; text that contains any of them cannot be attributed. */
export const MARK_CHARS = /[\uE000\uE001\uE100-\uE1FF]/;
const MARK_CHARS_G = /[\uE000\uE001]|[\uE100-\uE1FF]/g;
const NEXT_MARK = /[\uE000\uE001\uE100-\uE1FF]/g;

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

/** The text without any marks. */
export function unmark(text: string): string {
  return text.indexOf(MARK_OPEN) < 0 && text.indexOf(MARK_CLOSE) < 0 ? text : text.replace(MARK_CHARS_G, '');
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
export function splitMarked(text: string): MarkedRun[] | undefined {
  const out: MarkedRun[] = [];
  const stack: Array<{ slot: number; item: number }> = [];
  let buf = '';
  const flush = () => {
    if (!buf) return;
    const top = stack[stack.length - 1];
    const slot = top ? top.slot : -1;
    const item = top ? top.item : -1;
    const last = out[out.length - 1];
    if (last && last.slot === slot && last.item === item) last.text += buf;
    else out.push({ text: buf, slot, item });
    buf = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0xe000) {
      if (i + HEADER > text.length) return undefined;
      for (let k = 1; k < HEADER; k++) {
        const d = text.charCodeAt(i + k);
        if (d < MARK_DIGIT || d > MARK_DIGIT + 0xff) return undefined;
      }
      flush();
      stack.push({ slot: readDigits(text, i + 1), item: readDigits(text, i + 4) - 1 });
      i += HEADER;
      continue;
    }
    if (c === 0xe001) {
      flush();
      stack.pop();
      i++;
      continue;
    }
    if (c >= MARK_DIGIT && c <= MARK_DIGIT + 0xff) return undefined;
    // Copy the run up to the next mark in one slice. The regular expression finds it natively;
    // a charCodeAt loop over an engine's output (a rope of concatenations) runs far slower.
    NEXT_MARK.lastIndex = i + 1;
    const j = NEXT_MARK.exec(text)?.index ?? text.length;
    buf += text.slice(i, j);
    i = j;
  }
  flush();
  return out;
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
