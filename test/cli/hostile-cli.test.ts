/**
 * The built `ctxlens` against hostile workspaces, as a subprocess with a timeout: FIFOs where
 * configs, templates and fixtures are expected (a read used to block forever), symbolic links
 * that lead out of the workspace (their targets used to be read), and text that used to abort
 * Node or take minutes. Each run must end in time with located findings and without the
 * outside content in its output.
 *
 * CTXLENS_CLI may name another build of the CLI to run (default dist/cli.js, built when missing).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const CLI = process.env.CTXLENS_CLI ? resolve(process.env.CTXLENS_CLI) : resolve(__dirname, '../../dist/cli.js');
const SECRET = 'TOPSECRET-OUTSIDE-CONTENT';

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: resolve(__dirname, '../..'), stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

function ctxlens(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, signal: r.signal, timedOut: r.error !== undefined, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

interface Diagnostic {
  rule: string;
  message: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

function diagnostics(stdout: string): Array<Diagnostic & { path: string }> {
  const j = JSON.parse(stdout) as { files: Array<{ path: string; diagnostics: Diagnostic[] }> };
  return j.files.flatMap((f) => f.diagnostics.map((d) => ({ ...d, path: f.path })));
}

function sandbox(files: Record<string, string> = {}): { ws: string; out: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-hostile-cli-')));
  const ws = join(base, 'ws');
  const out = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(join(out, 'dir'), { recursive: true });
  writeFileSync(join(out, 'secret.md'), SECRET);
  writeFileSync(join(out, 'outside.context.yaml'), `window: 424242\noutput: 100\nslots:\n  q: { kind: user, trust: untrusted }\n# ${SECRET}\n`);
  writeFileSync(join(out, 'dir', 'leak.fixture.yaml'), `slots:\n  q: ${SECRET}\n`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(ws, name, '..'), { recursive: true });
    writeFileSync(join(ws, name), text);
  }
  return { ws, out };
}

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
}

const CONFIG = 'window: 8000\noutput: 500\nslots:\n  q: { kind: user, trust: untrusted }\nfixtures: [fixtures/*.fixture.yaml]\n';
const TEMPLATE = '---\nmodel: gpt-4o\n---\n{{role "user"}}\n<question>\n{{q}}\n</question>\n';

describe('FIFOs in the workspace', () => {
  it('check of a folder with FIFOs named like a config, a fixture and a template ends, and reads nothing from them', () => {
    const { ws } = sandbox({ 'ok.prompt': TEMPLATE, 'ok.context.yaml': CONFIG });
    mkfifo(join(ws, 'x.context.yaml'));
    mkfifo(join(ws, 'y.prompt'));
    mkdirSync(join(ws, 'fixtures'));
    mkfifo(join(ws, 'fixtures', 'z.fixture.yaml'));
    const r = ctxlens(['check', '.', '--format', 'json'], ws);
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    expect([0, 1]).toContain(r.code);
    expect(diagnostics(r.stdout).map((d) => d.path)).not.toContain('x.context.yaml');
  });

  it('a template whose config, context: config or { file } reference is a FIFO ends with findings', () => {
    const { ws } = sandbox({
      'a.prompt': TEMPLATE,
      'b.prompt': `---\nmodel: gpt-4o\ncontext: ./pipe.context.yaml\n---\n{{q}}\n`,
      'c.prompt': TEMPLATE,
      'c.context.yaml': CONFIG,
      'fixtures/c.fixture.yaml': 'template: ../c.prompt\nslots:\n  q: { file: ../pipe.md }\n',
    });
    mkfifo(join(ws, 'a.context.yaml'));
    mkfifo(join(ws, 'pipe.context.yaml'));
    mkfifo(join(ws, 'pipe.md'));
    const r = ctxlens(['check', 'a.prompt', 'b.prompt', 'c.prompt', 'fixtures/c.fixture.yaml', '--format', 'json'], ws);
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    const got = diagnostics(r.stdout);
    expect(got.find((d) => d.path === 'a.prompt')?.rule).toBe('config-missing');
    expect(got.some((d) => d.path === 'b.prompt' && d.rule === 'file-reference')).toBe(true);
    expect(got.some((d) => d.path === 'fixtures/c.fixture.yaml' && d.rule === 'file-reference')).toBe(true);
  });
});

describe('symbolic links out of the workspace', () => {
  it('a { file } link, a context: link, a linked config, fixture and folder: never read', () => {
    const { ws, out } = sandbox({
      'a.prompt': TEMPLATE,
      'a.context.yaml': CONFIG.replace('fixtures/*.fixture.yaml', 'fixtures/*.fixture.yaml, linked/*.fixture.yaml'),
      'fixtures/own.fixture.yaml': 'slots:\n  q: { file: ../notes.md }\n',
      'b.prompt': `---\nmodel: gpt-4o\ncontext: ./ctx.context.yaml\n---\n{{q}}\n`,
      'c.prompt': TEMPLATE,
    });
    symlinkSync(join(out, 'secret.md'), join(ws, 'notes.md'));
    symlinkSync(join(out, 'outside.context.yaml'), join(ws, 'ctx.context.yaml'));
    symlinkSync(join(out, 'outside.context.yaml'), join(ws, 'c.context.yaml'));
    symlinkSync(join(out, 'dir', 'leak.fixture.yaml'), join(ws, 'fixtures', 'leak.fixture.yaml'));
    symlinkSync(join(out, 'dir'), join(ws, 'linked'));

    const check = ctxlens(['check', '.', '--format', 'json'], ws);
    expect(check.timedOut).toBe(false);
    expect(check.stdout).not.toContain(SECRET);
    const got = diagnostics(check.stdout);
    const paths = new Set(got.map((d) => d.path));
    for (const p of ['fixtures/leak.fixture.yaml', 'linked/leak.fixture.yaml', 'ctx.context.yaml', 'c.context.yaml']) expect(paths.has(p), p).toBe(false);
    const b = got.find((d) => d.path === 'b.prompt' && d.rule === 'file-reference');
    expect(b?.message).toContain('is a symbolic link to');
    expect(b?.message).toContain('outside the workspace');
    expect(got.find((d) => d.path === 'c.prompt')?.rule).toBe('config-missing');
    expect(got.some((d) => d.path === 'fixtures/own.fixture.yaml' && d.rule === 'file-reference')).toBe(true);

    const assembled = ctxlens(['assemble', 'a.prompt', '--fixture', 'fixtures/own.fixture.yaml', '--format', 'json'], ws);
    expect(assembled.timedOut).toBe(false);
    expect(assembled.stdout + assembled.stderr).not.toContain(SECRET);
    const budget = ctxlens(['budget', 'b.prompt', '--format', 'json'], ws);
    expect(budget.stdout + budget.stderr).not.toContain('424242');
  });
});

describe('text that used to abort or hang the process', () => {
  it('10,000 unclosed [ in a config beside 10,000 { in a fixture: exit with findings, no abort', () => {
    const { ws } = sandbox({ 'a.context.yaml': '['.repeat(10_000), 'a.fixture.yaml': '{'.repeat(10_000) });
    const r = ctxlens(['check', '.', '--format', 'json'], ws);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    const got = diagnostics(r.stdout);
    expect(got.some((d) => d.path === 'a.context.yaml' && d.message.includes('nests deeper than 64 levels'))).toBe(true);
    expect(got.some((d) => d.path === 'a.fixture.yaml' && d.message.includes('nests deeper than 64 levels'))).toBe(true);
  });

  it('1,000 { in a config bound to a template, and a 35,000-key config: located findings', () => {
    const { ws } = sandbox({
      'a.prompt': TEMPLATE,
      'a.context.yaml': '{'.repeat(1000),
      'b.context.yaml': Array.from({ length: 35_000 }, (_, i) => `k${i}: 1`).join('\n'),
    });
    const r = ctxlens(['check', '.', '--format', 'json'], ws);
    expect(r.timedOut).toBe(false);
    expect(r.signal).toBeNull();
    const got = diagnostics(r.stdout);
    expect(got.find((d) => d.path === 'a.context.yaml' && d.message.includes('nests deeper'))?.range.start).toEqual({ line: 0, character: 64 });
    expect(got.find((d) => d.path === 'b.context.yaml' && d.message.includes('more than 10,000 entries'))?.range.start).toEqual({ line: 10_000, character: 0 });
  });

  it('an empty fixture glob and a 100,000-character label: config-invalid findings, exit 1', () => {
    const { ws } = sandbox({
      'a.prompt': TEMPLATE,
      'a.context.yaml': `window: 8000\noutput: 500\nfixtures: [""]\nslots:\n  q: { kind: evidence, trust: untrusted, label: ${'A'.repeat(100_000)} }\n`,
      'fixtures/a.fixture.yaml': 'slots:\n  q: [{ id: d1, text: "[/AAAA] hi" }]\n',
    });
    const r = ctxlens(['check', '.', '--format', 'json'], ws);
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    const got = diagnostics(r.stdout).filter((d) => d.path === 'a.context.yaml' && d.rule === 'config-invalid');
    expect(got.map((d) => d.message.split(';')[0])).toEqual(['fixtures[0]: a fixture glob cannot be empty', 'slots.q.label: a label is at most 64 characters, such as EVIDENCE']);
  });
});
