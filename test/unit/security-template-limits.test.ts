/**
 * Templates built to exhaust the parsers end with a located finding instead of a hang: 10,000-deep
 * `{{#each}}` nesting, 10,000 unclosed blocks, 10,000 nested role blocks, 10,000 nested
 * sub-expressions and 150,000 tags (through the CLI as a subprocess and the language server over
 * LSP), and a front matter of 35,000 keys (CLI). The spawn timeout only turns a hang into a failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LspClient, REPO, copyWorkspace, ensureBuilt, removeWorkspace } from '../lsp/harness';
import { CLI, ensureCliBuilt } from '../service/harness';
import { MAX_BLOCK_DEPTH, MAX_SUBEXPRESSION_DEPTH, MAX_TAGS } from '../../src/core/text/nesting';

const FM = '---\nmodel: gpt-4o\n---\n';
const N = 10_000;
const CASES: Array<[string, string, RegExp, number]> = [
  ['each', `${FM}${'{{#each xs}}'.repeat(N)}x${'{{/each}}'.repeat(N)}\n`, new RegExp(`nested more than ${MAX_BLOCK_DEPTH} deep`), FM.length + 12 * MAX_BLOCK_DEPTH],
  ['unclosed', `${FM}${'{{#if a}}'.repeat(N)}\n`, /nested more than/, FM.length + 9 * MAX_BLOCK_DEPTH],
  ['roles', `${FM}${'{{#role "user"}}'.repeat(N)}\n`, /nested more than/, FM.length + 16 * MAX_BLOCK_DEPTH],
  ['sub', `${FM}{{x ${'(y '.repeat(N)}z${')'.repeat(N)}}}\n`, new RegExp(`Sub-expressions are nested more than ${MAX_SUBEXPRESSION_DEPTH}`), FM.length],
  ['tags', `${FM}${'{{a}}'.repeat(150_000)}\n`, new RegExp(`more than ${MAX_TAGS.toLocaleString('en-US')} tags`), FM.length + 5 * MAX_TAGS],
];

let tmp: string;
beforeAll(() => {
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-limits-'));
  for (const [name, text] of CASES) writeFileSync(path.join(tmp, `${name}.prompt`), text);
  let keys = '';
  for (let i = 0; i < 35_000; i++) keys += `k${i}: v\n`;
  writeFileSync(path.join(tmp, 'keys.prompt'), `---\nmodel: gpt-4o\n${keys}---\n{{question}}\n`);
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Diagnostic {
  rule: string;
  message: string;
  range: { start: { line: number; character: number } };
}

const check = (file: string) => {
  const r = spawnSync(process.execPath, [CLI, 'check', path.join(tmp, file), '--format', 'json'], { cwd: REPO, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  expect(r.error, 'the check ends').toBeUndefined();
  return { status: r.status, diagnostics: (JSON.parse(r.stdout) as { files: Array<{ diagnostics: Diagnostic[] }> }).files.flatMap((f) => f.diagnostics) };
};

describe('the CLI', () => {
  for (const [name, , message, offset] of CASES) {
    it(`reports ${name} at the tag where the limit is crossed`, () => {
      const r = check(`${name}.prompt`);
      expect(r.status).toBe(1);
      const hit = r.diagnostics.find((d) => d.rule === 'template-invalid' && message.test(d.message));
      expect(hit, JSON.stringify(r.diagnostics.map((d) => d.message))).toBeDefined();
      expect(hit!.range.start).toEqual({ line: 3, character: offset - FM.length });
    });
  }

  it('reports a front matter of 35,000 keys as over the YAML entry limit, at its place', () => {
    const r = check('keys.prompt');
    const hit = r.diagnostics.find((d) => d.rule === 'template-invalid' && /more than [\d,]+ entries/.test(d.message));
    expect(hit, JSON.stringify(r.diagnostics.map((d) => d.message))).toBeDefined();
    expect(hit!.range.start.line).toBeGreaterThan(0);
  });
});

describe('the language server', () => {
  let ws: string;
  let client: LspClient;
  beforeAll(async () => {
    ensureBuilt();
    ws = copyWorkspace();
    for (const [name, text] of CASES) writeFileSync(path.join(ws, `deep-${name}.prompt`), text);
    client = await LspClient.start({ workspace: ws });
  });
  afterAll(async () => {
    await client?.stop();
    if (ws) removeWorkspace(ws);
  });

  it('publishes the limit finding for each exhausting template', async () => {
    for (const [name, , message] of CASES) {
      const uri = await client.open(path.join(ws, `deep-${name}.prompt`));
      const pub = await client.session.nextDiagnostics(uri, 0);
      expect(pub.diagnostics.some((d) => d.code === 'template-invalid' && message.test(typeof d.message === 'string' ? d.message : d.message.value)), `${name}: ${JSON.stringify(pub.diagnostics.map((d) => d.message))}`).toBe(true);
    }
  });
});
