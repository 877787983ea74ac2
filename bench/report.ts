/**
 * `ctxlens report --base HEAD~1` on a git repository of 200 generated templates with 3 fixtures
 * each (600 requests on each side), run as the built CLI in a child process, the way the Action
 * runs it. The change between the two commits edits 20 templates, lowers 10 evidence budgets,
 * renames 2 templates and deletes 2, so most files are unchanged and the parse caches serve both
 * sides. Target (issue 21): under 10 s on 2 cores.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const TEMPLATES = 200;
const FIXTURES = 3;
const TARGET_MS = 10_000;

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

const template = (i: number, extra = '') =>
  `---\nmodel: gpt-4o\n---\n{{role "system"}}\n{{policy}}\nAnswer from the evidence only (case ${i}).${extra}\n{{role "user"}}\n{{#each evidence}}{{this}}{{/each}}\n<question>\n{{question}}\n</question>\n`;
const config = (i: number, budget: number) =>
  `version: 1\nmodel: gpt-4o\nwindow: 8000\noutput: 1200\nmargin: 800\nrequests_per_day: 20000\noverhead: { message: 3, request: 3, item: 8 }\nslots:\n  policy: { kind: policy, trust: trusted, required: true, budget: 800 }\n  evidence: { kind: evidence, trust: untrusted, budget: ${budget}, label: EVIDENCE, pack: skip }\n  question: { kind: user, trust: untrusted, required: true, budget: 400 }\nfixtures: ['fixtures/p${i}-*.fixture.yaml']\n`;

export function generate(dir: string): void {
  for (let i = 0; i < TEMPLATES; i++) {
    const d = join(dir, `t${Math.floor(i / 50)}`);
    mkdirSync(join(d, 'fixtures'), { recursive: true });
    writeFileSync(join(d, `p${i}.prompt`), template(i));
    writeFileSync(join(d, `p${i}.context.yaml`), config(i, 3000));
    for (let f = 0; f < FIXTURES; f++) {
      const items = Array.from({ length: 5 }, (_, k) => `    - { id: ev_${i}_${k}, source: kb/${k}, relevance: 0.${9 - k}, text: "Passage ${k} of case ${i}, fixture ${f}: retries use exponential backoff with jitter and honour Retry-After." }`).join('\n');
      writeFileSync(join(d, 'fixtures', `p${i}-${f}.fixture.yaml`), `slots:\n  policy: Be accurate and cite evidence ids.\n  question: How do retries work in case ${i}, fixture ${f}?\n  evidence:\n${items}\n`);
    }
  }
}

/** The change under review: edits, budget cuts, renames and deletions. */
export function change(dir: string): void {
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, `t${Math.floor((i * 7) / 50)}`, `p${i * 7}.prompt`), template(i * 7, ' Cite the evidence ids you use.'));
  for (let i = 0; i < 10; i++) writeFileSync(join(dir, `t${Math.floor((i * 11 + 3) / 50)}`, `p${i * 11 + 3}.context.yaml`), config(i * 11 + 3, 60));
  for (const i of [5, 6]) {
    const d = join(dir, `t${Math.floor(i / 50)}`);
    renameSync(join(d, `p${i}.prompt`), join(d, `q${i}.prompt`));
    writeFileSync(join(d, `q${i}.context.yaml`), config(i, 3000));
    rmSync(join(d, `p${i}.context.yaml`));
  }
  for (const i of [8, 9]) rmSync(join(dir, `t${Math.floor(i / 50)}`, `p${i}.prompt`));
}

export async function run(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-bench-report-'));
  git(dir, 'init', '-q', '-b', 'main');
  generate(dir);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  change(dir);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'change');
  const cli = resolve(__dirname, '../../dist/cli.js');
  const times: number[] = [];
  let summary: Record<string, unknown> = {};
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [cli, 'report', '--base', 'HEAD~1', '--format', 'json'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`ctxlens report exited ${r.status}: ${r.stderr}`);
    summary = JSON.parse(r.stdout).summary;
  }
  times.sort((a, b) => a - b);
  const median = times[1];
  // The machine's load says how much of the wall time was waiting for a core.
  const load = loadavg()[0];
  console.log(
    `ctxlens report on ${TEMPLATES} templates × ${FIXTURES} fixtures (${summary.requests} requests, ${summary.requests_changed} changed, ${summary.templates_renamed} renamed, ${summary.templates_removed} removed): median ${(median / 1000).toFixed(2)} s of 3 runs (load average ${load.toFixed(1)})  target < ${TARGET_MS / 1000} s: ${median < TARGET_MS ? 'met' : 'NOT met'}`,
  );
  rmSync(dir, { recursive: true, force: true });
  return { templates: TEMPLATES, fixtures: FIXTURES, requests: summary.requests, changed: summary.requests_changed, medianMs: Math.round(median), runsMs: times.map(Math.round), loadAverage: Number(load.toFixed(2)), targetMs: TARGET_MS, met: median < TARGET_MS };
}
