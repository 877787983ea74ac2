/**
 * The panel re-renders on every edit of the template: the reader's place must survive it. With
 * the server's real snapshots (test/webview/real.ts), in the two-column layout, in one column and
 * at 200 % zoom (a viewport of half the CSS pixels drawn at a device scale of 2, as VS Code's
 * zoom does), each test scrolls a column or the page, focuses a control there or leaves focus on
 * the page, posts the next snapshot of the same template (as after an edit: a new document
 * version and sequence number) and checks, once the browser has painted it, that the same control
 * has focus and the same element is where it was, within 2 px. Also: "Show all" rows moves focus
 * to the first row it brought, in view; a control that is gone passes focus to the one before it.
 */
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostMessage } from '../../src/protocol/preview';
import { launchChromium } from '../support/chromium';
import { ensureWebviewBundle } from './bundle';
import type { HostServer, OpenOptions, Panel } from './harness';
import { openPanel, startHostServer } from './harness';
import { collectRealStates } from './real';
import type { PanelState } from './real';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

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

/** The state's snapshot as the server sent it, with a later sequence number and document version (an edit). */
function edited(name: string, seq: number): HostMessage {
  const s = states.find((x) => x.name === name);
  if (!s || s.message.type !== 'snapshot') throw new Error(`no snapshot ${name}`);
  return { type: 'snapshot', snapshot: { ...s.message.snapshot, seq, documentVersion: s.message.snapshot.documentVersion + seq } };
}

async function panelWith(name: string, options: OpenOptions): Promise<Panel> {
  const panel = await openPanel(browser, server, options);
  open.push(panel);
  await panel.post(edited(name, 1));
  return panel;
}

/** Resolves after the browser has rendered two more frames (content-visibility settles in the first). */
const painted = (panel: Panel): Promise<unknown> => panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));

export const LAYOUTS: ReadonlyArray<{ name: string } & OpenOptions> = [
  { name: 'two columns', viewport: { width: 1200, height: 800 } },
  { name: 'one column', viewport: { width: 700, height: 800 } },
  // A panel of 1200 × 900 screen pixels at 200 %: the toolbar wraps and the view is short.
  { name: '200 % zoom', viewport: { width: 600, height: 450 }, deviceScaleFactor: 2 },
  // A wider panel at 200 %: one column, and a view still short.
  { name: '200 % zoom, wider panel', viewport: { width: 900, height: 500 }, deviceScaleFactor: 2 },
];

/**
 * Scrolls the page and each column from top to bottom a view at a time, a frame per step, and
 * back to the top, as a reader does: every message and table is laid out once, so that positions
 * inside them are real (a block never shown is a 320 px placeholder, what is inside it lies
 * beyond it).
 */
async function readThrough(panel: Panel): Promise<void> {
  const frame = (): Promise<unknown> => panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(done)));
  for (;;) {
    const more = await panel.page.evaluate(() => {
      const scrollers = [document.scrollingElement as HTMLElement, ...Array.from(document.querySelectorAll<HTMLElement>('[data-scroll-key]'))];
      let moved = false;
      for (const s of scrollers) {
        if (s.scrollTop + s.clientHeight >= s.scrollHeight - 1) continue;
        s.scrollTop += Math.max(100, s.clientHeight - 40);
        moved = true;
      }
      return moved;
    });
    await frame();
    if (!more) break;
  }
  await panel.page.evaluate(() => {
    for (const s of [document.scrollingElement as HTMLElement, ...Array.from(document.querySelectorAll<HTMLElement>('[data-scroll-key]'))]) s.scrollTop = 0;
  });
  await frame();
}

interface Spot {
  key: string;
  /** Which of the elements with that name (ids can repeat). */
  nth: number;
  top: number;
  /** Where the view starts and ends (below a sticky toolbar). */
  viewTop: number;
  viewBottom: number;
}

/**
 * Picks the element matching `selector` in `column` that lies nearest `depth` px into the column,
 * scrolls the column (or the page, when the column does not scroll on its own) so that it is in
 * the middle of the view, and focuses it when `focus`. Returns its name (`data-key`, else
 * `data-anchor`) and where it is.
 */
