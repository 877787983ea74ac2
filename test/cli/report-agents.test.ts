/**
 * `ctxlens report --base` on coding agents' instruction files: per agent, the change in tokens
 * sent with every request and for each pattern, and its cost per 1,000 requests at the model's
 * input price (the model of .context-lens/agents.yaml), in JSON (valid against the report's
 * schema), text and Markdown. Runs the built CLI in a real git repository.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReportSchema } from '../../src/core/report';
import { priceFor } from '../../src/core/cost';
import { getTokenizer } from '../../src/core/tokens';

const CLI = resolve(__dirname, '../../dist/cli.js');
const o200k = getTokenizer('o200k_base')!;
const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: ENV });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

describe('ctxlens report --base: coding agents', () => {
  it('per agent: every-request tokens, per pattern, cost per 1,000 requests', () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-report-agents-')));
    git(ws, 'init', '-q', '-b', 'main');
    const before = {
      '.context-lens/agents.yaml': 'model: gpt-4o\n',
      '.github/copilot-instructions.md': 'Use strict TypeScript.\n',
      '.github/instructions/ts.instructions.md': '---\napplyTo: "**/*.ts"\n---\nNamed exports.\n',
      'CLAUDE.md': 'Be brief.\n',
      'src/a.ts': '',
    };
    write(ws, before);
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'base');
    const after = {
      '.github/copilot-instructions.md': 'Use strict TypeScript. Prefer small pure functions and name them after what they return.\n',
      '.github/instructions/ts.instructions.md': '---\napplyTo: "src/**/*.ts"\n---\nNamed exports.\n',
      'packages/api/CLAUDE.md': 'API rules: run the API tests.\n',
    };
    write(ws, after);
    const r = spawnSync(process.execPath, [CLI, 'report', '--base', 'main', '--format', 'json'], { cwd: ws, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout);
    expect(ReportSchema.safeParse(report).success).toBe(true);
    expect(report.agents.model).toBe('gpt-4o');
    const by = Object.fromEntries(report.agents.changes.map((c: { agent: string }) => [c.agent, c]));
    const baseAlways = o200k.count(before['.github/copilot-instructions.md']);
    const headAlways = o200k.count(after['.github/copilot-instructions.md']);
    expect(by.copilot.always).toEqual({ base: baseAlways, head: headAlways, delta: headAlways - baseAlways });
    const price = priceFor('gpt-4o')!.input;
    expect(by.copilot.cost_per_1000_requests.head).toBeCloseTo((headAlways * price) / 1000, 8);
    expect(by.copilot.patterns).toEqual([
      { file: '.github/instructions/ts.instructions.md', pattern: '**/*.ts', tokens: { base: o200k.count('Named exports.\n'), head: null, delta: -o200k.count('Named exports.\n') } },
      { file: '.github/instructions/ts.instructions.md', pattern: 'src/**/*.ts', tokens: { base: null, head: o200k.count('Named exports.\n'), delta: o200k.count('Named exports.\n') } },
    ]);
    expect(by.claude.always.delta).toBe(0);
    expect(by.claude.patterns).toEqual([{ file: 'packages/api/CLAUDE.md', pattern: 'packages/api/**', tokens: { base: null, head: o200k.count(after['packages/api/CLAUDE.md']), delta: o200k.count(after['packages/api/CLAUDE.md']) } }]);
    expect(by.cursor).toBeUndefined();

    const text = spawnSync(process.execPath, [CLI, 'report', '--base', 'main'], { cwd: ws, encoding: 'utf8', timeout: 60_000 }).stdout;
    expect(text).toContain(`GitHub Copilot (VS Code): every request ${baseAlways} -> ${headAlways} tokens (+${headAlways - baseAlways}), per 1,000 requests $`);
    const md = spawnSync(process.execPath, [CLI, 'report', '--base', 'main', '--format', 'markdown'], { cwd: ws, encoding: 'utf8', timeout: 60_000 }).stdout;
    expect(md).toContain("#### Coding agents' instructions (o200k_base, gpt-4o)");
    expect(md).toContain('| Claude Code | `packages/api/CLAUDE.md` | `packages/api/**` |');
  });
});
