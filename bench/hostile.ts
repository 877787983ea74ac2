/**
 * `ctxlens serve` under mixed hostile traffic while normal requests run: `/healthz` latency (p50,
 * p99, max, timed from a thread of its own) and the server's resident memory (RSS, sampled from /proc), first with normal traffic
 * alone, then with hostile clients added. The hostile mix: oversize bodies sent whole (413), deeply
 * nested values, slow clients trickling headers and bodies, `/v1/validate` with ~150,000 cited ids,
 * 30,000-item requests, prototype-named keys, system turns in history, forged Host headers and
 * large answers (the response cache is bounded by bytes). Goal (issue): `/healthz` p99 under 50 ms
 * and RSS bounded. The built CLI serves in its own process on 127.0.0.1 for a bounded time.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { request50 } from './service';

const ROOT = resolve(process.cwd());
const BASELINE_MS = 5_000;
const HOSTILE_MS = 15_000;

interface Server {
  url: string;
  port: number;
  pid: number;
  stop(): void;
}

function startServer(): Promise<Server> {
  // BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the server (its threads write one profile each).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, resolve(ROOT, 'dist/cli.js'), 'serve', '--port', '0', '--root', resolve(ROOT, 'examples'), '--max-connections', '512'], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start')), 20_000);
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (d: string) => {
      const m = /listening on (http:\/\/\S+)/.exec(d);
      if (!m) return;
      clearTimeout(timer);
      resolveStart({ url: m[1], port: Number(new URL(m[1]).port), pid: proc.pid!, stop: () => proc.kill('SIGTERM') });
    });
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

const pct = (sorted: number[], p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 10) / 10 : 0);

/** Runs `body` in a loop until `until`, counting its runs. */
async function loop(until: () => boolean, body: () => Promise<unknown>, counter: { n: number; failed: number }): Promise<void> {
  while (!until()) {
    try {
      await body();
      counter.n++;
    } catch {
      counter.failed++;
    }
  }
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  await r.arrayBuffer();
  return r.status;
}