function scrollAndPick(panel: Panel, column: 'request' | 'numbers', depth: number, selector: string, focus: boolean): Promise<Spot> {
  return panel.page.evaluate(
    ({ column, depth, selector, focus }) => {
      const col = document.querySelector<HTMLElement>(`[data-scroll-key="${column}"]`);
      if (!col) throw new Error(`no column ${column}`);
      const own = getComputedStyle(col).overflowY === 'auto';
      const bar = document.querySelector<HTMLElement>('.toolbar');
      const view = (): { top: number; bottom: number } => {
        if (own) return { top: col.getBoundingClientRect().top, bottom: col.getBoundingClientRect().bottom };
        const stuck = bar && getComputedStyle(bar).position === 'sticky' ? bar.getBoundingClientRect().bottom : 0;
        return { top: Math.max(0, stuck), bottom: window.innerHeight };
      };
      const room = view().bottom - view().top - 8;
      const candidates = Array.from(col.querySelectorAll<HTMLElement>(selector)).filter((e) => e.getBoundingClientRect().height > 0 && e.getBoundingClientRect().height < room);
      if (candidates.length === 0) throw new Error(`nothing matching ${selector} in ${column}`);
      const into = (e: HTMLElement): number => e.getBoundingClientRect().top - col.getBoundingClientRect().top;
      const e = candidates.sort((a, b) => Math.abs(into(a) - depth) - Math.abs(into(b) - depth))[0];
      const v = view();
      const box = e.getBoundingClientRect();
      const by = (box.top + box.bottom) / 2 - (v.top + v.bottom) / 2;
      if (own) col.scrollTop += by;
      else window.scrollBy(0, by);
      const r = e.getBoundingClientRect();
      const now = view();
      if (r.top < now.top || r.bottom > now.bottom) throw new Error(`${selector} near ${depth} cannot be scrolled into view: ${JSON.stringify({ r: [r.top, r.bottom], now, by, sy: window.scrollY, h: document.documentElement.scrollHeight, key: e.dataset.key ?? e.dataset.anchor })}`);
      if (focus) e.focus({ preventScroll: true });
      if (focus && document.activeElement !== e) throw new Error('could not focus');
      const key = e.dataset.key ?? e.dataset.anchor ?? '';
      const same = Array.from(document.querySelectorAll<HTMLElement>('[data-key], [data-anchor]')).filter((x) => (x.dataset.key ?? x.dataset.anchor) === key);
      return { key, nth: same.indexOf(e), top: r.top, viewTop: now.top, viewBottom: now.bottom };
    },
    { column, depth, selector, focus },
  );
}

/** Where the `nth` element named `key` is now, and which control has focus. */
function whereIs(panel: Panel, key: string, nth = 0): Promise<{ top: number | null; focused: string | null; focusedNth: number }> {
  return panel.page.evaluate(
    ({ key, nth }) => {
      const all = Array.from(document.querySelectorAll<HTMLElement>('[data-key], [data-anchor]'));
      const named = (e: HTMLElement): string | undefined => e.dataset.key ?? e.dataset.anchor;
      const same = all.filter((e) => named(e) === key);
      const a = document.activeElement as HTMLElement | null;
      const focused = a && a !== document.body ? (named(a) ?? null) : null;
      return { top: same[nth]?.getBoundingClientRect().top ?? null, focused, focusedNth: a ? all.filter((e) => named(e) === focused).indexOf(a) : -1 };
    },
    { key, nth },
  );
}

