/**
 * Templates with only their own sample data and no context config (examples/zero-config/), through
 * the built CLI: `ctxlens assemble --format json` prints the messages the format's runtime would send
 * for the sample — checked against the Prompty engine as it renders the file's runtime line (itself
 * checked against the real runtimes' golden renderings, test/oracle/prompty-golden) and against npm
 * `dotprompt` — and `ctxlens init` writes a config
 * that `ctxlens check` accepts apart from `trust-missing`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Dotprompt } from 'dotprompt';
import { promptyRuntimeInputs, renderPrompty } from '../../src/core/language/prompty/engine';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const DIR = join(ROOT, 'examples/zero-config');

function ctxlens(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

/** The file rendered as its Prompty runtime line renders it, with the sample as that runtime loads it. */
function runtimePrompty(file: string) {
  const source = readFileSync(file, 'utf8');
  const readFile = (rel: string) => (existsSync(join(DIR, rel)) ? readFileSync(join(DIR, rel), 'utf8') : undefined);
  const r = renderPrompty(source, promptyRuntimeInputs(source, undefined, readFile), { readFile });
  return { ok: r.issues.every((i) => i.rule !== 'template-invalid'), messages: r.messages.map((m) => ({ role: m.role, content: m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') })) };
}

describe('zero-config: ctxlens assemble sends what the runtime sends for the sample', () => {
  for (const name of ['outdoor-gear.prompty', 'support-chat.prompty', 'ticket-triage.prompty']) {
    it(`${name} equals Prompty's runtime on its sample`, () => {
      const file = join(DIR, name);
      const r = ctxlens(['assemble', `examples/zero-config/${name}`, '--format', 'json']);
      expect(r.code).toBe(0);
      const ours = JSON.parse(r.stdout) as { messages: Array<{ role: string; content: string }>; trace: { fixture?: { path: string }; config?: unknown } };
      const oracle = runtimePrompty(file);
      expect(oracle.ok).toBe(true);
      // Prompty's roles are system/user/assistant here; contents are compared character for character.
      expect(ours.messages).toEqual(oracle.messages.map((m) => ({ role: m.role, content: m.content })));
      expect(ours.trace.config).toBeUndefined();
    });
  }

  it('trip-planner.prompt equals npm dotprompt with its input.default and partial', async () => {
    const source = readFileSync(join(DIR, 'trip-planner.prompt'), 'utf8');
    const fm = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(source)![1]) as { input: { default: Record<string, unknown> } };
    const dp = new Dotprompt({ partials: { tone: readFileSync(join(DIR, '_tone.prompt'), 'utf8') } });
    const rendered = await dp.render(source, { input: {} }, { input: { default: fm.input.default } });
    const r = ctxlens(['assemble', 'examples/zero-config/trip-planner.prompt', '--format', 'json']);
    expect(r.code).toBe(0);
    const ours = JSON.parse(r.stdout).messages as Array<{ role: string; content: string }>;
    const role = (x: string) => (x === 'model' ? 'assistant' : x);
    expect(ours).toEqual(rendered.messages.map((m) => ({ role: role(m.role), content: m.content.map((p) => ('text' in p ? p.text : '')).join('') })));
    expect(ours.map((m) => m.content).join('')).toContain('Maya and Tom');
  });

  it('names the sample as the fixture, and an explicitly named fixture file is used as given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-zero-'));
    cpSync(DIR, dir, { recursive: true });
    writeFileSync(join(dir, 'other.fixture.yaml'), 'slots:\n  firstName: Ravi\n  question: Is the X4 waterproof?\n');
    const j = JSON.parse(ctxlens(['assemble', 'outdoor-gear.prompty', '--fixture', 'other.fixture.yaml', '--format', 'json'], dir).stdout);
    const text = j.messages.map((m: { content: string }) => m.content).join('\n');
    expect(text).toContain('You are helping Ravi');
    expect(text).toContain('Is the X4 waterproof?');
    // Prompty hoists the sample under the given inputs: the context the fixture leaves out comes from it.
    expect(text).toContain('TrailMaster X4');
    expect(j.trace.fixture.path.endsWith('other.fixture.yaml')).toBe(true);
  });
});

describe('zero-config: ctxlens init', () => {
  it('writes a config for every template that check accepts apart from trust-missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-init-'));
    cpSync(DIR, dir, { recursive: true });
    const templates = readdirSync(dir).filter((f) => /\.(prompt|prompty)$/.test(f) && !f.startsWith('_'));
    expect(templates.length).toBe(4);
    for (const t of templates) {
      const r = ctxlens(['init', t], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(dir, t.replace(/\.(prompt|prompty)$/, '.context.yaml')))).toBe(true);
    }
    expect(ctxlens(['init', templates[0]], dir).code).toBe(2); // it has a config now
    const check = ctxlens(['check', '.', '--format', 'json'], dir);
    const all = JSON.parse(check.stdout).files.flatMap((f: { path: string; diagnostics: Array<{ rule: string; severity: string }> }) => f.diagnostics.map((d) => ({ at: `${f.path} ${d.rule}`, severity: d.severity })));
    const found = all.filter((d: { severity: string }) => d.severity !== 'info').map((d: { at: string }) => d.at);
    expect(found.length).toBeGreaterThan(0);
    for (const f of found) expect(f).toMatch(/\.context\.yaml trust-missing$/);
    // Infos that remain speak of the model (an estimated tokenizer), never of the config's shape.
    for (const d of all) expect(d.at).not.toMatch(/config-invalid|config-missing|slot-/);
    // Budgets come from the sample's counts plus headroom: the request fits.
    for (const t of templates) expect(ctxlens(['budget', t], dir).code).toBe(0);
  });
});
