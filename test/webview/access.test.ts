/**
 * Keyboard-only and screen-reader behaviour of the preview panel, on the server's real snapshots
 * (test/webview/real.ts): the persistent live region says one sentence per re-assembly; focus
 * comes back to the budget editor after Reset and Apply and lands on the first difference after
 * "Show it"; arrow keys on a slider or a picker do not re-assemble at every step; invalid input
 * shows visible text linked to its field; the page reflows at 720, 400 and 320 px without
 * scrolling sideways; and the evidence of the real replies is grouped per item, with one header,
 * id link and "untrusted data" badge each.
 */
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostMessage, PreviewSnapshot } from '../../src/protocol/preview';
import { launchChromium } from '../support/chromium';
import { ensureWebviewBundle } from './bundle';
import type { HostServer, OpenOptions, Panel } from './harness';
import { openPanel, startHostServer } from './harness';
import { LONG_WORD, collectRealStates } from './real';
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

/** The state's host message with a sequence number of our choosing (the panel ignores older ones). */
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

async function panelWith(name: string | undefined, options: OpenOptions = {}): Promise<Panel> {
  const panel = await openPanel(browser, server, options);
  open.push(panel);
  // Every change of the live region's text, recorded from before the first snapshot.
  await panel.page.evaluate(() => {
    const w = window as unknown as { __said: string[] };
    w.__said = [];
    const region = document.getElementById('announcer');
    if (region) new MutationObserver(() => region.textContent && w.__said.push(region.textContent)).observe(region, { childList: true, characterData: true, subtree: true });
  });
  if (name) await panel.post(state(name, 1));
  return panel;
}

const said = (panel: Panel): Promise<string[]> => panel.page.evaluate(() => (window as unknown as { __said: string[] }).__said);
const posted = async (panel: Panel): Promise<Array<{ type: string } & Record<string, unknown>>> => (await panel.record()).posted as Array<{ type: string } & Record<string, unknown>>;
const focusedKey = (panel: Panel): Promise<string | null> => panel.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);

describe('screen reader: one persistent live region', () => {
  it('says one sentence per re-assembly, in the same element, and nothing for a re-render', async () => {
    const panel = await panelWith(undefined);
    const region = await panel.page.evaluateHandle(() => document.getElementById('announcer'));
    expect(await panel.page.evaluate(() => document.querySelectorAll('[role=status]').length)).toBe(1);
    expect(await panel.page.evaluate(() => document.querySelector('#root #announcer'))).toBeNull();

    await panel.post(state('sdk-qa', 1));
    const base = snapshotOf('sdk-qa');
    expect(await said(panel)).toEqual([`sdk-qa.prompt with post-retries: ${base.result.trace.input_tokens.toLocaleString('en-US')} input tokens of ${base.result.trace.input_budget.toLocaleString('en-US')}, 2 items dropped.`]);

    // The what-if re-assembly of the server: evidence 3,000 -> 400.
    await panel.post(state('what-if', 2));
    const wi = snapshotOf('what-if').whatIf!;
    const dropped = wi.diff!.slots.reduce((n, s) => n + s.only_a.length, 0);
    expect(dropped).toBe(3);
    // The count the summary shows (every item left out), then those the what-if budgets drop.
    const omitted = snapshotOf('what-if').result.trace.omitted.length;
    expect(omitted).toBeGreaterThan(dropped);
    expect((await said(panel)).at(-1)).toBe(`evidence 400: ${omitted} items dropped, 3 of them by the what-if budgets, input −${Math.abs(wi.diff!.input_tokens.delta).toLocaleString('en-US')} tokens.`);
    expect(await panel.page.locator('[data-key="jump-omitted"]').textContent()).toBe(`${omitted} items dropped`);
    expect(await said(panel)).toHaveLength(2);

    // Collapsing a section re-renders the same snapshot: nothing new is said.
    await panel.page.getByRole('button', { name: 'Slots', exact: true }).click();
    expect(await said(panel)).toHaveLength(2);

    await panel.post(state('compare-fixture', 3));
    expect((await said(panel)).at(-1)).toMatch(/^Compared with fixture rate-limit · gpt-4o: input [+−±][\d,]+ tokens, first difference in message \d+\.$/);
    await panel.post(state('assembly-failed', 4));
    expect((await said(panel)).at(-1)).toMatch(/^Assembly failed: Required content alone is [\d,]+ tokens > 250 input budget/);
    expect(await said(panel)).toHaveLength(4);
    // No other live region competes with it: banners are not alerts.
    expect(await panel.page.evaluate(() => document.querySelectorAll('[role=alert], [aria-live]:not(#announcer)').length)).toBe(0);
    // Still the element that was there before the first snapshot.
    expect(await panel.page.evaluate((r) => r === document.getElementById('announcer') && r?.isConnected, region)).toBe(true);
  });
});

