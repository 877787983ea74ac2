/**
 * Findings of one file are bounded: `ctxlens check` (the built CLI as a subprocess) on a template
 * with 75,000 separate runs of hidden characters lists the first runs one by one and the rest as one
 * located summary finding, instead of one finding per run (tens of megabytes of JSON).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt } from '../service/harness';
import { MAX_HIDDEN_FINDINGS } from '../../src/core/text/scan';

let tmp: string;
beforeAll(() => {
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-cap-'));
  let body = '';
  for (let i = 0; i < 75_000; i++) body += 'a\u200b';
  writeFileSync(path.join(tmp, 'hidden.prompt'), `---\nmodel: gpt-4o\n---\n${body}\n{{question}}\n`);
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('findings per file', () => {
  it('lists the first runs of hidden characters and summarises the rest in one finding', () => {
    const r = spawnSync(process.execPath, [CLI, 'check', tmp, '--format', 'json'], { cwd: REPO, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    expect(r.stdout.length).toBeLessThan(1024 * 1024);
    const json = JSON.parse(r.stdout) as { files: Array<{ diagnostics: Array<{ rule: string; message: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } }> }> };
    const hidden = json.files.flatMap((f) => f.diagnostics).filter((d) => d.rule === 'hidden-characters');
    expect(hidden).toHaveLength(MAX_HIDDEN_FINDINGS + 1);
    const summary = hidden[hidden.length - 1];
    expect(summary.message).toMatch(/^74900 more runs of hidden characters/);
    // Located: from the first run it does not list to the last hidden character of the line.
    expect(summary.range.start).toEqual({ line: 3, character: 2 * MAX_HIDDEN_FINDINGS + 1 });
    expect(summary.range.end).toEqual({ line: 3, character: 150_000 });
  });
});
