/**
 * The linux-x64 .vsix (scripts/package.mjs --target linux-x64, `vsce --target`) carries BAML's
 * runtime as dist/baml/ beside the language server's bundle, stays within 35 MB, and the runtime it
 * carries builds a request from the unpacked package alone (no node_modules). The other platforms'
 * packages are built the same way where their binary package is installed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageExtension } from '../../scripts/package.mjs';

const REPO = resolve(__dirname, '../..');

describe('the linux-x64 .vsix', () => {
  it('carries BAML\'s runtime, within 35 MB, and the runtime builds a request from the package alone', () => {
    expect(existsSync(join(REPO, 'node_modules/@boundaryml/baml-linux-x64-gnu/baml.linux-x64-gnu.node'))).toBe(true);
    // A stage and output of its own: the end-to-end tier may package the same target meanwhile.
    const { path, bytes } = packageExtension({ target: 'linux-x64', tag: 'test-vsix-baml', log: () => {} });
    expect(bytes).toBeLessThanOrEqual(35 * 1024 * 1024);
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-vsix-'));
    execFileSync('python3', ['-m', 'zipfile', '-e', path, dir]);
    expect(existsSync(join(dir, 'extension/dist/server.js'))).toBe(true);
    expect(existsSync(join(dir, 'extension/node_modules'))).toBe(false);
    const baml = createRequire(join(dir, "extension/dist/server.js"))(join(dir, "extension/dist/baml"));
    const rt = baml.BamlRuntime.fromFiles('baml_src', { 'baml_src/a.baml': 'function F(q: string) -> string {\n  client "openai/gpt-4o"\n  prompt #"{{ q }}"#\n}\n' }, {});
    const body = rt.buildRequestSync('F', { q: 'hi' }, rt.createContextManager(), null, null, false, {}).body.text();
    expect(JSON.parse(body)).toEqual({ model: 'gpt-4o', messages: [{ role: 'system', content: [{ type: 'text', text: 'hi' }] }] });
  }, 600_000);
});