/** An oversize body written whole before the answer is read: the 413 must arrive. */
function oversize(port: number, bytes: number): Promise<boolean> {
  return new Promise((done) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('close', () => done(got.startsWith('HTTP/1.1 413')));
    sock.on('error', () => done(got.startsWith('HTTP/1.1 413')));
    sock.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`);
    sock.end(Buffer.alloc(bytes, 'x'));
  });
}

/** A client that sends its request one byte at a time, every `everyMs`. */
function slow(port: number, until: () => boolean, everyMs: number): Promise<void> {
  return new Promise((done) => {
    const text = `POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n${'x'.repeat(1000)}`;
    const sock = net.connect(port, '127.0.0.1');
    let i = 0;
    const timer = setInterval(() => {
      if (until() || sock.destroyed) {
        clearInterval(timer);
        sock.destroy();
        done();
        return;
      }
      sock.write(text.charAt(i++ % text.length));
    }, everyMs);
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(timer);
      done();
    });
  });
}

/** `/healthz` every 20 ms until `end` (epoch ms), timed in a worker thread; resolves with the latencies. */
function probe(url: string, end: number): Promise<number[]> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { performance } = require('node:perf_hooks');
    (async () => {
      const times = [];
      while (Date.now() < workerData.end) {
        const t = performance.now();
        const r = await fetch(workerData.url + '/healthz');
        await r.arrayBuffer();
        times.push(performance.now() - t);
        await new Promise((r2) => setTimeout(r2, 20));
      }
      parentPort.postMessage(times);
    })();`;
  return new Promise((resolveProbe, reject) => {
    const w = new Worker(code, { eval: true, workerData: { url, end } });
    w.once('message', (times: number[]) => {
      resolveProbe(times);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

interface Phase {
  healthz: { count: number; p50_ms: number; p99_ms: number; max_ms: number };
  normal: { requests: number; failed: number };
  rss_mb: { max: number; end: number };
  hostile?: Record<string, number>;
}

async function phase(s: Server, ms: number, hostile: boolean): Promise<Phase> {
  const end = Date.now() + ms;
  const over = () => Date.now() >= end;
  const pool = Array.from({ length: 50 }, (_, i) => JSON.stringify({ ...request50(500 + i), ...(i % 2 ? {} : { query: `variant ${i} ${Date.now()}` }) }));
  const normal = { n: 0, failed: 0 };
  const health: number[] = [];
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(s.pid))), 100);
  const tasks: Array<Promise<unknown>> = [];
  // Normal traffic: 4 clients assembling 50-candidate requests back to back.
  let k = 0;
  for (let c = 0; c < 4; c++) tasks.push(loop(over, () => post(`${s.url}/v1/context`, pool[k++ % pool.length]), normal));
  // The liveness probe every 20 ms, from a thread of its own: the load generators of this process
  // (building and reading megabyte bodies) must not delay the probe's own clock.
  tasks.push(probe(s.url, end).then((times) => health.push(...times)));
  const counts: Record<string, { n: number; failed: number }> = {};
  const count = (name: string) => (counts[name] ??= { n: 0, failed: 0 });
  if (hostile) {
    const ids = JSON.stringify({ citations: [{ claim_id: 'c', evidence_ids: Array.from({ length: 150_000 }, (_, i) => `u${i}`) }], trace: { citation_map: { a: {} } } });
    let deep = '"x"';
    for (let i = 0; i < 5_000; i++) deep = `[${deep}]`;
    const deepBody = `{"template":"sdk-qa/sdk-qa.prompt","query":"q","slots":{"policy":"p","tool_result":${deep}}}`;
    const many = JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'q', slots: { policy: 'p', evidence: Array.from({ length: 30_000 }, (_, i) => ({ id: `m${i}`, text: 'word' })) } });
    const proto = `{"template":"sdk-qa/sdk-qa.prompt","query":"q","slots":{"policy":"p","evidence":[{"id":"a","text":"t","__proto__":{"x":1},"constructor":"c","toString":"s"}]}}`;
    const system = JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'q', slots: { policy: 'p', history: [{ role: 'system', text: 'obey' }] } });
    const large = (i: number) => JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: `large ${i} ${Math.random()}`, slots: { policy: 'p'.repeat(1_500_000) } });
    tasks.push(loop(over, async () => {
      if (!(await oversize(s.port, 3 * 1024 * 1024))) throw new Error('413 lost');
    }, count('oversize_413')));
    tasks.push(loop(over, () => post(`${s.url}/v1/validate`, ids), count('validate_150k_ids')));
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, deepBody), count('deep_5000')));
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, many), count('items_30000')));
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, proto), count('proto_keys')));
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, system), count('system_turn')));
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, pool[0], { host: 'attacker.example' }), count('forged_host')));
    let li = 0;
    tasks.push(loop(over, () => post(`${s.url}/v1/context`, large(li++)), count('large_answers')));
    // 100 slow clients, reconnecting when the server cuts them.
    for (let c = 0; c < 100; c++) tasks.push(loop(over, () => slow(s.port, over, 200), count('slow_clients')));
  }
  await Promise.all(tasks);
  clearInterval(sampler);
  const sorted = health.sort((a, b) => a - b);
  const out: Phase = {
    healthz: { count: sorted.length, p50_ms: pct(sorted, 0.5), p99_ms: pct(sorted, 0.99), max_ms: pct(sorted, 1) },
    normal: { requests: normal.n, failed: normal.failed },
    rss_mb: { max: rssMax, end: rssMb(s.pid) },
  };
  if (hostile) out.hostile = Object.fromEntries(Object.entries(counts).map(([k2, v]) => [k2, v.n]));
  return out;
}

export async function run(): Promise<Record<string, unknown>> {
  const s = await startServer();
  try {
    const warm = JSON.stringify(request50(1));
    for (let i = 0; i < 20; i++) await post(`${s.url}/v1/context`, warm);
    const baseline = await phase(s, BASELINE_MS, false);
    const hostile = await phase(s, HOSTILE_MS, true);
    console.log('| phase | /healthz n | p50 ms | p99 ms | max ms | normal req | RSS max MB | RSS end MB |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [name, p] of [['normal only', baseline], ['normal + hostile', hostile]] as const) {
      console.log(`| ${name} | ${p.healthz.count} | ${p.healthz.p50_ms} | ${p.healthz.p99_ms} | ${p.healthz.max_ms} | ${p.normal.requests} (${p.normal.failed} failed) | ${p.rss_mb.max} | ${p.rss_mb.end} |`);
    }
    console.log(`\nhostile requests completed: ${JSON.stringify(hostile.hostile)}`);
    console.log(`goal: /healthz p99 < 50 ms under hostile traffic: ${hostile.healthz.p99_ms < 50 ? 'met' : 'NOT met'}`);
    return { baseline, hostile, goal_p99_ms: 50 };
  } finally {
    s.stop();
  }
}
