/**
 * What an instruction file's Markdown holds for the agents and for the views: its front matter read
 * the way each agent reads it, its sections (headings), its HTML comments (invisible once rendered,
 * but text the model receives), the files it names (Markdown links, `#file:` references,
 * `@path` imports) and a prompt file's variables. Every scan is one linear pass; code blocks and
 * code spans are skipped where the agents skip them (Claude Code and Gemini CLI do not evaluate an
 * import inside code).
 */
import type { Span } from '../../types';

export interface FrontField {
  value: string | boolean | string[];
  keySpan: Span;
  valueSpan: Span;
}

export interface AgentFrontMatter {
  /** Whole fence, `---` to `---` and its line break. */
  span: Span;
  fields: Record<string, FrontField>;
  /** Where the body starts. */
  bodyStart: number;
}

/** Strips one pair of matching quotes. */
function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) return t.slice(1, -1);
  return t;
}

/**
 * The front matter as the agents read it: one `key: value` per line, the value the rest of the line
 * (Cursor's `globs: *.ts, src/**` is not valid YAML, and Cursor reads it as written), quotes
 * removed, `true`/`false` as booleans, `[a, b]` and `- item` lines as lists. Nested mappings are
 * kept as their first line's text. Never fails: a file without a closing fence has no front matter.
 */
export function readAgentFrontMatter(text: string): AgentFrontMatter | undefined {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const open = /^---[ \t]*\r?\n/.exec(text.slice(start, start + 8));
  if (!open) return undefined;
  const re = /^---[ \t]*(?:\r?\n|$)/gm;
  re.lastIndex = start + open[0].length;
  const close = re.exec(text);
  if (!close) return undefined;
  const fields: Record<string, FrontField> = {};
  const inner = text.slice(start + open[0].length, close.index);
  const base = start + open[0].length;
  const lines = inner.split('\n');
  let offset = base;
  let listKey: string | undefined;
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '');
    const lineStart = offset;
    offset += raw.length + 1;
    const item = /^\s+-\s*(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
    if (item && listKey) {
      const f = fields[listKey];
      const v = unquote(item[1]);
      const vs = lineStart + line.indexOf(item[1]);
      f.value = [...(Array.isArray(f.value) ? f.value : []), v];
      f.valueSpan = { start: f.valueSpan.start === f.keySpan.end ? vs : f.valueSpan.start, end: vs + item[1].length };
      continue;
    }
    const m = /^([A-Za-z_][\w.-]*)[ \t]*:(.*)$/.exec(line);
    if (!m) {
      if (!/^\s/.test(line)) listKey = undefined;
      continue;
    }
    const key = m[1];
    const rawValue = m[2];
    const lead = rawValue.length - rawValue.trimStart().length;
    const valueText = rawValue.trim().replace(/\s+#.*$/, (c) => (/^["']/.test(rawValue.trim()) ? c : ''));
    const keySpan = { start: lineStart, end: lineStart + key.length };
    const vStart = lineStart + key.length + 1 + lead;
    const valueSpan = { start: vStart, end: vStart + valueText.length };
    let value: FrontField['value'];
    if (valueText === '') {
      value = '';
      listKey = key;
      fields[key] = { value, keySpan, valueSpan: { start: keySpan.end, end: keySpan.end } };
      continue;
    }
    listKey = undefined;
    if (/^(true|false)$/i.test(valueText)) value = valueText.toLowerCase() === 'true';
    else if (valueText.startsWith('[') && valueText.endsWith(']')) value = splitList(valueText.slice(1, -1));
    else value = unquote(valueText);
    fields[key] = { value, keySpan, valueSpan };
  }
  return { span: { start, end: close.index + close[0].length }, fields, bodyStart: close.index + close[0].length };
}

/** Comma-separated items, quotes removed, empty items dropped. */
export function splitList(s: string): string[] {
  return s
    .split(',')
    .map(unquote)
    .filter((x) => x !== '');
}

/** A field's value as a list of patterns (a string is comma-separated, as Copilot and Cursor read it). */
export function patternsOf(f: FrontField | undefined): string[] {
  if (!f) return [];
  if (Array.isArray(f.value)) return f.value.flatMap(splitList);
  if (typeof f.value === 'string') return splitList(f.value);
  return [];
}

// ---------------------------------------------------------------------------
// Code regions, sections, comments, references
// ---------------------------------------------------------------------------

