/**
 * Positions at the server's edge: spans of the core (UTF-16 offsets) to LSP ranges and back, and
 * the mapping of an analysis made for an older text onto the text the editor shows now, so code
 * lenses and hovers stay put while the user types and the fresh analysis is still pending.
 */
import type { Range } from 'vscode-languageserver';
import type { Span } from '../core/types';
import { LineIndex } from '../core/text/lineIndex';

/** One text, its line index and the conversions the features need. */
export class TextView {
  private index?: LineIndex;

  constructor(readonly text: string) {}

  get lines(): LineIndex {
    return (this.index ??= new LineIndex(this.text));
  }

  range(span: Span): Range {
    return { start: this.lines.positionAt(span.start), end: this.lines.positionAt(span.end) };
  }

  offsetAt(pos: { line: number; character: number }): number {
    return this.lines.offsetAt(pos);
  }
}

/**
 * Views of the files diagnostics are placed in, kept per path while the text is the same: a 1 MB
 * fixture's line index took milliseconds to rebuild for every keystroke in its template. A few
 * recent paths only, so scanned files' texts are not held on to.
 */
export class TextViews {
  private readonly map = new Map<string, TextView>();
  constructor(private readonly limit = 32) {}

  /** Uses `view` for its path from now on (a view made elsewhere for the same text). */
  seed(path: string, view: TextView): void {
    this.map.delete(path);
    this.map.set(path, view);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as string);
  }

  of(path: string, text: string): TextView {
    const hit = this.map.get(path);
    this.map.delete(path);
    const view = hit && hit.text === text ? hit : new TextView(text);
    this.map.set(path, view);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as string);
    return view;
  }
}

/**
 * How the analysed text became the current text, as one replaced region: the common prefix and
 * suffix stay, the middle changed. A keystroke or a paste is exactly one such region; several
 * edits between two analyses map approximately (positions inside the changed region clamp to its
 * edges), which is what a lens needs until the fresh analysis lands a few milliseconds later.
 */
export class TextDelta {
  private readonly prefix: number;
  private readonly oldEnd: number;
  private readonly newEnd: number;

  constructor(oldText: string, newText: string) {
    const max = Math.min(oldText.length, newText.length);
    let p = 0;
    while (p < max && oldText.charCodeAt(p) === newText.charCodeAt(p)) p++;
    let s = 0;
    while (s < max - p && oldText.charCodeAt(oldText.length - 1 - s) === newText.charCodeAt(newText.length - 1 - s)) s++;
    this.prefix = p;
    this.oldEnd = oldText.length - s;
    this.newEnd = newText.length - s;
  }

  get identity(): boolean {
    return this.prefix === this.oldEnd && this.prefix === this.newEnd;
  }

  toNew(offset: number): number {
    if (offset <= this.prefix) return offset;
    if (offset >= this.oldEnd) return offset + (this.newEnd - this.oldEnd);
    return this.prefix;
  }

  toOld(offset: number): number {
    if (offset <= this.prefix) return offset;
    if (offset >= this.newEnd) return offset - (this.newEnd - this.oldEnd);
    return this.prefix;
  }

  spanToNew(span: Span): Span {
    return { start: this.toNew(span.start), end: Math.max(this.toNew(span.start), this.toNew(span.end)) };
  }
}

export function contains(span: Span, offset: number): boolean {
  return offset >= span.start && offset <= span.end;
}

export function overlaps(a: Span, b: Span): boolean {
  return a.start <= b.end && b.start <= a.end;
}
