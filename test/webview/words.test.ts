/**
 * What the panel says agrees with what it shows, on the server's real snapshots: the what-if
 * sentence and banner count the items the summary counts; what lies beyond the window is not
 * drawn through the red overflow; the empty state says where "Create context config" is. And the
 * smaller keyboard and screen reader points: the focus ring on "Apply to config anyway", Enter in
 * a budget field sends once, a skip link to the request, and hidden tag text decoded as text.
 */
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostMessage, PreviewSnapshot } from '../../src/protocol/preview';
import { launchChromium } from '../support/chromium';
import { ensureWebviewBundle } from './bundle';
import type { HostServer, OpenOptions, Panel } from './harness';
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

function snapshotOf(name: string): PreviewSnapshot {
  const m = state(name, 0);
  if (m.type !== 'snapshot') throw new Error(`${name} is not a snapshot`);
  return m.snapshot;
}

async function panelWith(message: HostMessage | undefined, options: OpenOptions = {}): Promise<Panel> {
  const panel = await openPanel(browser, server, options);
  open.push(panel);
  await panel.page.evaluate(() => {
    const w = window as unknown as { __said: string[] };
    w.__said = [];
    const region = document.getElementById('announcer');
    if (region) new MutationObserver(() => region.textContent && w.__said.push(region.textContent)).observe(region, { childList: true, characterData: true, subtree: true });
  });
  if (message) await panel.post(message);
  return panel;
}

const said = (panel: Panel): Promise<string[]> => panel.page.evaluate(() => (window as unknown as { __said: string[] }).__said);
const focusedKey = (panel: Panel): Promise<string | null> => panel.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);