/** Fenced code blocks and inline code spans, in order. */
export function codeRegions(text: string, from = 0): Span[] {
  const out: Span[] = [];
  const fence = /^( {0,3})(`{3,}|~{3,})[^\n]*$/gm;
  fence.lastIndex = from;
  let searchFrom = from;
  // Inline code spans between fences: a run of backticks closed by the next run of the same length.
  // One pass over the runs (a regex with a lazy body would rescan to the end from every unclosed run).
  const spans = (a: number, b: number) => {
    const runs: Array<{ at: number; len: number }> = [];
    for (let i = text.indexOf('`', a); i >= 0 && i < b; i = text.indexOf('`', i)) {
      let j = i;
      while (j < b && text.charCodeAt(j) === 96) j++;
      runs.push({ at: i, len: j - i });
      i = j;
    }
    const next = new Array<number>(runs.length).fill(-1);
    const lastOf = new Map<number, number>();
    for (let k = runs.length - 1; k >= 0; k--) {
      next[k] = lastOf.get(runs[k].len) ?? -1;
      lastOf.set(runs[k].len, k);
    }
    for (let k = 0; k < runs.length; k++) {
      const j = next[k];
      if (j < 0) continue;
      out.push({ start: runs[k].at, end: runs[j].at + runs[j].len });
      k = j;
    }
  };
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const marker = m[2];
    spans(searchFrom, m.index);
    const closeRe = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`, 'gm');
    closeRe.lastIndex = m.index + m[0].length;
    const close = closeRe.exec(text);
    const end = close ? close.index + close[0].length : text.length;
    out.push({ start: m.index, end });
    searchFrom = end;
    fence.lastIndex = end;
    if (!close) break;
  }
  spans(searchFrom, text.length);
  return out;
}

