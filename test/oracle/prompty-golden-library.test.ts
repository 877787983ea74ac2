/**
 * The Prompty golden renderings (test/oracle/prompty-golden/, by Prompty's real runtimes) through
 * the product: every case's files are written into one temporary workspace (a folder per case, a
 * `.git` folder at the top so it is a workspace root), and `openWorkspace(dir).assemble()` — what
 * the CLI, the service and the editor send — renders `case.prompty` with the case's inputs as plain
 * JSON values (`{ slots: inputs }`), or with the file's own sample data (the implicit `sample`
 * fixture) when the case passes none, as the golden harness does (promptyGolden.ts renderCase).
 *
 * The engine suite (prompty-golden.test.ts) checks the engine alone; this one checks what the
 * product adds around it: the values' conversion, the slot wiring, zero-config trust and
 * neutralisation, and the assembly's render path. Each case lands in one class:
 *
 * - `exact`: the same messages (role, parts, every string to the character); `false-error` when
 *   they are the same but an error finding says the file cannot be read or rendered;
 * - `neutralised`: different because untrusted values were neutralised by design (docs/security.md),
 *   visible as a located `delimiter-breakout` finding and in the trace's `neutralised` list, and
 *   exactly the engine's render of the case with its values neutralised (nothing else differs);
 * - `inexpressible`: different, and the case's inputs hold numbers plain JavaScript values cannot
 *   keep as Python reads them (`1.0`, `-0.0`, `1e20` are floats there; integers beyond 2^53);
 *   such a case is assembled again from its inputs' JSON text (`slotsJson`), and is
 *   `exact-from-json-text` when that is exact;
 * - `reported`: different or refused, with a located `unsupported-feature` finding;
 * - `error-reported`: the runtime fails and the product reports a located error finding;
 * - `other-line`: nothing in the file says which runtime line it is for, the product follows the
 *   other line (the trace names it) and reports at a place in the file why that line fails;
 * - `different`: anything else, which fails the suite.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspace, type AssembleOutput, type Finding, type Workspace } from '../../src/lib';
import { GOLDEN_FILES, lineOf, mask, readGolden, type GoldenCase } from './promptyGolden';
import { PyFloat } from '../../src/core/language/jinja/values';
import { neutralise } from '../../src/core/assembly/escape';
import { promptyRuntimeInputs, renderPrompty } from '../../src/core/language/prompty/engine';

type Cls = 'exact' | 'false-error' | 'exact-from-json-text' | 'neutralised' | 'inexpressible' | 'reported' | 'error-reported' | 'other-line' | 'different';
type Part = { text: string } | { media: string };

/** Adjacent text parts merged, empty texts left out: attribution cuts the product's text by slot. */
function squashParts(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const p of parts) {
    if ('text' in p) {
      if (!p.text) continue;
      const last = out[out.length - 1];
      if (last && 'text' in last) last.text += p.text;
      else out.push({ text: p.text });
    } else out.push(p);
  }
  return out;
}

/** The runtime's messages as roles and parts (0.1.x `type` parts, v2 `kind` parts; v2 joins text parts with a newline when all are text). */
function runtimeMessages(c: GoldenCase): Array<{ role: string; parts: Part[] }> {
  const msgs = c.messages as Array<{ role: string; content: unknown }>;
  return msgs.map((m) => {
    const content = m.content;
    const parts: Part[] =
      typeof content === 'string'
        ? [{ text: content }]
        : (content as Array<Record<string, unknown>>).map((p) => {
            if (p.type === 'text') return { text: String(p.text) };
            if (p.type === 'image_url') return { media: String((p.image_url as { url: string }).url) };
            if (p.kind === 'text') return { text: String(p.value) };
            return { media: String(p.source) };
          });
    return { role: m.role, parts: squashParts(parts) };
  });
}

function productMessages(r: AssembleOutput): Array<{ role: string; parts: Part[] }> {
  return r.messages.map((m) => ({ role: m.runtimeRole ?? m.role, parts: squashParts(m.parts.map((p) => (p.media ? { media: p.media.url } : { text: p.text }))) }));
}