describe('the reader\'s place across a refresh with a new snapshot', () => {
  for (const layout of LAYOUTS) {
    it(`keeps the focused link and what is in view of the request, ${layout.name}`, async () => {
      const failures: string[] = [];
      for (const name of ['refund', 'sdk-qa']) {
        for (const depth of [600, 1500]) {
          const panel = await panelWith(name, layout);
          await readThrough(panel);
          // A reveal link of an item or a message, as a reader tabbing through the request lands on.
          const spot = await scrollAndPick(panel, 'request', depth, 'button[data-key^="reveal-"]', true);
          await painted(panel);
          await panel.post(edited(name, 2));
          await painted(panel);
          const now = await whereIs(panel, spot.key, spot.nth);
          if (now.focused !== spot.key || now.focusedNth !== spot.nth) failures.push(`${name} at ${depth}: focus on ${now.focused} #${now.focusedNth}, not ${spot.key} #${spot.nth}`);
          if (now.top === null || Math.abs(now.top - spot.top) > 2) failures.push(`${name} at ${depth}: ${spot.key} moved from ${spot.top} to ${now.top}`);
          if (now.top !== null && (now.top < spot.viewTop || now.top > spot.viewBottom)) failures.push(`${name} at ${depth}: ${spot.key} out of view`);
          // A second refresh, now that the panel's blocks were all laid out once: still there.
          await panel.post(edited(name, 3));
          await painted(panel);
          const again = await whereIs(panel, spot.key, spot.nth);
          if (again.focused !== spot.key || again.top === null || Math.abs(again.top - spot.top) > 2) failures.push(`${name} at ${depth}, second refresh: ${again.focused} at ${again.top}`);
        }
      }
      expect(failures).toEqual([]);
    });

    it(`keeps what is in view when nothing has focus, ${layout.name}`, async () => {
      const failures: string[] = [];
      for (const name of ['refund', 'sdk-qa']) {
        const panel = await panelWith(name, layout);
        await readThrough(panel);
        // Item blocks and messages: what a reader scrolling with the mouse looks at.
        const spot = await scrollAndPick(panel, 'request', 1200, '[data-anchor]', false);
        await painted(panel);
        await panel.post(edited(name, 2));
        await painted(panel);
        const now = await whereIs(panel, spot.key, spot.nth);
        if (now.top === null || Math.abs(now.top - spot.top) > 2) failures.push(`${name}: ${spot.key} moved from ${spot.top} to ${now.top}`);
        expect(now.focused).toBeNull();
      }
      expect(failures).toEqual([]);
    });

    it(`keeps focus on a slot row's and a kept row's link, ${layout.name}`, async () => {
      const failures: string[] = [];
      for (const [what, selector] of [
        ['slot row', '.slots-table button[data-key^="reveal-slot-"]'],
        ['kept row', '.kept-table button[data-key^="reveal-kept-"]'],
        ['omitted row', '.omitted-table button[data-key^="reveal-omitted-"]'],
      ] as const) {
        const panel = await panelWith('sdk-qa', layout);
        await readThrough(panel);
        // The table's second row, in the middle of the view.
        const spot = await scrollAndPick(panel, 'numbers', await panel.page.evaluate((selector) => {
          const e = document.querySelectorAll<HTMLElement>(selector)[1];
          return e.getBoundingClientRect().top - e.closest<HTMLElement>('[data-scroll-key]')!.getBoundingClientRect().top;
        }, selector), selector, true);
        await panel.post(edited('sdk-qa', 2));
        await painted(panel);
        const now = await whereIs(panel, spot.key, spot.nth);
        if (now.focused !== spot.key) failures.push(`${what}: focus on ${now.focused}, not ${spot.key}`);
        if (now.top === null || Math.abs(now.top - spot.top) > 2) failures.push(`${what}: ${spot.key} moved from ${spot.top} to ${now.top}`);
      }
      expect(failures).toEqual([]);
    });
  }

  it('"Show all" rows moves focus to the first row it brought, in view; a second refresh keeps it', async () => {
    for (const layout of [LAYOUTS[0], LAYOUTS[2]]) {
      const panel = await panelWith('large-1mb', layout);
      const button = panel.page.locator('[data-key="all-kept"]');
      expect(await button.textContent()).toBe('Show all 252');
      await button.focus();
      await panel.page.keyboard.press('Enter');
      await painted(panel);
      const after = await panel.page.evaluate(() => {
        const a = document.activeElement as HTMLElement;
        const row = a.closest('tr');
        const rows = Array.from(document.querySelectorAll('.kept-table tbody tr'));
        const r = a.getBoundingClientRect();
        return { key: a.dataset.key ?? null, row: row ? rows.indexOf(row) : -1, rows: rows.length, top: r.top, bottom: r.bottom, height: window.innerHeight };
      });
      expect(after.rows).toBe(252);
      expect(after.row).toBe(50);
      expect(after.key).toMatch(/^reveal-kept-/);
      expect(after.top).toBeGreaterThanOrEqual(0);
      expect(after.bottom).toBeLessThanOrEqual(after.height);
      await panel.post(edited('large-1mb', 2));
      await painted(panel);
      const again = await whereIs(panel, after.key!);
      expect(again.focused).toBe(after.key);
      expect(Math.abs((again.top ?? -1e9) - after.top)).toBeLessThanOrEqual(2);
    }
  });

  it('a focused control the new snapshot no longer has passes focus to the control before it', async () => {
    const panel = await panelWith('sdk-qa', LAYOUTS[0]);
    // An evidence item the what-if budgets drop: its kept row's link goes away with it.
    const wi = states.find((x) => x.name === 'what-if')?.message;
    if (wi?.type !== 'snapshot') throw new Error('no what-if state');
    const dropped = wi.snapshot.whatIf?.diff?.slots.find((x) => x.only_a.length > 0);
    expect(dropped).toBeDefined();
    const key = `reveal-kept-${dropped!.slot}-${dropped!.only_a[0].id}`;
    const before = await panel.page.evaluate((key) => {
      const links = Array.from(document.querySelectorAll<HTMLElement>('.kept-table button[data-key]'));
      const i = links.findIndex((e) => e.dataset.key === key);
      links[i].focus();
      return links.slice(0, i).map((e) => e.dataset.key);
    }, key);
    await panel.post({ ...wi, snapshot: { ...wi.snapshot, seq: 2 } });
    const focused = await panel.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);
    expect(focused).not.toBe(key);
    // The nearest link before it that the what-if request still has.
    const still = await panel.page.evaluate((keys) => keys.filter((k) => document.querySelector(`[data-key="${CSS.escape(k!)}"]`) !== null), before);
    expect(focused).toBe(still.at(-1));
  });
});

