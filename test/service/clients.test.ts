/**
 * The example clients (examples/clients: Node with fetch, Python with urllib) against a service
 * this test starts (`ctxlens serve --port 0 --root examples`): each assembles, prints the
 * selection, and checks citations (by context_id, and by trace).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { ensureCliBuilt, startService } from './harness';
import type { RunningService } from './harness';

const CLIENTS = path.join(REPO, 'examples', 'clients');
let s: RunningService;

beforeAll(async () => {
  ensureCliBuilt();
  s = await startService(['--root', 'examples']);
});
afterAll(async () => {
  await s?.stop();
});

function expectOutput(stdout: string): void {
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^context ctx_[0-9a-f]{32} \(3\+[0-9a-f]{12}\): \d+ tokens$/);
  expect(lines[1]).toBe('evidence: ev_0192');
  expect(lines).toContain('  ev_0192 selected high_relevance exact_version official_source high_authority');
  expect(lines).toContain('  ev_0077 rejected filtered:version');
  expect(lines.at(-1)).toBe('citations valid: false; not supplied: ev_0077');
}

describe('example clients', () => {
  it('node-client.mjs', () => {
    const r = spawnSync(process.execPath, [path.join(CLIENTS, 'node-client.mjs'), s.url], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expectOutput(r.stdout);
  });

  it('python_client.py (standard library only)', () => {
    const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
    expect(python.status, 'python3 is a prerequisite of the test tiers').toBe(0);
    const r = spawnSync('python3', ['-I', path.join(CLIENTS, 'python_client.py')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, CTXLENS_URL: s.url } });
    expect(r.status, r.stderr).toBe(0);
    expectOutput(r.stdout);
  });

  it('both clients get the same context for the same request', () => {
    const node = spawnSync(process.execPath, [path.join(CLIENTS, 'node-client.mjs'), s.url], { encoding: 'utf8', timeout: 60_000 });
    const py = spawnSync('python3', ['-I', path.join(CLIENTS, 'python_client.py'), s.url], { encoding: 'utf8', timeout: 60_000 });
    // Same values; only the provider differs, which is not part of the context.
    expect(node.stdout.split('\n')[0]).toBe(py.stdout.split('\n')[0]);
  });
});
