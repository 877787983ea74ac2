/**
 * The CI integrations of the repository: the composite GitHub Action (action.yml) and the pre-commit
 * hook (.pre-commit-hooks.yaml). Both are parsed with `yaml` and checked against the built CLI: the
 * subcommand and flags they use are the ones `ctxlens --help` lists, the action's check step (its
 * real bash script, with the inputs filled in as the runner would) writes a SARIF report of
 * examples/ and keeps the exit code, and the hook's entry finds the planted findings of examples/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');

interface ActionStep {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
  'working-directory'?: string;
}
interface Action {
  name: string;
  description: string;
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs?: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
}
interface Hook {
  id: string;
  name: string;
  entry: string;
  language: string;
  files: string;
  args?: string[];
  pass_filenames?: boolean;
}

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action;
const hooks = parse(readFileSync(join(ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as Hook[];
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };

function ctxlens(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `ctxlens --help`: each usage line's subcommand with the flags it lists and the --format choices. */
function helpCommands(): Map<string, { flags: Set<string>; formats: Set<string> }> {
  const { code, stdout, stderr } = ctxlens(['--help']);
  expect(code, stderr).toBe(0);
  const out = new Map<string, { flags: Set<string>; formats: Set<string> }>();
  for (const m of stdout.matchAll(/^\s*ctxlens ([a-z]+)\b(.*)$/gm)) {
    const rest = m[2]!;
    const flags = new Set([...rest.matchAll(/--[a-z][a-z-]*/g)].map((f) => f[0]));
    const formats = new Set((/--format ([a-z|]+)/.exec(rest)?.[1] ?? '').split('|').filter(Boolean));
    out.set(m[1]!, { flags, formats });
  }
  return out;
}

