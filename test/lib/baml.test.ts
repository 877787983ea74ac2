/**
 * The library with a BAML function: `assemble('baml_src/x.baml#F', { slots })` renders through
 * BAML's runtime (the request it built is on the trace, byte for byte `buildRequestSync`'s for the
 * same values), and the service accepts the same address under its root.
 */
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/lib';
import { checkTemplateName } from '../../src/service/templates';

const RAG = path.resolve(__dirname, '../oracle/baml/rag');

describe('the library and the service with BAML functions', () => {
  it('assembles a function with live values; the request is the runtime\'s', () => {
    const ws = openWorkspace(RAG);
    const slots = { passages: ['alpha', 'beta'], limit: 7 };
    const r = ws.assemble('baml_src/answer.baml#Summarize', { slots });
    expect(r.messages.map((m) => m.parts.filter((p) => p.slot === 'passages').map((p) => p.text))).toEqual([['alpha', 'beta']]);
    const baml = createRequire(__filename)('@boundaryml/baml');
    const files: Record<string, string> = {};
    for (const f of readdirSync(path.join(RAG, 'baml_src'))) files[`baml_src/${f}`] = readFileSync(path.join(RAG, 'baml_src', f), 'utf8');
    const rt = baml.BamlRuntime.fromFiles('baml_src', files, {});
    const body = rt.buildRequestSync('Summarize', slots, rt.createContextManager(), null, null, false, {}).body.text();
    expect(r.trace.provider_request?.body).toBe(body);
    expect(() => ws.assemble('baml_src/nothing.baml#F', { slots })).toThrow(/does not exist/);
  });

  it('the service takes the function\'s address under its root', () => {
    const real = realpathSync(RAG);
    const ok = checkTemplateName(RAG, real, 'baml_src/answer.baml#Summarize');
    expect(ok).toMatchObject({ ok: true, relative: 'baml_src/answer.baml#Summarize' });
    expect(checkTemplateName(RAG, real, 'baml_src/missing.baml#F')).toMatchObject({ ok: false, status: 404 });
  });
});
