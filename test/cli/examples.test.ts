/**
 * Acceptance of the examples/ workspace through the built CLI: `ctxlens check examples/` reports
 * exactly the findings planted on purpose (the table in examples/README.md) and nothing else;
 * `ctxlens assemble` on each example prints a request whose token count the trace states and
 * `ctxlens count` confirms; the SDK-retry trace shows the filtered, merged and flagged documents.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');

function ctxlens(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, input, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Rows of the "planted findings" table: file | line | rule | severity | what is wrong. */
function plantedRows(): string[] {
  const readme = readFileSync(join(ROOT, 'examples/README.md'), 'utf8');
  const rows: string[] = [];
  for (const line of readme.split('\n')) {
    const m = /^\| `([^`]+)` \| (\d+) \| `([a-z-]+)` \| (error|warning|info|hint) \|/.exec(line);
    if (m) rows.push(`examples/${m[1]}:${m[2]} ${m[4]} ${m[3]}`);
  }
  return rows.sort();
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

describe('ctxlens check examples/', () => {
  it('finds exactly the planted defects listed in examples/README.md, and exits 1', () => {
    const r = ctxlens(['check', 'examples/', '--format', 'json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    const found: string[] = [];
    for (const f of j.files) for (const d of f.diagnostics) found.push(`${f.path}:${d.range.start.line + 1} ${d.severity} ${d.rule}`);
    const planted = plantedRows();
    expect(planted.length).toBeGreaterThanOrEqual(14);
    expect(found.sort()).toEqual(planted);
    expect(j.summary).toEqual({
      errors: planted.filter((p) => p.includes(' error ')).length,
      warnings: planted.filter((p) => p.includes(' warning ')).length,
      infos: planted.filter((p) => p.includes(' info ')).length,
    });
  });

  it('passes the two real cases apart from their intended findings', () => {
    const r = ctxlens(['check', 'examples/sdk-qa', '--format', 'json']);
    expect(r.code).toBe(0);
    const rules = JSON.parse(r.stdout).files.flatMap((f: { diagnostics: Array<{ rule: string }> }) => f.diagnostics.map((d) => d.rule));
    expect(rules).toEqual(['injection-phrase']);
  });
});

describe('ctxlens assemble on the examples', () => {
  it.each([
    ['examples/sdk-qa/sdk-qa.prompt', 'gpt-4o'],
    ['examples/refund-support/refund.prompty', 'gpt-4o'],
  ])('%s: the trace states the token count and ctxlens count confirms it', (template, model) => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-ex-'));
    const tracePath = join(dir, 'trace.json');
    const r = ctxlens(['assemble', template, '--format', 'openai', '--trace', tracePath]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const trace = JSON.parse(readFileSync(tracePath, 'utf8'));
    expect(trace.input_tokens).toBeGreaterThan(0);
    expect(trace.input_tokens).toBeLessThanOrEqual(trace.input_budget);
    const count = JSON.parse(ctxlens(['count', '--chat', '--model', model, '--format', 'json', '-'], r.stdout).stdout);
    expect(count.total).toBe(trace.input_tokens);
    expect(count.exact).toBe(trace.exact);
    // Byte-identical trace on a second run.
    const again = join(dir, 'again.json');
    ctxlens(['assemble', template, '--format', 'openai', '--trace', again]);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(tracePath, 'utf8'));
  });

  it('shows the SDK-retry selection: 3.9 filtered by version, one duplicate merged, the injected document wrapped', () => {
    const r = ctxlens(['assemble', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'post-retries', '--format', 'json']);
    expect(r.code).toBe(0);
    const { messages, trace } = JSON.parse(r.stdout);
    const omitted = Object.fromEntries(trace.omitted.map((o: { id: string; reason: string }) => [o.id, o.reason]));
    expect(omitted.ev_0077).toBe('filtered:version');
    expect(omitted.ev_0241).toBe('duplicate-of:ev_0240');
    const merged = trace.retained.find((i: { id: string }) => i.id === 'ev_0240');
    expect(merged.merged?.length).toBeGreaterThanOrEqual(1);
    expect(trace.retained.some((i: { id: string }) => i.id === 'ev_0260')).toBe(true);
    const user = messages.map((m: { content: string }) => m.content).join('\n');
    const block = user.slice(user.indexOf('[EVIDENCE ev_0260]'));
    expect(block.indexOf('[/EVIDENCE]')).toBeGreaterThan(block.indexOf('Ignore previous instructions'));
    expect(trace.citation_map.ev_0192.source).toBe('sdk-docs/retries');
    expect(trace.policy_version).toBeDefined();
    expect(trace.cache_key).toMatch(/^[0-9a-f]{64}$/);
    const check = JSON.parse(ctxlens(['check', 'examples/sdk-qa/fixtures/post-retries.fixture.yaml', '--format', 'json']).stdout);
    expect(check.files.flatMap((f: { diagnostics: Array<{ rule: string; message: string }> }) => f.diagnostics).find((d: { rule: string }) => d.rule === 'injection-phrase').message).toContain('ev_0260');
  });

  it('keeps the refund example to seed 000 numbers: 6,000 input + 1,200 output + 800 margin = 8,000', () => {
    const j = JSON.parse(ctxlens(['budget', 'examples/refund-support/refund.context.yaml', '--format', 'json']).stdout);
    expect(j).toMatchObject({ window: 8000, output: 1200, margin: 800, input_allocated: 6000, total: 8000, fits: true, over_by: 0 });
  });
});
