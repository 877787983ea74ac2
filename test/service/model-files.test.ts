/**
 * The workspace's model file (`.context-lens/models.yaml`) applies to the library and to `ctxlens
 * serve` as it does to the CLI and the editor: a model only that file defines gets its window,
 * tokenizer and price, instead of `unknown-model` with an estimate. The service as a subprocess.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/lib';
import { ensureCliBuilt, startService } from './harness';

const MODELS = `models:
  acme-7b:
    provider: custom
    window: 32768
    max_output: 4096
    tokenizer: qwen3
    source: https://example.com/acme-7b
    as_of: 2026-11-30
    price: { input: 0.2, output: 0.4, as_of: 2026-11-30, source: contract }
`;

let ws: string;
let noUserFile: string;
beforeAll(() => {
  ensureCliBuilt();
  ws = mkdtempSync(join(tmpdir(), 'ctxlens-modelfile-'));
  noUserFile = mkdtempSync(join(tmpdir(), 'ctxlens-nouser-'));
  // The folder is its own repository root: the walk for a model file stops here.
  mkdirSync(join(ws, '.git'));
  mkdirSync(join(ws, '.context-lens'));
  writeFileSync(join(ws, '.context-lens', 'models.yaml'), MODELS);
  writeFileSync(join(ws, 't.prompt'), '---\nmodel: acme-7b\n---\nAnswer: {{question}}\n');
});
afterAll(() => {
  rmSync(ws, { recursive: true, force: true });
  rmSync(noUserFile, { recursive: true, force: true });
});

describe('the library', () => {
  it("reads the workspace's model file", () => {
    const before = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = noUserFile;
    try {
      const out = openWorkspace(ws).assemble('t.prompt', { slots: { question: 'hi' } });
      expect(out.trace.tokenizer).toBe('qwen3');
      expect(out.budget.window).toBe(32768);
      expect(out.trace.cost?.price).toMatchObject({ input: 0.2, output: 0.4, source: 'contract' });
      expect(out.findings.map((f) => f.rule)).not.toContain('unknown-model');
      // Without the model files (a folder without any installs none), the same model is unknown.
      openWorkspace(noUserFile);
      const off = openWorkspace(ws, { modelFiles: false }).assemble('t.prompt', { slots: { question: 'hi' } });
      expect(off.budget.window).not.toBe(32768);
    } finally {
      if (before === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = before;
      // Leave the registry as the other tests expect it.
      openWorkspace(noUserFile);
    }
  });
});

describe('ctxlens serve', () => {
  it("reads the root's model file in its worker", async () => {
    const svc = await startService(['--root', ws], { env: { XDG_CONFIG_HOME: noUserFile } });
    try {
      const r = await fetch(`${svc.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ template: 't.prompt', slots: { question: 'hi' } }) });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { input_budget: number; trace: { tokenizer: string; cost?: { price: { input: number } } } };
      expect(body.trace.tokenizer).toBe('qwen3');
      expect(body.trace.cost?.price.input).toBe(0.2);
    } finally {
      await svc.stop();
    }
  });
});
