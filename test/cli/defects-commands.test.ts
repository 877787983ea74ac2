/**
 * Regression tests of small defects, through the built CLI (`node dist/cli.js`):
 * - a tool definition that is schema-invalid and outside `tools.allow` is also `tool-not-allowed`;
 * - one bad root type (`type: objekt`) is one `tool-schema-invalid` finding, not two;
 * - `ctxlens diff T --fixture F --budget A --budget B` assembles F on both sides;
 * - `ctxlens eval` refuses a template whose context config has `config-invalid` errors (exit 2, with the finding).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'ctxlens-defects-'));

function ctxlens(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tool definitions', () => {
  const dir = workspace('tools', {
    'agent.prompt': '---\nmodel: gpt-4o\n---\n{{role "system"}}\nTools:\n{{tools}}\n{{role "user"}}\n<q>{{question}}</q>\n',
    'agent.context.yaml':
      'model: gpt-4o\noutput: 100\nslots:\n  tools: { kind: tool, trust: trusted, tool: definitions }\n  question: { kind: user, trust: untrusted }\ntools:\n  allow: [lookup_order]\nfixtures: [f.fixture.yaml]\n',
    'f.fixture.yaml': [
      'template: agent.prompt',
      'slots:',
      '  question: where is my order?',
      '  tools:',
      '    - name: lookup_order',
      '      parameters: { type: object, properties: { id: { type: string } } }',
      '    - name: delete_everything',
      '      parameters: { type: objekt, properties: { x: { type: string } } }',
      '',
    ].join('\n'),
  });

  it('an invalid definition outside the allowlist is tool-not-allowed, and its bad type is one finding', () => {
    const r = ctxlens(dir, ['check', '.']);
    const lines = r.stdout.split('\n');
    const notAllowed = lines.filter((l) => l.includes('tool-not-allowed'));
    expect(notAllowed).toHaveLength(1);
    expect(notAllowed[0]).toMatch(/^f\.fixture\.yaml:7:13 error tool-not-allowed Tool 'delete_everything'/);
    const invalid = lines.filter((l) => l.includes('tool-schema-invalid'));
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatch(/^f\.fixture\.yaml:8:\d+ error tool-schema-invalid Tool 'delete_everything': parameters must describe an object \(type: object\), got type: "objekt"/);
    expect(r.code).toBe(1);
  });
});

describe('ctxlens diff with one fixture and two budgets', () => {
  it('assembles the named fixture on both sides', () => {
    const r = ctxlens(ROOT, ['diff', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'examples/sdk-qa/fixtures/rate-limit.fixture.yaml', '--budget', 'evidence=400', '--budget', 'evidence=3000', '--format', 'json']);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as { a: { fixture?: string; label: string }; b: { fixture?: string; label: string }; input_tokens: { a: number; b: number } };
    expect(d.a.fixture).toBe('rate-limit');
    expect(d.b.fixture).toBe('rate-limit');
    expect(d.a.label).toContain('budget evidence=400');
    expect(d.b.label).toContain('budget evidence=3000');
    // The smaller evidence budget keeps less of the same fixture.
    expect(d.input_tokens.a).toBeLessThan(d.input_tokens.b);
  });

  it('a flag given once and nothing given twice still compares the template as it is with the change', () => {
    const r = ctxlens(ROOT, ['diff', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'examples/sdk-qa/fixtures/rate-limit.fixture.yaml', '--format', 'json']);
    const d = JSON.parse(r.stdout) as { a: { fixture?: string }; b: { fixture?: string } };
    expect(d.a.fixture).toBe('post-retries');
    expect(d.b.fixture).toBe('rate-limit');
  });
});

describe('ctxlens eval on an invalid context config', () => {
  it('refuses, exits 2 and prints the config-invalid finding', () => {
    const dir = join(tmp, 'eval');
    cpSync(join(ROOT, 'examples/sdk-qa'), dir, { recursive: true });
    const cfg = join(dir, 'sdk-qa.context.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('pack: skip', 'pack: greedy'));
    const r = ctxlens(dir, ['eval', 'sdk-qa.eval.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sdk-qa\.context\.yaml:\d+:\d+ error config-invalid slots\.evidence\.pack: expected one of stop, skip; got 'greedy'\./m);
    expect(r.stderr).toContain('sdk-qa.eval.yaml: error');
    expect(r.stdout).not.toMatch(/retrieval recall|pass/i);
  });

  it('a valid config still evaluates', () => {
    const r = ctxlens(join(ROOT, 'examples/sdk-qa'), ['eval', 'sdk-qa.eval.yaml', '--format', 'json']);
    expect(r.code).toBe(0);
  });
});
