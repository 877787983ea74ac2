/**
 * The `examples/` workspace a new user opens. Every file parses with the real parsers (`yaml`,
 * `@handlebars/parser`, nunjucks), every `*.context.yaml` matches ContextConfigSchema, and the
 * planted-findings table in examples/README.md is exactly what a small, independent oracle of the
 * rules finds in the files. The oracle is written here on purpose, not taken from the core: the
 * examples are the fixed target the core's rules are checked against (`ctxlens check examples/`),
 * so they must not be verified with the code they are meant to test. Token counts use js-tiktoken's
 * o200k_base, the tokenizer of gpt-4o, which both example configs name.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document, Pair } from 'yaml';
import { parse as parseHandlebars } from '@handlebars/parser';
import type { AST } from '@handlebars/parser';
import nunjucks from 'nunjucks';
import picomatch from 'picomatch';
import { getEncoding } from 'js-tiktoken';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ContextConfigSchema } from '../../src/core/config/schema';
import type { ContextConfig, SlotConfig } from '../../src/core/config/schema';
import { ruleInfo } from '../../src/core/rules/registry';

const ROOT = fileURLToPath(new URL('../../examples/', import.meta.url));
const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/');
const abs = (path: string): string => join(ROOT, path);
const read = (path: string): string => readFileSync(abs(path), 'utf8');

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else out.push(rel(full));
  }
  return out.sort();
}

// zero-config/ holds ordinary Prompty and dotprompt files without a context config: the rules this
// oracle models need a config, so that folder is checked through the CLI (test/cli/zero-config.test.ts).
// code-helpers/ renders helpers registered in code as placeholders, which this oracle does not
// model either: the CLI tests check it (test/cli/examples.test.ts, test/cli/defects-values.test.ts).
// langchain-support/ is a request composed of plain prompt files: test/cli/plain.test.ts checks it.
const FILES = walk(ROOT).filter((f) => !f.startsWith('zero-config/') && !f.startsWith('code-helpers/') && !f.startsWith('langchain-support/'));
const enc = getEncoding('o200k_base');
const tokens = (text: string): number => enc.encode(text).length;

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// ---------------------------------------------------------------------------
// Templates: front matter, roles and slot uses (an oracle of the parser's `uses`).
// ---------------------------------------------------------------------------

type Form = 'var' | 'each' | 'if' | 'history';
interface Use {
  slot: string;
  offset: number;
  line: number;
  role: string;
  form: Form;
  delimited: boolean;
}
interface Template {
  path: string;
  format: 'prompt' | 'prompty';
  text: string;
  frontMatter: Record<string, unknown>;
  uses: Use[];
}

function splitFrontMatter(text: string): { yaml: string; bodyStart: number } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!m) throw new Error('template without front matter');
  return { yaml: m[1], bodyStart: m[0].length };
}

/** Role markers of each format, with the role they open, in source order. */
function roleMarkers(t: Pick<Template, 'format' | 'text'>, bodyStart: number): Array<{ offset: number; role: string }> {
  const re = t.format === 'prompt' ? /\{\{#?role\s+"(\w+)"\s*\}\}/g : /^(system|user|assistant|developer):[ \t]*$/gm;
  const body = t.text.slice(bodyStart);
  return [...body.matchAll(re)].map((m) => ({ offset: bodyStart + (m.index ?? 0), role: m[1] }));
}

/** A use is delimited when an XML-like tag opened before it in its message closes after it. */
function isDelimited(text: string, from: number, offset: number, to: number): boolean {
  const before = text.slice(from, offset);
  const opens = [...before.matchAll(/<([A-Za-z_][\w-]*)>/g)];
  for (let i = opens.length - 1; i >= 0; i--) {
    const name = opens[i][1];
    const afterOpen = before.slice((opens[i].index ?? 0) + opens[i][0].length);
    if (afterOpen.includes(`</${name}>`)) continue;
    return text.slice(offset, to).includes(`</${name}>`);
  }
  return false;
}

function handlebarsUses(body: string, bodyStart: number): Array<{ slot: string; offset: number; form: Form }> {
  const lineStarts = [0];
  for (let i = 0; i < body.length; i++) if (body[i] === '\n') lineStarts.push(i + 1);
  const at = (loc: AST.SourceLocation): number => bodyStart + lineStarts[loc.start.line - 1] + loc.start.column;
  const out: Array<{ slot: string; offset: number; form: Form }> = [];
  const visit = (statements: AST.Statement[]): void => {
    for (const s of statements) {
      if (s.type === 'MustacheStatement') {
        const m = s as AST.MustacheStatement;
        if (m.path.type !== 'PathExpression' || m.params.length > 0) continue;
        const head = String((m.path as AST.PathExpression).parts[0]);
        out.push({ slot: head, offset: at(m.loc), form: head === 'history' ? 'history' : 'var' });
      } else if (s.type === 'BlockStatement') {
        const b = s as AST.BlockStatement;
        const helper = (b.path as AST.PathExpression).original;
        if (helper === 'role') {
          visit(b.program.body);
          continue;
        }
        const p = b.params[0];
        if (p && p.type === 'PathExpression') out.push({ slot: String((p as AST.PathExpression).parts[0]), offset: at(b.loc), form: helper === 'each' ? 'each' : 'if' });
        // Inside #each the context is the item, so names there are item fields, not slots.
        if (helper !== 'each') visit(b.program.body);
      }
    }
  };
  visit(parseHandlebars(body).body);
  return out;
}

function jinjaUses(body: string, bodyStart: number): Array<{ slot: string; offset: number; form: Form }> {
  const out: Array<{ slot: string; offset: number; form: Form }> = [];
  const aliases = new Set<string>();
  for (const m of body.matchAll(/\{%-?\s*for\s+(\w+)\s+in\s+([A-Za-z_]\w*)/g)) {
    aliases.add(m[1]);
    out.push({ slot: m[2], offset: bodyStart + (m.index ?? 0), form: 'each' });
  }
  for (const m of body.matchAll(/\{%-?\s*if\s+([A-Za-z_]\w*)/g)) if (!aliases.has(m[1])) out.push({ slot: m[1], offset: bodyStart + (m.index ?? 0), form: 'if' });
  for (const m of body.matchAll(/\{\{-?\s*([A-Za-z_]\w*)/g)) {
    if (!aliases.has(m[1])) out.push({ slot: m[1], offset: bodyStart + (m.index ?? 0), form: 'var' });
  }
  return out.sort((a, b) => a.offset - b.offset);
}

function readTemplate(path: string): Template {
  const text = read(path);
  const format = path.endsWith('.prompty') ? 'prompty' : 'prompt';
  const { yaml, bodyStart } = splitFrontMatter(text);
  const frontMatter = parseDocument(yaml).toJS() as Record<string, unknown>;
  const body = text.slice(bodyStart);
  const raw = format === 'prompt' ? handlebarsUses(body, bodyStart) : jinjaUses(body, bodyStart);
  const markers = roleMarkers({ format, text }, bodyStart);
  const uses = raw.map((u) => {
    let idx = -1;
    markers.forEach((m, i) => {
      if (m.offset <= u.offset) idx = i;
    });
    const from = idx >= 0 ? markers[idx].offset : bodyStart;
    const to = idx + 1 < markers.length ? markers[idx + 1].offset : text.length;
    // Dotprompt without a marker starts in the user role; Prompty text before any role line is system.
    const role = idx >= 0 ? markers[idx].role : format === 'prompt' ? 'user' : 'system';
    return { ...u, line: lineAt(text, u.offset), role, delimited: u.form === 'history' || isDelimited(text, from, u.offset, to) };
  });
  return { path, format, text, frontMatter, uses };
}

/** The config a template binds to: front-matter `context:` path, else the sibling `<name>.context.yaml`. */
function configPathOf(t: Template): string {
  const ctx = t.frontMatter.context;
  if (typeof ctx === 'string') return rel(resolve(dirname(abs(t.path)), ctx));
  return t.path.replace(/\.(prompt|prompty)$/, '.context.yaml');
}

// ---------------------------------------------------------------------------
// Configs and fixtures, with source lines.
// ---------------------------------------------------------------------------

interface Config {
  path: string;
  text: string;
  config: ContextConfig;
  slotLines: Record<string, number>;
  slotsLine: number;
}

function yamlDoc(text: string): { doc: Document; lc: LineCounter } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  return { doc, lc };
}

function readConfig(path: string): Config {
  const text = read(path);
  const { doc, lc } = yamlDoc(text);
  const config = ContextConfigSchema.parse(doc.toJS());
  const slotLines: Record<string, number> = {};
  let slotsLine = 0;
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items as Pair[]) {
      if (isScalar(pair.key) && pair.key.value === 'slots') {
        slotsLine = lc.linePos(pair.key.range![0]).line;
        if (isMap(pair.value)) for (const p of pair.value.items as Pair[]) if (isScalar(p.key)) slotLines[String(p.key.value)] = lc.linePos(p.key.range![0]).line;
      }
    }
  }
  return { path, text, config, slotLines, slotsLine };
}

interface Item {
  data: Record<string, unknown>;
  line: number;
  /** Offsets of the text value in the fixture file. */
  textRange: [number, number];
}
interface FixtureSlot {
  keyLine: number;
  text?: string;
  /** Text comes from this file (examples-relative) instead of the fixture. */
  file?: string;
  items?: Item[];
  range: [number, number];
}
interface Fixture {
  path: string;
  text: string;
  template?: string;
  slots: Record<string, FixtureSlot>;
}

function readFixture(path: string): Fixture {
  const text = read(path);
  const { doc, lc } = yamlDoc(text);
  const js = doc.toJS() as { template?: string };
  const slots: Record<string, FixtureSlot> = {};
  const slotsNode = isMap(doc.contents) ? doc.contents.get('slots', true) : undefined;
  if (isMap(slotsNode)) {
    for (const pair of slotsNode.items as Pair[]) {
      if (!isScalar(pair.key)) continue;
      const name = String(pair.key.value);
      const v = pair.value;
      const keyLine = lc.linePos(pair.key.range![0]).line;
      const range = (v as { range?: [number, number, number] }).range!;
      const slot: FixtureSlot = { keyLine, range: [range[0], range[1]] };
      if (isScalar(v)) slot.text = String(v.value);
      else if (isMap(v)) slot.file = rel(resolve(dirname(abs(path)), String(v.get('file'))));
      else if (isSeq(v)) {
        slot.items = v.items.map((node) => {
          const n = node as { range: [number, number, number]; get(k: string, keep: true): { range: [number, number, number] } | undefined; toJSON(): Record<string, unknown> };
          const t = n.get('text', true);
          return { data: n.toJSON(), line: lc.linePos(n.range[0]).line, textRange: t ? [t.range[0], t.range[1]] : [n.range[0], n.range[0]] };
        });
      }
      slots[name] = slot;
    }
  }
  return { path, text, template: js.template ? rel(resolve(dirname(abs(path)), js.template)) : undefined, slots };
}

function slotText(slot: FixtureSlot): string {
  if (slot.file) return read(slot.file);
  if (slot.items) return slot.items.map((i) => String(i.data.text ?? '')).join('\n');
  return slot.text ?? '';
}

function resolveAmount(amount: number | string, base: number): number {
  return typeof amount === 'number' ? amount : Math.floor((parseFloat(amount) / 100) * base);
}

function budgetOf(c: ContextConfig): { inputBudget: number; margin: number; allocated: number; total: number; budgets: Record<string, number | undefined> } {
  const window = c.window ?? 0;
  const inputBudget = window - c.output;
  const budgets: Record<string, number | undefined> = {};
  let allocated = 0;
  for (const [name, s] of Object.entries(c.slots)) {
    budgets[name] = s.budget === undefined ? undefined : resolveAmount(s.budget, inputBudget);
    allocated += budgets[name] ?? 0;
  }
  const margin = resolveAmount(c.margin, window);
  return { inputBudget, margin, allocated, total: allocated + c.output + margin, budgets };
}

// ---------------------------------------------------------------------------
// The oracle: what each rule should report on these files.
// ---------------------------------------------------------------------------

interface Expected {
  file: string;
  line: number;
  rule: string;
}

const APPLICATION_KINDS = new Set(['policy', 'schema', 'examples']);
const untrusted = (s: SlotConfig): boolean => (s.trust ?? (APPLICATION_KINDS.has(s.kind) ? 'trusted' : 'untrusted')) === 'untrusted';

const HIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB]|\uDB40[\uDC00-\uDC7F\uDD00-\uDDEF]/;
const SECRETS = [
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bgh[pousr]_[A-Za-z0-9]{36}\b/,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/,
  /\bAIza[0-9A-Za-z_-]{35}\b/,
];
/** Instruction-like phrases; a broader list than any one heuristic, so the clean text stays well clear. */
const INJECTION = [
  /\bignore\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|rules|messages)/i,
  /\bdisregard\s+(?:all\s+|the\s+|your\s+)?(?:previous|prior|above|earlier)/i,
  /\bforget\s+(?:everything|all|your)\b/i,
  /\byou\s+are\s+now\b/i,
  /\bnew\s+instructions\b/i,
  /\bsystem\s+prompt\b/i,
  /\b(?:reveal|print|repeat)\s+(?:your|the)\s+(?:prompt|instructions)/i,
  /\bnote\s+to\s+(?:the\s+)?(?:ai|assistant|model)/i,
];
const ROLE_MARKER = /^\s*(?:system|user|assistant|developer|tool)\s*:\s*$|<\|im_(?:start|end)\|>/im;

/** Hidden characters and secrets, one finding per line, in any file the check reads. */
function contentFindings(file: string): Expected[] {
  const out: Expected[] = [];
  read(file)
    .split('\n')
    .forEach((line, i) => {
      if (HIDDEN.test(line)) out.push({ file, line: i + 1, rule: 'hidden-characters' });
      if (SECRETS.some((re) => re.test(line))) out.push({ file, line: i + 1, rule: 'secret-in-context' });
    });
  return out;
}

function templateFindings(t: Template, c: Config): Expected[] {
  const out: Expected[] = [];
  const slots = c.config.slots;
  const seen = new Set<string>();
  for (const u of t.uses) {
    if (!slots[u.slot] && !seen.has(u.slot)) out.push({ file: t.path, line: u.line, rule: 'slot-undefined' });
    seen.add(u.slot);
  }
  for (const [name, s] of Object.entries(slots)) {
    const uses = t.uses.filter((u) => u.slot === name);
    if (uses.length === 0) out.push({ file: c.path, line: c.slotLines[name], rule: s.required ? 'required-missing' : 'slot-unused' });
    if (!s.trust) out.push({ file: c.path, line: c.slotLines[name], rule: 'trust-missing' });
    if (!untrusted(s)) continue;
    for (const u of uses) {
      if ((u.role === 'system' || u.role === 'developer') && u.form !== 'history') out.push({ file: t.path, line: u.line, rule: 'untrusted-in-system' });
      if (!s.label && !u.delimited && u.form !== 'history' && u.form !== 'if') out.push({ file: t.path, line: u.line, rule: 'untrusted-unlabelled' });
    }
  }
  return out;
}

function budgetFindings(c: Config): Expected[] {
  const b = budgetOf(c.config);
  return b.total > (c.config.window ?? 0) ? [{ file: c.path, line: c.slotsLine, rule: 'budget-overflow' }] : [];
}

/** Tags the template wraps slots in: their closing tags must not appear in untrusted text either. */
const delimiterTags = (t: Template): string[] => [...new Set([...t.text.matchAll(/<\/([A-Za-z_][\w-]*)>/g)].map((m) => m[1]))];

function fixtureFindings(f: Fixture, t: Template, c: Config): Expected[] {
  const out: Expected[] = [];
  const slots = c.config.slots;
  for (const [name, s] of Object.entries(slots)) if (s.required && !f.slots[name]) out.push({ file: f.path, line: 1, rule: 'required-missing' });
  const closers = [...new Set(Object.values(slots).flatMap((s) => (s.label ? [`[/${s.label}]`] : [])))].concat(delimiterTags(t).map((n) => `</${n}>`));
  const budgets = budgetOf(c.config).budgets;
  for (const [name, slot] of Object.entries(f.slots)) {
    const s = slots[name];
    if (!s) continue;
    // Lower bound of what the slot costs: its text, plus the per-item envelope overhead.
    const cost = slot.items ? slot.items.reduce((n, i) => n + tokens(String(i.data.text ?? '')) + c.config.overhead.item, 0) : tokens(slotText(slot));
    const budget = budgets[name];
    // Summary, retrieval and hybrid history policies are the declared answer to a long history.
    const byPolicy = s.kind === 'history' && s.policy !== undefined && s.policy !== 'window';
    if (budget !== undefined && cost > budget && !byPolicy) out.push({ file: f.path, line: slot.keyLine, rule: 'slot-overflow' });
    if (s.kind === 'evidence') for (const i of slot.items ?? []) if (!i.data.id || !i.data.source) out.push({ file: f.path, line: i.line, rule: 'citation-missing' });
    if (!untrusted(s)) continue;
    // Hostile text is located in the file that holds it: the fixture's own text ranges.
    const ranges: Array<[number, number]> = slot.items ? slot.items.map((i) => i.textRange) : slot.file ? [] : [slot.range];
    const hostText = slot.file ? read(slot.file) : f.text;
    const hostFile = slot.file ?? f.path;
    if (slot.file) ranges.push([0, hostText.length]);
    for (const [from, to] of ranges) {
      const chunk = hostText.slice(from, to);
      for (const re of INJECTION) {
        const m = new RegExp(re.source, re.flags + 'g');
        for (const hit of chunk.matchAll(m)) out.push({ file: hostFile, line: lineAt(hostText, from + (hit.index ?? 0)), rule: 'injection-phrase' });
      }
      for (const closer of closers) {
        let at = chunk.indexOf(closer);
        while (at >= 0) {
          out.push({ file: hostFile, line: lineAt(hostText, from + at), rule: 'delimiter-breakout' });
          at = chunk.indexOf(closer, at + 1);
        }
      }
    }
    for (const value of slot.items ? slot.items.map((i) => String(i.data.text ?? '')) : [slotText(slot)]) {
      if (ROLE_MARKER.test(value)) out.push({ file: hostFile, line: slot.keyLine, rule: 'delimiter-breakout' });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The oracle of the pipeline rules: commitments, contradictions, coverage, tools. Like the rest, it
// assumes what holds in these examples (everything but the history fits its budget) and says so
// by failing where it cannot judge.
// ---------------------------------------------------------------------------

const norm = (x: unknown): string => String(x).toLowerCase().replace(/[^\p{L}\p{N}\s]+/gu, '').replace(/\s+/g, ' ').trim();
const list = (x: unknown): string[] => (Array.isArray(x) ? x.map(String) : x === undefined ? [] : [String(x)]);

function hours(d: string): number {
  const short = /^(\d+)(m|h|d)$/.exec(d);
  if (short) return Number(short[1]) * { m: 1 / 60, h: 1, d: 24 }[short[2] as 'm' | 'h' | 'd'];
  const iso = /^PT(\d+)H$/.exec(d);
  if (iso) return Number(iso[1]);
  throw new Error(`oracle: duration ${d}`);
}

/** The line of the node at a path in a JSON or YAML text. */
function lineOfPath(text: string, path: Array<string | number>): number {
  const { doc, lc } = yamlDoc(text);
  let node: unknown = doc.contents;
  for (const seg of path) {
    if (isMap(node)) node = (node.items as Pair[]).find((p) => isScalar(p.key) && String(p.key.value) === String(seg))?.value;
    else if (isSeq(node)) node = node.items[Number(seg)];
    else throw new Error(`oracle: no node at ${path.join('.')}`);
  }
  return lc.linePos((node as { range: [number, number, number] }).range[0]).line;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

function pipelineFindings(f: Fixture, t: Template, c: Config): Expected[] {
  const out: Expected[] = [];
  const slots = c.config.slots;
  const used = new Set(t.uses.map((u) => u.slot));
  const records = Object.entries(f.slots).filter(([n]) => slots[n]?.kind === 'memory').flatMap(([, s]) => s.items ?? []).filter((i) => i.data.promise !== undefined);
  const recorded = new Set(records.flatMap((r) => list(r.data.source_turn)));
  for (const [name, slot] of Object.entries(f.slots)) {
    const s = slots[name];
    if (!s || !used.has(name)) continue;
    const items = slot.items ?? [];
    // commitment-dropped: a sliding window from the newest turn, each turn its text plus the item overhead.
    if (s.kind === 'history') {
      const marked = items.filter((i) => i.data.commitment !== undefined && !recorded.has(String(i.data.id ?? `${name}_${items.indexOf(i) + 1}`)));
      if (marked.length) {
        if (s.policy !== undefined && s.policy !== 'window') throw new Error(`oracle: cannot judge the ${s.policy} policy of ${f.path}`);
        let room = s.budget === undefined ? Infinity : Number(s.budget);
        let stopped = false;
        const kept = new Set<Item>();
        for (const i of [...items].reverse()) {
          const cost = tokens(String(i.data.text)) + c.config.overhead.item;
          if (!stopped && cost <= room) {
            kept.add(i);
            room -= cost;
          } else stopped = true;
        }
        for (const i of marked) if (!kept.has(i)) out.push({ file: f.path, line: i.line, rule: 'commitment-dropped' });
      }
    }
    // contradiction-unlabelled: one topic, two claims, no label to carry the note.
    if (s.kind !== 'history' && !s.label) {
      const byTopic = new Map<string, Item[]>();
      for (const i of items) if (i.data.topic !== undefined && i.data.claim !== undefined) byTopic.set(norm(i.data.topic), [...(byTopic.get(norm(i.data.topic)) ?? []), i]);
      const bare = [...byTopic.values()].filter((g) => new Set(g.map((i) => norm(i.data.claim))).size > 1).flat();
      if (bare.length) out.push({ file: f.path, line: Math.min(...bare.map((i) => i.line)), rule: 'contradiction-unlabelled' });
    }
    // coverage-missing: a required subtopic no item covers, reported on the slot's key.
    for (const sub of s.requires ?? []) if (!items.some((i) => list(i.data.covers).includes(sub))) out.push({ file: f.path, line: slot.keyLine, rule: 'coverage-missing' });
    // tool-result-stale: results older than max_age at the config's now.
    const maxAge = s.max_age ?? c.config.tools?.max_age;
    const now = c.config.filters?.now;
    if (s.kind === 'tool' && maxAge && now) {
      for (const i of items) if (typeof i.data.at === 'string' && (Date.parse(now) - Date.parse(i.data.at)) / 3_600_000 > hours(maxAge)) out.push({ file: f.path, line: i.line, rule: 'tool-result-stale' });
    }
    // Tool definitions in a JSON file: schema errors at their node, names outside the allowlist at the name.
    const file = slot.file;
    if (s.kind === 'tool' && file) {
      const text = read(file);
      const defs = JSON.parse(text) as Array<{ function: { name: string; parameters?: Record<string, unknown> } }>;
      const allow = c.config.tools?.allow?.map((a) => (typeof a === 'string' ? a : a.name));
      defs.forEach((d, k) => {
        const params = d.function.parameters;
        let valid = true;
        if (params && !ajv.validate('https://json-schema.org/draft/2020-12/schema', params)) {
          valid = false;
          const seen = new Set<string>();
          for (const e of ajv.errors ?? []) {
            if (seen.has(e.instancePath)) continue;
            seen.add(e.instancePath);
            out.push({ file, line: lineOfPath(text, [k, 'function', 'parameters', ...e.instancePath.split('/').slice(1)]), rule: 'tool-schema-invalid' });
          }
        }
        if (valid && allow && !allow.includes(d.function.name)) out.push({ file, line: lineOfPath(text, [k, 'function', 'name']), rule: 'tool-not-allowed' });
      });
    }
  }
  return out;
}

const key = (e: Expected): string => `${e.file}:${e.line} ${e.rule}`;
const uniq = (list: Expected[]): string[] => [...new Set(list.map(key))].sort();

// ---------------------------------------------------------------------------
// The workspace under test.
// ---------------------------------------------------------------------------

const TEMPLATES = FILES.filter((f) => /\.(prompt|prompty)$/.test(f));
const CONFIGS = FILES.filter((f) => /\.context\.ya?ml$/.test(f));
const FIXTURES = FILES.filter((f) => /\.fixture\.(ya?ml|json)$/.test(f));

/** Fixtures a config's `fixtures` globs select (relative to the config file), less those whose `template:` names another template. */
function fixturesOf(c: Config, template?: string): string[] {
  const dir = dirname(c.path);
  return FIXTURES.filter((f) => c.config.fixtures.some((g) => picomatch(g)(relative(dir, f).split(sep).join('/')))).filter((f) => {
    const named = readFixture(f).template;
    return template === undefined || named === undefined || named === template;
  });
}

interface Row {
  file: string;
  line: number;
  rule: string;
  severity: string;
  what: string;
}

function readmeRows(): Row[] {
  const rows: Row[] = [];
  for (const line of read('README.md').split('\n')) {
    const m = /^\|\s*`([^`]+)`\s*\|\s*(\d+)\s*\|\s*`([a-z-]+)`\s*\|\s*(error|warning|info|hint)\s*\|(.*)\|\s*$/.exec(line);
    if (m && !m[1].startsWith('zero-config/') && !m[1].startsWith('code-helpers/') && !m[1].startsWith('langchain-support/')) rows.push({ file: m[1], line: Number(m[2]), rule: m[3], severity: m[4], what: m[5].trim() });
  }
  return rows;
}

function allExpected(): Expected[] {
  const out: Expected[] = [];
  const read = new Set<string>();
  for (const tPath of TEMPLATES) {
    const t = readTemplate(tPath);
    const c = readConfig(configPathOf(t));
    out.push(...templateFindings(t, c));
    for (const fPath of fixturesOf(c, t.path)) {
      const f = readFixture(fPath);
      out.push(...fixtureFindings(f, t, c));
      out.push(...pipelineFindings(f, t, c));
      for (const s of Object.values(f.slots)) if (s.file) read.add(s.file);
    }
  }
  for (const cPath of CONFIGS) out.push(...budgetFindings(readConfig(cPath)));
  for (const file of [...TEMPLATES, ...CONFIGS, ...FIXTURES, ...read]) out.push(...contentFindings(file));
  return out;
}

const MAIN_CASES = [
  { template: 'sdk-qa/sdk-qa.prompt', config: 'sdk-qa/sdk-qa.context.yaml', fixtures: ['sdk-qa/fixtures/post-retries.fixture.yaml', 'sdk-qa/fixtures/rate-limit.fixture.yaml'] },
  { template: 'refund-support/refund.prompty', config: 'refund-support/refund.context.yaml', fixtures: ['refund-support/fixtures/pole-refund.fixture.yaml'] },
  { template: 'refund-support/refund-hybrid.prompty', config: 'refund-support/refund-hybrid.context.yaml', fixtures: ['refund-support/fixtures/pole-refund-hybrid.fixture.yaml'] },
];

describe('examples workspace: every file parses', () => {
  it('has the two real cases (the refund one under two history policies), the defects folder and a README', () => {
    expect(TEMPLATES).toEqual(['defects/agent.prompt', 'defects/leaky.prompt', 'refund-support/refund-hybrid.prompty', 'refund-support/refund.prompty', 'sdk-qa/sdk-qa.prompt']);
    expect(CONFIGS).toEqual(['baml-rag/baml_src/rag.AnswerWithCitations.context.yaml', 'defects/agent.context.yaml', 'defects/leaky.context.yaml', 'defects/overflow.context.yaml', 'refund-support/refund-hybrid.context.yaml', 'refund-support/refund.context.yaml', 'sdk-qa/sdk-qa.context.yaml']);
    expect(FIXTURES).toEqual(['defects/fixtures/agent.fixture.yaml', 'defects/fixtures/leaky.fixture.yaml', 'refund-support/fixtures/pole-refund-hybrid.fixture.yaml', 'refund-support/fixtures/pole-refund.fixture.yaml', 'sdk-qa/fixtures/post-retries.fixture.yaml', 'sdk-qa/fixtures/rate-limit.fixture.yaml']);
    expect(FILES).toContain('README.md');
  });

  it.each(FILES.filter((f) => /\.ya?ml$/.test(f)))('%s is YAML without errors or warnings', (file) => {
    const doc = parseDocument(read(file));
    expect(doc.errors.map((e) => e.message)).toEqual([]);
    expect(doc.warnings.map((e) => e.message)).toEqual([]);
  });

  it.each(FILES.filter((f) => f.endsWith('.json')))('%s is JSON', (file) => {
    expect(() => JSON.parse(read(file))).not.toThrow();
  });

  it.each(TEMPLATES)('%s has YAML front matter and a body its template engine parses', (file) => {
    const text = read(file);
    const { yaml, bodyStart } = splitFrontMatter(text);
    const doc = parseDocument(yaml);
    expect(doc.errors.map((e) => e.message)).toEqual([]);
    const body = text.slice(bodyStart);
    if (file.endsWith('.prompt')) expect(() => parseHandlebars(body)).not.toThrow();
    else expect(() => (nunjucks as unknown as { parser: { parse(src: string): unknown } }).parser.parse(body)).not.toThrow();
  });

  it.each(CONFIGS)('%s matches ContextConfigSchema', (file) => {
    const result = ContextConfigSchema.safeParse(parseDocument(read(file)).toJS());
    expect(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([]);
  });

  it.each(FIXTURES)('%s has the fixture shape, and its file references exist inside examples/', (file) => {
    const f = readFixture(file);
    expect(Object.keys(f.slots).length).toBeGreaterThan(0);
    if (f.template) expect(existsSync(abs(f.template)), f.template).toBe(true);
    for (const [name, slot] of Object.entries(f.slots)) {
      if (slot.file) {
        expect(slot.file.startsWith('..'), `${name}: ${slot.file} escapes examples/`).toBe(false);
        expect(existsSync(abs(slot.file)), `${name}: ${slot.file}`).toBe(true);
      }
      for (const item of slot.items ?? []) {
        expect(typeof item.data.text, `${name} item at line ${item.line} needs text`).toBe('string');
        for (const k of ['authority', 'relevance']) if (k in item.data) expect(typeof item.data[k]).toBe('number');
        for (const k of ['id', 'source', 'version', 'published_at', 'expires_at', 'at', 'tenant']) if (k in item.data) expect(typeof item.data[k], `${k} at line ${item.line}`).toBe('string');
        if ('role' in item.data) expect(['user', 'assistant', 'system', 'tool']).toContain(item.data.role);
      }
    }
  });

  it('each template binds to its config, and each config selects its fixtures', () => {
    for (const c of MAIN_CASES) {
      const t = readTemplate(c.template);
      expect(configPathOf(t)).toBe(c.config);
      expect(fixturesOf(readConfig(c.config), c.template)).toEqual(c.fixtures);
      for (const f of c.fixtures) expect(readFixture(f).template).toBe(c.template);
    }
    expect(configPathOf(readTemplate('defects/leaky.prompt'))).toBe('defects/leaky.context.yaml');
  });
});

describe.each(MAIN_CASES)('real case $template', (c) => {
  const t = readTemplate(c.template);
  const cfg = readConfig(c.config);
  const slots = cfg.config.slots;

  it('uses exactly the slots its config defines, and every slot declares trust', () => {
    expect([...new Set(t.uses.map((u) => u.slot))].sort()).toEqual(Object.keys(slots).sort());
    for (const [name, s] of Object.entries(slots)) expect(s.trust, name).toBeDefined();
  });

  it('keeps untrusted slots out of the system role, each labelled or delimited', () => {
    for (const u of t.uses) {
      const s = slots[u.slot];
      if (s.trust !== 'untrusted') continue;
      if (u.form !== 'history') expect(u.role, `${u.slot} at line ${u.line}`).toBe('user');
      expect(Boolean(s.label) || u.delimited, `${u.slot} at line ${u.line}`).toBe(true);
    }
  });

  it('gives each fixture every required slot, and every evidence item an id and a source', () => {
    for (const fPath of c.fixtures) {
      const f = readFixture(fPath);
      for (const [name, s] of Object.entries(slots)) {
        if (s.required) expect(f.slots[name], `${fPath}: ${name}`).toBeDefined();
        if (s.kind === 'evidence' || s.label) for (const i of f.slots[name]?.items ?? []) expect([i.data.id, i.data.source].every(Boolean), `${fPath}:${i.line}`).toBe(true);
      }
    }
  });

  it('has a budget equation that fits its window', () => {
    const b = budgetOf(cfg.config);
    expect(b.total).toBeLessThanOrEqual(cfg.config.window!);
  });

  it('fits every fixture slot in its budget, envelopes included (except the refund history)', () => {
    for (const fPath of c.fixtures) {
      const f = readFixture(fPath);
      const budgets = budgetOf(cfg.config).budgets;
      for (const [name, slot] of Object.entries(f.slots)) {
        const s = slots[name];
        if (s.kind === 'history' && fPath.includes('pole-refund')) continue;
        // Upper bound: every item kept, each with its provenance header and overhead.
        const cost = slot.items
          ? slot.items.reduce((n, i) => {
              const d = i.data;
              const head = s.label ? `[${s.label} ${String(d.id)}]\nTitle: ${String(d.title ?? '')}\nVersion: ${String(d.version ?? '')}\nSource: ${String(d.source ?? '')}\nContent:\n\n[/${s.label}]` : `${String(d.role ?? '')} ${String(d.at ?? '')}`;
              return n + tokens(String(d.text)) + tokens(head) + cfg.config.overhead.item;
            }, 0)
          : tokens(slotText(slot));
        if (budgets[name] !== undefined) expect(cost, `${fPath}: ${name}`).toBeLessThanOrEqual(budgets[name]!);
        if (s.max_items !== undefined) expect(slot.items?.length ?? 0, `${fPath}: ${name}`).toBeLessThanOrEqual(s.max_items);
      }
    }
  });
});

describe('seed stories the examples must tell', () => {
  it('refund-support is seed 000\'s 8,000-token request exactly', () => {
    const b = budgetOf(readConfig('refund-support/refund.context.yaml').config);
    expect(b.allocated).toBe(6000);
    expect(b.allocated + 1200).toBe(7200);
    expect(b.margin).toBe(800);
    expect(b.total).toBe(8000);
    expect(b.budgets).toEqual({ policy: 800, commitments: undefined, history: 1200, evidence: 3000, tools: 600, question: 400 });
  });

  it('the refund history outgrows its budget, and even its text alone pushes out the approval turn', () => {
    const f = readFixture('refund-support/fixtures/pole-refund.fixture.yaml');
    const turns = f.slots.history.items!;
    const commitment = turns.findIndex((i) => /supervisor's approval/.test(String(i.data.text)));
    expect(commitment).toBe(1);
    expect(turns[commitment].data).toMatchObject({ role: 'assistant', at: '2026-08-12T14:05:00Z' });
    // Sliding window from the newest turn, charging text only (a lower bound of any accounting).
    let used = 0;
    let firstKept = turns.length;
    for (let i = turns.length - 1; i >= 0; i--) {
      const cost = tokens(String(turns[i].data.text));
      if (used + cost > 1200) break;
      used += cost;
      firstKept = i;
    }
    expect(firstKept).toBeGreaterThan(commitment + 1);
    expect(turns.slice(commitment + 1).reduce((n, i) => n + tokens(String(i.data.text)), 0)).toBeGreaterThan(1200);
    // The notes repeat the promise as free text, but the approval turn is marked and no record names it.
    expect(slotText(f.slots.commitments)).toMatch(/CMT-20931[\s\S]*supervisor must approve/);
    expect(turns[commitment].data.commitment).toMatch(/supervisor's approval/);
    expect(readConfig('refund-support/refund.context.yaml').config.slots.commitments).toMatchObject({ kind: 'memory', trust: 'trusted', required: true });
    expect(readConfig('refund-support/refund.context.yaml').config.slots.history.policy).toBe('window');
  });

  it('the hybrid variant keeps the promise as a structured record naming the turn, and summarises with lineage', () => {
    const f = readFixture('refund-support/fixtures/pole-refund-hybrid.fixture.yaml');
    const turns = f.slots.history.items!.filter((i) => i.data.summary_of === undefined);
    const window = readFixture('refund-support/fixtures/pole-refund.fixture.yaml').slots.history.items!;
    // The same 32 turns as the window version, now with ids.
    expect(turns.map((i) => String(i.data.text))).toEqual(window.map((i) => String(i.data.text)));
    expect(turns.map((i) => i.data.id)).toEqual(turns.map((_, k) => `t${String(k + 1).padStart(2, '0')}`));
    const record = f.slots.commitments.items!.find((i) => i.data.id === 'CMT-20931')!.data;
    expect(record).toMatchObject({ party: 'Tier-2 supervisor queue', made_at: '2026-08-12T14:05:00Z', source_turn: 't02' });
    expect(String(record.condition)).toMatch(/supervisor must approve/);
    expect(turns[1].data.commitment).toBeDefined();
    const summaries = f.slots.history.items!.filter((i) => i.data.summary_of !== undefined);
    expect(summaries.map((i) => i.data.summary_of)).toEqual([turns.slice(0, 10).map((i) => i.data.id), turns.slice(10, 20).map((i) => i.data.id)]);
    const c = readConfig('refund-support/refund-hybrid.context.yaml').config;
    expect(c.slots.history).toMatchObject({ policy: 'hybrid', budget: 1200, shares: { recent: '60%', summary: '25%', retrieved: '15%' } });
    expect(budgetOf(c).total).toBe(8000);
  });

  it('post-retries holds seed 002\'s candidate set', () => {
    const f = readFixture('sdk-qa/fixtures/post-retries.fixture.yaml');
    const ev = f.slots.evidence.items!.map((i) => i.data);
    const byId = Object.fromEntries(ev.map((d) => [String(d.id), d]));
    // Only the 3.9 docs fail the version filter; the migration guide carries no version.
    expect(ev.filter((d) => d.version !== undefined && d.version !== '4.2').map((d) => d.id)).toEqual(['ev_0077']);
    expect(byId.ev_0203).not.toHaveProperty('version');
    expect(byId.ev_0203.title).toMatch(/Migrating from 3\.x to 4\.0/);
    // Exactly one pair of byte-identical texts, tied on every score so fixture order decides.
    const texts = ev.map((d) => String(d.text));
    const dupes = ev.filter((d, i) => texts.indexOf(String(d.text)) !== i).map((d) => d.id);
    expect(dupes).toEqual(['ev_0241']);
    const { id: _a, source: _b, ...first } = byId.ev_0240;
    const { id: _c, source: _d, ...second } = byId.ev_0241;
    expect(second).toEqual(first);
    expect(byId.ev_0240.source).not.toBe(byId.ev_0241.source);
    expect(byId.ev_0255).toMatchObject({ source_type: 'customer_comment', version: '4.2' });
    expect(String(byId.ev_0255.text)).toMatch(/All POST requests .* are\s+idempotent/);
    expect(byId.ev_0260.version).toBe('4.2');
    expect(String(byId.ev_0260.text)).toMatch(/Ignore previous instructions/);
    expect(slotText(f.slots.tool_result)).toMatch(/"auto_retry": true[\s\S]*"retry_non_idempotent": true/);
    expect(f.slots.question.text).toBe('After upgrading from SDK 3.9 to 4.2, why are POST requests sometimes sent twice?');
    expect(readFixture('sdk-qa/fixtures/rate-limit.fixture.yaml').slots.question.text).toBe('Does SDK 4.2 retry requests after a rate-limit response?');
  });
});

describe('planted findings (examples/README.md)', () => {
  const rows = readmeRows();

  it('lists rule ids the registry knows, with their default severities', () => {
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(ruleInfo(r.rule)?.severity, `${r.file}:${r.line} ${r.rule}`).toBe(r.severity);
  });

  it('points each row at a line that really carries that defect', () => {
    const witness: Record<string, RegExp> = {
      'untrusted-in-system': /\{\{notes\}\}/,
      'untrusted-unlabelled': /\{\{complaint\}\}/,
      'slot-undefined': /\{\{plan_tier\}\}/,
      'trust-missing': /^\s+ticket:\s*\{(?!.*trust:)/,
      'slot-unused': /^\s+legacy_faq:/,
      'budget-overflow': /^slots:\s*$/,
      'hidden-characters': HIDDEN,
      'secret-in-context': /sk-proj-[A-Za-z0-9]{40}\b/,
      'citation-missing': /^\s+- \{(?!.*\bid:)(?!.*\bsource:).*text:/,
      'delimiter-breakout': /\[\/EVIDENCE\]/,
      'injection-phrase': /Ignore previous instructions/,
      'slot-overflow': /^ {2}history:\s*$/,
      'commitment-dropped': /^ {4}- role: assistant\s*$/,
      'contradiction-unlabelled': /\btopic: [\w-]+, claim: /,
      'coverage-missing': /^ {2}evidence:\s*$/,
      'tool-schema-invalid': /"exclusiveMinimum": "0"/,
      'tool-not-allowed': /"name": "cancel_subscription"/,
      'tool-result-stale': /^ {4}- id: call_\d+\s*$/,
    };
    for (const r of rows) {
      const line = read(r.file).split('\n')[r.line - 1] ?? '';
      expect(witness[r.rule], r.rule).toBeDefined();
      expect(witness[r.rule].test(line), `${r.file}:${r.line} ${r.rule}: ${JSON.stringify(line)}`).toBe(true);
    }
  });

  it('is exactly what an independent oracle of the rules finds in examples/, and nothing else', () => {
    expect(uniq(allExpected())).toEqual(uniq(rows));
  });

  it('states the totals of the table', () => {
    const errors = rows.filter((r) => r.severity === 'error').length;
    const warnings = rows.filter((r) => r.severity === 'warning').length;
    expect(read('README.md')).toContain(`Expected totals for \`ctxlens check examples/\`: ${errors} errors, ${warnings} warnings, exit code 1.`);
  });

  it('keeps the real cases free of findings other than the intended injection, history overflow and lost commitment', () => {
    const main = allExpected().filter((e) => !e.file.startsWith('defects/'));
    expect(uniq(main)).toEqual(
      uniq([
        { file: 'refund-support/fixtures/pole-refund.fixture.yaml', line: rows.find((r) => r.rule === 'slot-overflow')!.line, rule: 'slot-overflow' },
        { file: 'refund-support/fixtures/pole-refund.fixture.yaml', line: rows.find((r) => r.rule === 'commitment-dropped')!.line, rule: 'commitment-dropped' },
        ...rows.filter((r) => r.rule === 'injection-phrase'),
      ]),
    );
    expect(main.filter((e) => e.rule === 'injection-phrase').map((e) => e.file).sort()).toEqual(['refund-support/fixtures/pole-refund-hybrid.fixture.yaml', 'refund-support/fixtures/pole-refund.fixture.yaml', 'sdk-qa/fixtures/post-retries.fixture.yaml']);
  });

  it('keeps seed 000\'s overflow arithmetic in defects/overflow.context.yaml', () => {
    const b = budgetOf(readConfig('defects/overflow.context.yaml').config);
    expect(b.allocated).toBe(7500);
    expect(b.allocated + 1200 - 8000).toBe(700);
    expect(b.total - 8000).toBe(1500);
  });
});
