/**
 * The CLI on a request composed of plain prompt files (examples/langchain-support/): `check` finds
 * nothing in the example and finds what is planted in a copy, `assemble` prints the three messages
 * the config lists, `eval` measures it, and `report` sees a change to one of its files.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const EXAMPLE = join(ROOT, 'examples/langchain-support');
let tmp: string;

function ctxlens(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function git(cwd: string, ...args: string[]) {
  const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
  tmp = mkdtempSync(join(tmpdir(), 'ctxlens-plain-cli-'));
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('ctxlens on plain prompt files', () => {
  it('check: the example is clean', () => {
    const r = ctxlens(['check', 'examples/langchain-support']);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/No problems in 5 file\(s\)/);
  });

  it('check: a placeholder the config does not define, a slot no file uses and untrusted data in the system prompt', () => {
    const dir = join(tmp, 'planted');
    cpSync(EXAMPLE, dir, { recursive: true });
    writeFileSync(join(dir, 'prompts/system.md'), 'Evidence: {evidence}\n');
    const cfg = readFileSync(join(dir, 'support.context.yaml'), 'utf8').replace('format: text }', 'format: f-string }').replace('slots:\n', 'slots:\n  spare: { kind: other, trust: trusted }\n');
    writeFileSync(join(dir, 'support.context.yaml'), cfg);
    writeFileSync(join(dir, 'prompts/question.md'), '{question}\n{topic}\n');
    const r = ctxlens(['check', '.', '--format', 'json'], dir);
    const out = JSON.parse(r.stdout) as { files: Array<{ path: string; diagnostics: Array<{ rule: string; message: string }> }> };
    const rules = out.files.flatMap((f) => f.diagnostics.map((d) => `${d.rule} ${f.path}`));
    // A slot no file uses is said once, of the request; a render error once, where it is.
    const unused = out.files.flatMap((f) => f.diagnostics.filter((d) => d.rule === 'slot-unused'));
    expect(unused.map((d) => d.message)).toEqual(["Slot 'spare' is defined but never used by any file of the request support.context.yaml composes."]);
    expect(rules.filter((x) => x.startsWith('template-invalid'))).toEqual(['template-invalid prompts/question.md']);
    expect(rules).toContain('untrusted-in-system prompts/system.md');
    expect(rules).toContain('slot-undefined prompts/question.md');
    expect(r.code).toBe(1);
  });

  it('assemble: the three messages in the order the config lists them, each in its format', () => {
    const r = ctxlens(['assemble', 'examples/langchain-support/prompts/question.md', '--format', 'openai']);
    expect(r.code).toBe(0);
    const messages = JSON.parse(r.stdout) as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(messages[0].content).toBe(readFileSync(join(EXAMPLE, 'prompts/system.md'), 'utf8'));
    // trim_blocks + lstrip_blocks: the loop's tags leave no lines behind; jinja2 drops the final newline.
    expect(messages[1].content).toBe('Answer in English.\nSupported SDK versions:\n  - 4.2\n  - 4.1\nKeep the answer short: three sentences at most.');
    expect(messages[2].content).toContain('<question>\nDoes SDK 4.2 retry requests that were rate limited (HTTP 429)?\n</question>');
    expect(messages[2].content).not.toContain('{');
  });

  it('eval: the example eval set passes', () => {
    const r = ctxlens(['eval', 'examples/langchain-support/support.eval.yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1/1 pass');
  });

  it('report: a change to one file of the request is a change of the request', () => {
    const dir = join(tmp, 'repo');
    cpSync(EXAMPLE, dir, { recursive: true });
    git(dir, 'init', '-q');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'base');
    writeFileSync(join(dir, 'prompts/system.md'), readFileSync(join(dir, 'prompts/system.md'), 'utf8') + '\nAlways answer politely, in full sentences, and never guess version numbers that the evidence does not state.\n');
    const r = ctxlens(['report', '--base', 'HEAD', '--format', 'json'], dir);
    expect(r.stderr).toBe('');
    const report = JSON.stringify(JSON.parse(r.stdout));
    expect(report).toContain('question.md');
    expect(r.stdout).toMatch(/"delta"|"tokens"|input/);
  });
});
