/**
 * BAML functions through the built CLI (dist/cli.js): `assemble x.baml --function F --test T`
 * prints the request BAML's runtime builds (compared with `buildRequestSync` itself), `x.baml#F`
 * is the same address, `check` checks every function of a file, `budget` reads the client's model
 * from another file of the project, and a missing test or function is a usage error naming what
 * exists.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = resolve(__dirname, '../../dist/cli.js');
const RAG = resolve(__dirname, '../oracle/baml/rag');

function ctxlens(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-cli-baml-')));
  mkdirSync(join(dir, '.git'));
  cpSync(RAG, dir, { recursive: true });
  return dir;
}

function oracle(dir: string, fn: string, args: Record<string, unknown>): string {
  const baml = createRequire(__filename)('@boundaryml/baml');
  const files: Record<string, string> = {};
  for (const f of readdirSync(join(dir, 'baml_src'))) files[`baml_src/${f}`] = readFileSync(join(dir, 'baml_src', f), 'utf8');
  const rt = baml.BamlRuntime.fromFiles('baml_src', files, {});
  return rt.buildRequestSync(fn, args, rt.createContextManager(), null, null, false, {}).body.text();
}

describe('ctxlens with BAML files', () => {
  const dir = workspace();

  it('assemble --function --test prints the request BAML builds, byte for byte', () => {
    const r = ctxlens(['assemble', 'baml_src/answer.baml', '--function', 'Summarize', '--test', 'Short'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(oracle(dir, 'Summarize', { passages: ['one', 'two', 'three\n    lines'], limit: 12, strict: true }) + '\n');
    // The address form is the same template.
    const same = ctxlens(['assemble', 'baml_src/answer.baml#Summarize', '--test', 'Short'], dir);
    expect(same.stdout).toBe(r.stdout);
  });

  it('assemble --format text shows the output format as a part of its own', () => {
    const r = ctxlens(['assemble', 'baml_src/answer.baml', '--function', 'AnswerQuestion', '--test', 'RefundWindow', '--format', 'text'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--- slot ctx.output_format ---');
    expect(r.stdout).toContain('Answer in JSON using this schema:');
  });

  it("with a context config, the trace counts ctx.output_format's tokens as a part of its own", () => {
    const root = resolve(__dirname, '../../examples');
    const r = ctxlens(['assemble', 'baml-rag/baml_src/rag.baml', '--function', 'AnswerWithCitations', '--format', 'json'], root);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { trace: { input_tokens: number; slots: Array<{ name: string; used: number }> }; messages: Array<{ parts: Array<{ slot?: string; text: string }> }> };
    const format = j.trace.slots.find((s) => s.name === 'ctx.output_format');
    expect(format).toBeDefined();
    expect(format!.used).toBeGreaterThan(0);
    expect(format!.used).toBeLessThan(j.trace.input_tokens);
  });

  it('an unknown test or function is a usage error naming what exists', () => {
    const t = ctxlens(['assemble', 'baml_src/answer.baml', '--function', 'AnswerQuestion', '--test', 'Nope'], dir);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('known: RefundWindow, EmptyHistory');
    const f = ctxlens(['assemble', 'baml_src/answer.baml', '--function', 'Nope'], dir);
    expect(f.code).not.toBe(0);
    expect(f.stderr).toContain("no function 'Nope'");
  });

  it('check checks every function of a file; a broken project is one located error with the runtime\'s message', () => {
    const ok = ctxlens(['check', 'baml_src', '--format', 'json'], dir);
    expect(ok.code).toBe(0);
    const broken = workspace();
    const p = join(broken, 'baml_src/types.baml');
    writeFileSync(p, readFileSync(p, 'utf8').replace('class Doc {', 'class Doc {\n  oops'));
    const r = ctxlens(['check', 'baml_src', '--format', 'json'], broken);
    expect(r.code).toBe(1);
    const files = (JSON.parse(r.stdout) as { files: Array<{ path: string; diagnostics: Array<{ rule: string; message: string }> }> }).files;
    const findings = files.flatMap((f) => f.diagnostics.filter((d) => d.rule === 'template-invalid').map((d) => ({ ...d, path: f.path })));
    // One per function (each function's request needs the project), each the runtime's own words.
    expect(findings.length).toBeGreaterThan(0);
    for (const f of findings) expect(f.message).toContain('baml_src/types.baml:');
  });

  it('budget reads the model of a client defined in another file', () => {
    const r = ctxlens(['budget', 'baml_src/answer.baml', '--function', 'AnswerQuestion', '--format', 'json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).model).toBe('gpt-4o-mini');
  });
});
