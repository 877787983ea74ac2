/**
 * A fake VS Code for the built webview bundle: a 127.0.0.1 HTTP server serving the panel's real
 * HTML shell (src/webview/html.ts, same CSP, fresh nonce per page load) plus theme variables, and
 * page helpers that stand in for the extension host: a recording `acquireVsCodeApi`, a
 * `securitypolicyviolation` counter installed before any page script, and `post()` that sends a
 * host message and waits until the webview reports it rendered.
 * Shared by test/webview/*.test.ts and bench/panel.ts.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { HostMessage, PersistedPreviewState, WebviewMessage } from '../../src/protocol/preview';
import { previewHtml } from '../../src/webview/html';
import { THEMES, themeCss } from './theme';
import type { ThemeName } from './theme';

const MEDIA_DIR = resolve(process.cwd(), 'dist', 'media');

export interface HostServer {
  origin: string;
  /** URL of the host page; `?theme=light` or `?theme=hc` switches the theme variables. */
  url(theme?: ThemeName): string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.map': 'application/json' };

/** Serves the host page and dist/media on an ephemeral 127.0.0.1 port. */
export async function startHostServer(): Promise<HostServer> {
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (url.pathname === '/') {
        const nonce = randomBytes(18).toString('base64');
        const name = url.searchParams.get('theme') ?? 'dark';
        const theme = Object.hasOwn(THEMES, name) ? THEMES[name as ThemeName] : THEMES.dark;
        let html = previewHtml({ cspSource: origin, nonce, scriptUri: `${origin}/media/webview.js`, styleUri: `${origin}/media/webview.css` });
        // VS Code injects its theme variables into every webview; so does this host, under the nonce.
        html = html.replace('</head>', `<style nonce="${nonce}">\n${themeCss(theme)}</style>\n</head>`);
        // VS Code marks the theme kind on <body>, which the panel's high-contrast rules key on.
        const kind = name === 'hc' ? 'vscode-high-contrast' : name === 'light' ? 'vscode-light' : 'vscode-dark';
        html = html.replace('<body>', `<body class="${kind}" data-vscode-theme-kind="${kind}">`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(html);
        return;
      }
      const m = /^\/media\/(webview\.(?:js|css|js\.map))$/.exec(url.pathname);
      if (m) {
        const body = await readFile(join(MEDIA_DIR, m[1]));
        res.writeHead(200, { 'content-type': TYPES[m[1].slice(m[1].lastIndexOf('.'))] ?? 'application/octet-stream', 'cache-control': 'no-store' });
        res.end(body);
        return;
      }
      // Browsers ask for a favicon; answering keeps the page's console free of 404 errors.
      res.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (theme = 'dark') => `${origin}/?theme=${theme}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** What the fake host recorded in the page. */
export interface PanelRecord {
  posted: WebviewMessage[];
  states: unknown[];
  violations: Array<{ directive: string; blocked: string; sample: string }>;
  xss: number;
}

declare global {
  interface Window {
    __posted: WebviewMessage[];
    __states: unknown[];
    __violations: Array<{ directive: string; blocked: string; sample: string }>;
    __xss?: number;
  }
}

export interface Panel {
  page: Page;
  context: BrowserContext;
  /** Messages the page logged as errors, and uncaught exceptions. */
  errors: string[];
  /**
   * Posts a host message and waits until the webview rendered it and finished what it does after
   * the paint (marking the tables that scroll sideways); resolves with its render time (ms).
   */
  post(message: HostMessage): Promise<number>;
  /** Posts anything on the page's window without waiting (for messages that must not render). */
  postRaw(message: unknown): Promise<void>;
  record(): Promise<PanelRecord>;
  close(): Promise<void>;
}

export interface OpenOptions {
  theme?: ThemeName;
  viewport?: { width: number; height: number };
  /**
   * Device pixels per CSS pixel. VS Code's zoom works like the browser's: at 200 % a panel of
   * 1200 × 800 screen pixels is a viewport of 600 × 400 CSS pixels drawn at a scale of 2.
   */
  deviceScaleFactor?: number;
  /** What `getState()` returns, as after a reload of VS Code. */
  state?: PersistedPreviewState;
}

/** Opens the host page in a fresh browser context, with the fake VS Code API installed first. */
export async function openPanel(browser: Browser, server: HostServer, options: OpenOptions = {}): Promise<Panel> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1200, height: 900 }, deviceScaleFactor: options.deviceScaleFactor ?? 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.addInitScript((initial) => {
    window.__posted = [];
    window.__states = [];
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
    });
    let state: unknown = initial ?? undefined;
    let acquired = false;
    // Like VS Code's: callable once; messages and states are deep-copied as by postMessage.
    (window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => {
      if (acquired) throw new Error('An instance of the VS Code API has already been acquired');
      acquired = true;
      return {
        postMessage: (m: unknown) => window.__posted.push(structuredClone(m) as WebviewMessage),
        getState: () => state,
        setState: (s: unknown) => {
          state = structuredClone(s);
          window.__states.push(state);
          return s;
        },
      };
    };
  }, options.state ?? null);
  await page.goto(server.url(options.theme), { waitUntil: 'load' });
  await page.waitForFunction(() => window.__posted.length > 0, undefined, { timeout: 10_000 });

  return {
    page,
    context,
    errors,
    async post(message) {
      const seq = message.type === 'snapshot' ? message.snapshot.seq : message.seq;
      // Hand the payload over first, so the timed part is only postMessage -> rendered.
      await page.evaluate((m) => {
        (window as unknown as { __next: unknown }).__next = m;
      }, message);
      return page.evaluate(
        (expected) =>
          new Promise<number>((done, fail) => {
            const t0 = performance.now();
            const timer = setTimeout(() => fail(new Error(`no render of seq ${expected} within 15 s`)), 15_000);
            const onRendered = (e: Event): void => {
              const detail = (e as CustomEvent<{ seq: number }>).detail;
              if (detail.seq !== expected) return;
              clearTimeout(timer);
              window.removeEventListener('contextlens:rendered', onRendered);
              done(performance.now() - t0);
            };
            window.addEventListener('contextlens:rendered', onRendered);
            window.postMessage((window as unknown as { __next: unknown }).__next, '*');
          }),
        seq,
      ).then(async (ms) => {
        await page.waitForFunction((expected) => document.body.dataset.settledSeq === String(expected), seq, { timeout: 15_000 });
        return ms;
      });
    },
    async postRaw(message) {
      await page.evaluate((m) => window.postMessage(m, '*'), message);
    },
    record: () => page.evaluate(() => ({ posted: window.__posted, states: window.__states, violations: window.__violations, xss: window.__xss ?? 0 })),
    close: () => context.close(),
  };
}
