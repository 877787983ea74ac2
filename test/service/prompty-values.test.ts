/**
 * `ctxlens serve` hands a `.prompty` template the request's values as its runtime would read the
 * JSON: `1.0`, `-0.0` and `1e20` are Python floats (printed `1.0`, `-0.0`, `1e+20`), which a
 * JavaScript number cannot keep, so the service's request is the one the library gives with
 * `slotsJson` and the runtime renders. A slot the service reshapes (a one-item list, the query)
 * is passed as it reshaped it. The service as a subprocess, through HTTP.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/lib';
import { ensureCliBuilt, startService } from './harness';
import type { RunningService } from './harness';

let ws: string;
let svc: RunningService;
const TEMPLATE = '---\nname: floats\nmodel:\n  api: chat\n---\nsystem:\nPrice {{ price }}; scores {{ scores }}; big {{ big }}\nuser:\n{{ question }}\n';
const BODY = '{"template":"f.prompty","query":"Which one?","slots":{"price":1.0,"scores":[2.5,-0.0,1e20],"big":12345678901234567890}}';

beforeAll(async () => {
  ensureCliBuilt();
  ws = mkdtempSync(join(tmpdir(), 'ctxlens-prompty-values-'));
  mkdirSync(join(ws, '.git'));
  writeFileSync(join(ws, 'f.prompty'), TEMPLATE);
  svc = await startService(['--root', ws]);
});
afterAll(async () => {
  await svc?.stop();
  rmSync(ws, { recursive: true, force: true });
});

describe('ctxlens serve: .prompty values as the runtime reads the JSON', () => {
  it('prints floats and big integers as Python does, as the library does with slotsJson', async () => {
    const r = await fetch(`${svc.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { rendered_messages: Array<{ role: string; content: string }> };
    expect(body.rendered_messages[0].content).toBe('Price 1.0; scores [2.5, -0.0, 1e+20]; big 12345678901234567890');
    const lib = openWorkspace(ws, { modelFiles: false }).assemble('f.prompty', { slotsJson: JSON.stringify({ question: 'Which one?' }).replace(/}$/, ',"price":1.0,"scores":[2.5,-0.0,1e20],"big":12345678901234567890}') });
    expect(body.rendered_messages.map((m) => m.content)).toEqual(lib.messages.map((m) => m.content));
  });
});
