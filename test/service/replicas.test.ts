/**
 * `ctxlens serve` behind a load balancer, for real: a `redis-server` (Debian's, with a password),
 * two `node dist/cli.js serve --store redis://…` replicas and an nginx round-robin proxy in front,
 * all on 127.0.0.1 with free ports and configs in a temporary folder. Requests go through the
 * proxy: every context assembled by one replica is validated by id through the proxy (so by the
 * other replica too); the store is killed mid-run (lookups answer 503 `store_unavailable`, never
 * "unknown id", assemblies still answer, /healthz says degraded), then started again (the replicas
 * recover by themselves); a stalled store (SIGSTOP) is answered within the store timeout. Every
 * wait is on an event or a bounded poll; every process is killed in afterAll. scripts/prereqs.mjs
 * installs redis-server and nginx.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt, startService } from './harness';
import type { RunningService } from './harness';

const REDIS = '/usr/bin/redis-server';
const NGINX = '/usr/sbin/nginx';
const PASSWORD = 'r3d1s-pw-7c1e9a4b2d8f6e3a';

/** A port that was free a moment ago (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `cmd`; resolves once `ready` matches its output, rejects on exit or after `ms`. */
function startUntil(cmd: string, args: string[], ready: RegExp, ms = 20_000): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${path.basename(cmd)} did not get ready within ${ms} ms:\n${out}`));
    }, ms);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ proc, output: () => out });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(cmd)} exited with ${code}:\n${out}`));
    });
  });
}

function killAndWait(proc: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill(signal);
  });
}

