/**
 * `ctxlens check` on 1,000 generated templates (each with its config and a fixture), run as the
 * built CLI in a child process, the way CI runs it: three runs with the default `--jobs auto`
 * (worker threads), one serial (`--jobs 1`) whose output must be the same bytes. Targets: issue 2,
 * under 10 s on 2 cores; issue 12, under 2 s.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const TEMPLATES = 1000;

export function generate(dir: string): void {
  for (let i = 0; i < TEMPLATES; i++) {
    const d = join(dir, `t${Math.floor(i / 100)}`);
    mkdirSync(join(d, 'fixtures'), { recursive: true });
    writeFileSync(
      join(d, `p${i}.prompt`),
      `---\nmodel: gpt-4o\n---\n{{role "system"}}\n{{policy}}\nAnswer from the evidence only (case ${i}).\n{{role "user"}}\n{{#each evidence}}{{this}}{{/each}}\n<question>\n{{question}}\n</question>\n`,
    );
    writeFileSync(
      join(d, `p${i}.context.yaml`),
      `version: 1\nmodel: gpt-4o\nwindow: 8000\noutput: 1200\nmargin: 800\noverhead: { message: 3, request: 3, item: 8 }\nslots:\n  policy: { kind: policy, trust: trusted, required: true, budget: 800 }\n  evidence: { kind: evidence, trust: untrusted, budget: ${i % 10 === 0 ? 6000 : 3000}, label: EVIDENCE, pack: skip }\n  question: { kind: user, trust: untrusted, required: true, budget: 400 }\nfixtures: ['fixtures/p${i}.fixture.yaml']\n`,
    );
    const items = Array.from({ length: 5 }, (_, k) => `    - { id: ev_${i}_${k}, source: kb/${k}, relevance: 0.${9 - k}, text: "Passage ${k} of case ${i}: retries use exponential backoff with jitter and honour Retry-After." }`).join('\n');
    writeFileSync(join(d, 'fixtures', `p${i}.fixture.yaml`), `slots:\n  policy: Be accurate and cite evidence ids.\n  question: How do retries work in case ${i}?\n  evidence:\n${items}\n`);
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-bench-check-'));
  generate(dir);
  const cli = resolve(__dirname, '../../dist/cli.js');
  const times: number[] = [];
  let findings = 0;
  let output = '';
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [cli, 'check', dir, '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    times.push(performance.now() - t0);
    const j = JSON.parse(r.stdout);
    findings = j.summary.errors + j.summary.warnings + j.summary.infos;
    output = r.stdout;
  }
  const s0 = performance.now();
  const serial = spawnSync(process.execPath, [cli, 'check', dir, '--format', 'json', '--jobs', '1'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const serialMs = performance.now() - s0;
  if (serial.stdout !== output) throw new Error('check --jobs 1 printed something else than the parallel run');
  times.sort((a, b) => a - b);
  const median = times[1];
  console.log(
    `ctxlens check on ${TEMPLATES} templates (+ ${TEMPLATES} configs, ${TEMPLATES} fixtures): median ${(median / 1000).toFixed(2)} s of 3 runs (${findings} findings; serial ${(serialMs / 1000).toFixed(2)} s, same output)  target < 2 s: ${median < 2_000 ? 'met' : 'NOT met'}`,
  );
  return { templates: TEMPLATES, medianMs: Math.round(median), runsMs: times.map(Math.round), serialMs: Math.round(serialMs), findings, targetMs: 2_000, met: median < 2_000 };
}
