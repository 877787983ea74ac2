/**
 * The fuzz harness: every property of test/fuzz runs through `fuzz()`, with a time budget instead
 * of a run count, a seed that is printed with every result, and a record of what it ran.
 *
 * - Budget: each property has a share of `SUITE_SECONDS` (BUDGET_MS below), about a minute in all
 *   inside `npm test`. `FUZZ_SECONDS=N` (what `npm run fuzz -- --seconds N` sets) scales every
 *   share so that the properties together get N seconds.
 * - Seed: `FUZZ_SEED` (an integer) or, without it, the fixed DEFAULT_SEED, so `npm test` runs the
 *   same first inputs every time. Each property gets its own seed derived from it and its name, so
 *   adding a property never changes the inputs of another. Every run prints the seed.
 * - Honesty: a property that hits its budget before `minRuns` inputs still passes (fast-check
 *   counts an interrupted run without failures as a success) but says so in its line and record.
 * - Failures: fast-check shrinks the counterexample (shrinking gets its own time when the budget cut
 *   it short); the error names the seed, the counterexample path and the command that replays it
 *   (`FUZZ_REPLAY=<property>@<seed>:<path>`).
 * - Records: with `FUZZ_REPORT_DIR` set, each property appends one JSON line (inputs, inputs/s,
 *   slowest input, failure) to a file there; scripts/fuzz.mjs gathers them into test-results/fuzz.json.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { it } from 'vitest';

/** In-suite budget of each property, in milliseconds (about a minute in all). */
export const BUDGET_MS: Readonly<Record<string, number>> = {
  'parsers/config-yaml': 3_500,
  'parsers/fixture': 3_500,
  'parsers/yaml-nesting-aliases': 2_500,
  'parsers/line-endings': 2_000,
  'parsers/template-dotprompt': 3_000,
  'parsers/template-prompty': 3_000,
  'engine/dotprompt-render': 2_500,
  'engine/prompty-render': 2_500,
  'analysis/workspace': 7_000,
  'analysis/token-recount': 4_000,
  'analysis/delimiters': 4_000,
  'analysis/secrets': 4_000,
  'tokenizer/pieces-cover-text': 1_500,
  'tokenizer/oracle-counts': 3_000,
  'cli/check-assemble': 14_000,
  'security/library': 4_000,
};

export const SUITE_SECONDS = Object.values(BUDGET_MS).reduce((a, b) => a + b, 0) / 1000;

/** The seed of `npm test` when FUZZ_SEED is not set. */
export const DEFAULT_SEED = 20_260_512;

