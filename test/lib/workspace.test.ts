/**
 * The library's workspace API over examples/ and small temporary workspaces: assemble with a
 * fixture (the analysis the CLI prints) and with live values (the same messages), the call's
 * filters, reference time and input cap, provider bodies with tools, the selection log and
 * citation map, typed errors, and check / budget / count / describe.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextLensError, FixtureValueError, checkCitations, citationMap, contextId, count, openWorkspace, selectionLog, templateVersion } from '../../src/lib';
import { toOpenAI } from '../../src/core/export';

const EXAMPLES = resolve(__dirname, '../../examples');
const ws = openWorkspace(EXAMPLES);

/** A fixture file's slots as plain values, `{ file: … }` replaced by the file's text. */
function fixtureValues(fixture: string): Record<string, unknown> {
  const abs = join(EXAMPLES, fixture);
  const data = parseYaml(readFileSync(abs, 'utf8')) as { slots: Record<string, unknown> };
  const inline = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(inline);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.file === 'string' && Object.keys(o).length === 1) return readFileSync(resolve(dirname(abs), o.file), 'utf8').replace(/^\uFEFF/, '');
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, k === 'file' && typeof x === 'string' ? undefined : inline(x)]).filter(([, x]) => x !== undefined).concat(typeof o.file === 'string' && Object.keys(o).length > 1 ? [['text', readFileSync(resolve(dirname(abs), o.file), 'utf8')]] : []));
    }
    return v;
  };
  return inline(data.slots) as Record<string, unknown>;
}