/** A value with every string neutralised as the product neutralises an untrusted value (a slot's text at a line start, a field inside data inline). */
function neutralisedValue(v: unknown, top: boolean): unknown {
  if (typeof v === 'string') return neutralise(v, [], top ? {} : { inline: true }).text;
  if (Array.isArray(v)) return v.map((x) => neutralisedValue(x, false));
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, neutralisedValue(x, false)]));
  return v;
}

/**
 * Whether the product's messages are exactly the engine's render of the case with its values
 * neutralised: the difference from the runtime is the neutralisation and nothing else.
 */
function neutralisedOnly(c: GoldenCase, r: AssembleOutput): boolean {
  const line = lineOf(c);
  const source = c.files['case.prompty'];
  const readFile = (rel: string): string | undefined => {
    const key = path.posix.normalize(rel.replace(/\\/g, '/'));
    return Object.hasOwn(c.files, key) ? c.files[key] : undefined;
  };
  // The product never reads the environment.
  const noEnv = (): undefined => undefined;
  const values = promptyRuntimeInputs(source, c.inputs, readFile, line, noEnv);
  const escaped = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, neutralisedValue(v, true)]));
  const e = renderPrompty(source, escaped, { line, readFile, env: noEnv, templates: {}, fileName: 'case.prompty' });
  const engine = e.messages.map((m) => ({ role: m.role, parts: squashParts(m.parts.map((p) => (p.type === 'media' ? { media: p.url } : { text: p.type === 'text' ? p.text : '' }))) }));
  return mask(JSON.stringify(engine)) === mask(JSON.stringify(productMessages(r)));
}

/** Whether the JSON of the case's inputs holds a number a JavaScript value cannot keep (a whole float, a big integer). */
function inexpressible(v: unknown, depth = 0): boolean {
  if (v instanceof PyFloat || typeof v === 'bigint') return true;
  if (depth > 64 || v === null || typeof v !== 'object') return false;
  return Object.values(v as Record<string, unknown>).some((x) => inexpressible(x, depth + 1));
}

/** A finding on one of the case's files (a sample file, an image) or on the values given (`case.prompty#values`). */
const inCase = (f: Finding, c: GoldenCase, root: string): boolean => f.path === path.posix.join(root, c.id, 'case.prompty#values') || Object.keys(c.files).some((rel) => f.path === path.posix.join(root, c.id, rel));

const located = (f: Finding, c: GoldenCase, root: string): boolean => f.path === path.posix.join(root, c.id, 'case.prompty') && f.span.start >= 0 && f.span.end <= c.files['case.prompty'].length && f.span.start <= f.span.end;

/** Findings that say why the runtime fails (or, for a missing value, what the product rendered instead). */
const ERROR_RULES = new Set(['template-invalid', 'unsupported-feature', 'fixture-invalid', 'file-reference', 'value-missing']);

/**
 * Cases that still differ through the product, with their cause; each must still differ, so the
 * list only shrinks.
 */
const KNOWN: Record<string, string> = {
  'v1-asked-0003': "The product never reads the application's environment: an unset ${env:NAME} without a default in model.configuration fails 0.1.x's load, and the product renders the file (the engine, given the environment, refuses it).",
  'v2-asked-0014': 'As v1-asked-0003, in the v2 model.connection.',
  'v1-asked-0053': 'The library refuses slot values nested deeper than 64 levels (assemble throws a FixtureValueError); the runtime renders a value 70 levels deep (the engine renders it exactly).',
  'v2-asked-0075': 'As v1-asked-0053.',
  'v2-asked-0078': 'As v1-asked-0053.',
};

/** Findings that say a file cannot be read or rendered. */
const UNREADABLE_RULES = new Set(['template-invalid', 'file-reference', 'fixture-invalid']);

