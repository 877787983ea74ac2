/**
 * `ctxlens serve` (the built CLI, a subprocess) under the connection load a red team used: an
 * oversize body is refused as soon as its headers announce it (before the client sends any of it,
 * and with `Expect: 100-continue` without asking for it), then the connection is closed; with 500
 * idle, 50 slow-header and 50 slow-body connections open (the cap is 256), a new client's /healthz
 * is answered, because the connection idle the longest is closed to admit it while the slow bodies
 * (requests under way) are kept; one client address cannot hold more than its own cap. Every wait
 * is bounded by an event or a generous deadline; every socket is closed at the end.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startService } from './harness';
import type { RunningService } from './harness';

let svc: RunningService;
let port: number;
const opened: net.Socket[] = [];

beforeAll(async () => {
  ensureCliBuilt();
  // Long header timeouts, so that only the caps close connections while the test holds them.
  svc = await startService(['--root', 'examples', '--headers-timeout', '120s', '--max-connections', '256', '--max-connections-per-client', '256']);
  port = Number(new URL(svc.url).port);
});

afterAll(async () => {
  for (const s of opened) s.destroy();
  await svc?.stop();
});

/** A connection from `localAddress` that has connected (or failed to). */
function connect(localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress });
    opened.push(s);
    s.on('error', () => undefined);
    s.once('connect', () => resolve(s));
    s.once('close', () => resolve(s));
  });
}

/** /metrics on a connection of its own, closed after the answer. */
function metricsText(p: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: p, path: '/metrics', agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
}

/** Polls `f` until it is true, at most `ms`. */
async function until(f: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await f().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const closedPromise = (s: net.Socket) => (s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())));

/** Everything the server sends on `s` until it ends its side. */
function readUntilEnd(s: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.once('end', () => resolve(got));
    s.once('close', () => resolve(got));
  });
}

/** GET /healthz on a fresh connection (no agent), bounded by a generous deadline. */
function healthz(localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, localAddress, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('no answer to /healthz within 5 s')));
    req.on('error', reject);
  });
}

describe('an oversize body', () => {
  it('is answered 413 as soon as the headers announce it, before any of it is sent; then the server closes', async () => {
    const s = await connect();
    const answer = readUntilEnd(s);
    s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${3 * 1024 * 1024}\r\n\r\n`);
    // Not one byte of the body is sent: the answer and the end of the server's side arrive anyway.
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text).toContain('payload_too_large');
    s.end();
    await closedPromise(s);
  });

  it('with Expect: 100-continue, is refused without a 100 Continue', async () => {
    const s = await connect();
    const answer = readUntilEnd(s);
    s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${3 * 1024 * 1024}\r\n\r\n`);
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).not.toContain('100 Continue');
    s.end();
  });

  it('still delivers the 413 to a client that keeps sending the body, and then closes', async () => {
    const s = await connect();
    const answer = readUntilEnd(s);
    s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${3 * 1024 * 1024}\r\n\r\n`);
    s.write(Buffer.alloc(3 * 1024 * 1024, 'x'));
    expect(await answer).toMatch(/^HTTP\/1\.1 413 /);
    s.end();
    await closedPromise(s);
  });

  it('with a small one under the limit, a 100 Continue comes first and the request is answered', async () => {
    const body = JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'q', slots: { policy: 'p' } });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/v1/context', method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } });
      req.on('continue', () => req.end(body));
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    expect(status).toBe(200);
  });
});

describe('500 idle + 50 slow-header + 50 slow-body connections against a cap of 256', () => {
  it('answers a new client, closing the connections idle the longest and keeping the requests under way', async () => {
    const idle: net.Socket[] = [];
    for (let i = 0; i < 500; i++) idle.push(await connect());
    const slowHeaders: net.Socket[] = [];
    for (let i = 0; i < 50; i++) {
      const s = await connect();
      if (!s.destroyed) s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`);
      slowHeaders.push(s);
    }
    const slowBodies: net.Socket[] = [];
    const bodyAnswers: Array<Promise<string>> = [];
    for (let i = 0; i < 50; i++) {
      const s = await connect();
      bodyAnswers.push(readUntilEnd(s));
      s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"template":`);
      slowBodies.push(s);
    }
    // A new client is answered while all of that is held.
    expect(await healthz()).toBe(200);
    expect(await healthz()).toBe(200);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    const open = Number(/^ctxlens_connections (\d+)$/m.exec(metrics)?.[1]);
    expect(open).toBeLessThanOrEqual(256);
    expect(Number(/^ctxlens_connections_closed_total\{reason="evicted"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(600 - 256);
    // The slow bodies are requests under way: none was closed for the newcomers.
    for (const s of slowBodies) expect(s.destroyed).toBe(false);
    // The idle connections the server closed are the oldest ones.
    const gone = idle.map((s) => s.destroyed || s.readyState === 'closed');
    const firstKept = gone.indexOf(false);
    if (firstKept >= 0) expect(gone.slice(firstKept).every((g) => !g)).toBe(true);
    expect(gone[0]).toBe(true);
    for (const s of [...idle, ...slowHeaders, ...slowBodies]) s.destroy();
  }, 120_000);

  it('keeps one client address to its own cap, so another address is answered', async () => {
    const capped = await startService(['--root', 'examples', '--headers-timeout', '120s', '--max-connections', '16', '--max-connections-per-client', '4']);
    const p = Number(new URL(capped.url).port);
    const held: net.Socket[] = [];
    try {
      // Four requests under way from 127.0.0.2 (slow bodies), then a fifth connection from it: refused.
      for (let i = 0; i < 4; i++) {
        const s = net.connect({ port: p, host: '127.0.0.1', localAddress: '127.0.0.2' });
        held.push(s);
        s.on('error', () => undefined);
        await new Promise<void>((r) => s.once('connect', () => r()));
        s.write(`POST /v1/context HTTP/1.1\r\nhost: 127.0.0.1:${p}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"template":`);
      }
      // Once the server has the four requests under way (no idle connection left; the probe's own is busy)...
      expect(await until(async () => /^ctxlens_connections_idle 0$/m.test(await metricsText(p)))).toBe(true);
      // ...the fifth from the same address is closed without an answer.
      const fifth = net.connect({ port: p, host: '127.0.0.1', localAddress: '127.0.0.2' });
      held.push(fifth);
      fifth.on('error', () => undefined);
      let data = '';
      fifth.on('data', (d) => (data += String(d)));
      fifth.once('connect', () => fifth.write(`GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:${p}\r\n\r\n`));
      await closedPromise(fifth);
      expect(data).toBe('');
      // Another address is answered.
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: p, path: '/healthz', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
      });
      expect(status).toBe(200);
      for (const s of held.slice(0, 4)) expect(s.destroyed).toBe(false);
    } finally {
      for (const s of held) s.destroy();
      await capped.stop();
    }
  }, 60_000);
});