/** Whether an offset lies in one of the sorted regions. */
export function inRegions(regions: readonly Span[], at: number): boolean {
  let lo = 0;
  let hi = regions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (regions[mid].end <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo < regions.length && regions[lo].start <= at;
}

export interface Section {
  level: number;
  title: string;
  /** The heading line. */
  heading: Span;
  /** Heading to the next heading of the same or a higher level (its subsections included). */
  span: Span;
}

/** ATX headings (`#` .. `######`) outside code blocks, each with the text it heads. */
export function sections(text: string, from: number, code: readonly Span[]): Section[] {
  const heads: Array<{ level: number; title: string; heading: Span }> = [];
  const re = /^ {0,3}(#{1,6})(?:[ \t]+([^\n]*))?$/gm;
  re.lastIndex = from;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (inRegions(code, m.index)) continue;
    // A closing run of `#` after a space is not part of the title (CommonMark).
    let title = (m[2] ?? '').trim();
    let k = title.length;
    while (k > 0 && title.charCodeAt(k - 1) === 35) k--;
    if (k === 0 || /[ \t]/.test(title.charAt(k - 1))) title = title.slice(0, k).trim();
    heads.push({ level: m[1].length, title, heading: { start: m.index, end: m.index + m[0].length } });
  }
  // Each heading's section ends where the next heading of its level or a higher one starts (one pass with a stack).
  const ends = new Array<number>(heads.length).fill(text.length);
  const open: number[] = [];
  heads.forEach((h, i) => {
    while (open.length && heads[open[open.length - 1]].level >= h.level) ends[open.pop()!] = h.heading.start;
    open.push(i);
  });
  return heads.map((h, i) => ({ ...h, span: { start: h.heading.start, end: ends[i] } }));
}

/** `<!-- ... -->` comments outside code (an unclosed one runs to the end, as a Markdown renderer hides it). */
export function htmlComments(text: string, from: number, code: readonly Span[]): Span[] {
  const out: Span[] = [];
  let i = text.indexOf('<!--', from);
  while (i >= 0) {
    if (inRegions(code, i)) {
      i = text.indexOf('<!--', i + 4);
      continue;
    }
    const close = text.indexOf('-->', i + 4);
    const end = close < 0 ? text.length : close + 3;
    out.push({ start: i, end });
    i = close < 0 ? -1 : text.indexOf('<!--', end);
  }
  return out;
}

export type ReferenceKind = 'link' | 'file' | 'import';

export interface Reference {
  kind: ReferenceKind;
  /** The path as written (anchor and title removed, `%20` decoded). */
  target: string;
  /** Span of the path in the file. */
  span: Span;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function cleanTarget(t: string): string {
  let s = t.trim();
  if (s.startsWith('<') && s.endsWith('>')) s = s.slice(1, -1);
  s = s.replace(/[#?].*$/, '');
  try {
    s = decodeURIComponent(s);
  } catch {
    // A malformed escape is kept as written.
  }
  return s;
}

/**
 * The files an instruction file names: Markdown links to local paths (every kind), `#file:path`
 * (Copilot's prompt and instruction files) and `@path` imports (`importsAt`: Claude Code and Gemini
 * CLI), outside code. URLs, mail links and in-page anchors are not files.
 */
export function references(text: string, from: number, code: readonly Span[], importsAt: boolean): Reference[] {
  const out: Reference[] = [];
  // Links are found from their `](`, looking back to the `[` on the same line (never past the
  // previous `](`), so a long line of brackets costs one pass; the target is at most 1,024 characters.
  // A target stops at a `]` too, so the scans of all targets together stay within the text's length.
  const target = /\s*(<[^>\n\]]{0,1024}>|[^)\s\]]{1,1024})(?:\s+(?:"[^"\n]{0,1024}"|'[^'\n]{0,1024}'))?\s*\)/y;
  let floor = from;
  for (let i = text.indexOf('](', from); i >= 0; i = text.indexOf('](', i + 2)) {
    let open = -1;
    for (let k = i - 1; k >= floor; k--) {
      const c = text.charCodeAt(k);
      if (c === 10) break;
      if (c === 91) {
        open = k;
        break;
      }
    }
    floor = i + 2;
    if (open < 0 || inRegions(code, open)) continue;
    target.lastIndex = i + 2;
    const m = target.exec(text);
    if (!m) continue;
    const raw = m[1];
    if (SCHEME.test(raw) || raw.startsWith('#') || raw.startsWith('//')) continue;
    const t = cleanTarget(raw);
    if (!t) continue;
    const at = i + 2 + m[0].indexOf(raw);
    out.push({ kind: 'link', target: t, span: { start: at, end: at + raw.length } });
  }
  const file = /#file:(`[^`\n]+`|"[^"\n]+"|[^\s)\]]+)/g;
  file.lastIndex = from;
  for (let m = file.exec(text); m; m = file.exec(text)) {
    if (inRegions(code, m.index)) continue;
    const raw = m[1].replace(/^[`"]|[`"]$/g, '');
    const at = m.index + 6 + (m[1] === raw ? 0 : 1);
    out.push({ kind: 'file', target: cleanTarget(raw), span: { start: at, end: at + raw.length } });
  }
  if (importsAt) {
    const imp = /(^|[\s(])@((?:~\/|\.{1,2}\/|\/)?[^\s@`()[\]]+)/gm;
    imp.lastIndex = from;
    for (let m = imp.exec(text); m; m = imp.exec(text)) {
      const at = m.index + m[1].length + 1;
      if (inRegions(code, at)) continue;
      const raw = m[2].replace(/[.,;:!?]+$/, '');
      // `@someone` is a mention, not a file: an import names a path or a file with an extension.
      if (!/[/.]/.test(raw) || /^\.+$/.test(raw)) continue;
      out.push({ kind: 'import', target: raw, span: { start: at, end: at + raw.length } });
    }
  }
  return out.sort((a, b) => a.span.start - b.span.start);
}

export interface PromptVariable {
  /** `input:name` variables carry the name; the built-ins their own (`selection`, `file`, …). */
  name: string;
  input: boolean;
  span: Span;
}

/** The built-in variables of VS Code prompt files. */
export const PROMPT_BUILTINS = ['workspaceFolder', 'workspaceFolderBasename', 'selection', 'selectedText', 'file', 'fileBasename', 'fileDirname', 'fileBasenameNoExtension'];

/** `${input:name}`, `${input:name:placeholder}` and the built-ins, in order. */
export function promptVariables(text: string, from: number): PromptVariable[] {
  const out: PromptVariable[] = [];
  const re = /\$\{(input:([A-Za-z_][\w-]*)(?::[^}\n]*)?|([A-Za-z]+))\}/g;
  re.lastIndex = from;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[2]) out.push({ name: m[2], input: true, span: { start: m.index, end: m.index + m[0].length } });
    else if (PROMPT_BUILTINS.includes(m[3])) out.push({ name: m[3], input: false, span: { start: m.index, end: m.index + m[0].length } });
  }
  return out;
}