/**
 * Cases the product renders exactly but with an error that says the file cannot be read: the
 * template scanner and the include reader do not read these files as the runtime's loader does.
 * Each must still carry its false error, so the list only shrinks.
 */
const KNOWN_FALSE_ERRORS: Record<string, string> = {
  'v2-v2fm-0079': "The scanner finds no front matter and says Prompty cannot load the file; v2 reads such a file whole as YAML (the engine, told the line, renders it exactly).",
  'v2-v2fm-0082': 'As v2-v2fm-0079.',
  'v2-v2fm-0084': 'As v2-v2fm-0079.',
};

/** The info-level unsupported-feature of a render whose text cannot be attributed to slots (request.ts). */
const ATTRIBUTION_LOST = /cannot be cut into slots/;

interface Outcome {
  cls: Cls;
  detail?: string;
}

function classify(c: GoldenCase, ws: Workspace, root: string): Outcome {
  // Plain JSON values: what an application (or the service's request) hands the library.
  const inputs = c.inputs === undefined ? undefined : (JSON.parse(JSON.stringify(c.inputs, (_k, x: unknown) => (x instanceof PyFloat ? x.v : typeof x === 'bigint' ? Number(x) : x))) as Record<string, unknown>);
  let r: AssembleOutput;
  try {
    r = ws.assemble(`${c.id}/case.prompty`, inputs === undefined ? {} : { slots: inputs });
  } catch (e) {
    return { cls: 'different', detail: `threw ${(e as Error).message}` };
  }
  const first = outcomeOf(c, r, root);
  if (first.cls !== 'inexpressible') return first;
  // The same inputs as a JSON text (`slotsJson`), which keeps what JavaScript numbers cannot.
  const again = outcomeOf(c, ws.assemble(`${c.id}/case.prompty`, { slotsJson: pyJson(c.inputs) }), root, true);
  return again.cls === 'exact' ? { cls: 'exact-from-json-text' } : again.cls === 'reported' ? again : first;
}

