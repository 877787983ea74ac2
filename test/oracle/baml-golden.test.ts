/**
 * BAML functions against BAML's own runtime (`@boundaryml/baml`, the oracle): for every function
 * of the golden projects under test/oracle/baml/ and every test block naming it, the request
 * Context Lens assembles (the editor's analysis: binding, the test as fixture, the marked render,
 * the attribution check) carries the provider request `buildRequestSync` builds for the same
 * arguments, byte for byte, and its messages are the body's messages cut into parts: each
 * parameter's text is attributed to it unchanged, `{{ ctx.output_format }}` is a part of its own,
 * and the parts join to the body's text.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DiskFileHost } from '../../src/node/fileHost';
import { analyzeTemplate } from '../../src/core/project/analyze';
import { parseTemplate } from '../../src/core/language';

const require_ = createRequire(__filename);
// The oracle: BAML's runtime itself.
const baml = require_('@boundaryml/baml') as {
  BamlRuntime: { fromFiles(root: string, files: Record<string, string>, env: Record<string, string>): any };
  ClientRegistry: new () => { setPrimary(n: string): void };
};

const GOLDEN = path.join(__dirname, 'baml');
/** The environment both sides build with: placeholders only (a base URL must be a URL). */
const ENV = { LOCAL_BASE_URL: 'https://local-base-url.placeholder.invalid' };

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.baml') ? [p] : [];
  });
}

interface Case {
  project: string;
  file: string;
  fn: string;
  test: string;
  args: Record<string, unknown>;
  primary?: string;
}

// What each test's arguments are, written out by hand: BAML's literal forms (quoted and unquoted
// strings, block strings dedented, escapes, numbers, booleans, null, lists, maps, media objects).
const ARGS: Record<string, Record<string, unknown>> = {
  RefundWindow: {
    question: 'How long is the refund window?',
    evidence: [
      { id: 'doc-1', title: 'Refund policy', body: 'Refunds are accepted within 30 days.\n  Items must be unused.' },
      { id: 'doc-2', title: 'Shipping, "express"', body: 'Express orders ship in 2 days.\nTracking is emailed.' },
    ],
    history: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! How can I help?' },
    ],
  },
  EmptyHistory: { question: 'What if I lost the receipt?', evidence: [], history: [] },
  Short: { passages: ['one', 'two', 'three\n    lines'], limit: 12, strict: true },
  Loose: { passages: ['alpha'], limit: -3, strict: null },
  Labels: { text: 'The parcel arrived broken.', labels: { damage: 'item damaged', late: 'arrived late' } },
  Photo: { photo: { url: 'https://example.com/cat.png' }, hint: 'Count the cats.' },
  InlinePhoto: { photo: { base64: 'iVBORw0KGgo=', media_type: 'image/png' }, note: 'Inline image:' },
  Clip: { clip: { base64: 'UklGRg==', media_type: 'audio/wav' } },
  Hello: { q: 'Hello there' },
  Many: { q: 'Name colours', n: 3 },
};

// Round-robin clients are built with their first client (BAML starts one at random).
const PRIMARY: Record<string, string> = { Classify: 'Fast' };

function cases(): Case[] {
  const out: Case[] = [];
  for (const project of readdirSync(GOLDEN)) {
    for (const file of walk(path.join(GOLDEN, project))) {
      const text = readFileSync(file, 'utf8');
      // Functions and the tests that name them, from the file's own text.
      const fns = [...text.matchAll(/^function\s+(\w+)/gm)].map((m) => m[1]);
      for (const t of text.matchAll(/^test\s+(\w+)\s*\{\s*functions\s*\[([^\]]*)\]/gm)) {
        for (const fn of t[2].split(/[,\s]+/).filter(Boolean)) {
          if (!fns.includes(fn)) continue;
          out.push({ project, file, fn, test: t[1], args: ARGS[t[1]], ...(PRIMARY[fn] ? { primary: PRIMARY[fn] } : {}) });
        }
      }
    }
  }
  return out;
}

const runtimes = new Map<string, any>();
function oracle(c: Case): { url: string; body: string } {
  const root = path.join(GOLDEN, c.project, 'baml_src');
  let rt = runtimes.get(root);
  if (!rt) {
    const files: Record<string, string> = {};
    for (const f of walk(root)) files[`baml_src/${path.relative(root, f).split(path.sep).join('/')}`] = readFileSync(f, 'utf8');
    rt = baml.BamlRuntime.fromFiles('baml_src', files, ENV);
    runtimes.set(root, rt);
  }
  let registry: unknown = null;
  if (c.primary) {
    const cr = new baml.ClientRegistry();
    cr.setPrimary(c.primary);
    registry = cr;
  }
  const r = rt.buildRequestSync(c.fn, c.args, rt.createContextManager(), null, registry, false, ENV);
  return { url: r.url, body: r.body.text() };
}

