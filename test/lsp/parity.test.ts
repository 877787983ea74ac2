/**
 * The editor and CI say the same thing: on the examples/ workspace, the language server's
 * diagnostics and code lens numbers agree with `ctxlens check` and `ctxlens assemble` (the built
 * CLI, run as a subprocess) on the same files.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeLensRequest } from 'vscode-languageserver-protocol/node';
import type { Diagnostic } from 'vscode-languageserver-protocol/node';
import { ruleInfo } from '../../src/core/rules/registry';
import type { Trace } from '../../src/core/types';
import { LspClient, REPO, ensureBuilt, uriOf } from './harness';

const EXAMPLES = path.join(REPO, 'examples');
const CLI = path.join(REPO, 'dist', 'cli.js');

interface CliDiagnostic {
  rule: string;
  severity: string;
  message: string;
  range: Diagnostic['range'];
}

function cli(args: string[]): { status: number | null; stdout: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout };
}

function templatesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) out.push(...templatesUnder(p));
    // `_name.prompt` files are dotprompt partials, rendered inside the templates that include them.
    else if (/\.(prompt|prompty)$/.test(e) && !e.startsWith('_')) out.push(p);
  }
  return out.sort();
}

const key = (d: { rule?: unknown; code?: unknown; range: Diagnostic['range']; message: unknown }): string =>
  `${String(d.rule ?? d.code)}@${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character}|${typeof d.message === 'string' ? d.message : (d.message as { value: string }).value}`;

let client: LspClient;
const cliByFile = new Map<string, CliDiagnostic[]>();
const templates = existsSync(EXAMPLES) ? templatesUnder(EXAMPLES) : [];

beforeAll(async () => {
  ensureBuilt();
  const r = cli(['check', 'examples', '--format', 'json']);
  expect([0, 1]).toContain(r.status);
  const json = JSON.parse(r.stdout) as { files: Array<{ path: string; diagnostics: CliDiagnostic[] }> };
  for (const f of json.files) cliByFile.set(path.resolve(REPO, f.path), f.diagnostics);
  client = await LspClient.start({ workspace: EXAMPLES });
});

afterAll(async () => {
  await client?.stop();
});

describe('examples/: language server and CLI agree', () => {
  it('has templates to compare', () => {
    expect(templates.length).toBeGreaterThan(0);
  });

  for (const file of templates) {
    it(`${path.relative(EXAMPLES, file)}: same findings and the same request numbers`, async () => {
      const uri = await client.open(file);
      const pub = await client.session.nextDiagnostics(uri, 0);
      const lsp = new Set(pub.diagnostics.map(key));
      const fromCli = cliByFile.get(file) ?? [];
      // Everything the editor shows, CI reports; CI also checks the template with its other
      // fixtures, so the fixture-driven (assembly) findings may be more there.
      for (const k of lsp) expect([...fromCli.map(key)]).toContain(k);
      for (const d of fromCli) if (ruleInfo(d.rule)?.category !== 'assembly') expect(lsp).toContain(key(d));

      const asm = cli(['assemble', path.relative(REPO, file), '--format', 'json']);
      const lenses = (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
      const top = lenses.find((l) => /^(request|input|allocated input) /.test(l.command?.title ?? ''));
      if (asm.status !== 0) {
        expect(top?.command?.title ?? '').toMatch(/^request ✗/);
        return;
      }
      const trace = (JSON.parse(asm.stdout) as { trace: Trace }).trace;
      const n = (x: number): string => x.toLocaleString('en-US');
      const approx = trace.exact ? '' : '≈';
      // The input first, then the equation (against the input limit when the endpoint has separate limits).
      const limits = trace.input_budget !== trace.window - trace.reserved_output - trace.margin;
      if (limits) {
        expect(top?.command?.title).toContain(`input ${approx}${n(trace.input_tokens)} tok · + margin ${n(trace.margin)} = ${approx}${n(trace.input_tokens + trace.margin)} / `);
      } else {
        expect(top?.command?.title).toContain(`input ${approx}${n(trace.input_tokens)} tok · + output ${n(trace.reserved_output)} + margin ${n(trace.margin)} = ${approx}${n(trace.input_tokens + trace.reserved_output + trace.margin)} / ${n(trace.window)}`);
      }
      for (const s of trace.slots) {
        const lens = lenses.find((l) => l.command?.title.startsWith(`${s.name} · `));
        if (!lens || s.budget === undefined) continue;
        expect(lens.command?.title).toContain(`${s.name} · ${approx}${n(s.used)} / ${n(s.budget)} tok`);
      }
      await client.close(uri);
      expect(uriOf(file)).toBe(uri);
    });
  }
});