const temps: string[] = [];
function workspaceWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-lib-'));
  temps.push(dir);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('assemble', () => {
  it('with a fixture: the request and trace of the analysis', () => {
    const r = ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'sdk-qa/fixtures/rate-limit.fixture.yaml' });
    expect(r.ok).toBe(true);
    expect(r.trace.fixture?.path).toBe(join(EXAMPLES, 'sdk-qa/fixtures/rate-limit.fixture.yaml'));
    expect(r.trace.omitted.map((o) => `${o.id} ${o.reason}`)).toEqual(expect.arrayContaining(['ev_0077 filtered:version', 'ev_0270 filtered:expired']));
    expect(r.declaredVersion).toBe('3');
    // By name too.
    expect(ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'rate-limit' }).trace.cache_key).toBe(r.trace.cache_key);
  });

  it('with the same values given live: the same messages, the same decisions', () => {
    for (const f of ['rate-limit', 'post-retries']) {
      const file = ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: f });
      const live = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: fixtureValues(`sdk-qa/fixtures/${f}.fixture.yaml`) });
      expect(live.ok).toBe(file.ok);
      expect(JSON.stringify(live.messages)).toBe(JSON.stringify(file.messages));
      const strip = (t: typeof file.trace) => ({ ...t, fixture: undefined, cache_key: undefined });
      expect(strip(live.trace)).toEqual(strip(file.trace));
      expect(live.trace.fixture?.path).toBe(join(EXAMPLES, 'sdk-qa/sdk-qa.prompt#values'));
    }
  });

  it('is deterministic: identical values give identical bytes and cache keys; changed values change the key', () => {
    const values = fixtureValues('sdk-qa/fixtures/rate-limit.fixture.yaml');
    const a = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values });
    const b = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: JSON.parse(JSON.stringify(values)) });
    expect(JSON.stringify(b.trace)).toBe(JSON.stringify(a.trace));
    const c = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { ...values, question: `${String(values.question)} ` } });
    expect(c.trace.cache_key).not.toBe(a.trace.cache_key);
  });

  it('layers the call\'s filters, reference time and input cap over the config', () => {
    const values = fixtureValues('sdk-qa/fixtures/rate-limit.fixture.yaml');
    const base = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values });
    // Version 3.9: the 4.2 passages are filtered out instead.
    const v39 = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, filters: { version: '3.9' } });
    expect(v39.trace.omitted.find((o) => o.id === 'ev_0194')?.reason).toBe('filtered:version');
    expect(v39.config.filters?.version).toBe('3.9');
    expect(v39.trace.cache_key).not.toBe(base.trace.cache_key);
    // An earlier reference time: the incident notice has not expired yet.
    const early = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, now: '2026-07-01T00:00:00Z' });
    expect(early.trace.omitted.some((o) => o.id === 'ev_0270')).toBe(false);
    // A cap above the config's input budget changes nothing; a low one trims optional items.
    expect(ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, maxInputTokens: 1_000_000 }).trace.cache_key).toBe(base.trace.cache_key);
    const capped = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, maxInputTokens: 1500 });
    expect(capped.budget.limits?.input).toBe(1500);
    expect(capped.trace.input_tokens).toBeLessThanOrEqual(capped.trace.input_budget);
    expect(capped.trace.omitted.some((o) => o.reason === 'trimmed-for-request' || o.reason === 'over-slot-budget')).toBe(true);
    const tiny = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, maxInputTokens: 50 });
    expect(tiny.ok).toBe(false);
    expect(tiny.error).toMatch(/Required content alone/);
    expect(tiny.findings.some((f) => f.rule === 'required-overflow')).toBe(true);
  });

  it('builds each provider\'s body from the same messages', () => {
    const values = fixtureValues('sdk-qa/fixtures/rate-limit.fixture.yaml');
    const openai = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, provider: 'openai' });
    expect(openai.request).toMatchObject({ model: 'gpt-4o', max_completion_tokens: 2000 });
    expect((openai.request as { messages: unknown[] }).messages).toEqual(toOpenAI(openai.messages));
    const anthropic = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, provider: 'anthropic', maxTokens: 512, cache: { ttl: '1h' } });
    expect(anthropic.request).toMatchObject({ max_tokens: 512, system: [{ type: 'text', cache_control: { type: 'ephemeral', ttl: '1h' } }] });
    const gemini = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, provider: 'gemini' });
    expect((gemini.request as { contents: Array<{ role: string }> }).contents.map((c) => c.role)).toEqual(['user', 'model', 'user'].slice(0, (gemini.request as { contents: unknown[] }).contents.length));
    const responses = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, provider: 'openai-responses' });
    expect((responses.request as { instructions?: string }).instructions).toContain('support assistant for the Orbit Python SDK');
  });

  it('carries the function definitions of tool slots into every body', () => {
    const dir = workspaceWith({
      'agent.prompt': '---\nmodel: gpt-4o\n---\n{{role "system"}}\nYou may call tools.\n{{role "user"}}\n{{question}}\n',
      'agent.context.yaml': 'model: gpt-4o\nwindow: 8000\noutput: 500\nslots:\n  tools: { kind: tool, trust: trusted }\n  question: { kind: user, trust: untrusted, required: true }\n',
    });
    const w = openWorkspace(dir);
    const tools = [
      { name: 'lookup_order', description: 'Read one order.', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } },
      { type: 'function', function: { name: 'issue_refund', description: 'Propose a refund.', parameters: { type: 'object', properties: { amount: { type: 'number' } } } } },
    ];
    const r = w.assemble('agent.prompt', { slots: { question: 'Refund NW-123456?', tools }, provider: 'anthropic', cache: { tools: true } });
    expect(r.tools.map((t) => t.name)).toEqual(['lookup_order', 'issue_refund']);
    expect((r.request as { tools: Array<{ name: string; cache_control?: unknown }> }).tools.map((t) => [t.name, !!t.cache_control])).toEqual([
      ['lookup_order', false],
      ['issue_refund', true],
    ]);
    expect((w.assemble('agent.prompt', { slots: { question: 'q', tools }, provider: 'gemini' }).request as { tools: unknown[] }).tools).toHaveLength(1);
    // Without tools in the values, no `tools` key.
    expect(w.assemble('agent.prompt', { slots: { question: 'q' }, provider: 'openai' }).request).not.toHaveProperty('tools');
  });

  it('gives a Prompty template its values as its runtime gets them (null, thread parts, sample text, dates)', () => {
    const dir = workspaceWith({
      '.git/HEAD': '',
      'v1.prompty': '---\nname: a\nmodel:\n  api: chat\nsample:\n  v: sample value\n  d: 2024-01-02\n---\nuser:\n[{{ v }}] {{ [d] }}\n',
      'v2.prompty': '---\nname: b\nmodel:\n  id: gpt-4o\ninputs:\n  name:\n    kind: string\n    default: N\n  post:\n    kind: string\n    default: "  \\n"\n---\nuser:\nHi {{ name }}{{ post }}\n',
      'thread.prompty': '---\nname: c\nmodel:\n  id: gpt-4o\ninputs:\n  history:\n    kind: thread\n---\nuser:\nHi\n{{ history }}\n',
    });
    const lib = openWorkspace(dir, { modelFiles: false });
    const text = (r: ReturnType<typeof lib.assemble>) => r.messages.map((m) => `${m.role}: ${m.parts.map((p) => (p.media ? `[${p.media.url}]` : p.text)).join('')}`);
    // A null value is Python's None, over the sample's value (it was left out, and the sample showed through).
    expect(text(lib.assemble('v1.prompty', { slots: { v: null } }))[0]).toMatch(/^user: \[None\]/);
    // A thread turn whose content is a list of parts reaches the runtime as it is (it was refused).
    const thread = lib.assemble('thread.prompty', { slots: { history: [{ role: 'user', content: [{ kind: 'text', value: 'part' }, { kind: 'image', source: 'https://x.test/t.png' }] }] } });
    expect(text(thread)).toEqual(['user: Hi', 'user: part[https://x.test/t.png]']);
    // The sample's own text (a default of two spaces and a newline lost its spaces on the way), and a date as the runtime's value.
    expect(text(lib.assemble('v2.prompty'))).toEqual(['user: Hi N  ']);
    const sample = lib.assemble('v1.prompty');
    expect(text(sample)[0]).not.toMatch(/'2024-01-02'/);
  });

  it('takes the slots as a JSON text, so a Prompty template gets floats and big integers as Python reads them', () => {
    const dir = workspaceWith({ '.git/HEAD': '', 'n.prompty': '---\nname: n\nmodel:\n  api: chat\n---\nuser:\n{{ a }} {{ b }} {{ c }} {{ d }} {{ e.f }}\n' });
    const lib = openWorkspace(dir, { modelFiles: false });
    const text = '{"a": 1.0, "b": -0.0, "c": 1e20, "d": 12345678901234567890, "e": {"f": 2.50}}';
    expect(lib.assemble('n.prompty', { slotsJson: text }).messages[0].content).toBe('1.0 -0.0 1e+20 12345678901234567890 2.5');
    // As JavaScript values the same numbers are integers (and the big one is rounded).
    expect(lib.assemble('n.prompty', { slots: JSON.parse(text) as Record<string, unknown> }).messages[0].content).toBe('1 0 100000000000000000000 12345678901234567168 2.5');
    expect(() => lib.assemble('n.prompty', { slotsJson: '{"a": ' })).toThrow(ContextLensError);
    expect(() => lib.assemble('n.prompty', { slotsJson: '[1]' })).toThrow(/JSON object/);
    expect(() => lib.assemble('n.prompty', { slotsJson: '{}', slots: {} })).toThrow(/not both/);
  });

  it('names a missing value a filter reads, and not one a default replaces', () => {
    const dir = workspaceWith({ '.git/HEAD': '', 'f.prompty': "---\nname: f\nmodel:\n  api: chat\n---\nuser:\n{{ (items|first).name }} {{ x|default('y') }}\n" });
    const r = openWorkspace(dir, { modelFiles: false }).assemble('f.prompty');
    const missing = r.findings.filter((f) => f.rule === 'value-missing').map((f) => f.message);
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatch(/No value for 'items':/);
    // 0.1.x strips each message.
    expect(r.messages.map((m) => m.content)).toEqual(['y']);
  });

  it('says where a Prompty sample reads the environment, which is never read', () => {
    const dir = workspaceWith({ '.git/HEAD': '', 'e.prompty': '---\nname: e\nmodel:\n  api: chat\nsample:\n  persona: ${env:PERSONA}\n---\nsystem:\nYou are {{ persona }}.\n' });
    const r = openWorkspace(dir, { modelFiles: false }).assemble('e.prompty');
    const f = r.findings.find((x) => x.rule === 'unsupported-feature' && x.message.includes('${env:PERSONA}'));
    expect(f).toBeDefined();
    expect(readFileSync(join(dir, 'e.prompty'), 'utf8').slice(f!.span.start, f!.span.end)).toBe('${env:PERSONA}');
    expect(r.messages[0].content).toBe('You are ${env:PERSONA}.');
  });

  it('zero-config templates assemble with live values too', () => {
    const r = ws.assemble('zero-config/trip-planner.prompt', { slots: { destination: 'Lisbon', days: 3 } });
    expect(r.messages.length).toBeGreaterThan(0);
    // Zero-config traces name no config.
    expect(r.trace.config).toBeUndefined();
  });
});

