/**
 * `ctxlens serve` under load: assemblies per second and p50 / p99 latency of `POST /v1/context`
 * for a 50-item request (sdk-qa: policy, 6 history turns, 50 evidence candidates with metadata, a
 * tool result and the query), served by the built CLI in its own process and driven by autocannon
 * from this one over 127.0.0.1, for a bounded time. Two loads: the same request every time (the
 * tokenizer's content caches warm, as for a retried or popular query) and a rotation of 200
 * different requests (fresh texts each time). Goal (issue): at least 1,000 assemblies/s with p99
 * at most 20 ms on 2 cores. Also the in-process cost of one assembly through the library, for
 * comparison with the HTTP numbers.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openWorkspace } from '../src/lib';
import { request50 } from './shared/requests';

export { request50 } from './shared/requests';

const ROOT = resolve(process.cwd());

/** The part of autocannon's API used here (the package ships no types). */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  errors: number;
  non2xx: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
// Loaded at run time from node_modules (left out of the bench bundle by scripts/bench.mjs).
const autocannon = createRequire(resolve(ROOT, 'package.json'))('autocannon') as Autocannon;
const DURATION_S = 10;
const CONNECTIONS = 8;
const POOL = 200;

function startServer(extra: string[] = []): Promise<{ url: string; stop: () => void }> {
  return new Promise((resolveStart, reject) => {
    const proc = spawn(process.execPath, [resolve(ROOT, 'dist/cli.js'), 'serve', '--port', '0', '--root', resolve(ROOT, 'examples'), '--cache-size', '1000', ...extra], { stdio: ['ignore', 'pipe', 'ignore'] });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error('the service did not start within 20 s'));
    }, 20_000);
    let buf = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (d: string) => {
      buf += d;
      const m = /^listening on (\S+)\n/.exec(buf);
      if (!m) return;
      clearTimeout(timer);
      resolveStart({ url: m[1], stop: () => proc.kill('SIGTERM') });
    });
    proc.on('exit', (code) => reject(new Error(`the service exited with ${code}`)));
  });
}

interface Load {
  requests_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  requests: number;
  errors: number;
  non_2xx: number;
}

async function load(url: string, bodies: string[]): Promise<Load> {
  let next = 0;
  const result = await autocannon({
    url: `${url}/v1/context`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: bodies[0],
    requests: bodies.length > 1 ? [{ method: 'POST', setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bodies[next++ % bodies.length] }) }] : undefined,
  });
  return {
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p90_ms: result.latency.p90,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    requests: result.requests.total,
    errors: result.errors,
    non_2xx: result.non2xx,
  };
}

function inProcess(): { mean_ms: number; p99_ms: number } {
  const ws = openWorkspace(resolve(ROOT, 'examples'));
  const times: number[] = [];
  for (let i = 0; i < 400; i++) {
    const req = request50(1000 + (i % 50)) as { query: string; slots: Record<string, unknown> };
    const t = performance.now();
    ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { ...req.slots, question: req.query }, filters: { tenant: 'acme', version: '4.2' }, maxInputTokens: 12000, files: false });
    times.push(performance.now() - t);
  }
  const warm = times.slice(50).sort((a, b) => a - b);
  return { mean_ms: Math.round((warm.reduce((s, x) => s + x, 0) / warm.length) * 1000) / 1000, p99_ms: Math.round(warm[Math.floor(warm.length * 0.99)] * 1000) / 1000 };
}

export async function run(): Promise<Record<string, unknown>> {
  const one = JSON.stringify(request50(1));
  const pool = Array.from({ length: POOL }, (_, i) => JSON.stringify(request50(100 + i)));
  const cached = await startServer();
  let same: Load;
  let probeBody: { evidence: string[]; selection_log: unknown[] };
  try {
    // Check the request is a real 200 before timing it.
    const probe = await fetch(`${cached.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: one });
    if (probe.status !== 200) throw new Error(`probe: ${probe.status} ${await probe.text()}`);
    probeBody = (await probe.json()) as { evidence: string[]; selection_log: unknown[] };
    await load(cached.url, [one]); // warm-up (JIT, tokenizer tables), not reported
    same = await load(cached.url, [one]);
  } finally {
    cached.stop();
  }
  // Every request assembled: the response cache off.
  const uncached = await startServer(['--response-cache', '0']);
  let sameFresh: Load;
  let varied: Load;
  try {
    await load(uncached.url, pool.slice(0, 20));
    sameFresh = await load(uncached.url, [one]);
    varied = await load(uncached.url, pool);
  } finally {
    uncached.stop();
  }
  const lib = inProcess();
  const row = (name: string, l: Load) => `| ${name} | ${l.requests_per_s.toLocaleString('en-US')} | ${l.p50_ms} | ${l.p90_ms} | ${l.p99_ms} | ${l.max_ms} | ${l.errors + l.non_2xx} |`;
  console.log(`POST /v1/context, 50 evidence candidates (${probeBody.evidence.length} selected, ${probeBody.selection_log.length} logged), ${CONNECTIONS} connections, ${DURATION_S} s each, service and load generator on this machine's ${(await import('node:os')).cpus().length} cores\n`);
  console.log('| load | requests/s | p50 ms | p90 ms | p99 ms | max ms | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  console.log(row('same request, response cache', same));
  console.log(row('same request, every one assembled', sameFresh));
  console.log(row(`${POOL} different requests, every one assembled`, varied));
  console.log(`\nin process (library, no HTTP): ${lib.mean_ms} ms mean, ${lib.p99_ms} ms p99 per assembly`);
  const goal = varied.requests_per_s >= 1000 && varied.p99_ms <= 20;
  console.log(`goal (>= 1,000 assemblies/s, p99 <= 20 ms) with every request assembled: ${goal ? 'met' : 'not met'}; with the response cache: ${same.requests_per_s >= 1000 && same.p99_ms <= 20 ? 'met' : 'not met'}`);
  return { cached_same: same, assembled_same: sameFresh, assembled_varied: varied, in_process: lib, goal_met: goal };
}
