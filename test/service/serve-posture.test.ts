/**
 * `ctxlens serve` as a subprocess of the built CLI: the bearer token (required off loopback, read
 * from --token-file or $CTXLENS_TOKEN, never printed), and the graceful drain on SIGTERM (an answer
 * still being written arrives whole; a body still being sent is cut after --drain-timeout; the
 * process ends with 0).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt, startService } from './harness';

let tmp: string;
const TOKEN = 'b7e4c1d9a2f8e6b3c5d7a9f1e3b5c7d9';
beforeAll(() => {
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-posture-'));
  writeFileSync(path.join(tmp, 'notes.prompt'), '---\nmodel: gpt-4o\n---\n{{role "system"}}\nSummarise the notes.\n{{role "user"}}\n{{notes}}\n');
  // A window large enough for a 3 MB value, so the answer is megabytes long.
  writeFileSync(path.join(tmp, 'notes.context.yaml'), 'version: 1\nmodel: gpt-4o\nwindow: 4000000\noutput: 1000\nslots:\n  notes: { kind: other, trust: untrusted }\n');
  writeFileSync(path.join(tmp, 'token.txt'), `${TOKEN}\n`);
  writeFileSync(path.join(tmp, 'short.txt'), 'abc123\n');
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, ...args], { cwd: REPO, encoding: 'utf8', timeout: 60_000, env: { ...process.env, CTXLENS_TOKEN: '', ...env } });

describe('bearer token on the command line', () => {
  it('refuses to bind a non-loopback address without a token', () => {
    const r = cli(['serve', '--root', tmp, '--host', '0.0.0.0', '--port', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/reachable from other machines; give a bearer token with --token-file/);
    expect(r.stdout).toBe('');
  });

  it('refuses a short token and an unreadable token file without printing the token', () => {
    const short = cli(['serve', '--root', tmp, '--token-file', path.join(tmp, 'short.txt'), '--port', '0']);
    expect(short.status).toBe(2);
    expect(short.stderr).toMatch(/at least 16/);
    expect(short.stderr).not.toContain('abc123');
    const missing = cli(['serve', '--root', tmp, '--token-file', path.join(tmp, 'nope.txt'), '--port', '0']);
    expect(missing.status).toBe(2);
  });

  for (const [name, args, env] of [
    ['--token-file', ['--token-file', 'token.txt'], {}],
    ['$CTXLENS_TOKEN', [], { CTXLENS_TOKEN: TOKEN }],
  ] as Array<[string, string[], Record<string, string>]>) {
    it(`takes the token from ${name} on every interface, and never prints it`, async () => {
      const s = await startService(['--root', tmp, '--host', '0.0.0.0', ...args], { cwd: tmp, env: { CTXLENS_TOKEN: '', ...env } });
      try {
        const url = `http://127.0.0.1:${new URL(s.url).port}`;
        const body = JSON.stringify({ template: 'notes.prompt', slots: { notes: 'n' } });
        const no = await fetch(`${url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(no.status).toBe(401);
        const yes = await fetch(`${url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body });
        expect(yes.status).toBe(200);
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      } finally {
        expect(await s.stop()).toBe(0);
      }
      expect(s.stdout.join('') + s.stderr.join('')).not.toContain(TOKEN);
    });
  }
});

describe('drain on SIGTERM', () => {
  it('lets an answer still being written arrive whole, then ends with 0', async () => {
    const s = await startService(['--root', tmp, '--max-body', '4mb', '--drain-timeout', '20s']);
    const notes = 'All work and no play. '.repeat(140_000);
    const body = JSON.stringify({ template: 'notes.prompt', provider: 'openai', slots: { notes } });
    const u = new URL(s.url);
    const got = await new Promise<{ declared: number; received: number }>((resolveGot, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: '/v1/context', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const declared = Number(res.headers['content-length']);
        let received = 0;
        res.pause();
        // The server is told to stop while most of the answer is still in its buffers.
        s.proc.kill('SIGTERM');
        res.on('data', (c: Buffer) => (received += c.length));
        res.on('end', () => resolveGot({ declared, received }));
        res.on('error', reject);
        setTimeout(() => res.resume(), 300);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(got.declared).toBeGreaterThan(8 * 1024 * 1024);
    expect(got.received).toBe(got.declared);
    // The process ends by itself once the answer is out (stop() would signal it a second time).
    if (s.proc.exitCode === null) await new Promise<void>((r) => s.proc.once('exit', () => r()));
    expect(s.proc.exitCode).toBe(0);
  });

  it('cuts a body still being sent after the drain deadline, and ends with 0', async () => {
    const s = await startService(['--root', tmp, '--drain-timeout', '500ms']);
    const u = new URL(s.url);
    const sock = net.connect(Number(u.port), u.hostname);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    sock.on('error', () => undefined);
    sock.write(`POST /v1/context HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"template":`);
    // Give the server the headers before it is told to stop, so the request is under way.
    await new Promise<void>((r) => {
      const probe = http.get(`${s.url}/healthz`, (res) => {
        res.resume();
        res.on('end', () => r());
      });
      probe.on('error', () => r());
    });
    expect(await s.stop()).toBe(0);
    await closed;
    expect(sock.destroyed).toBe(true);
  });
});