describe('evidence: citation map, selection log, citations, identities', () => {
  const values = fixtureValues('sdk-qa/fixtures/post-retries.fixture.yaml');
  const r = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values });

  it('maps every supplied evidence id to its source, spans and hash, in request order', () => {
    const map = citationMap(r.trace, r.fixture);
    expect(Object.keys(map)).toEqual(Object.keys(r.trace.citation_map));
    for (const [id, e] of Object.entries(map)) {
      expect(e.sha256).toBe(r.trace.citation_map[id].sha256);
      expect(e.spans).toHaveLength(1);
      expect(e.spans[0][0]).toBe(0);
    }
    const withSpans = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { ...values, evidence: [{ id: 'ev_1', text: 'Retries are on.', source: 'sdk-docs/retries', source_span: [820, 1160] }, { id: 'ev_2', text: 'Two parts.', spans: [[0, 10], [40, 52]] }] } });
    const m2 = citationMap(withSpans.trace, withSpans.fixture);
    expect(m2.ev_1).toMatchObject({ source_id: 'sdk-docs/retries', spans: [[820, 1160]] });
    expect(m2.ev_2).toMatchObject({ source_id: 'ev_2', spans: [[0, 10], [40, 52]] });
  });

  it('logs every candidate once with a decision, reasons and the score\'s parts', () => {
    const log = selectionLog(r.trace, r.fixture, { config: r.config });
    expect(log).toHaveLength(r.trace.retained.length + r.trace.omitted.length);
    for (const e of log) expect(['selected', 'rejected', 'trimmed']).toContain(e.decision);
    const selected = log.filter((e) => e.decision === 'selected' && e.slot === 'evidence');
    expect(selected.length).toBeGreaterThan(0);
    expect(selected.some((e) => e.reasons.includes('exact_version'))).toBe(true);
    expect(selected.some((e) => e.reasons.includes('official_source'))).toBe(true);
    for (const e of log.filter((x) => x.score_breakdown)) {
      const b = e.score_breakdown!;
      expect(b.relevance + b.authority + b.version_match + b.recency + b.novelty + b.contradiction).toBeCloseTo(e.score!, 3);
      expect(b.novelty).toBeGreaterThanOrEqual(-0.0001);
      expect(b.novelty).toBeLessThanOrEqual(0.1001);
    }
    for (const o of r.trace.omitted) {
      const e = log.find((x) => x.evidence_id === o.id && x.slot === o.slot && x.decision !== 'selected')!;
      if (o.reason.startsWith('duplicate-of:') || o.reason.startsWith('filtered:')) expect(e.decision).toBe('rejected');
      else expect(e.decision).toBe('trimmed');
      expect(e.reasons[0]).toBe(o.reason === 'filtered:expired' ? 'expired' : o.reason);
    }
  });

  it('checks citations: supplied ids pass, others fail, claims without ids are reported', () => {
    const [first] = Object.keys(r.trace.citation_map);
    const omitted = r.trace.omitted[0];
    const c = checkCitations({ citations: [{ claim_id: 'c1', evidence_ids: [first] }, { claim_id: 'c2', evidence_ids: [first, 'ev_9999', omitted.id] }, { claim_id: 'c3', evidence_ids: [] }] }, r.trace);
    expect(c.valid).toBe(false);
    expect(c.complete).toBe(false);
    expect(c.claims.map((x) => x.status)).toEqual(['supported', 'invalid', 'uncited']);
    expect(c.unknown_ids).toEqual(['ev_9999', omitted.id]);
    expect(c.omitted_ids).toEqual({ [omitted.id]: omitted.reason });
    expect(c.uncited_claims).toEqual(['c3']);
    expect(checkCitations({ citations: [{ claim_id: 'c1', evidence_ids: [first] }] }, r.trace)).toMatchObject({ valid: true, complete: true });
  });

  it('derives a stable context id from the cache key and the request scope', () => {
    const a = contextId(r.trace, { query: 'Why  twice?', user_id: 'u1', tenant: 'acme', permission_revision: 7 });
    expect(a).toMatch(/^ctx_[0-9a-f]{32}$/);
    expect(contextId(r.trace, { query: ' Why twice? ', user_id: 'u1', tenant: 'acme', permission_revision: 7 })).toBe(a);
    expect(contextId(r.trace, { query: 'Why twice?', user_id: 'u1', tenant: 'acme', permission_revision: 8 })).not.toBe(a);
    expect(contextId(r.trace, { query: 'Why twice?', user_id: 'u2', tenant: 'acme', permission_revision: 7 })).not.toBe(a);
    expect(templateVersion(r.trace, r.declaredVersion)).toBe(`3+${r.trace.template.sha256.slice(0, 12)}`);
  });
});

