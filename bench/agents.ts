/**
 * Coding agents' instruction files (src/core/language/agents): "what loads" for a file in a
 * generated workspace of 20,000 files holding 200 instruction files (Copilot instructions with
 * applyTo, Cursor rules with globs, nested AGENTS.md / CLAUDE.md / GEMINI.md with imports), and
 * the work of the lenses on a 1 MB instruction file.
 *
 * - cold: the first answer in this process on a fresh disk host (the tree walked, every rule
 *   file read and parsed, the loaded files counted), and the built CLI (`ctxlens agents FILE
 *   --format json`, process start and tokenizer load included). Target ≤ 1 s.
 * - warm: the answer for another file on the language server's host (disk reads cached by mtime
 *   and size) with the instruction files known, p50 / p95 over 100 files. Target ≤ 50 ms.
 * - lens: the outline the lenses of a 1 MB AGENTS.md read (its tokens, 2,000 sections, comments,
 *   references), first and after an edit of one line (p50 over 20 edits).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { discoverAgentFiles, outlineAgentFile, whatLoads } from '../src/core/language';
import { getTokenizer } from '../src/core/tokens';
import { DiskFileHost, toPosix } from '../src/node/fileHost';
import { WorkspaceHost } from '../src/server/workspaceHost';

const FILES = 20_000;
const PACKAGES = 40;

const PARA = 'Run the package tests with pnpm test before you push; keep functions small and name them after what they return. ';

function generate(root: string): { sources: string[]; instructionFiles: number } {
  const w = (rel: string, text: string) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  let instruction = 0;
  const add = (rel: string, text: string) => {
    w(rel, text);
    instruction++;
  };
  add('.github/copilot-instructions.md', `# Repository rules\n\n${PARA.repeat(20)}\n`);
  add('AGENTS.md', `# Agents\n\n${PARA.repeat(30)}\n`);
  add('CLAUDE.md', `@AGENTS.md\n\n# Claude\n\n${PARA.repeat(10)}\n`);
  add('GEMINI.md', `@./AGENTS.md\n`);
  for (let i = 0; i < 60; i++) add(`.github/instructions/p${i}.instructions.md`, `---\napplyTo: "packages/p${i % PACKAGES}/**/*.ts"\n---\n# Package ${i}\n\n${PARA.repeat(8)}\n`);
  for (let i = 0; i < 56; i++) add(`.cursor/rules/r${i}.mdc`, `---\ndescription: Rule ${i}\nglobs: packages/p${i % PACKAGES}/**/*.tsx, *.test.ts\nalwaysApply: ${i === 0}\n---\n${PARA.repeat(6)}\n`);
  for (let i = 0; i < PACKAGES; i++) add(`packages/p${i}/AGENTS.md`, `# p${i}\n\n${PARA.repeat(5)}\n`);
  for (let i = 0; i < PACKAGES; i++) add(`packages/p${i}/CLAUDE.md`, `@AGENTS.md\n@docs/notes.md\n`);
  const sources: string[] = [];
  let n = instruction;
  for (let i = 0; n < FILES; i++, n++) {
    const rel = `packages/p${i % PACKAGES}/src/m${Math.floor(i / PACKAGES) % 50}/f${i}.${i % 3 === 0 ? 'tsx' : 'ts'}`;
    w(rel, `export const v${i} = ${i};\n`);
    sources.push(rel);
  }
  for (let i = 0; i < PACKAGES; i++) w(`packages/p${i}/docs/notes.md`, `${PARA.repeat(3)}\n`);
  return { sources, instructionFiles: instruction };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export async function run(): Promise<Record<string, unknown>> {
  const root = toPosix(mkdtempSync(join(tmpdir(), 'ctxlens-bench-agents-')));
  const { sources, instructionFiles } = generate(root);
  const tokenizer = getTokenizer('o200k_base')!;
  tokenizer.count('warm up the tokenizer');

  const host = new DiskFileHost([root]);
  const c0 = performance.now();
  const files = discoverAgentFiles(host, root);
  const first = whatLoads(host, `${root}/${sources[0]}`, { tokenizer, files });
  const coldMs = performance.now() - c0;
  const loaded = first.agents.reduce((n, a) => n + a.files.length, 0);

  // Warm, as the language server answers: its host (disk reads cached by mtime and size), the instruction files known.
  const server = new WorkspaceHost();
  server.setRoots([root]);
  const serverFiles = discoverAgentFiles(server, root);
  whatLoads(server, `${root}/${sources[0]}`, { tokenizer, files: serverFiles });
  const warm: number[] = [];
  for (let k = 1; k <= 100; k++) {
    const t0 = performance.now();
    whatLoads(server, `${root}/${sources[(k * 97) % sources.length]}`, { tokenizer, files: serverFiles });
    warm.push(performance.now() - t0);
  }

  const cli = resolve(__dirname, '../../dist/cli.js');
  const t1 = performance.now();
  const r = spawnSync(process.execPath, [cli, 'agents', `${root}/${sources[1]}`, '--format', 'json'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
  const cliMs = performance.now() - t1;
  if (r.status !== 0 && r.status !== 1) throw new Error(`ctxlens agents failed: ${r.stderr}`);

  // A 1 MB instruction file: 2,000 sections of prose, comments and references.
  const section = (i: number) => `## Section ${i}\n\n${PARA.repeat(4)}<!-- note ${i} -->\nSee [notes](packages/p${i % PACKAGES}/docs/notes.md).\n\n`;
  let big = '# Big rules\n\n';
  for (let i = 0; big.length < 1024 * 1024; i++) big += section(i);
  const bigPath = `${root}/packages/AGENTS.md`;
  writeFileSync(bigPath, big);
  const l0 = performance.now();
  const outline = outlineAgentFile(host, bigPath, big, tokenizer);
  const lensFirstMs = performance.now() - l0;
  const edits: number[] = [];
  for (let k = 0; k < 20; k++) {
    const at = Math.floor((big.length * (k + 1)) / 22);
    const edited = `${big.slice(0, at)}x${big.slice(at)}`;
    const t0 = performance.now();
    outlineAgentFile(host, bigPath, edited, tokenizer);
    edits.push(performance.now() - t0);
  }

  const out = {
    files: FILES,
    instruction_files: instructionFiles,
    discovered: files.length,
    loaded_for_first_file: loaded,
    cold_ms: Math.round(coldMs),
    cli_cold_ms: Math.round(cliMs),
    warm_p50_ms: +pct(warm, 50).toFixed(2),
    warm_p95_ms: +pct(warm, 95).toFixed(2),
    lens_1mb_first_ms: Math.round(lensFirstMs),
    lens_1mb_edit_p50_ms: +pct(edits, 50).toFixed(1),
    lens_1mb_sections: outline.sections.length,
    lens_1mb_tokens: outline.tokens,
    met: { cold: coldMs <= 1000 && cliMs <= 1000, warm: pct(warm, 95) <= 50 },
  };
  console.log(
    `what loads, ${FILES.toLocaleString('en-US')} files / ${instructionFiles} instruction files: cold ${out.cold_ms} ms in process, ${out.cli_cold_ms} ms as \`ctxlens agents\` (target ≤ 1 s); warm p50 ${out.warm_p50_ms} / p95 ${out.warm_p95_ms} ms (target ≤ 50 ms)`,
  );
  console.log(`lens work on a 1 MB instruction file (${out.lens_1mb_sections} sections, ${out.lens_1mb_tokens.toLocaleString('en-US')} tokens): first ${out.lens_1mb_first_ms} ms, after a one-line edit p50 ${out.lens_1mb_edit_p50_ms} ms`);
  return out;
}
