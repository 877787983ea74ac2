/**
 * A narrow panel (320 CSS px, WCAG 1.4.10 reflow), with the server's real snapshots: badges in
 * table cells do not run over the next column, a picker's label is on the picker's line, ids
 * wrap only after their separators, and a table that scrolls sideways says so, is reachable by
 * keyboard and named as a region, while the compare tables show their difference column first.
 * axe-core at 320 px is in a11y.test.ts.
 */
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostMessage } from '../../src/protocol/preview';
import { launchChromium } from '../support/chromium';
import { ensureWebviewBundle } from './bundle';
import type { HostServer, Panel } from './harness';
import { openPanel, startHostServer } from './harness';
import { collectRealStates } from './real';
import type { PanelState } from './real';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

let browser: Browser;
let server: HostServer;
let states: PanelState[];
const open: Panel[] = [];

beforeAll(async () => {
  await ensureWebviewBundle();
  [states, server, browser] = await Promise.all([collectRealStates(), startHostServer(), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(async () => {
  for (const panel of open.splice(0)) {
    expect(panel.errors).toEqual([]);
    expect((await panel.record()).violations).toEqual([]);
    await panel.close();
  }
});

function state(name: string, seq: number): HostMessage {
  const s = states.find((x) => x.name === name);
  if (!s) throw new Error(`no state ${name}`);
  const m = s.message;
  return m.type === 'snapshot' ? { type: 'snapshot', snapshot: { ...m.snapshot, seq } } : { ...m, seq };
}

async function panelWith(name: string, width = 320): Promise<Panel> {
  const panel = await openPanel(browser, server, { viewport: { width, height: 900 } });
  open.push(panel);
  await panel.post(state(name, 1));
  return panel;
}

const SNAPSHOTS = ['sdk-qa', 'refund', 'refund-hybrid', 'defects-leaky', 'defects-agent', 'zero-config-outdoor-gear', 'zero-config-support-chat', 'zero-config-trip-planner', 'compare-fixture', 'what-if'];

describe('320 px', () => {
  it('no badge or name in a table cell runs over the next cell', async () => {
    const overlaps: string[] = [];
    for (const name of SNAPSHOTS) {
      const panel = await panelWith(name);
      overlaps.push(
        ...(await panel.page.evaluate(() => {
          const out: string[] = [];
          for (const row of Array.from(document.querySelectorAll('.grid-table tr'))) {
            const cells = Array.from(row.children) as HTMLElement[];
            cells.forEach((cell, i) => {
              const next = cells[i + 1];
              if (!next) return;
              for (const e of Array.from(cell.querySelectorAll<HTMLElement>('.badge, button, .no-loc, .swatch'))) {
                const r = e.getBoundingClientRect();
                if (r.width > 0 && r.right > next.getBoundingClientRect().left + 0.5) out.push(`${e.textContent}: ${r.right} over ${next.textContent} at ${next.getBoundingClientRect().left}`);
              }
            });
          }
          return out;
        })).map((o) => `${name}: ${o}`),
      );
    }
    expect(overlaps).toEqual([]);
  });

  it('each picker\'s label is on the same line as its picker, at 320 and 400 px', async () => {
    for (const width of [320, 400]) {
      const panel = await panelWith('sdk-qa', width);
      const lines = await panel.page.evaluate(() =>
        ['fixture-picker', 'model-picker', 'compare-picker'].map((id) => {
          const l = document.querySelector(`label[for="${id}"]`)!.getBoundingClientRect();
          const s = document.getElementById(id)!.getBoundingClientRect();
          const middle = (l.top + l.bottom) / 2;
          return { id, sameLine: middle > s.top && middle < s.bottom && l.right <= s.left + 0.5, inside: s.right <= window.innerWidth };
        }),
      );
      expect(lines).toEqual(['fixture-picker', 'model-picker', 'compare-picker'].map((id) => ({ id, sameLine: true, inside: true })));
    }
  });

  it('ids in tables wrap only after a separator, never inside a word', async () => {
    const broken: string[] = [];
    for (const name of SNAPSHOTS) {
      const panel = await panelWith(name);
      broken.push(
        ...(await panel.page.evaluate(() => {
          const out: string[] = [];
          for (const link of Array.from(document.querySelectorAll<HTMLElement>('.grid-table button.link, .grid-table .no-loc'))) {
            const text = link.textContent ?? '';
            // The line each character is on, from its own box.
            const tops: number[] = [];
            const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
            const range = document.createRange();
            for (let n = walker.nextNode(); n; n = walker.nextNode()) {
              for (let i = 0; i < (n.textContent ?? '').length; i++) {
                range.setStart(n, i);
                range.setEnd(n, i + 1);
                tops.push(range.getBoundingClientRect().top);
              }
            }
            for (let i = 1; i < tops.length; i++) if (tops[i] > tops[i - 1] + 2 && !/[_\-/.:@\s]/.test(text[i - 1])) out.push(`"${text}" breaks before "${text.slice(i)}"`);
          }
          return out;
        })).map((o) => `${name}: ${o}`),
      );
    }
    expect(broken).toEqual([]);
  });

  it('a table that scrolls sideways says so, is a named region and a tab stop; one that fits is neither', async () => {
    const panel = await panelWith('compare-fixture');
    const wraps = await panel.page.locator('.table-wrap').evaluateAll((ws) =>
      ws.map((w) => ({
        scrolls: w.scrollWidth > w.clientWidth + 1,
        tabindex: w.getAttribute('tabindex'),
        role: w.getAttribute('role'),
        label: w.getAttribute('aria-label'),
        hint: getComputedStyle(w, '::before').content,
        caption: w.querySelector('caption')?.textContent ?? '',
      })),
    );
    expect(wraps.some((w) => w.scrolls)).toBe(true);
    for (const w of wraps) {
      if (w.scrolls) expect(w).toMatchObject({ tabindex: '0', role: 'region', label: `${w.caption} (scrolls sideways)`, hint: '"More columns: scroll sideways →"' });
      else expect(w).toMatchObject({ tabindex: null, role: null, label: null, hint: 'none' });
    }
    // The arrow keys scroll a focused frame.
    const slots = panel.page.locator('.table-wrap:has(.compare-slots)');
    await slots.focus();
    await panel.page.keyboard.press('ArrowRight');
    await panel.page.waitForFunction(() => (document.querySelector('.table-wrap:has(.compare-slots)') as HTMLElement).scrollLeft > 0, undefined, { timeout: 10_000 });
    // The difference comes first: in view without scrolling, in both compare tables.
    const firstColumns = await panel.page.evaluate(() =>
      ['.compare-totals', '.compare-slots'].map((t) => {
        const th = document.querySelector(`${t} thead th:nth-child(2)`)!;
        const wrap = th.closest('.table-wrap')!.getBoundingClientRect();
        return { head: th.textContent, visible: th.getBoundingClientRect().right <= wrap.right + 0.5 };
      }),
    );
    expect(firstColumns).toEqual([{ head: 'Δ', visible: true }, { head: 'Δ tokens', visible: true }]);
    // At 1200 px the same tables fit: no region, no tab stop.
    await panel.page.setViewportSize({ width: 1200, height: 900 });
    await panel.page.waitForFunction(() => document.querySelectorAll('.table-wrap[tabindex]').length === 0, undefined, { timeout: 10_000 });
  });
});
