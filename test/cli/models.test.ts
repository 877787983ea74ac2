/**
 * The built `ctxlens` as a subprocess: `ctxlens models`, the model files, `<command> --help`,
 * the zero-config output reserve (GPT-4's 8,192-token window) and the model-retired finding.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = resolve(__dirname, '../../dist/cli.js');

function ctxlens(args: string[], cwd?: string, env: Record<string, string> = {}) {
  // HOME and XDG_CONFIG_HOME point into the workspace, so no user model file of this machine applies.
  const home = cwd ?? mkdtempSync(join(tmpdir(), 'ctxlens-home-'));
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-models-'));
  mkdirSync(join(dir, '.git'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function diagnostics(json: string): Array<{ rule: string; message: string }> {
  return (JSON.parse(json) as { files: Array<{ diagnostics: Array<{ rule: string; message: string }> }> }).files.flatMap((f) => f.diagnostics);
}

// Prompty's own test prompt shape: a gpt-4 file with no max_tokens.
const BASIC = `---
name: Basic Prompt
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-4
    name: gpt-4
sample:
  firstName: Jane
  question: What is the meaning of life?
---
system:
You are an AI assistant who helps people find information.

user:
{{question}}
`;

describe('ctxlens models', () => {
  it('lists current models of a query with provider, window, output, tokenizer, price, as-of and status', () => {
    const r = ctxlens(['models', 'gpt']);
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('gpt-6.2-sol '));
    expect(line).toBeDefined();
    expect(line).toMatch(/openai\s+1,050,000\s+128,000\s+o200k_base \(estimate\)\s+\$2\/\$10 \(2026-12-01\)\s+2026-12-01\s+current/);
    expect(r.stdout).toMatch(/^gpt-4 .*retired 2026-10-23 → gpt-5\.6-sol/m);
    // Current models come before retiring and retired ones.
    expect(r.stdout.indexOf('gpt-6.2-sol')).toBeLessThan(r.stdout.indexOf('retires'));
    expect(r.stdout.indexOf('retires')).toBeLessThan(r.stdout.indexOf('retired'));
  });

  it('prints JSON with source, as_of and lifecycle on every model', () => {
    const r = ctxlens(['models', '--format', 'json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { models: Array<Record<string, unknown> & { name: string }> };
    expect(j.models.length).toBeGreaterThan(100);
    for (const m of j.models) {
      expect(m.source, m.name).toEqual(expect.any(String));
      expect(m.as_of, m.name).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
    }
    const byName = new Map(j.models.map((m) => [m.name, m]));
    for (const current of ['gpt-6.2-sol', 'gpt-6-luna', 'claude-opus-5', 'claude-haiku-4-5', 'gemini-3.8-flash', 'gemini-3.5-flash-lite', 'mistral-medium-3-5', 'grok-4.6', 'deepseek-v4-pro', 'deepseek-flash', 'qwen3.8-max', 'qwen3.5-flash']) {
      expect(byName.get(current), current).toBeDefined();
      expect(byName.get(current)!.retired, current).toBeUndefined();
    }
    expect(byName.get('gemini-2.0-flash')!.retired).toMatchObject({ date: '2026-06-01', successor: 'gemini-2.5-flash' });
    expect(byName.get('mistral-small-2603')!.window).toBe(262_144);
  });

  it('shows a name of a known family as an estimate, without a price', () => {
    const r = ctxlens(['models', 'gpt-6.1-nova', '--format', 'json']);
    const j = JSON.parse(r.stdout) as { models: Array<Record<string, unknown>> };
    expect(j.models).toHaveLength(1);
    expect(j.models[0]).toMatchObject({ name: 'gpt-6.1-nova', tokenizer: 'o200k_base', counts: 'estimate', estimate: { family: 'gpt' } });
    expect(j.models[0].price).toBeUndefined();
  });

  it('reads the workspace model file: overrides, new models and prices', () => {
    const dir = workspace({
      '.context-lens/models.yaml': 'models:\n  gpt-6.2-sol: { window: 64000 }\n  acme-7b: { window: 32768, tokenizer: o200k_base, price: { input: 0.2, output: 0.4, as_of: 2026-11-30, source: contract } }\n  broken: { windw: 3 }\n',
    });
    const r = ctxlens(['models', '--format', 'json'], dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('models.broken');
    const j = JSON.parse(r.stdout) as { model_files: string[]; models: Array<Record<string, unknown> & { name: string }> };
    expect(j.model_files).toHaveLength(1);
    const sol = j.models.find((m) => m.name === 'gpt-6.2-sol')!;
    expect(sol.window).toBe(64_000);
    expect(sol.max_output).toBe(128_000);
    const acme = j.models.find((m) => m.name === 'acme-7b')!;
    expect(acme).toMatchObject({ window: 32_768, price: { input: 0.2, output: 0.4, as_of: '2026-11-30', source: 'contract' } });
    expect(j.models.find((m) => m.name === 'broken')).toBeUndefined();
  });
});

describe('ctxlens <command> --help', () => {
  it.each(['check', 'count', 'budget', 'assemble', 'init', 'serve', 'cite-check', 'eval', 'variants', 'diff', 'models'])('%s --help and -h print its usage and exit 0', (command) => {
    for (const flag of ['--help', '-h']) {
      const r = ctxlens([command, flag]);
      expect(r.code, `${command} ${flag}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`ctxlens ${command} `);
      expect(r.stdout).toContain('Options:');
      expect(r.stderr).not.toContain('Unknown option');
    }
  });

  it('lists the options of the command', () => {
    const r = ctxlens(['budget', '--help']);
    expect(r.stdout).toMatch(/^ {2}--model NAME {2,}\S/m);
    expect(r.stdout).toMatch(/^ {2}--format text\|json {2,}output format/m);
  });
});

describe('zero-config output reserve', () => {
  it('a gpt-4 file without max_tokens leaves input room, and budget never prints "over by 0"', () => {
    const dir = workspace({ 'basic.prompty': BASIC });
    const b = ctxlens(['budget', 'basic.prompty'], dir);
    expect(b.stdout).not.toMatch(/over by 0\b/);
    expect(b.stdout).toMatch(/output reserve\s+4,096/);
    expect(b.stdout).toContain('4,096 <= 8,192: fits');
    const c = ctxlens(['check', 'basic.prompty', '--format', 'json'], dir);
    const findings = diagnostics(c.stdout);
    expect(findings.map((f) => f.rule)).not.toContain('required-overflow');
    const retired = findings.find((f) => f.rule === 'model-retired');
    expect(retired?.message).toContain('2026-10-23');
    expect(retired?.message).toContain('gpt-5.6-sol');
  });

  it('init writes an output reserve that passes reserve-invalid and budget-overflow', () => {
    const dir = workspace({ 'basic.prompty': BASIC });
    expect(ctxlens(['init', 'basic.prompty'], dir).code).toBe(0);
    const text = readFileSync(join(dir, 'basic.context.yaml'), 'utf8');
    const output = Number(/^output: (\d+)$/m.exec(text)?.[1]);
    expect(output).toBeGreaterThan(0);
    expect(output).toBeLessThan(8_192);
    const c = ctxlens(['check', '.', '--format', 'json'], dir);
    const rules = diagnostics(c.stdout).map((f) => f.rule);
    expect(rules).not.toContain('reserve-invalid');
    expect(rules).not.toContain('budget-overflow');
  });

  it('states why a budget with nothing over does not fit', () => {
    const dir = workspace({ 'a.context.yaml': 'window: 8192\noutput: 8192\n' });
    const r = ctxlens(['budget', 'a.context.yaml'], dir);
    expect(r.stdout).not.toMatch(/over by 0\b/);
    expect(r.stdout).toContain('8,192 <= 8,192: does not fit: the output reserve and margin leave no input budget');
  });
});
