/**
 * Accessibility of the preview panel, with the server's real snapshots (test/webview/real.ts: the
 * built language server over LSP on a fresh copy of examples/): axe-core's WCAG 2.1 A/AA rules
 * over every state (each example, zero-config, compare by fixture, model and budget, what-if,
 * what-if overflow, assembly failed, a 1 MB request, a 30,000-character word, empty, error), in
 * the dark, light and high-contrast themes and in the one-column and two-column layouts and at
 * 320 px, must find
 * nothing. A new violation fails the test with its rule and nodes.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchChromium } from '../support/chromium';
import { describeViolations, runAxe } from './axe';
import { ensureWebviewBundle } from './bundle';
import type { HostServer, Panel } from './harness';
import { openPanel, startHostServer } from './harness';
import { collectRealStates } from './real';
import type { PanelState } from './real';
import type { ThemeName } from './theme';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const THEME_NAMES: ThemeName[] = ['dark', 'light', 'hc'];

let browser: Browser;
let server: HostServer;
let states: PanelState[];
const panels = new Map<string, Panel>();

/**
 * The one-column layout, tall enough that every section is on screen, the two-column layout of a
 * wide panel (sticky toolbar, columns that scroll on their own), and a 320 px panel.
 */
const LAYOUTS = [
  { name: 'one column', viewport: { width: 900, height: 2400 } },
  { name: 'two columns', viewport: { width: 1280, height: 1000 } },
  // The narrowest panel WCAG reflow asks for: tables scroll inside frames that must be focusable.
  { name: 'narrow, 320 px', viewport: { width: 320, height: 2400 } },
] as const;

beforeAll(async () => {
  await ensureWebviewBundle();
  [states, server, browser] = await Promise.all([collectRealStates(), startHostServer(), launchChromium()]);
});

afterAll(async () => {
  for (const p of panels.values()) await p.close();
  await browser?.close();
  await server?.close();
});

/** One page per theme and layout; the states are posted to it in order, as a panel receives them. */
async function panelFor(theme: ThemeName, layout: (typeof LAYOUTS)[number]): Promise<Panel> {
  const key = `${theme} ${layout.name}`;
  let p = panels.get(key);
  if (!p) {
    p = await openPanel(browser, server, { theme, viewport: layout.viewport });
    panels.set(key, p);
  }
  return p;
}

describe('axe-core WCAG 2.1 A/AA over the real states', () => {
  it('collected every state from the server', () => {
    expect(states.map((s) => s.name)).toEqual([
      'sdk-qa',
      'refund',
      'refund-hybrid',
      'defects-leaky',
      'defects-agent',
      'zero-config-outdoor-gear',
      'zero-config-support-chat',
      'zero-config-trip-planner',
      'compare-fixture',
      'compare-model',
      'what-if',
      'compare-budget',
      'what-if-overflow',
      'assembly-failed',
      'large-1mb',
      'long-word',
      'empty',
      'error',
    ]);
  });

  for (const theme of THEME_NAMES) for (const layout of LAYOUTS) {
    it(`finds no violation in any state, ${theme} theme, ${layout.name}`, async () => {
      const panel = await panelFor(theme, layout);
      const found: string[] = [];
      for (const s of states) {
        await panel.post(s.message);
        for (const line of describeViolations(await runAxe(panel.page))) found.push(`${s.name}: ${line}`);
      }
      expect(found).toEqual([]);
      expect(panel.errors).toEqual([]);
      expect((await panel.record()).violations).toEqual([]);
    });
  }
});