describe('keyboard: focus', () => {
  it('Apply to config and Reset come right after the budget editors, and focus returns to the budget field after each', async () => {
    const panel = await panelWith('what-if');
    // Tab order: the last budget editor, then Apply, then Reset.
    const lastField = panel.page.locator('#sec-budget .budget-input').last();
    await lastField.focus();
    await panel.page.keyboard.press('Tab');
    expect(await focusedKey(panel)).toBe('apply-what-if');
    await panel.page.keyboard.press('Tab');
    expect(await focusedKey(panel)).toBe('reset-what-if');

    await panel.page.keyboard.press('Enter');
    expect((await posted(panel)).at(-1)).toEqual({ type: 'resetWhatIf' });
    // The host answers with the request as written: the Reset button is gone, focus is on the field.
    await panel.post(state('sdk-qa', 2));
    expect(await panel.page.locator('[data-key="reset-what-if"]').count()).toBe(0);
    expect(await focusedKey(panel)).toBe('budget-evidence');

    await panel.post(state('what-if', 3));
    await panel.page.locator('[data-key="apply-what-if"]').focus();
    await panel.page.keyboard.press('Enter');
    expect((await posted(panel)).at(-1)).toEqual({ type: 'applyWhatIf' });
    await panel.post(state('sdk-qa', 4));
    expect(await focusedKey(panel)).toBe('budget-evidence');

    // With the budget section collapsed, the buttons are in the what-if banner instead.
    await panel.post(state('what-if', 5));
    await panel.page.getByRole('button', { name: 'Budget', exact: true }).click();
    expect(await panel.page.locator('.what-if-banner [data-key="reset-what-if"]').count()).toBe(1);
    expect(await panel.page.locator('[data-key="reset-what-if"]').count()).toBe(1);
  });

  it('"Show it" moves focus to the first difference and scrolls it clear of the sticky headings', async () => {
    for (const viewport of [{ width: 1200, height: 700 }, { width: 700, height: 700 }]) {
      const panel = await panelWith('compare-fixture', { viewport });
      await panel.page.getByRole('button', { name: 'Show it' }).click();
      const where = await panel.page.evaluate(() => {
        const target = document.activeElement as HTMLElement;
        const top = target.getBoundingClientRect().top;
        const covering = Array.from(document.querySelectorAll<HTMLElement>('.toolbar, .compare-col-head'))
          .filter((h) => getComputedStyle(h).position === 'sticky')
          .map((h) => h.getBoundingClientRect())
          .filter((r) => r.top <= top && r.bottom > top && r.width > 0);
        return { isFirstDiff: target.classList.contains('first-diff') && target.closest('.side-a') !== null, covered: covering.length, top, height: window.innerHeight };
      });
      expect(where.isFirstDiff).toBe(true);
      expect(where.covered).toBe(0);
      expect(where.top).toBeGreaterThanOrEqual(0);
      expect(where.top).toBeLessThan(where.height);
    }
  });

  it('the focus ring is at least 2 px', async () => {
    const panel = await panelWith('sdk-qa');
    await panel.page.keyboard.press('Tab');
    const ring = await panel.page.evaluate(() => {
      const s = getComputedStyle(document.activeElement as Element);
      return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    expect(ring.style).toBe('solid');
    expect(ring.width).toBeGreaterThanOrEqual(2);
  });
});

describe('keyboard: no re-assembly per key', () => {
  it('arrow keys on a budget slider post one setBudget, at Enter or when the keys stop', async () => {
    const panel = await panelWith('sdk-qa');
    const range = panel.page.locator('[data-key="budget-range-evidence"]');
    await range.focus();
    for (let i = 0; i < 5; i++) await panel.page.keyboard.press('ArrowRight');
    expect(await panel.page.locator('[data-key="budget-evidence"]').inputValue()).toBe('3500');
    await panel.page.keyboard.press('Enter');
    expect((await posted(panel)).filter((m) => m.type === 'setBudget')).toEqual([{ type: 'setBudget', slot: 'evidence', budget: 3500 }]);

    // Without Enter: one post once the keys stop.
    for (let i = 0; i < 3; i++) await panel.page.keyboard.press('ArrowLeft');
    await panel.page.waitForFunction(() => window.__posted.filter((m) => m.type === 'setBudget').length === 2, undefined, { timeout: 10_000 });
    expect((await posted(panel)).filter((m) => m.type === 'setBudget')).toEqual([
      { type: 'setBudget', slot: 'evidence', budget: 3500 },
      { type: 'setBudget', slot: 'evidence', budget: 3200 },
    ]);
  });

  it('arrowing through the model and compare pickers posts once, for the option the user stops on', async () => {
    const panel = await panelWith('sdk-qa');
    const models = snapshotOf('sdk-qa').models;
    expect(models.length).toBeGreaterThan(10);
    const model = panel.page.locator('#model-picker');
    await model.focus();
    const start = await model.inputValue();
    for (let i = 0; i < 4; i++) await panel.page.keyboard.press('ArrowDown');
    const chosen = await model.inputValue();
    expect(chosen).not.toBe(start);
    expect((await posted(panel)).filter((m) => m.type === 'selectModel')).toEqual([]);
    await panel.page.keyboard.press('Enter');
    expect((await posted(panel)).filter((m) => m.type === 'selectModel')).toEqual([{ type: 'selectModel', model: chosen }]);

    const compare = panel.page.locator('#compare-picker');
    await compare.focus();
    for (let i = 0; i < 3; i++) await panel.page.keyboard.press('ArrowDown');
    expect((await posted(panel)).filter((m) => m.type === 'setCompare')).toEqual([]);
    // Leaving the picker commits the option it rests on.
    await panel.page.keyboard.press('Tab');
    expect((await posted(panel)).filter((m) => m.type === 'setCompare')).toHaveLength(1);
  });
});

describe('invalid input and overflowing what-if', () => {
  it('a budget that is not a number shows visible error text linked to the field, and says it', async () => {
    const panel = await panelWith('sdk-qa');
    const field = panel.page.locator('[data-key="budget-evidence"]');
    await field.fill('lots');
    await field.press('Enter');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const id = await field.getAttribute('aria-describedby');
    expect(id).toBeTruthy();
    const error = panel.page.locator(`[id="${id}"]`);
    expect(await error.isVisible()).toBe(true);
    expect(await error.textContent()).toBe('evidence: type a whole number of tokens, 0 to 100,000,000.');
    expect((await said(panel)).at(-1)).toBe('evidence: type a whole number of tokens, 0 to 100,000,000.');
    expect((await posted(panel)).filter((m) => m.type === 'setBudget')).toEqual([]);
    await field.fill('400');
    expect(await field.getAttribute('aria-describedby')).toBeNull();
    expect(await error.isVisible()).toBe(false);
  });

  it('an overflowing what-if warns at Apply, visibly and in the button description', async () => {
    const panel = await panelWith('what-if-overflow');
    const apply = panel.page.locator('[data-key="apply-what-if"]');
    expect(await apply.textContent()).toBe('Apply to config anyway');
    const id = await apply.getAttribute('aria-describedby');
    const warning = panel.page.locator(`[id="${id}"]`);
    expect(await warning.isVisible()).toBe(true);
    expect(await warning.textContent()).toMatch(/^These budgets overflow the window by [\d,]+ tokens/);
  });
});

describe('reflow (WCAG 1.4.10)', () => {
  it('no sideways scroll at 720, 400 and 320 px in any state; the toolbar wraps; a 30,000-character word wraps', async () => {
    const offenders: string[] = [];
    for (const width of [720, 400, 320]) {
      const panel = await panelWith(undefined, { viewport: { width, height: 800 } });
      for (const [i, s] of states.entries()) {
        await panel.post(state(s.name, i + 1));
        const r = await panel.page.evaluate(() => {
          for (const e of Array.from(document.querySelectorAll<HTMLElement>('.msg, .table-wrap'))) e.style.contentVisibility = 'visible';
          const doc = document.scrollingElement as HTMLElement;
          const outside = Array.from(document.querySelectorAll<HTMLElement>('.toolbar *')).filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5).length;
          return { scroll: doc.scrollWidth - doc.clientWidth, outside };
        });
        if (r.scroll > 0 || r.outside > 0) offenders.push(`${s.name} at ${width} px: ${r.scroll} px sideways, ${r.outside} toolbar elements outside`);
      }
    }
    expect(offenders).toEqual([]);
    // The long word is really in the page, wrapped inside the width.
    const panel = await panelWith('long-word', { viewport: { width: 320, height: 800 } });
    // The user message is longer than a first screenful: show all of it.
    await panel.page.locator('.msg').last().getByRole('button', { name: 'Show all' }).click();
    expect(await panel.page.evaluate(() => (document.scrollingElement as HTMLElement).scrollWidth - (document.scrollingElement as HTMLElement).clientWidth)).toBe(0);
    const q = await panel.page.locator('.item[data-slot="question"] .item-text').evaluate((e) => ({ length: e.textContent?.length ?? 0, right: e.getBoundingClientRect().right, lines: Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)) }));
    expect(q.length).toBe(LONG_WORD);
    expect(q.right).toBeLessThanOrEqual(320);
    expect(q.lines).toBeGreaterThan(10);
  });
});

