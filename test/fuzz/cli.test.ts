/**
 * The built `ctxlens` as a subprocess on generated workspaces on disk (issue 12): `check` in each
 * output format and `assemble` in each request format, with damaged files, hostile text, escaping
 * file references and planted secrets. Every run ends within its timeout with exit code 0, 1 or 2,
 * no stack trace on stderr, parseable JSON and SARIF, LSP ranges inside the files' lines, exit 1
 * exactly when there are error-level findings, nothing read from outside the workspace, and no
 * piece of a secret of the files in check's output beyond its redacted form.
 *
 * CTXLENS_CLI may name another build of the CLI (default dist/cli.js, built when missing).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { findSecrets } from '../../src/core/text/secrets';
import { buildWorkspace, workspaceSpec } from './arbitraries';
import { fuzz, noteKnown } from './harness';
import { lspLines } from './support';

const BUILT = process.env.CTXLENS_CLI ? resolve(process.env.CTXLENS_CLI) : resolve(__dirname, '../../dist/cli.js');
/** The CLI the runs use: a private copy of the build, so a rebuild of dist/ during the run cannot change it. */
let CLI = BUILT;
const OUTSIDE = 'TOPSECRET-OUTSIDE-THE-WORKSPACE';
/** Far above any run here (a check takes under a second): only a hang reaches it. */
const HANG_MS = 60_000;

let base = '';
beforeAll(() => {
  if (!existsSync(BUILT)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: resolve(__dirname, '../..'), stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
  base = realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-fuzz-cli-')));
  // The bundle and its tokenizer data (read next to it), copied until a copy answers --version: a
  // build running elsewhere may be rewriting dist/ at this moment.
  for (let attempt = 0; ; attempt++) {
    const dir = join(base, `cli-${attempt}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(BUILT, join(dir, 'cli.js'));
    const assets = join(dirname(BUILT), 'tokenizers');
    if (existsSync(assets)) cpSync(assets, join(dir, 'tokenizers'), { recursive: true });
    const v = spawnSync(process.execPath, [join(dir, 'cli.js'), '--version'], { encoding: 'utf8', timeout: HANG_MS });
    if (v.status === 0 && v.stdout.trim()) {
      CLI = join(dir, 'cli.js');
      break;
    }
    if (attempt >= 5) throw new Error(`the CLI build at ${BUILT} does not run: ${v.stderr}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
  }
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

let serial = 0;

/** The workspace's files under a fresh folder, with a file outside it that must never be read. */
function materialise(files: Record<string, string>, root: string): string {
  const dir = join(base, String(serial++));
  const ws = join(dir, 'ws');
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(dir, 'outside.md'), `${OUTSIDE}\n`);
  for (const [path, text] of Object.entries(files)) {
    const target = join(ws, relative(root, path));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
  return ws;
}

interface Diagnostic {
  rule: string;
  severity: string;
  message: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

const run = fc.record({
  spec: workspaceSpec(),
  command: fc.oneof(
    fc.record({ cmd: fc.constant('check' as const), format: fc.constantFrom('text', 'json', 'json', 'sarif') }),
    fc.record({ cmd: fc.constant('assemble' as const), format: fc.constantFrom('openai', 'anthropic', 'text', 'json'), trace: fc.boolean(), sample: fc.boolean() }),
  ),
});

describe('ctxlens on generated workspaces', () => {
  fuzz(
    'cli/check-assemble',
    run,
    ({ spec, command }) => {
      const wsSpec = buildWorkspace(spec);
      const ws = materialise(wsSpec.files, wsSpec.root);
      const template = relative(wsSpec.root, wsSpec.template);
      const args = command.cmd === 'check' ? ['check', '.', '--format', command.format] : ['assemble', template, '--format', command.format, ...(command.trace ? ['--trace', 'trace.json'] : []), ...(command.sample ? ['--fixture', 'sample'] : [])];
      const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ws, encoding: 'utf8', timeout: HANG_MS, maxBuffer: 64 * 1024 * 1024 });
      const where = `ctxlens ${args.join(' ')} in ${ws}`;
      expect(r.error, `${where}: did not end (${r.error?.message})`).toBeUndefined();
      expect(r.signal, `${where}: killed`).toBeNull();
      expect([0, 1, 2], `${where}: exit code ${r.status}; stderr ${r.stderr}`).toContain(r.status);
      expect(r.stderr, `${where}: a stack trace`).not.toMatch(/\n\s+at .+:\d+:\d+|internal error/);
      expect(r.stdout + r.stderr, `${where}: read outside the workspace`).not.toContain(OUTSIDE);
      if (command.cmd === 'check') {
        expect(r.status, `${where}: check never fails on its own (${r.stderr})`).not.toBe(2);
        if (command.format === 'json') {
          const j = JSON.parse(r.stdout) as { files: Array<{ path: string; diagnostics: Diagnostic[] }>; summary: { errors: number } };
          expect(r.status, `${where}: exit 1 exactly with error-level findings`).toBe(j.summary.errors > 0 ? 1 : 0);
          for (const f of j.files) {
            const text = wsSpec.files[join(wsSpec.root, f.path).replace(/\\/g, '/')];
            if (text === undefined) continue;
            const lines = lspLines(text);
            for (const d of f.diagnostics) {
              for (const p of [d.range.start, d.range.end]) {
                expect(p.line, `${where}: ${d.rule} on ${f.path} at line ${p.line} of ${lines.length}`).toBeLessThan(lines.length);
                expect(p.character, `${where}: ${d.rule} on ${f.path} past the end of line ${p.line}`).toBeLessThanOrEqual(lines[p.line].length);
              }
            }
          }
          // No piece of a secret of the workspace in any diagnostic, beyond what a redaction shows.
          const secrets = Object.values(wsSpec.files).flatMap((t) => findSecrets(t).map((h) => (h.pattern.block ? '' : h.secret.slice(6, -3))));
          for (const d of j.files.flatMap((f) => f.diagnostics)) {
            for (const s of secrets) {
              const piece = s.length >= 10 ? [...Array(s.length - 9).keys()].map((i) => s.slice(i, i + 10)).find((p) => new Set(p).size >= 5 && d.message.includes(p)) : undefined;
              if (!piece) continue;
              if (d.rule === 'slot-undefined' || d.rule === 'slot-unused') noteKnown('secret-piece-as-template-identifier');
              else expect.fail(`${where}: ${d.rule} message carries a piece of a secret (${piece}): ${d.message}`);
            }
          }
        }
        if (command.format === 'sarif') expect((JSON.parse(r.stdout) as { version: string }).version).toBe('2.1.0');
      } else if (r.status === 0 && (command.format === 'json' || command.format === 'openai' || command.format === 'anthropic')) {
        expect(() => JSON.parse(r.stdout), `${where}: output is JSON`).not.toThrow();
      }
    },
    { minRuns: 12 },
  );
});
