/**
 * The built `ctxlens` run as a subprocess, the way CI runs it: exit codes, JSON shapes and the
 * worked numbers of the seeds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const CLI = resolve(__dirname, '../../dist/cli.js');

function ctxlens(args: string[], opts: { cwd?: string; input?: string } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd, input: opts.input, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-cli-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const SEED_CONFIG = `version: 3
model: gpt-4o
window: 8000
output: 1200
margin: 800
overhead: { message: 3, request: 3, item: 8 }
slots:
  policy:   { kind: policy,   trust: trusted,   required: true, budget: 800 }
  history:  { kind: history,  trust: untrusted, budget: 1200, priority: 1 }
  evidence: { kind: evidence, trust: untrusted, budget: EVIDENCE, priority: 2, label: EVIDENCE, pack: skip, order: edges, max_items: 8 }
  tools:    { kind: tool,     trust: trusted,   budget: 600 }
  question: { kind: user,     trust: untrusted, required: true, budget: 400 }
fixtures: [fixtures/*.fixture.yaml]
`;

const SEED_TEMPLATE = `---
model: gpt-4o
---
{{role "system"}}
{{policy}}
Tools you may call: {{tools}}
{{history}}
{{role "user"}}
{{evidence}}
<question>
{{question}}
</question>
`;

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: resolve(__dirname, '../..'), stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

describe('ctxlens budget', () => {
  it('reproduces the 8,000-token request of seed 000 (6,000 + 1,200 + 800 margin fits)', () => {
    const dir = workspace({ 'support.context.yaml': SEED_CONFIG.replace('EVIDENCE,', '3000,') });
    const r = ctxlens(['budget', 'support.context.yaml', '--format', 'json'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ window: 8000, output: 1200, margin: 800, input_allocated: 6000, total: 8000, fits: true, over_by: 0 });
    expect(j.slots.map((s: { name: string; budget: number }) => [s.name, s.budget])).toEqual([
      ['policy', 800],
      ['history', 1200],
      ['evidence', 3000],
      ['tools', 600],
      ['question', 400],
    ]);
  });

  it('reports evidence +1,500 as 8,700 tokens, over the 8,000 capacity by 700 (exit 1)', () => {
    const dir = workspace({ 'support.context.yaml': SEED_CONFIG.replace('EVIDENCE,', '4500,') });
    const r = ctxlens(['budget', 'support.context.yaml', '--format', 'json'], { cwd: dir });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.input_allocated).toBe(7500);
    expect(j.input_allocated + j.output).toBe(8700);
    expect(j.fits).toBe(false);
    expect(j.over_by).toBe(700);
  });

  it('prints the equation as a table in text mode', () => {
    const dir = workspace({ 'support.context.yaml': SEED_CONFIG.replace('EVIDENCE,', '3000,') });
    const r = ctxlens(['budget', 'support.context.yaml'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('800 + 1,200 + 3,000 + 600 + 400 = 6,000 input + 1,200 output + 800 margin = 8,000');
  });

  it('exits 2 on usage errors and unreadable input', () => {
    expect(ctxlens(['budget']).code).toBe(2);
    expect(ctxlens(['budget', '/nonexistent/x.context.yaml']).code).toBe(2);
    expect(ctxlens(['frobnicate']).code).toBe(2);
    expect(ctxlens(['check', '--format', 'xml']).code).toBe(2);
  });
});

describe('ctxlens count', () => {
  it('counts stdin with o200k_base by default and says the count is exact', () => {
    const r = ctxlens(['count', '-', '--format', 'json'], { input: 'Hello, world!' });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toEqual({ tokenizer: 'o200k_base', exact: true, files: [{ path: '-', tokens: 4, chars: 13 }], total: 4 });
  });

  it('applies the stated 4-characters rule (chars + 3) // 4 and calls it an estimate', () => {
    const r = ctxlens(['count', '-', '--tokenizer', 'chars4', '--format', 'json'], { input: 'x'.repeat(121) });
    const j = JSON.parse(r.stdout);
    expect(j.exact).toBe(false);
    expect(j.total).toBe(31);
  });

  it('rejects an unknown tokenizer with exit 2', () => {
    expect(ctxlens(['count', '-', '--tokenizer', 'nope'], { input: 'x' }).code).toBe(2);
  });
});

describe('ctxlens check', () => {
  it('is clean (exit 0) on a well-formed template, config and fixture', () => {
    const dir = workspace({
      'support.prompt': SEED_TEMPLATE,
      'support.context.yaml': SEED_CONFIG.replace('EVIDENCE,', '3000,'),
      'fixtures/basic.fixture.yaml': `slots:\n  policy: Answer from the evidence only.\n  tools: refund(order_id)\n  question: Where is my order?\n  evidence:\n    - { id: ev_1, source: kb/orders, text: Orders ship in two days. }\n`,
    });
    const r = ctxlens(['check', '.', '--format', 'json'], { cwd: dir });
    const j = JSON.parse(r.stdout);
    const errors = j.files.flatMap((f: { diagnostics: Array<{ severity: string; rule: string }> }) => f.diagnostics.filter((d) => d.severity === 'error'));
    expect(errors).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('reports a planted defect with 1-based text positions and exit 1', () => {
    const dir = workspace({
      'bad.prompt': `---\nmodel: gpt-4o\n---\n{{role "system"}}\nYou help.\n{{role "user"}}\n{{question}} {{mystery}}\n`,
      'bad.context.yaml': `window: 8000\noutput: 1000\nslots:\n  question: { kind: user, trust: untrusted, required: true, budget: 400 }\n`,
    });
    const r = ctxlens(['check', 'bad.prompt'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^bad\.prompt:7:16 error slot-undefined /m);
  });

  it('writes JSON with 0-based ranges and a summary, and SARIF 2.1.0', () => {
    const dir = workspace({
      'bad.prompt': `{{role "system"}}\n{{question}}\n`,
      'bad.context.yaml': `window: 8000\nslots:\n  question: { kind: user, trust: untrusted, budget: 400, label: QUESTION }\n`,
    });
    const j = JSON.parse(ctxlens(['check', '.', '--format', 'json'], { cwd: dir }).stdout);
    expect(j.version).toBe(1);
    const file = j.files.find((f: { path: string }) => f.path === 'bad.prompt');
    const d = file.diagnostics.find((x: { rule: string }) => x.rule === 'untrusted-in-system');
    expect(d.range.start).toEqual({ line: 1, character: 2 });
    expect(j.summary.errors).toBeGreaterThanOrEqual(1);
    const s = JSON.parse(ctxlens(['check', '.', '--format', 'sarif'], { cwd: dir }).stdout);
    expect(s.version).toBe('2.1.0');
    const result = s.runs[0].results.find((x: { ruleId: string }) => x.ruleId === 'untrusted-in-system');
    expect(result.locations[0].physicalLocation.region).toMatchObject({ startLine: 2, startColumn: 3 });
    expect(s.runs[0].tool.driver.rules[result.ruleIndex].id).toBe('untrusted-in-system');
  });

  it('fails on warnings beyond --max-warnings', () => {
    const dir = workspace({
      'w.prompt': `{{role "user"}}<q>{{question}}</q>\n`,
      'w.context.yaml': `window: 8000\nslots:\n  question: { kind: user, budget: 400 }\n`,
    });
    expect(ctxlens(['check', '.'], { cwd: dir }).code).toBe(0);
    expect(ctxlens(['check', '.', '--max-warnings', '0'], { cwd: dir }).code).toBe(1);
  });

  it('turns malformed YAML into a located config-invalid finding, never a crash', () => {
    const dir = workspace({ 'x.context.yaml': `window: 8000\nslots:\n  a: { kind: evidence, budget: [\n` });
    const r = ctxlens(['check', '.', '--format', 'json'], { cwd: dir });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.files[0].diagnostics[0].rule).toBe('config-invalid');
  });
});

describe('ctxlens assemble', () => {
  it('prints an OpenAI messages array whose count, with chat accounting, is the trace input_tokens', () => {
    const dir = workspace({
      'support.prompt': SEED_TEMPLATE,
      'support.context.yaml': SEED_CONFIG.replace('EVIDENCE,', '3000,'),
      'fixtures/basic.fixture.yaml': `slots:\n  policy: Answer from the evidence only.\n  tools: refund(order_id)\n  question: Where is my order?\n  evidence:\n    - { id: ev_1, source: kb/orders, text: Orders ship in two days. }\n`,
    });
    const r = ctxlens(['assemble', 'support.prompt', '--format', 'openai', '--trace', 'trace.json'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const messages = JSON.parse(r.stdout);
    expect(messages[0].role).toBe('system');
    expect(messages.at(-1).content).toContain('[EVIDENCE ev_1]');
    const trace = JSON.parse(readFileSync(join(dir, 'trace.json'), 'utf8'));
    const c = ctxlens(['count', '--chat', '--model', 'gpt-4o', '--format', 'json', '-'], { input: r.stdout });
    expect(JSON.parse(c.stdout).total).toBe(trace.input_tokens);
  });

  it('exits 1 with a clear error when required slots alone exceed the input budget', () => {
    const dir = workspace({
      't.prompt': `{{role "system"}}\n{{policy}}\n{{role "user"}}<q>{{question}}</q>\n`,
      't.context.yaml': `window: 300\noutput: 100\ntokenizer: chars4\nslots:\n  policy: { kind: policy, trust: trusted, required: true, budget: 100 }\n  question: { kind: user, trust: untrusted, required: true, budget: 50 }\nfixtures: ['*.fixture.yaml']\n`,
      'big.fixture.yaml': `slots:\n  policy: "${'p'.repeat(2000)}"\n  question: hi\n`,
    });
    const r = ctxlens(['assemble', 't.prompt'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/required/i);
    expect(r.stdout).toBe('');
  });
});
