/**
 * The preview's compare mode and what-if budgets over LSP: the built server (dist/server.js) on a
 * copy of examples/, asked for preview snapshots with a variant (another fixture, another model,
 * what-if budgets). The comparison must be what `ctxlens diff` prints for the arguments the
 * snapshot names (the built CLI run as a subprocess on the same copy), and "Apply to config" must
 * give edits that write exactly the budgets into the config, which the server then reads back.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetEditRequest, PreviewRequest } from '../../src/protocol/lsp';
import type { PreviewParams } from '../../src/protocol/lsp';
import type { PreviewComparison, PreviewSnapshotBody } from '../../src/protocol/preview';
import { LspClient, REPO, applyEdits, copyWorkspace, removeWorkspace, uriOf } from './harness';

const CLI = path.join(REPO, 'dist', 'cli.js');

let ws: string;
let client: LspClient;
let template: string;
let config: string;

beforeAll(async () => {
  ws = copyWorkspace(path.join(REPO, 'examples'));
  template = path.join(ws, 'sdk-qa', 'sdk-qa.prompt');
  config = path.join(ws, 'sdk-qa', 'sdk-qa.context.yaml');
  client = await LspClient.start({ workspace: ws });
  await client.open(template);
});

afterAll(async () => {
  await client?.stop();
  if (ws) removeWorkspace(ws);
});

async function snapshot(params: PreviewParams): Promise<PreviewSnapshotBody> {
  const reply = await client.connection.sendRequest(PreviewRequest.type, params);
  if (!('snapshot' in reply)) throw new Error(`no snapshot: ${reply.empty}`);
  return reply.snapshot;
}

function comparison(s: PreviewSnapshotBody): PreviewComparison {
  const c = s.compare;
  if (!c || c.error !== undefined) throw new Error(`no comparison: ${c?.error}`);
  return c;
}

/** `ctxlens diff <command> --format json` on the workspace copy. */
function cliDiff(command: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, [CLI, ...command, '--format', 'json'], { cwd: ws, encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** The panel's comparison and the CLI's report of the same arguments hold the same diff and labels. */
function expectSameAsCli(c: PreviewComparison): void {
  const { template: _t, a, b, ...diff } = cliDiff(c.command);
  expect(diff).toEqual(JSON.parse(JSON.stringify(c.diff)));
  expect((a as { label: string }).label).toBe(c.a.label);
  expect((b as { label: string }).label).toBe(c.b.label);
}

describe('compare mode', () => {
  it('compares with another fixture exactly as ctxlens diff does', async () => {
    const uri = uriOf(template);
    const rateLimit = path.join(ws, 'sdk-qa', 'fixtures', 'rate-limit.fixture.yaml');
    const s = await snapshot({ uri, variant: { templateUri: uri, compare: { kind: 'fixture', path: rateLimit } } });
    const c = comparison(s);
    expect(c.command).toEqual(['diff', 'sdk-qa/sdk-qa.prompt', '--fixture', 'post-retries', '--fixture', 'rate-limit']);
    expect([c.a.fixture, c.b.fixture]).toEqual(['post-retries', 'rate-limit']);
    expect(c.diff.first_difference?.role_a).toBe('user');
    expect(c.diff.input_tokens.delta).toBe(c.b.result.trace.input_tokens - c.a.result.trace.input_tokens);
    expect(c.diff.slots.find((x) => x.slot === 'tool_result')?.only_b.map((x) => x.id)).toEqual(['call_9120']);
    // Without what-if budgets, A is the request the panel shows.
    expect(c.a.result.trace.input_tokens).toBe(s.result.trace.input_tokens);
    expectSameAsCli(c);
  });

  it('compares with another model exactly as ctxlens diff does', async () => {
    const uri = uriOf(template);
    const c = comparison(await snapshot({ uri, variant: { templateUri: uri, compare: { kind: 'model', model: 'gpt-4.1' } } }));
    expect(c.command).toEqual(['diff', 'sdk-qa/sdk-qa.prompt', '--model', 'gpt-4o', '--model', 'gpt-4.1']);
    expect(c.b.result.trace.model).toBe('gpt-4.1');
    expectSameAsCli(c);
  });

  it('says why when the fixture is not one of the template', async () => {
    const uri = uriOf(template);
    const s = await snapshot({ uri, variant: { templateUri: uri, compare: { kind: 'fixture', path: path.join(ws, 'refund-support', 'fixtures', 'nope.fixture.yaml') } } });
    expect(s.compare?.error).toMatch(/is not a fixture of sdk-qa\.prompt/);
  });
});

describe('what-if budgets', () => {
  it('re-assembles with the budgets, nothing written; the budget comparison is ctxlens diff --budget', async () => {
    const uri = uriOf(template);
    const before = await snapshot({ uri });
    const s = await snapshot({ uri, variant: { templateUri: uri, budgets: { evidence: 400 }, compare: { kind: 'budget' } } });
    expect(s.whatIf?.budgets).toEqual({ evidence: 400 });
    expect(s.whatIf?.written).toMatchObject({ evidence: 3000, policy: 900, history: 1400 });
    expect(s.whatIf?.apply).toEqual({ ok: true, path: config.replace(/\\/g, '/') });
    expect(s.result.budget.slots.find((l) => l.name === 'evidence')?.budget).toBe(400);
    expect(s.result.trace.slots.find((t) => t.name === 'evidence')?.used).toBeLessThanOrEqual(400);
    expect(s.result.trace.input_tokens).toBeLessThan(before.result.trace.input_tokens);
    expect(s.result.trace.omitted.filter((o) => o.reason === 'over-slot-budget').map((o) => o.id).sort()).toEqual(['ev_0203', 'ev_0231', 'ev_0255']);
    // Locations follow the what-if trace: every kept or omitted item can be revealed.
    for (const id of [...s.result.trace.retained, ...s.result.trace.omitted].filter((x) => x.slot === 'evidence').map((x) => x.id)) {
      expect(s.locations.items.some((l) => l.id === id)).toBe(true);
    }
    const c = comparison(s);
    expect(c.command).toEqual(['diff', 'sdk-qa/sdk-qa.prompt', '--budget', 'evidence=400']);
    expect(c.diff).toEqual(s.whatIf?.diff);
    expectSameAsCli(c);
    // The file is untouched: a plain preview is the request as written.
    expect((await snapshot({ uri })).result.trace.input_tokens).toBe(before.result.trace.input_tokens);
  });

  it('reports budgets for a slot the config does not have, and ignores a variant made for another template', async () => {
    const uri = uriOf(template);
    const s = await snapshot({ uri, variant: { templateUri: uri, budgets: { nonsense: 5 } } });
    expect(s.whatIf?.error).toBe("'nonsense' is not a slot of the config");
    expect(s.whatIf?.apply.ok).toBe(false);
    expect(s.result.budget.slots.find((l) => l.name === 'evidence')?.budget).toBe(3000);
    const other = await snapshot({ uri, variant: { templateUri: uriOf(path.join(ws, 'refund-support', 'refund.prompty')), budgets: { evidence: 400 } } });
    expect(other.whatIf).toBeUndefined();
    expect(other.compare).toBeUndefined();
  });

  it('Apply to config: edits of the open config write exactly the budgets, and the preview then reads them', async () => {
    const cfgUri = await client.open(config);
    const uri = uriOf(template);
    const r = await client.connection.sendRequest(BudgetEditRequest.type, { uri, budgets: { evidence: 400, question: 250 } });
    if ('error' in r) throw new Error(r.error);
    expect(r.uri).toBe(cfgUri);
    expect(r.version).toBe(client.version(cfgUri));
    expect(r.edits).toHaveLength(2);
    const text = client.text(cfgUri);
    const next = applyEdits(text, r.edits);
    expect(next).toBe(text.replace('budget: 3000,', 'budget: 400,').replace('required: true, budget: 300 }', 'required: true, budget: 250 }'));
    // As the extension's workspace edit reaches the server: a change of the open document.
    await client.edit(cfgUri, 0, text.length, next);
    const s = await snapshot({ uri });
    expect(s.whatIf).toBeUndefined();
    expect(s.result.budget.slots.find((l) => l.name === 'evidence')?.budget).toBe(400);
    expect(s.result.budget.slots.find((l) => l.name === 'question')?.budget).toBe(250);
    await client.edit(cfgUri, 0, next.length, text);
  });

  it('refuses to write budgets for a template without a config', async () => {
    const zero = path.join(ws, 'zero-config', 'outdoor-gear.prompty');
    await client.open(zero);
    const r = await client.connection.sendRequest(BudgetEditRequest.type, { uri: uriOf(zero), budgets: { question: 100 } });
    expect(r).toEqual({ error: 'outdoor-gear.prompty has no context config to write to: create one first (quick fix “Create context config”)' });
  });
});
