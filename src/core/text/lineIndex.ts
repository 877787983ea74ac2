/**
 * Offset <-> line/character conversion, done once per text. The core works in UTF-16 offsets;
 * front ends convert at their edge with this index (0-based lines and characters, as in LSP).
 */
export interface Position {
  line: number;
  character: number;
}

export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(private readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.starts.push(i + 1);
      else if (c === 13) {
        if (text.charCodeAt(i + 1) === 10) i++;
        this.starts.push(i + 1);
      }
    }
  }

  get lineCount(): number {
    return this.starts.length;
  }

  /**
   * The position of an offset. An offset inside a line break (between the CR and the LF of a
   * CRLF) is put at the end of its line's text, so a range never ends past its line.
   */
  positionAt(offset: number): Position {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    const inBreak = o > 0 && this.text.charCodeAt(o) === 10 && this.text.charCodeAt(o - 1) === 13;
    return { line: lo, character: o - this.starts[lo] - (inBreak ? 1 : 0) };
  }

  /** The offset of a position; a character past the line's text is the end of that text (as LSP says), before its line break. */
  offsetAt(pos: Position): number {
    if (pos.line < 0) return 0;
    if (pos.line >= this.starts.length) return this.text.length;
    const start = this.starts[pos.line];
    let end = this.text.length;
    if (pos.line + 1 < this.starts.length) {
      const next = this.starts[pos.line + 1];
      end = next >= 2 && this.text.charCodeAt(next - 2) === 13 && this.text.charCodeAt(next - 1) === 10 ? next - 2 : next - 1;
    }
    return Math.max(start, Math.min(start + pos.character, end));
  }

  /** Offset of the start of a line (clamped). */
  lineStart(line: number): number {
    return this.starts[Math.max(0, Math.min(line, this.starts.length - 1))];
  }
}