describe('200 % zoom: the toolbar and Shift+Tab', () => {
  const ZOOMED: ReadonlyArray<{ name: string } & OpenOptions> = [
    ...LAYOUTS.slice(2),
    // A tall panel at 200 %: the toolbar still sticks, and what Tab reaches stops below it.
    { name: '200 % zoom, tall panel', viewport: { width: 700, height: 900 }, deviceScaleFactor: 2 },
  ];
  for (const layout of ZOOMED) {
    it(`no control reached with Shift+Tab is hidden under the toolbar or out of view, ${layout.name}`, async () => {
      const panel = await panelWith('sdk-qa', layout);
      const bar = await panel.page.locator('.toolbar').evaluate((b) => ({ sticky: getComputedStyle(b).position === 'sticky', height: b.getBoundingClientRect().height }));
      // A short view gets a toolbar that scrolls away; a sticky one takes at most a fifth of a tall view.
      if (layout.viewport!.height <= 600) expect(bar.sticky).toBe(false);
      else expect(bar.height).toBeLessThanOrEqual(layout.viewport!.height / 5 + 40);
      // From the end of the page backwards, through every control.
      await panel.page.evaluate(() => {
        const all = Array.from(document.querySelectorAll<HTMLElement>('button, select, input, [tabindex="0"]')).filter((e) => !(e as HTMLButtonElement).disabled && e.getClientRects().length > 0);
        all[all.length - 1].focus();
      });
      const hidden: string[] = [];
      let steps = 0;
      for (; steps < 200; steps++) {
        await panel.page.keyboard.press('Shift+Tab');
        await painted(panel);
        const r = await panel.page.evaluate(() => {
          const a = document.activeElement as HTMLElement | null;
          if (!a || a === document.body) return null;
          const box = a.getBoundingClientRect();
          const t = document.querySelector<HTMLElement>('.toolbar')!;
          const under = getComputedStyle(t).position === 'sticky' && !t.contains(a) ? t.getBoundingClientRect().bottom : 0;
          return { key: a.dataset.key ?? a.className, top: box.top, bottom: box.bottom, under, height: window.innerHeight, first: a.dataset.key === 'fixture' };
        });
        if (!r) break;
        if (r.top < r.under - 0.5 || r.bottom > r.height + 0.5 || r.bottom <= r.under) hidden.push(`${r.key}: ${Math.round(r.top)}..${Math.round(r.bottom)} with the toolbar to ${Math.round(r.under)}`);
        if (r.first) break;
      }
      expect(steps).toBeGreaterThan(20);
      expect(hidden).toEqual([]);
    });
  }
});