function envInt(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got '${v}'`);
  return n;
}

export const BASE_SEED = envInt('FUZZ_SEED') ?? DEFAULT_SEED;
const SCALE = (() => {
  const s = process.env.FUZZ_SECONDS;
  if (s === undefined || s.trim() === '') return 1;
  const n = Number(s);
  if (!(n > 0)) throw new Error(`FUZZ_SECONDS must be a positive number, got '${s}'`);
  return n / SUITE_SECONDS;
})();

/** A property's own seed: the base seed mixed with a hash of its name (FNV-1a). */
export function propertySeed(name: string, base = BASE_SEED): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h ^ base) | 0;
}

export function budgetOf(name: string): number {
  const ms = BUDGET_MS[name];
  if (ms === undefined) throw new Error(`fuzz property '${name}' has no entry in BUDGET_MS (test/fuzz/harness.ts)`);
  return Math.max(200, Math.round(ms * SCALE));
}

export interface FuzzRecord {
  property: string;
  seed: number;
  baseSeed: number;
  budgetMs: number;
  elapsedMs: number;
  inputs: number;
  inputsPerSecond: number;
  minRuns: number;
  belowMinimum: boolean;
  /** The slowest single input, in milliseconds (reported, never asserted). */
  slowestMs: number;
  failed: boolean;
  /** Inputs that hit a known, reported issue (by issue id): counted, not failed. */
  known?: Record<string, number>;
  counterexample?: string;
  path?: string;
  shrinks?: number;
  error?: string;
  replay?: string;
}

function record(r: FuzzRecord): void {
  const dir = process.env.FUZZ_REPORT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `fuzz-${process.pid}.jsonl`), JSON.stringify(r) + '\n');
}

/** fast-check's printing of a value, cut to `max` characters. */
export function show(value: unknown, max = 4000): string {
  const s = fc.stringify(value);
  return s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;
}

let known: Record<string, number> = {};

/**
 * Counts an input that hit a known issue, reported and owned elsewhere (the fuzz report names it),
 * instead of failing the property on it again. The count is printed with the property's line.
 */
export function noteKnown(issue: string): void {
  known[issue] = (known[issue] ?? 0) + 1;
}

export interface FuzzOptions {
  /** Inputs the property should reach within its budget; fewer is reported, not failed. */
  minRuns?: number;
}

function replayFor(name: string): { seed: number; path: string } | undefined {
  const v = process.env.FUZZ_REPLAY;
  if (!v) return undefined;
  const m = /^(.+)@(-?\d+):([\d:]+)$/.exec(v.trim());
  if (!m) throw new Error(`FUZZ_REPLAY must be <property>@<seed>:<path>, got '${v}'`);
  return m[1] === name ? { seed: Number(m[2]), path: m[3] } : undefined;
}

/**
 * Runs `predicate` on inputs of `arb` for the property's budget. The predicate fails by throwing
 * (an `expect`) or returning false.
 */
export function runFuzz<T>(name: string, arb: fc.Arbitrary<T>, predicate: (value: T) => boolean | void, options: FuzzOptions = {}): FuzzRecord {
  const budgetMs = budgetOf(name);
  const seed = propertySeed(name);
  const minRuns = options.minRuns ?? 50;
  const replay = replayFor(name);
  let slowestMs = 0;
  known = {};
  const prop = fc.property(arb, (v) => {
    const t0 = performance.now();
    try {
      return predicate(v);
    } finally {
      const dt = performance.now() - t0;
      if (dt > slowestMs) slowestMs = dt;
    }
  });
  const t0 = performance.now();
  let details = fc.check(prop, {
    seed: replay?.seed ?? seed,
    ...(replay ? { path: replay.path } : {}),
    numRuns: Number.POSITIVE_INFINITY,
    plugins: [fc.interruptAfterTimeLimit(budgetMs)],
  });
  const elapsedMs = performance.now() - t0;
  const inputs = details.numRuns;
  if (details.failed && details.interrupted && details.counterexamplePath) {
    // The budget ran out while shrinking: go on shrinking from the smallest failure found so far.
    const more = fc.check(prop, { seed: details.seed, path: details.counterexamplePath, numRuns: Number.POSITIVE_INFINITY, plugins: [fc.interruptAfterTimeLimit(Math.max(10_000, budgetMs))] });
    if (more.failed && more.counterexample) details = more;
  }
  const r: FuzzRecord = {
    property: name,
    seed: details.seed,
    baseSeed: BASE_SEED,
    budgetMs,
    elapsedMs: Math.round(elapsedMs),
    inputs,
    inputsPerSecond: Math.round((inputs / Math.max(elapsedMs, 1)) * 1000 * 10) / 10,
    minRuns,
    belowMinimum: !details.failed && inputs < minRuns,
    slowestMs: Math.round(slowestMs),
    failed: details.failed,
    ...(Object.keys(known).length ? { known } : {}),
  };
  if (details.failed) {
    r.counterexample = details.counterexample ? show((details.counterexample as unknown[])[0], 20_000) : undefined;
    r.path = details.counterexamplePath ?? undefined;
    r.shrinks = details.numShrinks;
    const err = details.errorInstance;
    r.error = err instanceof Error ? (err.stack ?? err.message) : err === null || err === undefined ? (details.interrupted ? 'interrupted before any input ran' : 'predicate returned false') : String(err);
    if (r.path) r.replay = `FUZZ_REPLAY='${name}@${details.seed}:${r.path}' npx vitest run test/fuzz`;
  }
  record(r);
  const knownText = r.known ? `, known issues hit: ${Object.entries(r.known).map(([k, n]) => `${k} ×${n}`).join(', ')}` : '';
  const tail = knownText + (r.belowMinimum ? ` — below the minimum of ${minRuns} inputs (budget reached first)` : '');
  console.log(`fuzz ${name}: ${inputs} inputs in ${(elapsedMs / 1000).toFixed(1)} s (${r.inputsPerSecond}/s), slowest ${r.slowestMs} ms, seed ${details.seed} (FUZZ_SEED=${BASE_SEED})${tail}${r.failed ? ' FAILED' : ''}`);
  return r;
}

/** A vitest test of one fuzz property. */
export function fuzz<T>(name: string, arb: fc.Arbitrary<T>, predicate: (value: T) => boolean | void, options: FuzzOptions = {}): void {
  const budget = budgetOf(name);
  // Room for the run itself, the extra shrinking and one slow input at the end.
  it(name, () => {
    const r = runFuzz(name, arb, predicate, options);
    if (r.failed) {
      throw new Error(
        [
          `fuzz property '${name}' failed after ${r.inputs} inputs (seed ${r.seed}, FUZZ_SEED=${BASE_SEED}, ${r.shrinks} shrinks).`,
          `Counterexample: ${(r.counterexample ?? '').slice(0, 4000)}`,
          r.replay ? `Replay: ${r.replay}` : '',
          `Error: ${r.error}`,
        ]
          .filter(Boolean)
          .join('\n'),
      );
    }
  }, budget * 2 + 60_000);
}
