/**
 * What the fuzz properties check, written once: findings located inside the text they point at
 * (offsets and LSP positions), the in-memory FileHost the analysis runs on, and the independent
 * oracles for delimiters and role markers in the assembled request.
 */
import picomatch from 'picomatch';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { FileHost } from '../../src/core/host';
import { LineIndex } from '../../src/core/text/lineIndex';
import type { Finding, RenderedMessage, Span } from '../../src/core/types';

/** Messages of a crash that a catch-all turned into a finding: a bug, not a diagnosis. */
export const CRASH = /internal error|Cannot read propert|Cannot set propert|is not a function|Invalid array length|Cannot convert (?:undefined|null)|\bat [\w.<>]+ \(/;

/**
 * Whether a finding or engine issue reports a crash of this code. A `template-invalid` message may
 * be the runtime's own refusal, which the engines reproduce word for word (dotprompt's json helper
 * throws "Cannot read properties of undefined (reading 'hash')" on `{{json a b}}`): only an
 * internal error counts there.
 */
export function isCrash(f: { rule: string; message: string }): boolean {
  if (f.rule === 'template-invalid') return /internal error|\bat [\w.<>]+ \(/i.test(f.message);
  return CRASH.test(f.message);
}

/** The workspace in memory: what the unit tests use, with sizes in UTF-8 bytes. */
export class MemoryHost implements FileHost {
  constructor(
    readonly roots: string[],
    readonly files: Record<string, string>,
  ) {}
  readFile(path: string): string | undefined {
    return Object.prototype.hasOwnProperty.call(this.files, path) ? this.files[path] : undefined;
  }
  size(path: string): number | undefined {
    const t = this.readFile(path);
    return t === undefined ? undefined : Buffer.byteLength(t, 'utf8');
  }
  glob(dir: string, pattern: string): string[] {
    const match = picomatch(pattern, { dot: false });
    return Object.keys(this.files)
      .filter((p) => p.startsWith(dir + '/') && match(p.slice(dir.length + 1)))
      .sort();
  }
}

/** The text of each line without its break, with LSP's line breaks (\n, \r\n, \r). */
export function lspLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** Why `span` is not a valid location in `text`, or undefined when it is. */
export function spanProblem(span: Span | undefined, text: string): string | undefined {
  if (!span || typeof span.start !== 'number' || typeof span.end !== 'number') return `no span: ${JSON.stringify(span)}`;
  if (!Number.isInteger(span.start) || !Number.isInteger(span.end)) return `offsets are not integers: ${JSON.stringify(span)}`;
  if (span.start < 0 || span.end < span.start || span.end > text.length) return `span ${span.start}..${span.end} outside 0..${text.length}`;
  return undefined;
}

/**
 * Why a position conversion of `offset` is wrong, or undefined: LineIndex must agree with
 * vscode-languageserver-textdocument (the library LSP clients use) everywhere except inside a CRLF,
 * where it puts the offset at the end of the line instead of past it, and no character may lie past
 * its line's text.
 */
export function positionProblem(text: string, offset: number, index = new LineIndex(text), doc = TextDocument.create('file:///x', 'plaintext', 0, text), lines = lspLines(text)): string | undefined {
  const ours = index.positionAt(offset);
  const line = lines[ours.line];
  if (line === undefined) return `offset ${offset}: line ${ours.line} does not exist (${lines.length} lines)`;
  if (ours.character < 0 || ours.character > line.length) return `offset ${offset}: character ${ours.character} past the end of line ${ours.line} (${line.length} characters)`;
  const ref = doc.positionAt(offset);
  const inCrlf = offset > 0 && text.charCodeAt(offset - 1) === 13 && text.charCodeAt(offset) === 10;
  if (!inCrlf && (ref.line !== ours.line || ref.character !== ours.character)) return `offset ${offset}: LineIndex says ${ours.line}:${ours.character}, the LSP text document ${ref.line}:${ref.character}`;
  const back = index.offsetAt(ours);
  if (back !== offset && !inCrlf) return `offset ${offset} -> ${ours.line}:${ours.character} -> ${back}`;
  return undefined;
}

/**
 * Every problem with the locations of `findings`: each must point into a file the host has (or the
 * template's own sample, which lives in the template), inside its text, on positions an editor can show.
 */
export function findingProblems(findings: readonly Finding[], files: Record<string, string>): string[] {
  const out: string[] = [];
  const textOf = (path: string): string | undefined => files[path] ?? files[path.replace(/#sample$/, '')];
  const views = new Map<string, { index: LineIndex; doc: TextDocument; lines: string[] }>();
  const check = (where: string, path: string, span: Span) => {
    const text = textOf(path);
    if (text === undefined) {
      out.push(`${where}: path ${path} is not a file of the workspace`);
      return;
    }
    const p = spanProblem(span, text);
    if (p) {
      out.push(`${where} on ${path}: ${p}`);
      return;
    }
    let v = views.get(path);
    if (!v) {
      v = { index: new LineIndex(text), doc: TextDocument.create('file:///x', 'plaintext', 0, text), lines: lspLines(text) };
      views.set(path, v);
    }
    for (const o of [span.start, span.end]) {
      const q = positionProblem(text, o, v.index, v.doc, v.lines);
      if (q) out.push(`${where} on ${path}: ${q}`);
    }
  };
  for (const f of findings) {
    const where = `${f.rule} "${f.message.slice(0, 120)}"`;
    if (typeof f.message !== 'string' || !f.message) out.push(`${f.rule}: empty message`);
    check(where, f.path, f.span);
    for (const r of f.related ?? []) check(`${where} (related "${r.message.slice(0, 60)}")`, r.path, r.span);
    for (const fix of f.fixes ?? []) for (const e of fix.edits) if (files[e.path] !== undefined) check(`${where} (fix "${fix.title}")`, e.path, e.span);
  }
  return out;
}

/** Every piece of text a finding shows a person: message, related messages and fix titles. */
export function findingTexts(findings: readonly Finding[]): string[] {
  return findings.flatMap((f) => [f.message, ...(f.related ?? []).map((r) => r.message), ...(f.fixes ?? []).map((x) => x.title)]);
}

// ---------------------------------------------------------------------------
// Delimiters and role markers in the assembled request
// ---------------------------------------------------------------------------

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * Sequences untrusted text must never carry into the request for these delimiter names: a closing
 * or opening bracket or XML delimiter of any of them (any case), a fence when one is a fence,
 * special-token and dotprompt marker syntax. Written from the escape module's contract, not its code.
 */
export function forbiddenSequences(delimiters: readonly string[]): RegExp {
  const alts: string[] = ['<[|\\uFF5C]', '<<<dotprompt:', '\\{\\{~?\\s*[#/]?\\s*(?:role|history)\\b'];
  for (const d of delimiters) {
    if (!d) continue;
    if (d.startsWith('`')) {
      alts.push('```');
      continue;
    }
    const l = esc(d);
    alts.push(`\\[\\/${l}`, `<\\/${l}`, `\\[${l}(?=[\\s\\]]|$)`, `<${l}(?=[\\s>/]|$)`);
  }
  return new RegExp(alts.join('|'), 'i');
}

/** A role word and a colon at a line start, as the chat formats read one (ASCII spacing). */
const ROLE_AT_LINE_START = /(?:^|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029])[ \t]*(?:#+[ \t]*)?(?:system|user|assistant|developer|tool|function|human)[ \t]*(?:\[[^\]\r\n]{0,200}\])?[ \t]*:/gi;

export interface UntrustedPiece {
  message: number;
  slot?: string;
  itemId?: string;
  /** The untrusted text with its genuine envelope (the one the assembly wrote) taken off. */
  text: string;
  /** Offset of `text` in the message content. */
  offset: number;
}

/** The untrusted parts of the request, each without the genuine envelope around it. */
export function untrustedPieces(messages: readonly RenderedMessage[], labels: ReadonlyMap<string, { label: string; envelope: 'bracket' | 'xml' }>): UntrustedPiece[] {
  const out: UntrustedPiece[] = [];
  messages.forEach((m, mi) => {
    let offset = 0;
    for (const p of m.parts) {
      const start = offset;
      offset += p.text.length;
      if (!p.untrusted || !p.text) continue;
      let text = p.text;
      let at = start;
      // dotprompt's {{json x}} prints the value (envelope and all) as a JSON string: judge what it
      // holds; its escaped line breaks start no line.
      const quoted = text.length > 1 && text.startsWith('"') && text.endsWith('"') ? text : m.content.charAt(start - 1) === '"' && m.content.charAt(offset) === '"' ? `"${text}"` : undefined;
      if (quoted !== undefined) {
        try {
          const decoded: unknown = JSON.parse(quoted);
          if (typeof decoded === 'string') {
            text = decoded;
            at = -1;
          }
        } catch {
          // Not JSON: the text as it is.
        }
      }
      const env = p.slot !== undefined ? labels.get(p.slot) : undefined;
      if (env && p.itemId !== undefined) {
        if (env.envelope === 'bracket') {
          const open = `[${env.label} `;
          const close = `\n[/${env.label}]`;
          const header = text.indexOf('\nContent:\n');
          if (text.startsWith(open) && text.endsWith(close) && header >= 0) {
            // The id line and the metadata lines are data too, but on lines of their own after a
            // key (`Title: …`): check them as inline text, and the content as the item's text.
            const idLine = text.slice(open.length, text.indexOf('\n'));
            out.push({ message: mi, slot: p.slot, itemId: p.itemId, text: idLine.replace(/\]$/, ''), offset: at < 0 ? -1 : start + open.length });
            const head = text.slice(text.indexOf('\n') + 1, header);
            for (const line of head.split('\n')) out.push({ message: mi, slot: p.slot, itemId: p.itemId, text: line.replace(/^[A-Za-z ]+: /, ''), offset: -1 });
            at = at < 0 ? -1 : start + header + '\nContent:\n'.length;
            text = text.slice(header + '\nContent:\n'.length, text.length - close.length);
          }
        } else {
          const tag = env.label.toLowerCase();
          const close = `\n</${tag}>`;
          const nl = text.indexOf('>\n');
          if (text.startsWith(`<${tag} `) && text.endsWith(close) && nl >= 0) {
            at = at < 0 ? -1 : start + nl + 2;
            text = text.slice(nl + 2, text.length - close.length);
          }
        }
      }
      out.push({ message: mi, slot: p.slot, itemId: p.itemId, text, offset: at });
    }
  });
  return out;
}

/** The first forbidden sequence in an untrusted piece, with a role marker only where the piece starts a line of its message. */
export function forgery(piece: UntrustedPiece, content: string, forbidden: RegExp): string | undefined {
  const m = forbidden.exec(piece.text);
  if (m) return m[0];
  if (piece.offset < 0) return undefined;
  // Role markers are judged in the message: the piece's text with the character before it.
  // A piece after a line break (or at the message start) starts a line; after other text it does not.
  const prev = piece.offset > 0 ? content.charAt(piece.offset - 1) : '\n';
  const before = /[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]/.test(prev) ? '\n' : 'x';
  ROLE_AT_LINE_START.lastIndex = 0;
  for (let r = ROLE_AT_LINE_START.exec(before + piece.text); r; r = ROLE_AT_LINE_START.exec(before + piece.text)) {
    // A match that starts at the character before the piece begins at the piece's first character.
    if (r.index + r[0].length > 1) return r[0];
  }
  return undefined;
}

/** Python's whitespace (str.isspace), which Prompty's role-line regex allows around a role word. */
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** Prompty's role boundary: a role word (Python's re.I, so ſ and İ/ı too), brackets of any length, a colon, alone on its line. */
export const PROMPTY_BOUNDARY = new RegExp(`^[${PY_SPACE}]*#?[${PY_SPACE}]*(?:assistant|function|system|user|tools)(?:\\[[^\\n]*\\])?[${PY_SPACE}]*:[${PY_SPACE}]*$`, 'iu');
const PY_LINES = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/** Whether untrusted text holds a line Prompty would read as a role boundary (`\u3000system:`, `tools:` …). */
export function promptyBoundaryIn(text: string): string | undefined {
  const folded = text.replace(/ſ/g, 's').replace(/[İı]/g, 'i');
  return folded.split(PY_LINES).find((l) => PROMPTY_BOUNDARY.test(l));
}
