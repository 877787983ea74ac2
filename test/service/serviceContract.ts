/**
 * The service contract (seed 002's context-assembly service) and its refusals, against an
 * in-process server on 127.0.0.1 with a free port (answering in its own thread or in workers): the response fields, stable context ids, the
 * mapping of query / version / tenant / product / max_input_tokens, byte parity with the library,
 * citation validation by trace and by context_id, and every error case with its status and path.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service/server';
import type { Service } from '../../src/service/server';
import { openWorkspace } from '../../src/lib';
import { relativeTrace } from '../../src/service/context';
import { ensureCliBuilt } from './harness';

/**
 * The contract suite against a service answering in its serving thread (`workers: 0`, as when it is
 * embedded) or in worker threads (as `ctxlens serve` runs it, with the built dist/serviceWorker.js).
 */
export function serviceContract(workers: number): void {

  const EXAMPLES = resolve(__dirname, '../../examples');
  let root: string;
  let outside: string;
  let service: Service;
  let base: string;

  beforeAll(async () => {
    // A copy of examples/ plus the hostile names the tests need (a link out of the root).
    root = mkdtempSync(join(tmpdir(), 'ctxlens-svc-'));
    outside = mkdtempSync(join(tmpdir(), 'ctxlens-outside-'));
    cpSync(EXAMPLES, root, { recursive: true });
    writeFileSync(join(outside, 'secret.prompt'), 'The secret is 42.\n');
    symlinkSync(join(outside, 'secret.prompt'), join(root, 'leak.prompt'));
    mkdirSync(join(root, 'linked'), { recursive: true });
    symlinkSync(join(root, 'sdk-qa', 'sdk-qa.prompt'), join(root, 'linked', 'inside.prompt'));
    if (workers > 0) ensureCliBuilt();
    service = createService({ root, port: 0, maxBody: 64 * 1024, cacheSize: 4, revalidateMs: 0, workers, workerFile: resolve(__dirname, '../../dist/serviceWorker.js') });
    base = (await service.listen()).url;
  });

  afterAll(async () => {
    await service?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  async function post(path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<{ status: number; json: Record<string, any>; headers: Headers }> {
    const res = await fetch(base + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : {}, headers: res.headers };
  }

  const EVIDENCE = [
    { evidence_id: 'ev_0192', source_id: 'sdk-docs/retries', tenant: 'acme', source_type: 'official_documentation', title: 'Retry behavior', version: '4.2', authority: 0.95, relevance: 0.94, published_at: '2026-06-10T00:00:00Z', text: 'Version 4.2 retries 429 responses up to three times with backoff.', source_span: [820, 1160], product: 'python-sdk' },
    { evidence_id: 'ev_0210', source_id: 'sdk-docs/rate-limits', tenant: 'acme', source_type: 'official_documentation', version: '4.2', authority: 0.9, relevance: 0.8, text: 'A 429 carries Retry-After; the SDK waits for it.', product: 'python-sdk' },
    { evidence_id: 'ev_0077', source_id: 'sdk-docs/3.9/retries', tenant: 'acme', version: '3.9', relevance: 0.7, text: 'SDK 3.9 never retries.', product: 'python-sdk' },
    { evidence_id: 'ev_0500', source_id: 'kb/other-tenant', tenant: 'globex', relevance: 0.9, text: 'Globex internal note.' },
    { evidence_id: 'ev_0600', source_id: 'js-docs/retries', tenant: 'acme', relevance: 0.9, text: 'The JS SDK retries too.', product: 'js-sdk' },
  ];

  const REQUEST = {
    template: 'sdk-qa/sdk-qa.prompt',
    query: 'Does SDK 4.2 retry rate-limit responses?',
    conversation_id: 'conv_72',
    user_id: 'user_18',
    tenant: 'acme',
    product: 'python-sdk',
    version: '4.2',
    max_input_tokens: 12000,
    permission_revision: 'perm-2026-08-01',
    slots: { policy: 'Answer from the evidence; cite ids.', evidence: EVIDENCE },
  };

  describe('POST /v1/context', () => {
    let first: Record<string, any>;
    beforeAll(async () => {
      const r = await post('/v1/context', REQUEST);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      first = r.json;
    });

    it('answers with the contract fields of seed 002', () => {
      expect(Object.keys(first)).toEqual(['context_id', 'template_version', 'token_count', 'input_budget', 'evidence', 'citation_map', 'selection_log', 'rendered_messages', 'findings', 'trace']);
      expect(first.context_id).toMatch(/^ctx_[0-9a-f]{32}$/);
      expect(first.template_version).toMatch(/^3\+[0-9a-f]{12}$/);
      expect(first.token_count).toBe(first.trace.input_tokens);
      expect(first.input_budget).toBe(first.trace.input_budget);
      expect(first.evidence).toEqual(['ev_0192', 'ev_0210']);
      expect(first.citation_map.ev_0192).toEqual({ source_id: 'sdk-docs/retries', spans: [[820, 1160]], sha256: first.trace.citation_map.ev_0192.sha256 });
      expect(first.citation_map.ev_0210.spans).toEqual([[0, EVIDENCE[1].text.length]]);
    });

    it('maps the request fields: query to the user slot, version and tenant to filters, product to a filter, the input cap', () => {
      const log = first.selection_log as Array<{ evidence_id: string; decision: string; reasons: string[]; score?: number; tokens: number }>;
      const by = Object.fromEntries(log.map((e) => [e.evidence_id, e]));
      expect(by.question_1).toMatchObject({ decision: 'selected', reasons: ['required'] });
      expect(first.rendered_messages.at(-1).content).toContain(REQUEST.query);
      expect(by.ev_0192).toMatchObject({ decision: 'selected' });
      expect(by.ev_0192.reasons).toEqual(expect.arrayContaining(['high_relevance', 'exact_version', 'official_source']));
      expect(by.ev_0077).toMatchObject({ decision: 'rejected', reasons: ['filtered:version'] });
      expect(by.ev_0500).toMatchObject({ decision: 'rejected', reasons: ['filtered:tenant'] });
      expect(by.ev_0600).toMatchObject({ decision: 'rejected', reasons: ['filtered:product'] });
      expect(by.ev_0600.tokens).toBeGreaterThan(0);
      expect(first.trace.input_budget).toBeLessThanOrEqual(12000);
      for (const e of log) expect(typeof e.tokens).toBe('number');
    });

    it('keeps paths relative to the root, so the server\'s layout never shows', () => {
      expect(first.trace.template.path).toBe('sdk-qa/sdk-qa.prompt');
      expect(first.trace.config.path).toBe('sdk-qa/sdk-qa.context.yaml');
      expect(first.trace.fixture.path).toBe('sdk-qa/sdk-qa.prompt#request');
      expect(JSON.stringify(first)).not.toContain(root);
    });

    it('gives the same bytes as the library for the same inputs', () => {
      // The service's values: the query in `question`, seed field names as the fixture's, the product filter applied.
      const evidence = EVIDENCE.filter((e) => e.product !== 'js-sdk').map(({ evidence_id, source_id, ...rest }) => ({ ...rest, id: evidence_id, source: source_id }));
      const same = openWorkspace(root).assemble('sdk-qa/sdk-qa.prompt', { slots: { policy: REQUEST.slots.policy, evidence, question: REQUEST.query }, name: 'request', files: false, filters: { tenant: 'acme', version: '4.2' }, maxInputTokens: 12000 });
      expect(JSON.stringify(first.rendered_messages)).toBe(JSON.stringify(same.messages));
      expect(JSON.stringify(first.trace)).toBe(JSON.stringify(relativeTrace(same.trace, root)));
    });

    it('gives a stable context id for identical inputs, a new one when a correctness input changes', async () => {
      const again = await post('/v1/context', REQUEST);
      expect(again.json.context_id).toBe(first.context_id);
      expect(JSON.stringify(again.json)).toBe(JSON.stringify(first));
      const changes: Array<Record<string, unknown>> = [
        { permission_revision: 'perm-2026-08-02' },
        { user_id: 'user_19' },
        { tenant: 'globex' },
        { version: '3.9' },
        { max_input_tokens: 3000 },
        { query: 'Does SDK 4.2 retry 503 responses?' },
        { slots: { ...REQUEST.slots, evidence: EVIDENCE.map((e, i) => (i === 0 ? { ...e, text: e.text + ' Changed.' } : e)) } },
        { model: 'gpt-4o-mini' },
      ];
      const ids = new Set([first.context_id]);
      for (const c of changes) {
        const r = await post('/v1/context', { ...REQUEST, ...c });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        ids.add(r.json.context_id);
      }
      expect(ids.size).toBe(changes.length + 1);
      // The query is normalised: spacing and Unicode compatibility forms do not make a new context.
      const spaced = await post('/v1/context', { ...REQUEST, query: `  ${REQUEST.query.replace(/ /g, '  ')}` });
      expect(spaced.json.trace.cache_key).not.toBe(first.trace.cache_key); // the rendered question differs
      expect(spaced.json.context_id).not.toBe(first.context_id);
    });

    it('adds the provider body when asked', async () => {
      for (const provider of ['openai', 'openai-responses', 'anthropic', 'gemini']) {
        const r = await post('/v1/context', { ...REQUEST, provider });
        expect(r.status).toBe(200);
        expect(r.json.request).toBeDefined();
        expect(r.json.context_id).toBe(first.context_id);
      }
      const a = await post('/v1/context', { ...REQUEST, provider: 'anthropic' });
      expect(a.json.request.system[0].cache_control).toEqual({ type: 'ephemeral' });
    });

    it('answers 422 with the explanation when required content alone does not fit', async () => {
      const r = await post('/v1/context', { ...REQUEST, max_input_tokens: 40 });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('does_not_fit');
      expect(r.json.error.message).toMatch(/Required content alone/);
      expect(r.json.selection_log.length).toBeGreaterThan(0);
    });

    it('accepts plain items, history turns and tool results', async () => {
      const r = await post('/v1/context', {
        template: 'sdk-qa/sdk-qa.prompt',
        query: 'Why twice?',
        slots: {
          policy: 'Be brief.',
          history: [{ role: 'user', text: 'We upgraded to 4.2.', at: '2026-08-30T16:02:00Z' }, { role: 'assistant', text: 'Noted.' }],
          evidence: ['plain passage one', 'plain passage two'],
          tool_result: [{ id: 'call_1', source: 'tools/config', text: '{"retry_non_idempotent": true}' }],
        },
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.evidence).toEqual(expect.arrayContaining(['evidence_1', 'evidence_2', 'call_1']));
      expect(r.json.rendered_messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    });
  });

  describe('the response cache', () => {
    it('answers a byte-identical request with the same bytes, and a changed template with a new answer', async () => {
      const body = { ...REQUEST, template: 'sdk-qa/cached.prompt' };
      cpSync(join(root, 'sdk-qa', 'sdk-qa.prompt'), join(root, 'sdk-qa', 'cached.prompt'));
      cpSync(join(root, 'sdk-qa', 'sdk-qa.context.yaml'), join(root, 'sdk-qa', 'cached.context.yaml'));
      const hits = async () => Number(/^ctxlens_response_cache_hits_total (\d+)$/m.exec(await (await fetch(base + '/metrics')).text())?.[1]);
      const a = await post('/v1/context', body);
      const before = await hits();
      const b = await post('/v1/context', body);
      expect(await hits()).toBe(before + 1);
      expect(JSON.stringify(b.json)).toBe(JSON.stringify(a.json));
      // An edit of the template is a new binding: the cached answer is not served.
      writeFileSync(join(root, 'sdk-qa', 'cached.prompt'), readFileSync(join(root, 'sdk-qa', 'cached.prompt'), 'utf8').replace('Orbit Python SDK', 'Orbit SDK'));
      const c = await post('/v1/context', body);
      expect(await hits()).toBe(before + 1);
      expect(c.json.template_version).not.toBe(a.json.template_version);
      expect(c.json.context_id).not.toBe(a.json.context_id);
    });
  });

  describe('POST /v1/validate', () => {
    it('checks citations against a trace', async () => {
      const ctx = await post('/v1/context', REQUEST);
      const r = await post('/v1/validate', {
        answer: 'Version 4.2 retries rate-limited requests by default.',
        citations: [
          { claim_id: 'claim_1', evidence_ids: ['ev_0192', 'ev_0210'] },
          { claim_id: 'claim_2', evidence_ids: ['ev_0077'] },
          { claim_id: 'claim_3', evidence_ids: [] },
        ],
        trace: ctx.json.trace,
      });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ valid: false, complete: false, unknown_ids: ['ev_0077'], omitted_ids: { ev_0077: 'filtered:version' }, uncited_claims: ['claim_3'] });
      expect(r.json.claims.map((c: { status: string }) => c.status)).toEqual(['supported', 'invalid', 'uncited']);
    });

    it('takes a recent context_id instead (per instance, bounded)', async () => {
      const ctx = await post('/v1/context', REQUEST);
      const ok = await post('/v1/validate', { citations: [{ claim_id: 'c', evidence_ids: ['ev_0192'] }], context_id: ctx.json.context_id });
      expect(ok.json).toMatchObject({ valid: true, complete: true });
      // The cache holds 4 responses: 4 other contexts push this one out.
      for (let i = 0; i < 4; i++) await post('/v1/context', { ...REQUEST, permission_revision: `evict-${i}` });
      const gone = await post('/v1/validate', { citations: [], context_id: ctx.json.context_id });
      expect(gone.status).toBe(404);
      expect(gone.json.error.code).toBe('context_not_found');
    });

    it('refuses a body with both or neither of trace and context_id', async () => {
      expect((await post('/v1/validate', { citations: [] })).status).toBe(400);
      const both = await post('/v1/validate', { citations: [], trace: { citation_map: {} }, context_id: 'ctx_' + '0'.repeat(32) });
      expect(both.status).toBe(400);
      expect(both.json.error.message).toMatch(/one of them/);
      const bad = await post('/v1/validate', { citations: [{ claim_id: 'c', evidence_ids: 'ev_1' }], trace: { citation_map: {} } });
      expect(bad.json.error).toMatchObject({ code: 'invalid_request', path: 'citations[0].evidence_ids' });
    });
  });

  describe('refusals', () => {
    const cases: Array<[string, unknown, number, string, string | undefined, RegExp?]> = [
      ['malformed JSON', '{"template": "sdk-qa/sdk-qa.prompt",', 400, 'invalid_json', undefined, /not valid JSON/],
      ['an empty body', '', 400, 'invalid_json', undefined],
      ['a JSON array', '[1,2]', 400, 'invalid_request', undefined, /JSON object/],
      ['a missing template', { query: 'q' }, 400, 'invalid_request', 'template'],
      ['a wrong type', { ...REQUEST, max_input_tokens: '12000' }, 400, 'invalid_request', 'max_input_tokens', /max_input_tokens/],
      ['a fraction of a token', { ...REQUEST, max_input_tokens: 1.5 }, 400, 'invalid_request', 'max_input_tokens', /whole number/],
      ['an unknown field', { ...REQUEST, max_input_token: 5 }, 400, 'invalid_request', 'max_input_token', /unknown field 'max_input_token'/],
      ['an unknown provider', { ...REQUEST, provider: 'cohere' }, 400, 'invalid_request', 'provider', /one of openai, openai-responses, anthropic, gemini/],
      ['a bad slot value', { ...REQUEST, slots: { evidence: [{ text: 'a' }, { text: 'b', relevance: 'high' }] } }, 400, 'invalid_request', 'slots.evidence[1].relevance', /number/],
      ['an item without text', { ...REQUEST, slots: { evidence: [{ evidence_id: 'ev_1', title: 't' }] } }, 400, 'invalid_request', 'slots.evidence[0]', /string or an object with text/],
      ['an item without text among others', { ...REQUEST, slots: { evidence: [{ text: 'a' }, { evidence_id: 'ev_1', title: 't' }] } }, 400, 'invalid_request', 'slots.evidence[1]', /string or an object with text/],
      ['a file reference in a value', { ...REQUEST, slots: { policy: { file: '../../etc/passwd' } } }, 400, 'invalid_request', 'slots.policy.file', /not accepted/],
      ['a bad time', { ...REQUEST, now: 'yesterday' }, 400, 'invalid_request', 'now'],
      ['query and its slot both', { ...REQUEST, slots: { question: 'q' } }, 400, 'invalid_request', 'slots.question', /conflicts with query/],
      ['a query the template has no slot for', { template: 'zero-config/trip-planner.prompt', query: 'q' }, 400, 'invalid_request', 'query'],
      ['an unknown template', { ...REQUEST, template: 'sdk-qa/nope.prompt' }, 404, 'template_not_found', 'template'],
      ['a parent-folder escape', { ...REQUEST, template: '../x/sdk-qa.prompt' }, 400, 'invalid_request', 'template', /climbs out/],
      ['a hidden escape', { ...REQUEST, template: 'sdk-qa/../../etc/x.prompt' }, 400, 'invalid_request', 'template', /climbs out/],
      ['an absolute path', { ...REQUEST, template: '/etc/passwd.prompt' }, 400, 'invalid_request', 'template', /absolute/],
      ['a drive letter', { ...REQUEST, template: 'C:/x.prompt' }, 400, 'invalid_request', 'template', /absolute/],
      ['a backslash', { ...REQUEST, template: 'sdk-qa\\sdk-qa.prompt' }, 400, 'invalid_request', 'template', /backslash/],
      ['a NUL', { ...REQUEST, template: 'sdk-qa/sdk-qa.prompt\u0000.prompt' }, 400, 'invalid_request', 'template', /control character/],
      ['a link out of the root', { ...REQUEST, template: 'leak.prompt' }, 400, 'invalid_request', 'template', /outside the service root/],
      ['a file that is not a template', { ...REQUEST, template: 'sdk-qa/sdk-qa.context.yaml' }, 400, 'invalid_request', 'template', /not a template/],
      ['a partial', { ...REQUEST, template: 'zero-config/_tone.prompt' }, 400, 'invalid_request', 'template', /not a template/],
    ];
    for (const [name, body, status, code, path, message] of cases) {
      it(`${name}: ${status} ${code}${path ? ` at ${path}` : ''}`, async () => {
        const r = await post('/v1/context', body);
        expect(r.status, JSON.stringify(r.json)).toBe(status);
        expect(r.json.error.code).toBe(code);
        if (path !== undefined) expect(r.json.error.path).toBe(path);
        if (message) expect(r.json.error.message).toMatch(message);
        expect(JSON.stringify(r.json)).not.toContain(root);
      });
    }

    it('follows a link that stays inside the root', async () => {
      const r = await post('/v1/context', { ...REQUEST, template: 'linked/inside.prompt' });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    });

    it('refuses an oversize body with 413 without reading it', async () => {
      const big = JSON.stringify({ ...REQUEST, slots: { evidence: Array.from({ length: 2000 }, (_, i) => ({ id: `e${i}`, text: 'x'.repeat(40) })) } });
      expect(big.length).toBeGreaterThan(64 * 1024);
      const r = await post('/v1/context', big);
      expect(r.status).toBe(413);
      expect(r.json.error.code).toBe('payload_too_large');
      // Streamed without a length: refused once the limit is crossed.
      const streamed = await new Promise<number>((resolveStatus, reject) => {
        const u = new URL(base + '/v1/context');
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          resolveStatus(res.statusCode ?? 0);
        });
        req.on('error', (e) => (String(e).includes('EPIPE') || String(e).includes('ECONNRESET') ? undefined : reject(e)));
        for (let i = 0; i < 20; i++) req.write('x'.repeat(8 * 1024));
        req.end();
      });
      expect(streamed).toBe(413);
    });

    it('answers 415 for a body that is not JSON, 405 for the wrong method, 404 for an unknown route', async () => {
      const r = await post('/v1/context', 'template=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(r.status).toBe(415);
      const get = await fetch(base + '/v1/context');
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      const none = await fetch(base + '/v2/context');
      expect(none.status).toBe(404);
      expect((await none.json()).error.code).toBe('not_found');
    });
  });

  describe('GET /healthz and /metrics', () => {
    it('reports health', async () => {
      const r = await fetch(base + '/healthz');
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ status: 'ok' });
    });

    it('exposes Prometheus metrics: requests by route and status, latency histogram, errors', async () => {
      await post('/v1/context', REQUEST);
      await post('/v1/context', '{bad');
      const r = await fetch(base + '/metrics');
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await r.text();
      expect(text).toMatch(/^# TYPE ctxlens_http_requests_total counter$/m);
      expect(text).toMatch(/^ctxlens_http_requests_total\{route="\/v1\/context",status="200"\} \d+$/m);
      expect(text).toMatch(/^ctxlens_http_requests_total\{route="\/v1\/context",status="400"\} \d+$/m);
      expect(text).toMatch(/^ctxlens_http_request_duration_seconds_bucket\{route="\/v1\/context",le="\+Inf"\} \d+$/m);
      expect(text).toMatch(/^ctxlens_http_request_duration_seconds_count\{route="\/v1\/context"\} \d+$/m);
      expect(text).toMatch(/^ctxlens_http_errors_total\{kind="bad_request"\} \d+$/m);
      expect(text).toMatch(/^ctxlens_assemblies_total \d+$/m);
      // Buckets are cumulative.
      const buckets = [...text.matchAll(/^ctxlens_http_request_duration_seconds_bucket\{route="\/v1\/context",le="[^"]+"\} (\d+)$/gm)].map((m) => Number(m[1]));
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]);
    });
  });
}