/** Polls `f` until it returns true, at most `ms`; the answer of the last try otherwise. */
async function until(f: () => Promise<boolean>, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await f().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const EVIDENCE = Array.from({ length: 12 }, (_, i) => ({ evidence_id: `ev_${i}`, source_id: `docs/${i}`, tenant: 'acme', relevance: 0.5 + i / 40, text: `Passage ${i}: version 4.2 retries 429 responses.` }));
const request = (n: number, tenant = 'acme') => ({ template: 'sdk-qa/sdk-qa.prompt', query: `Does 4.2 retry? (${n})`, tenant, permission_revision: 'perm-1', slots: { policy: 'Answer from the evidence.', evidence: EVIDENCE } });

interface Reply {
  status: number;
  json: Record<string, any>;
  upstream: string;
  stored: string | null;
}

let tmp: string;
let redisPort: number;
let proxyPort: number;
let redis: ChildProcess | undefined;
let nginx: ChildProcess | undefined;
const replicas: RunningService[] = [];
let proxy: string;

async function post(route: string, body: unknown, base = proxy): Promise<Reply> {
  const r = await fetch(`${base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
  const text = await r.text();
  return { status: r.status, json: text ? (JSON.parse(text) as Record<string, any>) : {}, upstream: r.headers.get('x-upstream') ?? '', stored: r.headers.get('ctxlens-context-stored') };
}

const health = async (base: string) => (await (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) })).json()) as { status: string; store?: { status: string } };

async function startRedis(): Promise<void> {
  const started = await startUntil(REDIS, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', path.join(tmp, 'redis'), '--requirepass', PASSWORD, '--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru'], /Ready to accept connections/);
  redis = started.proc;
}

beforeAll(async () => {
  for (const bin of [REDIS, NGINX]) if (!existsSync(bin)) throw new Error(`${bin} is missing: run node scripts/prereqs.mjs (it installs redis-server and nginx)`);
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-replicas-'));
  // nginx's workers may run as another user: they need to reach the folder and write their temp files.
  chmodSync(tmp, 0o755);
  for (const d of ['redis', 'nginx', 'nginx/body', 'nginx/proxy']) mkdirSync(path.join(tmp, d), { recursive: true });
  for (const d of ['nginx', 'nginx/body', 'nginx/proxy']) chmodSync(path.join(tmp, d), 0o777);
  writeFileSync(path.join(tmp, 'store-password'), `${PASSWORD}\n`);
  redisPort = await freePort();
  await startRedis();
  const store = ['--store', `redis://127.0.0.1:${redisPort}/0`, '--store-timeout', '300ms', '--root', 'examples'];
  // One replica reads the password from a file, the other from the environment.
  replicas.push(await startService([...store, '--store-password-file', path.join(tmp, 'store-password')], { env: { CTXLENS_STORE_PASSWORD: '' } }));
  replicas.push(await startService(store, { env: { CTXLENS_STORE_PASSWORD: PASSWORD } }));
  proxyPort = await freePort();
  const upstreams = replicas.map((r) => `    server ${new URL(r.url).host};`).join('\n');
  const conf = path.join(tmp, 'nginx', 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${tmp}/nginx/nginx.pid;
error_log stderr notice;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${tmp}/nginx/body;
  proxy_temp_path ${tmp}/nginx/proxy;
  fastcgi_temp_path ${tmp}/nginx/proxy;
  uwsgi_temp_path ${tmp}/nginx/proxy;
  scgi_temp_path ${tmp}/nginx/proxy;
  client_max_body_size 4m;
  upstream ctxlens {
${upstreams}
    keepalive 8;
  }
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://ctxlens;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host:$server_port;
      # Each answer is the replica's own: no retry on the other one.
      proxy_next_upstream off;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`,
  );
  const started = await startUntil(NGINX, ['-p', path.join(tmp, 'nginx'), '-c', conf, '-e', 'stderr'], /start worker process/);
  nginx = started.proc;
  proxy = `http://127.0.0.1:${proxyPort}`;
}, 90_000);

afterAll(async () => {
  await killAndWait(nginx, 'SIGQUIT');
  await Promise.all(replicas.map((r) => r.stop()));
  if (redis) {
    redis.kill('SIGCONT');
    await killAndWait(redis);
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('two replicas behind nginx with a shared Redis store', () => {
  const issued: Array<{ id: string; upstream: string }> = [];

  it('validates every id through the proxy, whichever replica assembled it', async () => {
    expect(await health(proxy)).toMatchObject({ status: 'ok', store: { status: 'up' } });
    for (let i = 0; i < 16; i++) {
      const r = await post('/v1/context', request(i));
      expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(200);
      expect(r.stored).toBeNull();
      issued.push({ id: r.json.context_id as string, upstream: r.upstream });
    }
    // Each id twice in a row: round robin sends the two lookups to the two replicas.
    for (const { id, upstream } of issued) {
      const by = new Set<string>();
      for (let k = 0; k < 2; k++) {
        const v = await post('/v1/validate', { context_id: id, citations: [{ claim_id: 'c1', evidence_ids: ['ev_11', 'ev_nope'] }] });
        expect(v.status, JSON.stringify(v.json)).toBe(200);
        expect(v.json.claims[0]).toMatchObject({ claim_id: 'c1', unknown_ids: ['ev_nope'] });
        by.add(v.upstream);
      }
      expect([...by].sort(), `${id} assembled by ${upstream}`).toEqual([...new Set(issued.map((i) => i.upstream))].sort());
    }
    expect(new Set(issued.map((i) => i.upstream)).size).toBe(2);
  }, 60_000);

  it('keeps tenants apart: an id is not found for another tenant or permission revision', async () => {
    const { id } = issued[0]!;
    for (let i = 0; i < 2; i++) {
      expect((await post('/v1/validate', { context_id: id, tenant: 'acme', permission_revision: 'perm-1', citations: [] })).status).toBe(200);
      const other = await post('/v1/validate', { context_id: id, tenant: 'globex', permission_revision: 'perm-1', citations: [] });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('context_not_found');
      expect((await post('/v1/validate', { context_id: id, tenant: 'acme', permission_revision: 'perm-2', citations: [] })).status).toBe(404);
    }
  }, 30_000);

  it('with the store killed: lookups answer 503 store_unavailable, assemblies still answer, /healthz is degraded', async () => {
    await killAndWait(redis);
    for (const { id } of issued) {
      const v = await post('/v1/validate', { context_id: id, citations: [] });
      expect(v.status, JSON.stringify(v.json)).toBe(503);
      expect(v.json.error.code).toBe('store_unavailable');
    }
    const a = await post('/v1/context', request(100));
    expect(a.status).toBe(200);
    expect(a.stored).toBe('false');
    const b = await post('/v1/context', request(101));
    expect(b.status).toBe(200);
    for (const r of replicas) expect(await until(async () => (await health(r.url)).status === 'degraded')).toBe(true);
    // Without a token /healthz says no more than that: not the store's address nor the error.
    expect(await health(replicas[0]!.url)).toEqual({ status: 'degraded', version: expect.any(String), store: { kind: 'redis', status: 'down' } });
    const metrics = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
    expect(metrics).toMatch(/^ctxlens_store_up 0$/m);
  }, 60_000);

  it('recovers by itself when the store is back: new ids validate across replicas again', async () => {
    await startRedis();
    for (const r of replicas) expect(await until(async () => (await health(r.url)).status === 'ok')).toBe(true);
    const fresh: string[] = [];
    for (let i = 200; i < 206; i++) {
      const r = await post('/v1/context', request(i));
      expect(r.status).toBe(200);
      expect(r.stored).toBeNull();
      fresh.push(r.json.context_id as string);
    }
    for (const id of fresh) {
      const v = await post('/v1/validate', { context_id: id, citations: [] });
      expect(v.status, JSON.stringify(v.json)).toBe(200);
    }
    // The restarted server kept nothing (no persistence here): the old ids are unknown now, not unavailable.
    const old = await post('/v1/validate', { context_id: issued[0]!.id, citations: [] });
    expect(old.status).toBe(404);
    expect(old.json.error.code).toBe('context_not_found');
  }, 60_000);

  it('answers a stalled store (SIGSTOP) within its timeout, and recovers on SIGCONT', async () => {
    const r = await post('/v1/context', request(300));
    expect(r.status).toBe(200);
    redis!.kill('SIGSTOP');
    try {
      for (let i = 0; i < 4; i++) {
        const v = await post('/v1/validate', { context_id: r.json.context_id as string, citations: [] });
        expect(v.status, JSON.stringify(v.json)).toBe(503);
        expect(v.json.error.code).toBe('store_unavailable');
      }
      expect((await post('/v1/context', request(301))).status).toBe(200);
      for (const s of replicas) expect(await until(async () => (await health(s.url)).status === 'degraded')).toBe(true);
    } finally {
      redis!.kill('SIGCONT');
    }
    for (const s of replicas) expect(await until(async () => (await health(s.url)).status === 'ok')).toBe(true);
    const v = await post('/v1/validate', { context_id: r.json.context_id as string, citations: [] });
    expect(v.status).toBe(200);
  }, 60_000);

  it('never prints the store password', () => {
    for (const r of replicas) expect(r.stdout.join('') + r.stderr.join('')).not.toContain(PASSWORD);
    expect(replicas[0]!.stderr.join('')).toMatch(/context store at 127\.0\.0\.1:\d+ is unavailable/);
  });
});

describe('the store on the command line', () => {
  const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--root', 'examples', ...args], { cwd: REPO, encoding: 'utf8', timeout: 30_000, env: { ...process.env, CTXLENS_STORE_URL: '', CTXLENS_STORE_PASSWORD: '', ...env } });

  it('refuses a password in a --store URL, without printing it', () => {
    const r = cli(['--store', `redis://user:${PASSWORD}@127.0.0.1:6379/0`]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/holds a password: give it with --store-password-file FILE or \$CTXLENS_STORE_PASSWORD/);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });

  it('refuses a bad URL, a missing password file and store options without a store', () => {
    expect(cli(['--store', 'http://127.0.0.1:6379']).stderr).toMatch(/must start with redis:\/\/ or rediss:\/\//);
    expect(cli(['--store', 'redis://127.0.0.1:6379/x']).stderr).toMatch(/the database number/);
    expect(cli(['--store', 'redis://127.0.0.1:6379/0', '--store-password-file', path.join(tmp, 'none')]).stderr).toMatch(/cannot be read/);
    const orphan = cli(['--store-ttl', '10s']);
    expect(orphan.status).toBe(2);
    expect(orphan.stderr).toMatch(/--store-ttl needs --store/);
  });
});