/** Rows of the planted findings table of examples/README.md: `examples/<file>:<line> <rule>`. */
function plantedFindings(): Array<{ file: string; line: number; rule: string; severity: string }> {
  const text = readFileSync(join(ROOT, 'examples/README.md'), 'utf8');
  return [...text.matchAll(/^\| `([^`]+)` \| (\d+) \| `([a-z0-9-]+)` \| (error|warning|info|hint) \|/gm)].map((m) => ({
    file: `examples/${m[1]}`,
    line: Number(m[2]),
    rule: m[3]!,
    severity: m[4]!,
  }));
}

/** Substitutes `${{ inputs.x }}` and `${{ github.action_path }}` the way the runner does. */
function expand(value: string, inputs: Record<string, string>): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) {
      if (!(input[1]! in inputs)) throw new Error(`unknown input ${input[1]}`);
      return inputs[input[1]!]!;
    }
    if (expr === 'github.action_path') return ROOT;
    throw new Error(`no value for the expression ${expr}`);
  });
}

function defaults(): Record<string, string> {
  return Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, v.default ?? '']));
}

/** Runs a `run:` step of the action with bash as a GitHub runner does (`bash --noprofile --norc -eo pipefail`). */
function runStep(step: ActionStep, inputs: Record<string, string>, dir: string) {
  const output = join(dir, `github-output-${Math.random().toString(36).slice(2)}`);
  writeFileSync(output, '');
  const env: NodeJS.ProcessEnv = { ...process.env, GITHUB_OUTPUT: output, GITHUB_WORKSPACE: ROOT, GITHUB_ACTION_PATH: ROOT };
  for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(String(v), inputs);
  const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  const outputs = Object.fromEntries(
    readFileSync(output, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, outputs };
}

interface Sarif {
  version: string;
  runs: Array<{ tool: { driver: { name: string; rules: Array<{ id: string }> } }; results: Array<{ ruleId: string; level: string; locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }> }> }>;
}

function readSarif(path: string): Sarif {
  const sarif = JSON.parse(readFileSync(path, 'utf8')) as Sarif;
  expect(sarif.version).toBe('2.1.0');
  expect(sarif.runs).toHaveLength(1);
  expect(sarif.runs[0]!.tool.driver.name).toBe('ctxlens');
  return sarif;
}

function sarifFindings(sarif: Sarif): string[] {
  return sarif.runs[0]!.results.map((r) => {
    const loc = r.locations[0]!.physicalLocation;
    return `${loc.artifactLocation.uri}:${loc.region.startLine} ${r.ruleId}`;
  });
}

const plantedKeys = (): string[] => plantedFindings().map((f) => `${f.file}:${f.line} ${f.rule}`);

let tmp: string;
beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  tmp = mkdtempSync(join(tmpdir(), 'ctxlens-integrations-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('action.yml (composite GitHub Action)', () => {
  const steps = action.runs.steps;
  const checkStep = steps.find((s) => s.id === 'check')!;

  it('is a composite action with the inputs paths, args and sarif-file', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.name).toBeTruthy();
    expect(action.description).toBeTruthy();
    for (const input of ['paths', 'args', 'sarif-file']) expect(action.inputs[input], `input ${input}`).toBeDefined();
    for (const [name, input] of Object.entries(action.inputs)) expect(input.description, `description of ${name}`).toBeTruthy();
    expect(action.inputs.paths!.default).toBe('.');
    expect(action.inputs['sarif-file']!.default).toMatch(/\.sarif$/);
  });

  it('references only inputs and step ids it defines; every run step names its shell', () => {
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    for (const m of text.matchAll(/\binputs\.([\w-]+)/g)) expect(Object.keys(action.inputs), `inputs.${m[1]}`).toContain(m[1]);
    const ids = steps.map((s) => s.id).filter(Boolean);
    for (const m of text.matchAll(/\bsteps\.([\w-]+)\.outputs\.([\w-]+)/g)) {
      expect(ids, `steps.${m[1]}`).toContain(m[1]);
      expect(m[2]).toBe('exit-code');
    }
    for (const s of steps) {
      if (s.run) expect(s.shell, `shell of "${s.name}"`).toBe('bash');
      else expect(s.uses, `step "${s.name}" runs or uses something`).toBeTruthy();
    }
  });

  it('sets up Node and uploads the SARIF file with github/codeql-action/upload-sarif', () => {
    const setup = steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    expect(setup?.with?.['node-version']).toBe('${{ inputs.node-version }}');
    expect(Number(action.inputs['node-version']!.default)).toBeGreaterThanOrEqual(20);
    const upload = steps.find((s) => s.uses?.startsWith('github/codeql-action/upload-sarif@'));
    expect(upload, 'an upload-sarif step').toBeDefined();
    expect(upload!.with?.sarif_file).toBe('${{ inputs.sarif-file }}');
    // The upload comes after the check and before the step that hands on the exit code.
    const at = (s: ActionStep | undefined) => steps.indexOf(s!);
    expect(at(upload)).toBeGreaterThan(at(checkStep));
    expect(at(steps.find((s) => s.env?.CTXLENS_EXIT))).toBeGreaterThan(at(upload));
  });

  it('runs a CLI command with flags that `ctxlens --help` lists', () => {
    const help = helpCommands();
    expect([...help.keys()]).toContain('check');
    const call = checkStep.run!.split('\n').find((l) => /\bcheck\b/.test(l) && l.includes('--format'))!;
    expect(call, 'the line that runs ctxlens check').toBeDefined();
    const sub = /"\$\{cli\[@\]\}" ([a-z]+)/.exec(call)?.[1];
    expect(sub).toBe('check');
    const flags = [...call.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
    expect(flags).toContain('--format');
    for (const f of flags) expect([...help.get('check')!.flags], `ctxlens check ${f}`).toContain(f);
    expect([...help.get('check')!.formats]).toContain(/--format ([a-z]+)/.exec(call)![1]);
    // The build step builds what the check step runs: `node <action>/dist/cli.js`, the package's bin.
    expect(checkStep.run).toContain('dist/cli.js');
    expect(manifest.bin.ctxlens).toBe('dist/cli.js');
    const build = steps.find((s) => s.run?.includes('esbuild.js'))!;
    expect(build.run).toMatch(/npm ci\b/);
    expect(existsSync(join(ROOT, 'esbuild.js')) && existsSync(join(ROOT, 'package-lock.json'))).toBe(true);
  });

  it('the check step writes a SARIF report of examples/ and keeps exit code 1 as an output', () => {
    const sarifFile = join(tmp, 'reports', 'ctxlens.sarif');
    // The default: the CLI built from the action's own source (here, this checkout's dist/).
    const r = runStep(checkStep, { ...defaults(), paths: 'examples', 'sarif-file': sarifFile }, tmp);
    expect(r.status, r.stderr).toBe(0);
    expect(r.outputs['exit-code']).toBe('1');
    const sarif = readSarif(sarifFile);
    expect(new Set(sarifFindings(sarif))).toEqual(new Set(plantedKeys()));
    expect(sarif.runs[0]!.results.filter((x) => x.level === 'error')).toHaveLength(plantedFindings().filter((f) => f.severity === 'error').length);
    // The step that comes after the upload hands the exit code on and fails the job.
    const last = steps.find((s) => s.env?.CTXLENS_EXIT)!;
    const env = { ...last.env, CTXLENS_EXIT: '${{ inputs.exit }}' };
    const fail = runStep({ ...last, env }, { ...defaults(), exit: r.outputs['exit-code']! }, tmp);
    expect(fail.status).toBe(1);
    expect(fail.stdout).toContain('::error::');
  });

  it('passes paths and args through: a custom cli, --max-warnings, and a usage error stops with 2', () => {
    const sarifFile = join(tmp, 'sdk-qa.sarif');
    const inputs = { ...defaults(), cli: `node ${CLI}`, paths: 'examples/sdk-qa examples/zero-config', 'sarif-file': sarifFile };
    const clean = runStep(checkStep, inputs, tmp);
    expect(clean.status, clean.stderr).toBe(0);
    // These have warnings and infos only (an injection phrase, zero-config templates); the refund case
    // has its intended commitment-dropped error.
    expect(clean.outputs['exit-code']).toBe('0');
    const uris = new Set(sarifFindings(readSarif(sarifFile)).map((k) => k.split(':')[0]));
    expect([...uris].every((u) => u!.startsWith('examples/sdk-qa/') || u!.startsWith('examples/zero-config/'))).toBe(true);
    expect(uris.size).toBeGreaterThan(0);
    const strict = runStep(checkStep, { ...inputs, args: '--max-warnings 0' }, tmp);
    expect(strict.status, strict.stderr).toBe(0);
    expect(strict.outputs['exit-code']).toBe('1');
    const usage = runStep(checkStep, { ...inputs, args: '--no-such-flag' }, tmp);
    expect(usage.outputs['exit-code']).toBe('2');
    expect(usage.status).toBe(2);
    expect(usage.stdout).toContain('::error::');
  });
});

describe('.pre-commit-hooks.yaml', () => {
  const hook = hooks.find((h) => h.id === 'ctxlens')!;

  /** Files of examples/ as pre-commit passes them: repository-relative paths that `files` matches (re.search). */
  function matched(): string[] {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(relative(ROOT, p));
      }
    };
    walk(join(ROOT, 'examples'));
    const re = new RegExp(hook.files);
    return files.filter((f) => re.test(f)).sort();
  }

  it('declares a node hook whose entry is the package bin and a ctxlens subcommand', () => {
    expect(Array.isArray(hooks)).toBe(true);
    expect(hook, 'a hook with id ctxlens').toBeDefined();
    expect(hook.language).toBe('node');
    expect(hook.name).toBeTruthy();
    const [bin, sub, ...rest] = hook.entry.split(/\s+/);
    expect(Object.keys(manifest.bin)).toContain(bin);
    expect([...helpCommands().keys()]).toContain(sub);
    for (const f of [...rest, ...(hook.args ?? [])].filter((a) => a.startsWith('--'))) expect([...helpCommands().get(sub!)!.flags]).toContain(f);
    expect(hook.pass_filenames ?? true).toBe(true);
  });

  it('matches templates, configs and fixtures, and nothing else of examples/', () => {
    const re = new RegExp(hook.files);
    for (const f of ['a.prompt', 'dir/b.prompty', 'c.context.yaml', 'd.context.yml', 'fixtures/e.fixture.yaml', 'f.fixture.json']) expect(re.test(f), f).toBe(true);
    for (const f of ['a.prompt.md', 'README.md', 'policy.md', 'tools.json', 'config.yaml', 'a.promptx']) expect(re.test(f), f).toBe(false);
    const files = matched();
    expect(files).toContain('examples/sdk-qa/sdk-qa.prompt');
    expect(files).toContain('examples/refund-support/refund.prompty');
    expect(files).toContain('examples/defects/overflow.context.yaml');
    expect(files).toContain('examples/defects/fixtures/leaky.fixture.yaml');
    expect(files.some((f) => f.endsWith('.md') || f.endsWith('tools.json'))).toBe(false);
  });

  it('its entry on the staged files of examples/ exits 1 with every planted finding', () => {
    const [bin, ...entryArgs] = hook.entry.split(/\s+/);
    expect(manifest.bin[bin!]).toBe('dist/cli.js');
    const r = ctxlens([...entryArgs, ...(hook.args ?? []), ...matched()]);
    expect(r.code, r.stderr).toBe(1);
    for (const f of plantedFindings()) expect(r.stdout).toMatch(new RegExp(`^${f.file.replace(/[.]/g, '\\.')}:${f.line}:\\d+ ${f.severity} ${f.rule} `, 'm'));
  });

  it('its entry with --format sarif on examples/ exits 1 and prints the planted findings as SARIF', () => {
    const [, ...entryArgs] = hook.entry.split(/\s+/);
    const r = ctxlens([...entryArgs, 'examples', '--format', 'sarif']);
    expect(r.code, r.stderr).toBe(1);
    const path = join(tmp, 'hook.sarif');
    writeFileSync(path, r.stdout);
    const sarif = readSarif(path);
    expect(new Set(sarifFindings(sarif))).toEqual(new Set(plantedKeys()));
    const ruleIds = new Set(sarif.runs[0]!.tool.driver.rules.map((x) => x.id));
    for (const f of plantedFindings()) expect(ruleIds.has(f.rule), f.rule).toBe(true);
  });
});