describe('words that agree with the screen', () => {
  it('the what-if sentence and banner count what the summary counts', async () => {
    const panel = await panelWith(state('what-if', 1));
    const s = snapshotOf('what-if');
    const omitted = s.result.trace.omitted.length;
    const byWhatIf = s.whatIf!.diff!.slots.reduce((n, x) => n + x.only_a.length, 0);
    expect(await panel.page.locator('[data-key="jump-omitted"]').textContent()).toBe(`${omitted} items dropped`);
    expect((await said(panel)).at(-1)).toMatch(new RegExp(`^evidence 400: ${omitted} items dropped, ${byWhatIf} of them by the what-if budgets, input −[\\d,]+ tokens\\.$`));
    expect(await panel.page.locator('.what-if-count').textContent()).toBe(`${omitted} items dropped in all, ${byWhatIf} of them by the what-if budgets:`);
    expect(await panel.page.locator('.what-if-banner .item-changes li.only-a').count()).toBe(byWhatIf);
  });

  it('a what-if that changes no item says so without contradicting "N items dropped"', async () => {
    // The server's what-if snapshot with its item changes taken out: the budgets keep what the written ones keep.
    const s = snapshotOf('what-if');
    const same: PreviewSnapshot = { ...s, seq: 1, whatIf: { ...s.whatIf!, diff: { ...s.whatIf!.diff!, slots: s.whatIf!.diff!.slots.map((x) => ({ ...x, only_a: [], only_b: [], moved: [] })) } } };
    const panel = await panelWith({ type: 'snapshot', snapshot: same });
    const omitted = s.result.trace.omitted.length;
    expect(await panel.page.locator('[data-key="jump-omitted"]').textContent()).toBe(`${omitted} items dropped`);
    expect(await panel.page.locator('.what-if-count').textContent()).toBe(`The same items are kept, and the same ${omitted} items dropped, as with the budgets as written.`);
    expect((await said(panel)).at(-1)).toMatch(new RegExp(`^evidence 400: ${omitted} items dropped, the same as with the budgets as written, input −[\\d,]+ tokens\\.$`));
  });

  it('nothing beyond the window shows through the red overflow: it is opaque, on top, and no label lies under it', async () => {
    for (const width of [1200, 700, 320]) {
      const panel = await panelWith(state('what-if-overflow', 1), { viewport: { width, height: 900 } });
      const r = await panel.page.evaluate(() => {
        const over = document.querySelector<HTMLElement>('.budget-bar .overflow')!;
        const o = over.getBoundingClientRect();
        const covered = Array.from(document.querySelectorAll<HTMLElement>('.budget-bar .seg .seg-label:not([hidden])'))
          .filter((l) => l.getBoundingClientRect().right > o.left && l.getBoundingClientRect().left < o.right)
          .map((l) => l.textContent);
        // What is drawn at points across the overflow: the overflow itself (or the window marker at its edge).
        const ys = (o.top + o.bottom) / 2;
        const hits = [0.25, 0.5, 0.75].map((f) => document.elementFromPoint(o.left + 3 + f * (o.width - 6), ys)).map((e) => (e === over || over.contains(e) ? 'overflow' : (e?.className ?? 'nothing')));
        const segsBeyond = Array.from(document.querySelectorAll<HTMLElement>('.budget-bar .seg')).filter((g) => g.getBoundingClientRect().right > o.left + 1).length;
        return { covered, hits, segsBeyond, background: getComputedStyle(over).backgroundColor };
      });
      // The case the check is about: segments that reach beyond the window.
      expect(r.segsBeyond).toBeGreaterThan(0);
      expect(r.covered).toEqual([]);
      expect(r.hits).toEqual(['overflow', 'overflow', 'overflow']);
      expect(r.background).toMatch(/^rgb\(/);
    }
  });

  it('the empty state says where "Create context config" is and what else to add', async () => {
    const panel = await panelWith(state('empty', 1));
    const text = (await panel.page.locator('main.empty').textContent()) ?? '';
    expect(text).toContain('Create context config: in the template, put the cursor on the first line and press Ctrl+. (⌘. on macOS)');
    expect(text).toContain('ctxlens init <template>');
    expect(await panel.page.getByRole('button', { name: 'Refresh' }).count()).toBe(1);
  });
});

describe('smaller things', () => {
  it('"Apply to config anyway" shows the focus ring, and its warning as a dashed border', async () => {
    const panel = await panelWith(state('what-if-overflow', 1));
    await panel.page.locator('#sec-budget .budget-input').last().focus();
    await panel.page.keyboard.press('Tab');
    expect(await focusedKey(panel)).toBe('apply-what-if');
    const style = await panel.page.locator('[data-key="apply-what-if"]').evaluate((b) => {
      const s = getComputedStyle(b);
      return { text: b.textContent, outline: s.outlineStyle, width: parseFloat(s.outlineWidth), border: s.borderTopStyle };
    });
    expect(style).toEqual({ text: 'Apply to config anyway', outline: 'solid', width: 2, border: 'dashed' });
  });

  it('Enter in a budget field sends the budget once', async () => {
    const panel = await panelWith(state('sdk-qa', 1));
    const field = panel.page.locator('[data-key="budget-evidence"]');
    await field.fill('400');
    await field.press('Enter');
    // A task after the press: every microtask the key queued has run.
    await panel.page.evaluate(() => new Promise((done) => setTimeout(done, 0)));
    await field.press('Enter');
    await panel.page.evaluate(() => new Promise((done) => setTimeout(done, 0)));
    expect((await panel.record()).posted.filter((m) => m.type === 'setBudget')).toEqual([{ type: 'setBudget', slot: 'evidence', budget: 400 }]);
    // A new value is sent again.
    await field.fill('500');
    await field.press('Enter');
    await panel.page.evaluate(() => new Promise((done) => setTimeout(done, 0)));
    expect((await panel.record()).posted.filter((m) => m.type === 'setBudget')).toHaveLength(2);
  });

  it('the first Tab stop is a skip link to the request, shown while focused, in both layouts and when comparing', async () => {
    for (const [name, viewport, target] of [
      ['sdk-qa', { width: 1200, height: 800 }, 'toggle-messages'],
      ['refund', { width: 700, height: 800 }, 'toggle-messages'],
      ['compare-fixture', { width: 700, height: 800 }, null],
    ] as const) {
      const panel = await panelWith(state(name, 1), { viewport });
      expect(await panel.page.locator('.skip-link').evaluate((e) => e.getBoundingClientRect().right)).toBeLessThanOrEqual(0);
      await panel.page.keyboard.press('Tab');
      expect(await focusedKey(panel)).toBe('skip-request');
      const box = await panel.page.locator('.skip-link').evaluate((e) => e.getBoundingClientRect().toJSON() as DOMRect);
      expect(box.left).toBeGreaterThanOrEqual(0);
      expect(box.width).toBeGreaterThan(40);
      await panel.page.keyboard.press('Enter');
      const at = await panel.page.evaluate(() => {
        const a = document.activeElement as HTMLElement;
        const r = a.getBoundingClientRect();
        return { key: a.dataset.key ?? null, side: a.classList.contains('side-a'), top: r.top, height: window.innerHeight };
      });
      if (target) expect(at.key).toBe(target);
      else expect(at.side).toBe(true);
      expect(at.top).toBeGreaterThanOrEqual(0);
      expect(at.top).toBeLessThan(at.height);
    }
  });

  it('hidden tag text is decoded into text on the page, which a screen reader reads', async () => {
    const panel = await panelWith(state('defects-leaky', 1));
    const runs = await panel.page.locator('.hidden-run').evaluateAll((rs) =>
      rs.map((r) => ({
        decoded: r.querySelector('.hidden-decoded')?.textContent ?? null,
        visible: (r.querySelector('.hidden-decoded') as HTMLElement | null)?.getBoundingClientRect().width ?? 0,
        hiddenFromReaders: r.querySelector('.hidden-decoded')?.closest('[aria-hidden="true"]') !== null,
        markersHidden: Array.from(r.querySelectorAll('.hidden-char')).every((m) => m.getAttribute('aria-hidden') === 'true'),
        label: r.getAttribute('aria-label'),
      })),
    );
    expect(runs.length).toBeGreaterThan(0);
    for (const r of runs) {
      expect(r.decoded).toMatch(/^hidden tag text ".+"$/);
      expect(r.visible).toBeGreaterThan(0);
      expect(r.hiddenFromReaders).toBe(false);
      expect(r.markersHidden).toBe(true);
      expect(r.label).toBeNull();
    }
  });
});
