/**
 * Token-count bench (issue 2): our counter side by side with js-tiktoken, the `tiktoken` npm
 * package (Rust core compiled to WASM), gpt-tokenizer and, when importable, Python's tiktoken
 * (the Rust reference), as ratios to the Rust reference. Measures:
 * - throughput on a ~3.4 MiB mixed corpus (bench/tokens/corpus.ts), cold caches;
 * - the time for 1 MiB of one letter (engines that are quadratic in a run's length are measured
 *   on a shorter run, and the report says so);
 * - re-counting a 20 KB slot after a one-character edit (median over many edits);
 * - encoding load time and memory, each in a fresh Node process.
 * Counts are checked against each other: a mismatch is reported, never hidden.
 *
 * Run through `node scripts/bench.mjs` (which bundles bench/*.ts and calls `run()`); reference
 * libraries and esbuild are required at run time from the project's node_modules, not bundled.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { mixedCorpus, prng } from './tokens/corpus';
import { clearTokenCaches, getTokenizer, type BpeTokenizer } from '../src/core/tokens';
import { rankAssets } from '../src/core/tokens/assets';
import { RANK_ASSET_DIR } from '../src/core/tokens/rankData';

const ENCODING = 'o200k_base';
const CORPUS_BYTES = Math.round(3.4 * 1024 * 1024);
const RUN_BYTES = 1024 * 1024;
const SLOT_BYTES = 20 * 1024;

const root = process.cwd();
const devRequire = createRequire(join(root, 'package.json'));

interface Timing {
  /** Best wall-clock seconds over the repeats. */
  wall: number;
  /** Best CPU seconds (user + system) over the repeats: less disturbed by other processes. */
  cpu: number;
  count: number;
}

function time(fn: () => number, repeats: number, before?: () => void): Timing {
  let wall = Infinity;
  let cpu = Infinity;
  let count = -1;
  for (let i = 0; i < repeats; i++) {
    before?.();
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    count = fn();
    const w = (performance.now() - w0) / 1000;
    const c = process.cpuUsage(c0);
    wall = Math.min(wall, w);
    cpu = Math.min(cpu, (c.user + c.system) / 1e6);
  }
  return { wall, cpu, count };
}

const mbps = (bytes: number, seconds: number): number => bytes / 1e6 / seconds;
const fmt = (x: number | undefined, digits = 2): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

interface PythonResult {
  version: string;
  count: number;
  wall_s: number;
  cpu_s: number;
  run_count: number;
  run_wall_s: number;
  run_cpu_s: number;
}

/** Python's tiktoken via a subprocess, or the reason it is unavailable. */
function python(corpusFile: string): PythonResult | { unavailable: string } {
  const py = process.env.PYTHON ?? 'python3';
  const importable = () => spawnSync(py, ['-c', 'import tiktoken'], { encoding: 'utf8', timeout: 60_000 }).status === 0;
  if (!importable()) {
    if (process.env.CTXLENS_BENCH_NO_PIP) return { unavailable: 'python tiktoken not importable (pip install skipped: CTXLENS_BENCH_NO_PIP)' };
    // The issue asks for `pip install tiktoken`, which this machine serves from a local wheel mirror.
    const pip = spawnSync(py, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'tiktoken'], { encoding: 'utf8', timeout: 180_000 });
    if (!importable()) return { unavailable: `python tiktoken not importable; pip install tiktoken failed: ${(pip.stderr || pip.error?.message || '').trim().split('\n').pop() ?? ''}` };
  }
  const rankFile = devRequire.resolve(`js-tiktoken/ranks/${ENCODING}`);
  const script = resolve(root, 'bench/tokens/python_tiktoken.py');
  const r = spawnSync(py, [script, ENCODING, rankFile, corpusFile, String(RUN_BYTES), '3'], { encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 20 });
  if (r.status !== 0) return { unavailable: `python script failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop() ?? ''}` };
  return JSON.parse(r.stdout) as PythonResult;
}

interface LoadResult {
  ms: number;
  rssMB: number;
  heapMB: number;
  externalMB: number;
}