/** JSON text as Python's json.dumps writes the value: a float keeps its fraction (`1.0`, `-0.0`), a big integer its digits. */
function pyJson(v: unknown): string {
  if (v instanceof PyFloat) {
    if (Object.is(v.v, -0)) return '-0.0';
    const t = String(v.v);
    return /[.eE]/.test(t) ? t : `${t}.0`;
  }
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map(pyJson).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${pyJson(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/** The class of one assembly; `fromJsonText` when the inputs were given as their JSON text (nothing is then inexpressible). */
function outcomeOf(c: GoldenCase, r: AssembleOutput, root: string, fromJsonText = false): Outcome {
  // A located unsupported-feature explains a difference; the note that the request could not be cut into slots does not.
  const unsupported = r.findings.find((f) => f.rule === 'unsupported-feature' && located(f, c, root) && !ATTRIBUTION_LOST.test(f.message));
  // Neutralised by design: each neutralisation is in the trace, and a delimiter-breakout finding
  // names it, located in the file (a sample value) or on the values given (`case.prompty#values`).
  const breakout = (r.trace.neutralised?.length ?? 0) > 0 && r.findings.some((f) => f.rule === 'delimiter-breakout' && inCase(f, c, root));
  const runtimeRenders = c.status === 'ok' || c.status === 'ok-not-chat';
  if (!runtimeRenders) {
    // The runtime fails: the product says why at a place in the file (a value it lacks is named at its use, and rendered empty).
    const err = r.findings.find((f) => ERROR_RULES.has(f.rule) && located(f, c, root));
    if (err) return { cls: 'error-reported' };
    // The runtime fails on what an untrusted value injects (a role line, an image); the product neutralised it instead.
    if (breakout && neutralisedOnly(c, r)) return { cls: 'neutralised' };
    return { cls: 'different', detail: `renders where the runtime fails (${c.error})\n  got  ${JSON.stringify(productMessages(r))}\n  findings ${r.findings.map((f) => `${f.rule}: ${f.message}`).join(' | ')}` };
  }
  const got = mask(JSON.stringify(productMessages(r)));
  const want =
    c.status === 'ok-not-chat' ? JSON.stringify(typeof c.messages === 'string' && c.messages ? [{ role: 'user', parts: [{ text: c.messages }] }] : []) : mask(JSON.stringify(runtimeMessages(c)));
  if (got === want) {
    // Rendered as the runtime renders it: an error saying the file cannot be read or rendered is false.
    const falseError = r.findings.find((f) => f.severity === 'error' && UNREADABLE_RULES.has(f.rule));
    return falseError ? { cls: 'false-error', detail: `${falseError.rule}: ${falseError.message}` } : { cls: 'exact' };
  }
  const detail = `\n  got  ${got}\n  want ${want}\n  findings ${r.findings.map((f) => `${f.rule}: ${f.message}`).join(' | ')}`;
  if (breakout) return neutralisedOnly(c, r) ? { cls: 'neutralised', detail } : { cls: 'different', detail: `neutralised, and different from the engine's render of the neutralised values${detail}` };
  if (!fromJsonText && c.inputs !== undefined && inexpressible(c.inputs)) return { cls: 'inexpressible', detail };
  // Nothing the file's runtime line reads says which line it is for (no front matter, an empty
  // one, or one without a v2 key): the product follows the other line, says so in the trace, and
  // reports at a place in the file why that line does not render it.
  const line = c.runtime === 'prompty v2' ? 'Prompty v2' : 'Prompty 0.1.x';
  if (r.trace.runtime !== undefined && r.trace.runtime !== line && r.findings.some((f) => ERROR_RULES.has(f.rule) && located(f, c, root))) return { cls: 'other-line', detail };
  if (unsupported) return { cls: 'reported', detail };
  return { cls: 'different', detail };
}

// One workspace for every case, a folder per case (the cases' files are written byte for byte).
// The cases are assembled while the suite is collected, as prompty-golden.test.ts renders them.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxlens-golden-lib-')).replace(/\\/g, '/');
fs.mkdirSync(path.join(root, '.git'));
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe.each(GOLDEN_FILES)('%s through the library', (file) => {
  const cases = readGolden(file);
  const outcomes = new Map<string, Outcome>();
  for (const c of cases) {
    for (const [rel, text] of Object.entries(c.files)) {
      const p = path.join(root, c.id, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, text, 'utf8');
    }
  }
  const ws = openWorkspace(root, { modelFiles: false });
  for (const c of cases) outcomes.set(c.id, classify(c, ws, root));

  it('renders every case as the runtime does, or says why not', () => {
    const counts: Record<string, number> = {};
    for (const o of outcomes.values()) counts[o.cls] = (counts[o.cls] ?? 0) + 1;
    // The table of the classes, for the run's log.
    console.log(`${file} through the library: ${JSON.stringify(counts)}`);
    expect(outcomes.size).toBe(cases.length);
    const different = [...outcomes].filter(([id, o]) => o.cls === 'different' && KNOWN[id] === undefined).map(([id, o]) => `${id}: ${o.detail}`);
    expect(different).toEqual([]);
  });

  it('lists only cases that still differ', () => {
    const fixed = cases.filter((c) => KNOWN[c.id] !== undefined && outcomes.get(c.id)?.cls !== 'different').map((c) => c.id);
    expect(fixed).toEqual([]);
  });

  it('reports no error that the file cannot be read where it renders exactly, except the listed ones', () => {
    const unexpected = [...outcomes].filter(([id, o]) => o.cls === 'false-error' && KNOWN_FALSE_ERRORS[id] === undefined).map(([id, o]) => `${id}: ${o.detail}`);
    expect(unexpected).toEqual([]);
    const fixed = cases.filter((c) => KNOWN_FALSE_ERRORS[c.id] !== undefined && outcomes.get(c.id)?.cls !== 'false-error').map((c) => c.id);
    expect(fixed).toEqual([]);
  });
});
