/**
 * `ctxlens serve` and `ctxlens cite-check` as subprocesses of the built CLI: the listening line
 * with the bound port, a request answered, SIGTERM ending it with 0, usage errors with exit 2, and
 * the citation check's exit codes on a trace written by `ctxlens assemble --trace`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt, startService } from '../service/harness';

let tmp: string;
beforeAll(() => {
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-serve-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });

describe('ctxlens serve', () => {
  it('prints the bound address first, answers, and ends with 0 on SIGTERM', async () => {
    const s = await startService(['--root', 'examples']);
    try {
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(Number(new URL(s.url).port)).toBeGreaterThan(0);
      const health = await fetch(`${s.url}/healthz`);
      expect(health.status).toBe(200);
      const r = await fetch(`${s.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'Does 4.2 retry?', slots: { policy: 'Be brief.' } }) });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { context_id: string }).context_id).toMatch(/^ctx_/);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    expect(s.stdout.join('')).toBe(`listening on ${s.url}\n`);
  });

  it('takes --host, --max-body and --cache-size', async () => {
    const s = await startService(['--root', 'examples', '--host', '127.0.0.1', '--max-body', '1kb', '--cache-size', '0']);
    try {
      const big = await fetch(`${s.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'x'.repeat(2000) }) });
      expect(big.status).toBe(413);
    } finally {
      await s.stop();
    }
  });

  it('refuses bad flags with exit 2', () => {
    for (const args of [['--port', 'abc'], ['--port', '70000'], ['--max-body', 'lots'], ['--root', 'no/such/folder'], ['--cache-size', '-1'], ['--nope'], ['positional']]) {
      const r = cli(['serve', ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^ctxlens serve: /);
      expect(r.stderr).toContain('Usage: ctxlens serve');
    }
  });

  it('ends with 2 when the port is taken', async () => {
    const s = await startService(['--root', 'examples']);
    try {
      const r = cli(['serve', '--root', 'examples', '--port', new URL(s.url).port]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/cannot listen: port \d+ is in use/);
    } finally {
      await s.stop();
    }
  });

  it('is listed in the help', () => {
    const r = cli(['--help']);
    expect(r.stdout).toMatch(/^ {2}ctxlens serve \[--root DIR\]/m);
    expect(r.stdout).toMatch(/^ {2}ctxlens cite-check <answer\.json> --trace <trace\.json>/m);
  });
});

describe('ctxlens cite-check', () => {
  let trace: string;
  let ids: string[];
  beforeAll(() => {
    trace = path.join(tmp, 'trace.json');
    const r = cli(['assemble', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'rate-limit', '--trace', trace, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    ids = Object.keys((JSON.parse(r.stdout) as { trace: { citation_map: Record<string, unknown> } }).trace.citation_map);
    expect(ids.length).toBeGreaterThan(1);
  });

  const answer = (citations: Array<{ claim_id: string; evidence_ids: string[] }>) => {
    const f = path.join(tmp, `answer-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(f, JSON.stringify({ answer: 'A claim.', citations }));
    return f;
  };

  it('exits 0 when every cited id was supplied', () => {
    const r = cli(['cite-check', answer([{ claim_id: 'c1', evidence_ids: [ids[0], ids[1]] }]), '--trace', trace]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 claim\(s\): 1 cite supplied evidence, 0 cite ids that were not supplied, 0 cite nothing/);
  });

  it('exits 1 on an id that was not supplied, naming why it was left out', () => {
    const r = cli(['cite-check', answer([{ claim_id: 'c1', evidence_ids: [ids[0]] }, { claim_id: 'c2', evidence_ids: ['ev_0077', 'ev_9999'] }]), '--trace', trace]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('c2: cites ev_0077 (left out: filtered:version), ev_9999 (not a candidate), not supplied in the request\n');
    const json = cli(['cite-check', answer([{ claim_id: 'c2', evidence_ids: ['ev_9999'] }]), '--trace', trace, '--format', 'json']);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, unknown_ids: ['ev_9999'] });
  });

  it('reports claims without citations; --strict fails on them', () => {
    const f = answer([{ claim_id: 'c1', evidence_ids: [] }]);
    const r = cli(['cite-check', f, '--trace', trace]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('c1: cites no evidence\n');
    expect(cli(['cite-check', f, '--trace', trace, '--strict']).status).toBe(1);
  });

  it('reads a service response as the trace too', () => {
    const resp = path.join(tmp, 'response.json');
    writeFileSync(resp, JSON.stringify({ context_id: 'ctx_x', trace: { citation_map: { ev_1: {} }, omitted: [] } }));
    expect(cli(['cite-check', answer([{ claim_id: 'c', evidence_ids: ['ev_1'] }]), '--trace', resp]).status).toBe(0);
  });

  it('exits 2 on usage errors and unreadable input', () => {
    expect(cli(['cite-check']).status).toBe(2);
    expect(cli(['cite-check', answer([]), '--format', 'xml', '--trace', trace]).status).toBe(2);
    expect(cli(['cite-check', answer([])]).status).toBe(2);
    expect(cli(['cite-check', path.join(tmp, 'missing.json'), '--trace', trace]).stderr).toMatch(/cannot read answer/);
    const bad = path.join(tmp, 'bad.json');
    writeFileSync(bad, '{"citations": [{"claim_id": "c", "evidence_ids": "ev_1"}]}');
    const r = cli(['cite-check', bad, '--trace', trace]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/citations\[0\]\.evidence_ids/);
  });
});