/** Bundles load-child.ts once and times one engine's load in a fresh process. */
function loadInChild(bundle: string, fn: 'loadOurs' | 'loadJsTiktoken' | 'loadWasm'): LoadResult | { error: string } {
  const launcher = `
    const snap = () => { global.gc(); const m = process.memoryUsage(); return m; };
    const a = snap();
    const t0 = performance.now();
    const n = require(${JSON.stringify(bundle)}).${fn}(${JSON.stringify(ENCODING)});
    const ms = performance.now() - t0;
    const b = snap();
    const MB = 1024 * 1024;
    process.stdout.write(JSON.stringify({ n, ms, rssMB: (b.rss - a.rss) / MB, heapMB: (b.heapUsed - a.heapUsed) / MB, externalMB: (b.external - a.external) / MB }));`;
  const runs: LoadResult[] = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', launcher], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) return { error: (r.stderr || '').trim().split('\n').slice(-3).join(' ') };
    runs.push(JSON.parse(r.stdout) as LoadResult);
  }
  runs.sort((x, y) => x.ms - y.ms);
  return runs[0];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

export async function run(): Promise<Record<string, unknown>> {
  const started = loadavg()[0];
  // Inside the project (.cache is ignored) so the child bundles resolve node_modules.
  mkdirSync(join(root, '.cache'), { recursive: true });
  const work = mkdtempSync(join(root, '.cache', 'bench-tokens-'));
  try {
    const corpus = mixedCorpus(CORPUS_BYTES, 1);
    const corpusBytes = Buffer.byteLength(corpus, 'utf8');
    const corpusFile = join(work, 'corpus.txt');
    writeFileSync(corpusFile, corpus);
    const run1M = 'a'.repeat(RUN_BYTES);

    // --- ours -------------------------------------------------------------------------------
    const ours = getTokenizer(ENCODING) as BpeTokenizer;
    ours.count('load the encoding first'); // load time is measured separately, in a child
    const oursCold = time(() => ours.count(corpus), 5, clearTokenCaches);
    // Pieces cached, whole-text and chunk caches cleared: steady state of an editor session.
    const oursWarm = time(() => ours.count(corpus), 5, () => {
      ours.clearCaches();
      ours.engine.count(corpus);
    });
    const oursRun = time(() => ours.count(run1M), 3, clearTokenCaches);
    const ours16k = time(() => ours.count(run1M.slice(0, 16 * 1024)), 5, clearTokenCaches);
    const ours64k = time(() => ours.count(run1M.slice(0, 64 * 1024)), 5, clearTokenCaches);

    // Incremental: a 20 KB slot, counted once, then one-character edits, each re-counted.
    const r = prng(20);
    let slot = mixedCorpus(SLOT_BYTES, 3);
    while (Buffer.byteLength(slot, 'utf8') > SLOT_BYTES) slot = slot.slice(0, -1);
    clearTokenCaches();
    ours.count(slot);
    const editTimes: number[] = [];
    const chunkTimes: number[] = [];
    const fullTimes: number[] = [];
    ours.countChunked(slot);
    const letters = 'abcdefghijklmnopqrstuvwxyz .,\n';
    // 100 edits to warm up (an editor session is long-lived), then 400 measured.
    for (let i = -100; i < 400; i++) {
      const at = Math.floor(r() * slot.length);
      const ch = letters[Math.floor(r() * letters.length)];
      slot = r() < 0.5 ? slot.slice(0, at) + ch + slot.slice(at + 1) : slot.slice(0, at) + ch + slot.slice(at);
      if (i < 0) {
        ours.count(slot);
        ours.countChunked(slot);
        continue;
      }
      const t0 = performance.now();
      ours.count(slot);
      editTimes.push(performance.now() - t0);
      // The chunk-cache path alone (what a text with no recent base takes), for comparison.
      const t2 = performance.now();
      ours.countChunked(slot);
      chunkTimes.push(performance.now() - t2);
      // The same text re-tokenized whole (pieces stay cached), for comparison.
      const t1 = performance.now();
      ours.engine.count(slot);
      fullTimes.push(performance.now() - t1);
    }

    // --- references ---------------------------------------------------------------------------
    const { get_encoding } = devRequire('tiktoken') as { get_encoding(n: string): { encode_ordinary(t: string): Uint32Array; free(): void } };
    const wasm = get_encoding(ENCODING);
    const wasmCorpus = time(() => wasm.encode_ordinary(corpus).length, 2);
    const wasm16k = time(() => wasm.encode_ordinary(run1M.slice(0, 16 * 1024)).length, 2);
    const wasm64k = time(() => wasm.encode_ordinary(run1M.slice(0, 64 * 1024)).length, 1);
    const editCheck = wasm.encode_ordinary(slot).length === ours.count(slot);
    wasm.free();

    const { Tiktoken } = devRequire('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => { encode(t: string, a?: unknown, d?: unknown): number[] } };
    const js = new Tiktoken(devRequire(`js-tiktoken/ranks/${ENCODING}`));
    const jsCorpus = time(() => js.encode(corpus, [], []).length, 1);
    const js16k = time(() => js.encode(run1M.slice(0, 16 * 1024), [], []).length, 1);

    const gpt = devRequire(`gpt-tokenizer/encoding/${ENCODING}`) as { encode(t: string, o: unknown): number[] };
    const noSpecial = { disallowedSpecial: new Set<string>() };
    const gptCorpus = time(() => gpt.encode(corpus, noSpecial).length, 2);
    const gpt64k = time(() => gpt.encode(run1M.slice(0, 64 * 1024), noSpecial).length, 1);

    const py = python(corpusFile);

    // --- load, each in a fresh process ----------------------------------------------------------
    // Two copies of the child bundle: one with rank assets beside it, as dist/cli.js and
    // dist/server.js have them, and one without, which falls back to js-tiktoken's modules.
    const esbuild = devRequire('esbuild') as { buildSync(o: Record<string, unknown>): unknown };
    const withAssets = join(work, 'dist', 'load-child.js');
    const withoutAssets = join(work, 'src', 'load-child.js');
    for (const outfile of [withAssets, withoutAssets]) {
      esbuild.buildSync({ entryPoints: [resolve(root, 'bench/tokens/load-child.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile, logLevel: 'warning' });
    }
    mkdirSync(join(work, 'dist', RANK_ASSET_DIR), { recursive: true });
    for (const [file, bytes] of Object.entries(rankAssets())) writeFileSync(join(work, 'dist', RANK_ASSET_DIR, file), bytes);
    const loadOurs = loadInChild(withAssets, 'loadOurs');
    const loadOursSource = loadInChild(withoutAssets, 'loadOurs');
    const loadJs = loadInChild(withoutAssets, 'loadJsTiktoken');
    const loadWasm = loadInChild(withoutAssets, 'loadWasm');

    // --- report -------------------------------------------------------------------------------
    const rust = 'unavailable' in py ? undefined : py;
    const pyUnavailable = 'unavailable' in py ? py.unavailable : undefined;
    const rustMBps = rust ? mbps(corpusBytes, rust.cpu_s) : undefined;
    const rows: Array<[string, Timing | undefined, string]> = [
      ['ours, cold caches', oursCold, ''],
      ['ours, pieces cached', oursWarm, ''],
      ['js-tiktoken', jsCorpus, ''],
      ['tiktoken (WASM)', wasmCorpus, ''],
      ['gpt-tokenizer', gptCorpus, ''],
    ];
    const expected = rust?.count ?? wasmCorpus.count;
    const lines: string[] = [];
    lines.push(`Token counting bench, ${ENCODING}; ${cpus().length} cores, load average ${started.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end`);
    lines.push(`Times are the best of the repeats in CPU seconds (wall-clock in brackets); ratios use CPU time.`);
    lines.push('');
    lines.push(`Mixed corpus: ${(corpusBytes / 1024 / 1024).toFixed(2)} MiB, ${corpus.length} UTF-16 units, reference count ${expected}`);
    lines.push(`${'engine'.padEnd(26)}${'tokens'.padStart(10)}${'cpu s'.padStart(9)}${'(wall s)'.padStart(10)}${'MB/s'.padStart(8)}${'x Rust'.padStart(8)}  exact`);
    const throughput: Record<string, unknown> = {};
    for (const [label, t] of rows) {
      if (!t) continue;
      const m = mbps(corpusBytes, t.cpu);
      lines.push(`${label.padEnd(26)}${String(t.count).padStart(10)}${fmt(t.cpu, 3).padStart(9)}${('(' + fmt(t.wall, 3) + ')').padStart(10)}${fmt(m, 1).padStart(8)}${fmt(rustMBps ? m / rustMBps : undefined).padStart(8)}  ${t.count === expected ? 'yes' : 'NO'}`);
      throughput[label] = { tokens: t.count, cpu_s: t.cpu, wall_s: t.wall, mb_per_s: m, vs_rust: rustMBps ? m / rustMBps : null, exact: t.count === expected };
    }
    if (rust) {
      lines.push(`${'python tiktoken (Rust)'.padEnd(26)}${String(rust.count).padStart(10)}${fmt(rust.cpu_s, 3).padStart(9)}${('(' + fmt(rust.wall_s, 3) + ')').padStart(10)}${fmt(rustMBps, 1).padStart(8)}${'1.00'.padStart(8)}  ref`);
      throughput['python tiktoken (Rust)'] = { tokens: rust.count, cpu_s: rust.cpu_s, wall_s: rust.wall_s, mb_per_s: rustMBps, version: rust.version };
    } else {
      lines.push(`${'python tiktoken (Rust)'.padEnd(26)}unavailable: ${pyUnavailable}`);
      throughput['python tiktoken (Rust)'] = { unavailable: pyUnavailable };
    }

    lines.push('');
    lines.push('One unbroken run of "a":');
    const runRows: Array<[string, string, Timing | { cpu: number; wall: number; count: number } | undefined]> = [
      ['ours', '1 MiB', oursRun],
      ['python tiktoken (Rust)', '1 MiB', rust ? { cpu: rust.run_cpu_s, wall: rust.run_wall_s, count: rust.run_count } : undefined],
      ['ours', '64 KiB', ours64k],
      ['tiktoken (WASM)', '64 KiB', wasm64k],
      ['gpt-tokenizer', '64 KiB', gpt64k],
      ['ours', '16 KiB', ours16k],
      ['tiktoken (WASM)', '16 KiB', wasm16k],
      ['js-tiktoken', '16 KiB', js16k],
    ];
    const runs: Record<string, unknown> = {};
    for (const [label, size, t] of runRows) {
      if (!t) {
        lines.push(`  ${label.padEnd(24)}${size.padStart(7)}  unavailable`);
        continue;
      }
      lines.push(`  ${label.padEnd(24)}${size.padStart(7)}${fmt(t.cpu, 3).padStart(9)} s${('(' + fmt(t.wall, 3) + ')').padStart(10)}  ${t.count} tokens`);
      runs[`${label} ${size}`] = { cpu_s: t.cpu, wall_s: t.wall, tokens: t.count };
    }
    const runVsRust = rust ? oursRun.cpu / rust.run_cpu_s : undefined;
    lines.push(`  ours / Rust at 1 MiB: ${fmt(runVsRust)}x the time (target <= 1.5x); counts ${rust ? (rust.run_count === oursRun.count ? 'equal' : 'DIFFER') : 'not compared'}`);
    lines.push('  (js-tiktoken and the WASM package are quadratic in a run\'s length: measured at 16/64 KiB, not 1 MiB)');

    lines.push('');
    const editMedian = median(editTimes);
    lines.push(`Re-count of a 20 KB slot after a one-character edit (400 edits after 100 to warm up): median ${fmt(editMedian, 3)} ms, p90 ${fmt(percentile(editTimes, 0.9), 3)} ms (target < 0.3 ms median); exact after the edits: ${editCheck ? 'yes' : 'NO'}`);
    lines.push(`  chunk cache alone (no recent base text): median ${fmt(median(chunkTimes), 3)} ms; re-tokenizing the whole slot (pieces cached): median ${fmt(median(fullTimes), 3)} ms`);

    lines.push('');
    lines.push('Encoding load in a fresh process (require + build, best of 3): time, RSS delta, heap delta, external delta');
    const loads: Record<string, unknown> = { 'ours (rank asset, as dist/)': loadOurs, 'ours (js-tiktoken data)': loadOursSource, 'js-tiktoken': loadJs, 'tiktoken (WASM)': loadWasm };
    for (const [label, l] of Object.entries(loads) as Array<[string, LoadResult | { error: string }]>) {
      if ('error' in l) lines.push(`  ${label.padEnd(28)} error: ${l.error}`);
      else lines.push(`  ${label.padEnd(28)}${fmt(l.ms, 1).padStart(8)} ms${fmt(l.rssMB, 1).padStart(8)} MB rss${fmt(l.heapMB, 1).padStart(8)} MB heap${fmt(l.externalMB, 1).padStart(8)} MB external`);
    }
    lines.push('  (targets: < 200 ms and < 80 MB; dist/cli.js and dist/server.js load the rank asset)');
    console.log(lines.join('\n'));

    return {
      encoding: ENCODING,
      machine: { cores: cpus().length, loadavg_start: started, loadavg_end: loadavg()[0] },
      corpus: { bytes: corpusBytes, utf16_units: corpus.length, reference_tokens: expected },
      throughput,
      run_of_a: { ...runs, ours_vs_rust_1MiB: runVsRust ?? null },
      incremental_20KB: { edits: editTimes.length, median_ms: editMedian, p90_ms: percentile(editTimes, 0.9), chunk_cache_median_ms: median(chunkTimes), full_recount_median_ms: median(fullTimes), exact: editCheck },
      load: loads,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