describe('errors', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      if (e instanceof ContextLensError) return e.code;
      if (e instanceof FixtureValueError) return `value:${e.message}`;
      throw e;
    }
    return undefined;
  };
  it('names what is wrong with the call', () => {
    expect(code(() => ws.assemble('sdk-qa/missing.prompt'))).toBe('not-found');
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.context.yaml'))).toBe('not-a-template');
    expect(code(() => ws.assemble('../package.json'))).toBe('outside-workspace');
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'no-such-fixture' }))).toBe('fixture-not-found');
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'rate-limit', slots: {} }))).toBe('invalid-option');
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.prompt', { slots: {}, maxInputTokens: -1 }))).toBe('invalid-option');
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { evidence: [{ text: 'a', relevance: 'high' }] } }))).toMatch(/^value:evidence\[0\]\.relevance: /);
    expect(code(() => ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { policy: { file: 'x.md' } }, files: false }))).toMatch(/^value:policy\.file: /);
    expect(code(() => count('x', { model: 'no-such-model' }))).toBe('unknown-model');
    expect(code(() => count('x', { tokenizer: 'nope' }))).toBe('unknown-tokenizer');
  });

  it('refuses a config that cannot be used, with its findings', () => {
    const dir = workspaceWith({ 't.prompt': 'Hello {{name}}\n', 't.context.yaml': '- not\n- a mapping\n' });
    let err: unknown;
    try {
      openWorkspace(dir).assemble('t.prompt', { slots: { name: 'x' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ContextLensError);
    expect((err as ContextLensError).code).toBe('config-invalid');
    expect((err as ContextLensError).findings.length).toBeGreaterThan(0);
  });
});

describe('check, budget, count, describe', () => {
  it('check reports what ctxlens check reports', () => {
    const r = ws.check(['defects']);
    expect(r.ok).toBe(false);
    expect(r.summary.errors).toBeGreaterThan(0);
    const f = r.files.flatMap((x) => x.findings)[0];
    expect(f.range.start.line).toBeGreaterThanOrEqual(0);
    expect(r.files.every((x) => x.path.startsWith('defects/'))).toBe(true);
  });

  it('budget computes the equation of a config or template', () => {
    const b = ws.budget('sdk-qa/sdk-qa.context.yaml')!;
    expect(b).toMatchObject({ window: 16000, output: 2000, margin: 1600, fits: true, inputAllocated: 6200 });
    expect(ws.budget('sdk-qa/sdk-qa.prompt')?.window).toBe(16000);
  });

  it('count uses a model\'s tokenizer or a named one', () => {
    expect(count('hello world')).toEqual({ tokens: 2, tokenizer: 'o200k_base', exact: true });
    expect(ws.count('hello world', { model: 'gpt-4' })).toMatchObject({ tokenizer: 'cl100k_base', tokens: 2 });
    expect(count('hello world', { tokenizer: 'chars4' })).toMatchObject({ tokens: 3, exact: false });
  });

  it('describe lists the slots with kind, trust and use', () => {
    const d = ws.describe('sdk-qa/sdk-qa.prompt');
    expect(d.slots.map((s) => `${s.name}:${s.kind}`)).toEqual(['policy:policy', 'history:history', 'evidence:evidence', 'tool_result:tool', 'question:user']);
    expect(d).toMatchObject({ format: 'prompt', declaredVersion: '3', model: 'gpt-4o', zeroConfig: false });
  });
});