/** The strings of a value, for the attribution check. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => (k === 'role' || k === 'url' || k === 'base64' || k === 'media_type' ? [] : strings(x)));
  return [];
}

/** The text of each message of a provider body, in its shape. */
function bodyTexts(body: string): string[] {
  const b = JSON.parse(body);
  const texts: string[] = [];
  const partText = (parts: unknown): string =>
    typeof parts === 'string' ? parts : (parts as any[]).map((p) => (typeof p === 'string' ? p : typeof p.text === 'string' ? p.text : '')).join('');
  const system = b.system ?? b.system_instruction;
  if (system !== undefined) texts.push(partText(typeof system === 'string' || Array.isArray(system) ? system : system.parts));
  for (const m of b.messages ?? b.input ?? b.contents ?? []) texts.push(partText(m.content ?? m.parts));
  return texts;
}

const all = cases();

describe('BAML functions rendered through Context Lens equal BAML runtime requests', () => {
  it('covers every golden function and test', () => {
    expect(all.length).toBe(12);
    for (const c of all) expect(c.args, c.test).toBeDefined();
  });

  for (const c of all) {
    it(`${c.project}: ${c.fn} with test ${c.test}`, () => {
      const host = new DiskFileHost([GOLDEN]);
      const a = analyzeTemplate(host, `${c.file}#${c.fn}`, { fixture: c.test })!;
      // The test block is the function's fixture, by its name.
      expect(a.fixture?.name).toBe(c.test);
      expect(a.fixtures.map((f) => f.name)).toContain(c.test);
      const engine = a.findings.filter((f) => ['template-invalid', 'unsupported-feature', 'value-missing', 'attribution-lost'].includes(f.rule));
      expect(engine.map((f) => f.message)).toEqual([]);
      const expected = oracle(c);
      const got = a.assembly!.trace.provider_request!;
      expect(got.url).toBe(expected.url);
      // Byte for byte: the body Context Lens reports is the runtime's for the test's arguments.
      expect(got.body).toBe(expected.body);
      // The product's messages are the body's, cut into parts that join to its text.
      const messages = a.assembly!.messages;
      expect(messages.map((m) => m.parts.map((p) => p.text).join(''))).toEqual(bodyTexts(expected.body));
      // Each parameter's strings reach the request unchanged, as parts of that parameter.
      const params = Object.keys(a.template.frontMatter!.inputs);
      for (const [name, v] of Object.entries(c.args)) {
        if (!params.includes(name)) continue;
        const attributed = messages.flatMap((m) => m.parts.filter((p) => p.slot === name).map((p) => p.text)).join('\u0000');
        for (const s of strings(v)) if (s) expect(attributed, `${name}: ${s}`).toContain(s);
      }
      // ctx.output_format: a part of its own wherever the prompt writes it.
      const doc = parseTemplate(`${c.file}#${c.fn}`, readFileSync(c.file, 'utf8'));
      const usesFormat = doc.uses.some((u) => u.slot === 'ctx.output_format');
      const formatParts = messages.flatMap((m) => m.parts.filter((p) => p.slot === 'ctx.output_format'));
      expect(formatParts.length > 0).toBe(usesFormat);
      // The per-parameter counts add up to the request's text count.
      const tok = a.binding!.tokenizer;
      const bySlot = new Map<string, number>();
      for (const m of messages) for (const p of m.parts) bySlot.set(p.slot ?? '', (bySlot.get(p.slot ?? '') ?? 0) + tok.count(p.text));
      const whole = messages.reduce((n, m) => n + tok.count(m.content), 0);
      const sum = [...bySlot.values()].reduce((x, y) => x + y, 0);
      // Part boundaries may merge or split a token or two; never more than one per cut.
      const cuts = messages.reduce((n, m) => n + Math.max(0, m.parts.length - 1), 0);
      expect(Math.abs(sum - whole)).toBeLessThanOrEqual(cuts);
      expect(a.assembly!.trace.input_tokens).toBeGreaterThanOrEqual(whole);
    });
  }
});