describe('evidence with the server\'s real snapshots', () => {
  it('each item gets a header with its id link and one "untrusted data" badge; separators get none; envelopes are dimmed', async () => {
    const panel = await panelWith('sdk-qa');
    const s = snapshotOf('sdk-qa');
    const user = s.result.messages.length - 1;
    const items = s.result.messages[user].parts.filter((p) => p.itemId !== undefined);
    const msg = panel.page.locator('.msg').nth(user);
    const blocks = await msg.locator('.item').evaluateAll((els) =>
      els.map((e) => ({
        id: e.getAttribute('data-item'),
        link: e.querySelector('.item-head button.item-id')?.textContent ?? null,
        badges: e.querySelectorAll('.badge.untrusted').length,
        open: e.querySelector('.item-text > .envelope')?.textContent?.split('\n')[0] ?? null,
        dataHasEnvelope: /\[\/?(EVIDENCE|TOOL_RESULT)/.test(Array.from(e.querySelectorAll('.data')).map((d) => d.textContent).join('')),
      })),
    );
    expect(blocks.map((b) => b.id)).toEqual(items.map((p) => p.itemId));
    for (const b of blocks) {
      expect(b.link).toBe(b.id);
      expect(b.badges).toBe(1);
      expect(b.dataHasEnvelope).toBe(false);
    }
    expect(blocks.filter((b) => b.open !== null).map((b) => b.open)).toEqual(items.filter((p) => p.slot !== 'question').map((p) => `[${p.slot === 'evidence' ? 'EVIDENCE' : 'TOOL_RESULT'} ${p.itemId}]`));
    // One badge per item in the whole message: none for the separator parts between them.
    expect(await msg.locator('.msg-body .badge.untrusted').count()).toBe(items.length);
    expect(await msg.locator('.msg-head .badge.untrusted').textContent()).toBe(`${items.length} untrusted items`);
    // The envelope is dimmed: drawn in the muted colour, the data in the foreground colour.
    const colours = await msg.locator('.item[data-item="ev_0192"]').evaluate((e) => ({ envelope: getComputedStyle(e.querySelector('.envelope')!).color, data: getComputedStyle(e.querySelector('.data')!).color }));
    expect(colours.envelope).not.toBe(colours.data);
    // And the text still reads as the message's content, to the character.
    const text = await msg.locator('.msg-body').evaluate((b) => {
      const clone = b.cloneNode(true) as HTMLElement;
      clone.querySelectorAll('.item-head, .badge').forEach((x) => x.remove());
      clone.querySelectorAll('.item').forEach((x) => x.append('\n'));
      return clone.textContent;
    });
    expect(text?.replace(/\n$/, '')).toBe(s.result.messages[user].content.replace(/\n$/, ''));
  });
});

describe('smaller things', () => {
  it('headings are named without the arrow; slot colours follow the kind; the summary counts what was dropped and jumps there', async () => {
    const panel = await panelWith('sdk-qa');
    expect(await panel.page.getByRole('heading', { name: 'Budget', exact: true }).count()).toBe(1);
    expect(await panel.page.getByRole('button', { name: 'Budget', exact: true }).getAttribute('aria-expanded')).toBe('true');
    const historyClass = async (p: Panel): Promise<string | null> => p.page.locator('.budget-bar [data-seg="slot-history"]').getAttribute('class');
    expect(await historyClass(panel)).toContain('k-history');
    const refund = await panelWith('refund');
    expect(await historyClass(refund)).toContain('k-history');
    const colour = (p: Panel): Promise<string> => p.page.locator('.legend [data-seg="slot-history"] .swatch').evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(await colour(refund)).toBe(await colour(panel));

    // Bar labels are whole or absent, never cut ("output rese").
    const cut = await panel.page.locator('.budget-bar .seg-label').evaluateAll((ls) => ls.filter((l) => !(l as HTMLElement).hidden && (l as HTMLElement).offsetWidth > (l.parentElement?.clientWidth ?? 0)).map((l) => l.textContent));
    expect(cut).toEqual([]);
    expect(await panel.page.locator('.budget-bar .seg-label:not([hidden])').count()).toBeGreaterThan(0);

    const jump = panel.page.locator('[data-key="jump-omitted"]');
    expect(await jump.textContent()).toBe('2 items dropped');
    await jump.click();
    expect(await focusedKey(panel)).toBe('toggle-omitted');
  });

  it('zero-config says "sample" in the picker and the summary', async () => {
    const panel = await panelWith('zero-config-outdoor-gear');
    expect(await panel.page.locator('#fixture-picker option:checked').textContent()).toBe('sample');
    expect(await panel.page.locator('.summary').textContent()).toContain('Fixture sample');
    expect(await panel.page.locator('#compare-picker option').allTextContents()).not.toContain('sample');
  });

  it('changed rows in compare are marked by a word, not by colour alone', async () => {
    const panel = await panelWith('compare-fixture');
    const rows = await panel.page.locator('.compare-slots tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.classList.contains('changed'), tr.querySelector('th')?.textContent ?? '']));
    expect(rows.some(([changed]) => changed)).toBe(true);
    for (const [changed, th] of rows) expect((th as string).endsWith('changed')).toBe(changed);
  });
});

describe('the runtime line in the summary', () => {
  it('a .prompty request says which Prompty line it follows; a .prompt request says none', async () => {
    const prompty = await panelWith('refund');
    expect(await prompty.page.locator('.summary .runtime-line').textContent()).toContain(`rendered as ${snapshotOf('refund').result.trace.runtime}`);
    expect(snapshotOf('refund').result.trace.runtime).toMatch(/^Prompty (0\.1\.x|v2)$/);
    const dotprompt = await panelWith('sdk-qa');
    expect(await dotprompt.page.locator('.summary .runtime-line').count()).toBe(0);
  });
});
