/**
 * `ctxlens serve` answers in worker threads: the serving thread keeps answering `/healthz` while
 * an assembly runs, sheds requests beyond its queue (503 `overloaded` with `retry-after`), stops a
 * request that runs past the work limit (503 `work_limit`) and replaces that worker, and keeps the
 * `context_id` evidence of every worker's answers. The built CLI as a subprocess, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startService } from './harness';
import type { RunningService } from './harness';

const BASE = { template: 'sdk-qa/sdk-qa.prompt', query: 'Does 4.2 retry?', tenant: 'acme', slots: { policy: 'Answer from the evidence.' } };
/** A request whose assembly takes a long while (130,000 candidates of one slot). */
const HEAVY = JSON.stringify({ ...BASE, slots: { ...BASE.slots, evidence: Array.from({ length: 130_000 }, (_, i) => ({ id: `e${i}`, text: `passage ${i} about retries`, tenant: 'acme' })) } });
const NORMAL = JSON.stringify({ ...BASE, slots: { ...BASE.slots, evidence: [{ id: 'ev1', text: 'Version 4.2 retries 429 responses.', tenant: 'acme' }] } });

const post = (url: string, body: string) => fetch(`${url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const metric = async (url: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${url}/metrics`)).text())?.[1]);

beforeAll(() => ensureCliBuilt());

describe('one worker, the default', () => {
  let svc: RunningService;
  beforeAll(async () => {
    // A work limit that a loaded machine cannot reach with the heavy request (it takes seconds).
    svc = await startService(['--root', 'examples', '--max-body', '16mb', '--work-limit', '180s']);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers /healthz while an assembly is running', async () => {
    const order: string[] = [];
    const heavy = post(svc.url, HEAVY).then(async (r) => {
      await r.arrayBuffer();
      order.push(`heavy ${r.status}`);
    });
    // Once the worker holds the heavy request, ask for the health.
    for (let i = 0; i < 200 && (await metric(svc.url, 'ctxlens_workers_busy')) !== 1; i++) await new Promise((r) => setTimeout(r, 5));
    const health = await fetch(`${svc.url}/healthz`);
    order.push(`healthz ${health.status}`);
    await heavy;
    expect(order).toEqual(['healthz 200', 'heavy 200']);
  }, 240_000);

  it('keeps the context_id evidence of answers made in the worker', async () => {
    const r = await post(svc.url, NORMAL);
    expect(r.status).toBe(200);
    const { context_id } = (await r.json()) as { context_id: string };
    const v = await fetch(`${svc.url}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context_id, citations: [{ claim_id: 'c1', evidence_ids: ['ev1', 'ev9'] }] }) });
    expect(v.status).toBe(200);
    expect(((await v.json()) as { unknown_ids: string[] }).unknown_ids).toEqual(['ev9']);
    expect(await metric(svc.url, 'ctxlens_workers')).toBe(1);
  });
});

describe('a full queue and the work limit', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService(['--root', 'examples', '--max-body', '16mb', '--max-queue', '1', '--work-limit', '1s', '--response-cache', '0']);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('sheds requests beyond the queue with 503 and retry-after, stops the one past the work limit, and goes on', async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const r = await post(svc.url, HEAVY);
        const json = (await r.json()) as { error?: { code: string } };
        return { status: r.status, code: json.error?.code, retry: r.headers.get('retry-after') };
      }),
    );
    const codes = answers.map((a) => a.code).sort();
    // One runs (and is stopped at the limit), one waits (and is stopped in its turn), the rest are shed.
    expect(codes.filter((c) => c === 'overloaded').length).toBeGreaterThanOrEqual(2);
    expect(codes).toContain('work_limit');
    for (const a of answers) expect(a.status).toBe(503);
    for (const a of answers.filter((x) => x.code === 'overloaded')) expect(a.retry).toBe('1');
    expect(await metric(svc.url, 'ctxlens_workers_replaced_total')).toBeGreaterThanOrEqual(1);
    // The replacement worker answers the next request.
    const next = await post(svc.url, NORMAL);
    expect(next.status).toBe(200);
    expect(await metric(svc.url, 'ctxlens_workers')).toBe(1);
    const errors = await (await fetch(`${svc.url}/metrics`)).text();
    expect(errors).toMatch(/^ctxlens_http_errors_total\{kind="overloaded"\} [1-9]/m);
  });
});
