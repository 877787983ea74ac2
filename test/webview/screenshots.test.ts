/**
 * Screenshots of the preview panel's states in the dark and light themes, from the server's real
 * snapshots (test/webview/real.ts), for docs/preview.md. Each run writes them to
 * test-results/webview/docs/; with CTXLENS_DOC_IMAGES=1 it writes them to docs/images/ instead,
 * which is how the committed images are refreshed:
 *
 *   node esbuild.js && CTXLENS_DOC_IMAGES=1 npx vitest run test/webview/screenshots.test.ts
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchChromium } from '../support/chromium';
import { REPO, ensureWebviewBundle } from './bundle';
import type { HostServer } from './harness';
import { openPanel, startHostServer } from './harness';
import { collectRealStates } from './real';
import type { PanelState } from './real';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

/** The states docs/preview.md shows, by the name of their file (docs/images/preview-<name>-<theme>.png). */
export const DOC_STATES: ReadonlyArray<{ file: string; state: string }> = [
  { file: 'normal', state: 'sdk-qa' },
  { file: 'zero-config', state: 'zero-config-outdoor-gear' },
  { file: 'what-if', state: 'what-if' },
  { file: 'what-if-overflow', state: 'what-if-overflow' },
  { file: 'compare', state: 'compare-fixture' },
  { file: 'failed', state: 'assembly-failed' },
  { file: 'empty', state: 'empty' },
  { file: 'error', state: 'error' },
];

const OUT = process.env.CTXLENS_DOC_IMAGES === '1' ? join(REPO, 'docs', 'images') : join(REPO, 'test-results', 'webview', 'docs');

let browser: Browser;
let server: HostServer;
let states: PanelState[];

beforeAll(async () => {
  await ensureWebviewBundle();
  mkdirSync(OUT, { recursive: true });
  [states, server, browser] = await Promise.all([collectRealStates(), startHostServer(), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('screenshots of the states', () => {
  for (const theme of ['dark', 'light'] as const) {
    it(`captures every documented state, ${theme} theme`, async () => {
      const panel = await openPanel(browser, server, { theme, viewport: { width: 1100, height: 720 } });
      let seq = 0;
      for (const d of DOC_STATES) {
        const s = states.find((x) => x.name === d.state);
        if (!s) throw new Error(`no state ${d.state}`);
        const m = s.message;
        await panel.post(m.type === 'snapshot' ? { type: 'snapshot', snapshot: { ...m.snapshot, seq: ++seq } } : { ...m, seq: ++seq });
        const path = join(OUT, `preview-${d.file}-${theme}.png`);
        await panel.page.screenshot({ path });
        expect(statSync(path).size).toBeGreaterThan(5_000);
      }
      expect(panel.errors).toEqual([]);
      expect((await panel.record()).violations).toEqual([]);
      await panel.close();
    });
  }
});
