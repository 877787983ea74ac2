/**
 * The preview's what-if budgets and compare mode, webview side: the "Compare with" picker, the
 * budget editor of each slot in the budget bar's legend (a slider to drag and a number to type,
 * both keyboard-operable), the what-if banner (what changed against the budgets as written, Apply
 * to config, Reset), the comparison section (token and cost deltas, kept and omitted differences
 * per slot, the first differing message, the `ctxlens diff` command that prints the same) and the
 * two requests side by side.
 *
 * Everything is rendered from the snapshot. The only state outside it is a control's value while
 * the user drags or types; a committed value is posted to the host (`setBudget`), which answers
 * with a complete snapshot. Text from the snapshot goes in as text nodes only (`el`, `visibleNode`).
 * The shared section/badge/message renderers come in as `Widgets` from render.ts, so this module
 * depends on render.ts for types only.
 */
import type { AssemblyDiff, CompareTarget, FirstDifference, PreviewCompare, PreviewComparison, PreviewSnapshot, RenderedMessage, SourceLocation } from '../protocol/preview';
import { MAX_WHAT_IF_BUDGET } from '../protocol/preview';
import { commitOnIntent, sliderStep } from './commit';
import { button, el } from './dom';
import type { Child } from './dom';
import { basename, describeReason, fmt, plural, signed } from './format';
import { visibleNode, visibleString } from './hiddenChars';
import type { RenderContext } from './context';

/** Where things come from (render.ts's lookup of the snapshot's locations). */
export interface Locations {
  item(slot: string, id: string): SourceLocation | undefined;
  slot(slot: string): SourceLocation | undefined;
  message(index: number): SourceLocation | undefined;
}

/** The renderers of render.ts this module builds on. */
export interface Widgets {
  section(ctx: RenderContext, id: string, title: string, extra: Child, body: () => Child[]): HTMLElement;
  badge(text: string, cls: string, title?: string): HTMLSpanElement;
  messageItem(m: RenderedMessage, index: number, ctx: RenderContext, loc: Locations, keyPrefix?: string): HTMLElement;
  tableWrap(name: string, table: HTMLTableElement): HTMLElement;
}

/** No locations: the items of another fixture than the snapshot's have none. */
const NO_LOCATIONS: Locations = { item: () => undefined, slot: () => undefined, message: () => undefined };

/** Dollars as `ctxlens` prints them (src/core/cost.ts formatUsd): two significant digits below a cent. */
export function fmtUsd(x: number): string {
  if (!Number.isFinite(x)) return '—';
  const v = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  const trim = (s: string, keep: number): string => s.replace(new RegExp(`(\\.\\d{${keep}}\\d*?)0+$`), '$1');
  if (v === 0) return '$0';
  if (v >= 100) return `${sign}$${Math.round(v).toLocaleString('en-US')}`;
  if (v >= 1) return `${sign}$${trim(v.toFixed(2), 2)}`;
  if (v >= 0.01) return `${sign}$${trim(v.toFixed(4), 2)}`;
  let decimals = Math.min(12, Math.ceil(-Math.log10(v)) + 1);
  if (Number(v.toFixed(decimals)) >= 0.01) decimals = 3;
  return `${sign}$${v.toFixed(decimals)}`;
}

// ---------------------------------------------------------------------------
// Compare picker
// ---------------------------------------------------------------------------

function targetValue(t: CompareTarget | undefined): string {
  if (!t) return '';
  return t.kind === 'fixture' ? `fixture:${t.path}` : t.kind === 'model' ? `model:${t.model}` : 'budget';
}

function targetOf(value: string): CompareTarget | null {
  if (value.startsWith('fixture:')) return { kind: 'fixture', path: value.slice('fixture:'.length) };
  if (value.startsWith('model:')) return { kind: 'model', model: value.slice('model:'.length) };
  return value === 'budget' ? { kind: 'budget' } : null;
}

/** "Compare with": nothing, another fixture, another model, or the budgets as written (with what-if budgets). */
export function comparePicker(s: PreviewSnapshot, ctx: RenderContext): HTMLSelectElement {
  const select = el('select', { attrs: { id: 'compare-picker', 'data-key': 'compare', title: 'Show the request beside a variant of it (B)' } });
  select.appendChild(el('option', { attrs: { value: '' } }, 'Nothing'));
  const fixtures = el('optgroup', { attrs: { label: 'Fixture' } });
  for (const f of s.fixtures) if (f.path !== s.selectedFixture && !f.path.startsWith(`${s.selectedFixture ?? ''}#`)) fixtures.appendChild(el('option', { attrs: { value: targetValue({ kind: 'fixture', path: f.path }), title: visibleString(f.path) } }, visibleString(f.name)));
  const models = el('optgroup', { attrs: { label: 'Model' } });
  for (const m of s.models) if (m !== s.selectedModel) models.appendChild(el('option', { attrs: { value: targetValue({ kind: 'model', model: m }) } }, visibleString(m)));
  const budgets = el('optgroup', { attrs: { label: 'Budgets' } }, el('option', { attrs: { value: 'budget', disabled: !s.whatIf, title: s.whatIf ? 'The budgets as written (A) beside the what-if budgets (B)' : 'Type or drag a budget in the budget bar first' } }, 'As written vs what-if'));
  for (const g of [fixtures, models, budgets]) if (g.childElementCount) select.appendChild(g);
  select.value = targetValue(s.compare?.target);
  // Arrowing through the list does not assemble a comparison per option passed.
  let committed = select.value;
  commitOnIntent(select, () => {
    if (select.value === committed) return;
    committed = select.value;
    ctx.post({ type: 'setCompare', target: targetOf(select.value) });
  });
  return select;
}

// ---------------------------------------------------------------------------
// Budget editor (what-if) in the budget bar's legend
// ---------------------------------------------------------------------------

/** A whole number of tokens typed in a field, or undefined. */
function parseBudget(text: string): number | undefined {
  const t = text.trim().replace(/[,_\s]/g, '');
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) && n <= MAX_WHAT_IF_BUDGET ? n : undefined;
}

/**
 * A slider and a number field for one slot's budget. Dragging (or the arrow keys) moves the
 * slider and calls `preview` with each value, so the bar follows; the value is posted as
 * `setBudget` (a re-assembly) when the slider is released, when the arrow keys stop, at Enter, or
 * when a typed number is confirmed with Enter or by leaving the field. A typed value that is not a
 * number of tokens shows its error as text next to the field, linked with `aria-describedby`.
 */
export function budgetEditor(slot: string, index: number, tokens: number, window: number, ctx: RenderContext, preview: (tokens: number) => void): HTMLElement {
  const name = visibleString(slot);
  const max = Math.max(window, tokens);
  const errorId = `budget-error-${index}`;
  const range = el('input', {
    class: 'budget-range',
    attrs: { type: 'range', min: 0, max, step: sliderStep(max), value: tokens, 'aria-label': `${name} budget, what-if (drag or use the arrow keys)`, 'aria-valuetext': `${fmt(tokens)} tokens`, 'data-key': `budget-range-${slot}` },
  });
  const field = el('input', {
    class: 'budget-input',
    attrs: { type: 'text', inputmode: 'numeric', value: String(tokens), size: 7, 'aria-label': `${name} budget in tokens, what-if (type and press Enter)`, 'data-key': `budget-${slot}` },
  });
  const error = el('span', { class: 'field-error', attrs: { id: errorId, hidden: true } });
  // A field that loses focus because a new snapshot replaced the DOM fires `change` on its way
  // out: only a control still on the page commits (checked once the replacement is done).
  // Enter in the field fires the browser's own change and ours: a value is sent once.
  let sent: number | undefined;
  const commit = (n: number, control: HTMLElement): void => {
    if (n === sent) return;
    sent = n;
    queueMicrotask(() => {
      if (control.isConnected && n !== tokens) ctx.post({ type: 'setBudget', slot, budget: n });
      else sent = undefined;
    });
  };
  range.addEventListener('input', () => {
    const n = Number(range.value);
    field.value = String(n);
    range.setAttribute('aria-valuetext', `${fmt(n)} tokens`);
    preview(n);
  });
  commitOnIntent(range, () => {
    const n = Number(range.value);
    if (n !== tokens) ctx.post({ type: 'setBudget', slot, budget: n });
  });
  const clearError = (): void => {
    field.removeAttribute('aria-invalid');
    field.removeAttribute('aria-describedby');
    error.hidden = true;
    error.textContent = '';
  };
  field.addEventListener('input', () => {
    clearError();
    sent = undefined;
  });
  field.addEventListener('change', () => {
    if (!field.isConnected) return;
    const n = parseBudget(field.value);
    if (n === undefined) {
      const text = `${name}: type a whole number of tokens, 0 to ${fmt(MAX_WHAT_IF_BUDGET)}.`;
      field.setAttribute('aria-invalid', 'true');
      field.setAttribute('aria-describedby', errorId);
      error.textContent = text;
      error.hidden = false;
      ctx.announce(text);
      return;
    }
    clearError();
    commit(n, field);
  });
  field.addEventListener('keydown', (e) => {
    // Enter commits even when the text did not change since the last commit attempt.
    if (e.key === 'Enter') field.dispatchEvent(new Event('change'));
  });
  return el('div', { class: 'budget-edit' }, range, field, error);
}

/**
 * Apply to config and Reset, placed right after the budget editors so that they come next in the
 * tab order. After either, focus goes back to the budget field of the first what-if slot (the
 * buttons themselves disappear with the what-if state). An overflowing what-if says so next to
 * Apply, linked to the button.
 */
export function whatIfActions(s: PreviewSnapshot, ctx: RenderContext): HTMLElement | undefined {
  const wi = s.whatIf;
  if (!wi) return undefined;
  const first = Object.keys(wi.budgets)[0];
  const back = first !== undefined ? `budget-${first}` : undefined;
  const canApply = wi.apply.ok && wi.error === undefined;
  const target = wi.apply.ok ? basename(wi.apply.path) : undefined;
  const over = Math.max(0, s.result.budget.total - s.result.budget.window);
  const warning = canApply && over > 0 ? el('p', { class: 'over-text apply-warning', attrs: { id: 'apply-warning' } }, `These budgets overflow the window by ${fmt(over)} tokens: applying them writes a config that does not fit.`) : null;
  const apply = button(
    over > 0 && canApply ? 'Apply to config anyway' : 'Apply to config',
    () => {
      if (back) ctx.focusAfter(back);
      ctx.post({ type: 'applyWhatIf' });
    },
    {
      class: warning ? 'warn-button' : undefined,
      attrs: {
        'data-key': 'apply-what-if',
        disabled: !canApply,
        'aria-describedby': warning ? 'apply-warning' : undefined,
        title: canApply ? `Write these budgets into ${visibleString(target ?? 'the config')} (an editor edit you can undo)` : wi.apply.ok ? 'The budgets do not apply' : wi.apply.reason,
      },
    },
  );
  const reset = button(
    'Reset',
    () => {
      if (back) ctx.focusAfter(back);
      ctx.post({ type: 'resetWhatIf' });
    },
    { class: 'secondary', attrs: { 'data-key': 'reset-what-if', title: 'Back to the budgets as written' } },
  );
  return el('div', { class: 'what-if-actions', attrs: { role: 'group', 'aria-label': 'What-if budgets' } }, apply, reset, warning);
}

// ---------------------------------------------------------------------------
// What-if banner
// ---------------------------------------------------------------------------

/** "input 1,922 → 1,423 tokens (−499) · cost $0.0048 → $0.0036 (−$0.0012)". */
function deltaLine(d: AssemblyDiff): HTMLElement {
  const parts: Child[] = [`Input ${fmt(d.input_tokens.a)} → ${fmt(d.input_tokens.b)} tokens (`, el('strong', null, signed(d.input_tokens.delta)), ')'];
  if (d.cost) parts.push(` · cost ${fmtUsd(d.cost.a)} → ${fmtUsd(d.cost.b)} (${signed(d.cost.delta, fmtUsd)} per request)`);
  return el('p', { class: 'delta-line' }, ...parts);
}

/** How many items the B side drops and adds against A, over all slots. */
function countChanges(d: AssemblyDiff): { dropped: number; added: number } {
  let dropped = 0;
  let added = 0;
  for (const s of d.slots) {
    dropped += s.only_a.length;
    added += s.only_b.length;
  }
  return { dropped, added };
}

/** Items only one side kept, per slot, with the other side's reason in words and as a code. */
function itemChanges(d: AssemblyDiff, onlyA: string, onlyB: string): HTMLElement | undefined {
  const ul = el('ul', { class: 'item-changes' });
  // "not a candidate" is the diff's word for an item the other side's data does not hold (no reason code).
  const reason = (code: string): Child[] => (code === 'not a candidate' ? [' — not in the other side’s data'] : [' — ', visibleNode(describeReason(code)), ' ', el('code', { class: 'reason-code' }, visibleNode(code))]);
  for (const s of d.slots) {
    for (const x of s.only_a) ul.appendChild(el('li', { class: 'only-a', attrs: { 'data-item': x.id, 'data-slot': s.slot } }, el('code', null, visibleNode(x.id)), ` ${onlyA} (${visibleString(s.slot)})`, ...reason(x.b)));
    for (const x of s.only_b) ul.appendChild(el('li', { class: 'only-b', attrs: { 'data-item': x.id, 'data-slot': s.slot } }, el('code', null, visibleNode(x.id)), ` ${onlyB} (${visibleString(s.slot)})`, ...reason(x.a)));
    for (const x of s.moved) ul.appendChild(el('li', { class: 'moved', attrs: { 'data-item': x.id, 'data-slot': s.slot } }, el('code', null, visibleNode(x.id)), ` moved #${x.a + 1} → #${x.b + 1} (${visibleString(s.slot)})`));
  }
  return ul.childElementCount ? ul : undefined;
}

/**
 * Shown while what-if budgets are active: which budgets changed and what that does to the request
 * (against the budgets as written). Its buttons are under the budget bar (`whatIfActions`).
 */
export function whatIfBanner(s: PreviewSnapshot, ctx: RenderContext, w: Widgets): HTMLElement | undefined {
  const wi = s.whatIf;
  if (!wi) return undefined;
  const changed = el('ul', { class: 'what-if-budgets' });
  for (const [slot, n] of Object.entries(wi.budgets)) {
    const was = wi.written[slot];
    changed.appendChild(el('li', { attrs: { 'data-slot': slot } }, el('strong', null, visibleNode(slot)), ` ${was === null || was === undefined ? 'no budget' : fmt(was)} → ${fmt(n)}`));
  }
  const canApply = wi.apply.ok && wi.error === undefined;
  const target = wi.apply.ok ? basename(wi.apply.path) : undefined;
  const body: Child[] = [
    el('div', { class: 'what-if-head' }, w.badge('what-if', 'warn', 'Budgets changed in this panel only'), el('strong', null, ' What-if budgets'), el('span', { class: 'muted' }, ctx.ui.open.budget === false ? ' — not written to the config' : ' — not written to the config; Apply to config and Reset are under the budget bar')),
    changed,
  ];
  if (wi.error !== undefined) body.push(el('p', { class: 'over-text what-if-error' }, `Not applied: ${wi.error}`));
  else if (wi.diff) {
    body.push(deltaLine(wi.diff));
    const items = itemChanges(wi.diff, 'dropped by the what-if budgets', 'added by the what-if budgets');
    // In the same words as the summary's "N items dropped": every item left out, then the changes.
    const omitted = s.result.trace.omitted.length;
    if (items) {
      const { dropped } = countChanges(wi.diff);
      body.push(el('p', { class: 'what-if-count' }, `${plural(omitted, 'item')} dropped in all${dropped > 0 ? `, ${fmt(dropped)} of them by the what-if budgets` : ''}:`), items);
    } else {
      body.push(el('p', { class: 'muted what-if-count' }, omitted > 0 ? `The same items are kept, and the same ${plural(omitted, 'item')} dropped, as with the budgets as written.` : 'The same items are kept as with the budgets as written, and none is dropped.'));
    }
  }
  // With the budget section collapsed, its editors are gone: the buttons come into the banner.
  if (ctx.ui.open.budget === false) body.push(whatIfActions(s, ctx));
  if (!wi.apply.ok) body.push(el('p', { class: 'muted' }, wi.apply.reason));
  else if (canApply) body.push(el('p', { class: 'muted' }, `Apply to config writes ${Object.keys(wi.budgets).length === 1 ? 'this budget' : 'these budgets'} into ${visibleString(target ?? '')}; nothing else in the file changes.`));
  return el('section', { class: 'what-if-banner', attrs: { 'aria-label': 'What-if budgets', 'data-what-if': 'true' } }, ...body);
}

// ---------------------------------------------------------------------------
// Compare mode
// ---------------------------------------------------------------------------

/** A comparison that could not be made: why, and a way out. */
export function compareError(c: PreviewCompare, ctx: RenderContext): HTMLElement | undefined {
  if (c.error === undefined) return undefined;
  return el(
    'div',
    { class: 'banner error compare-error' },
    el('strong', null, 'Cannot compare: '),
    c.error,
    ' ',
    button('Stop comparing', () => ctx.post({ type: 'setCompare', target: null }), { class: 'secondary small', attrs: { 'data-key': 'stop-compare' } }),
  );
}

function firstDifferenceText(f: FirstDifference): string {
  const roles = f.role_a === f.role_b ? (f.role_a ?? 'none') : `${f.role_a ?? 'none'} / ${f.role_b ?? 'none'}`;
  return `First differing message: #${f.message + 1} (${roles}), line ${f.line}`;
}

/** Token and cost deltas, kept and omitted differences per slot, the first difference and the CLI command. */
export function compareSection(c: PreviewComparison, ctx: RenderContext, w: Widgets): HTMLElement {
  const d = c.diff;
  const extra = el('span', { class: d.input_tokens.delta === 0 ? 'muted' : 'warn-text' }, `${signed(d.input_tokens.delta)} tokens`);
  return w.section(ctx, 'compare', 'Compare', extra, () => {
    const sides = el(
      'dl',
      { class: 'compare-sides' },
      el('dt', null, 'A'),
      el('dd', null, visibleNode(c.a.label), c.a.result.ok ? null : el('span', { class: 'over-text' }, ' — cannot be built')),
      el('dt', null, 'B'),
      el('dd', null, visibleNode(c.b.label), c.b.result.ok ? null : el('span', { class: 'over-text' }, ' — cannot be built')),
    );
    const totals = el('table', { class: 'grid-table compare-totals' });
    totals.appendChild(el('caption', { class: 'sr-only' }, 'Input tokens and cost of A and B'));
    // The difference, the result, comes first: a narrow panel shows it before the table scrolls.
    totals.appendChild(el('thead', null, el('tr', null, ...['', 'Δ', 'A', 'B'].map((h, i) => el('th', { class: i > 0 ? 'num' : undefined, attrs: { scope: 'col' } }, h)))));
    const tb = el('tbody');
    tb.appendChild(el('tr', { attrs: { 'data-row': 'input' } }, el('th', { attrs: { scope: 'row' } }, 'Input tokens'), el('td', { class: 'num' }, signed(d.input_tokens.delta)), el('td', { class: 'num' }, fmt(d.input_tokens.a)), el('td', { class: 'num' }, fmt(d.input_tokens.b))));
    if (d.cost) tb.appendChild(el('tr', { attrs: { 'data-row': 'cost' } }, el('th', { attrs: { scope: 'row' } }, 'Cost per request'), el('td', { class: 'num' }, signed(d.cost.delta, fmtUsd)), el('td', { class: 'num' }, fmtUsd(d.cost.a)), el('td', { class: 'num' }, fmtUsd(d.cost.b))));
    totals.appendChild(tb);

    const slots = el('table', { class: 'grid-table compare-slots' });
    slots.appendChild(el('caption', { class: 'sr-only' }, 'Per slot: items kept and tokens used by A and by B'));
    slots.appendChild(el('thead', null, el('tr', null, ...['Slot', 'Δ tokens', 'A kept', 'B kept', 'A tokens', 'B tokens'].map((h, i) => el('th', { class: i > 0 ? 'num' : undefined, attrs: { scope: 'col' } }, h)))));
    const sb = el('tbody');
    for (const s of d.slots) {
      const changed = s.kept_a !== s.kept_b || s.total_a !== s.total_b || s.tokens_a !== s.tokens_b || s.only_a.length + s.only_b.length + s.moved.length > 0;
      sb.appendChild(
        el(
          'tr',
          { class: changed ? 'changed' : undefined, attrs: { 'data-slot': s.slot } },
          // Marked by a word, not by the colour alone.
          el('th', { attrs: { scope: 'row' } }, visibleNode(s.slot), changed ? w.badge('changed', 'warn changed-badge') : null),
          el('td', { class: `num${s.tokens_b !== s.tokens_a ? ' warn-text' : ''}` }, signed(s.tokens_b - s.tokens_a)),
          el('td', { class: 'num' }, `${fmt(s.kept_a)} of ${fmt(s.total_a)}`),
          el('td', { class: 'num' }, `${fmt(s.kept_b)} of ${fmt(s.total_b)}`),
          el('td', { class: 'num' }, fmt(s.tokens_a)),
          el('td', { class: 'num' }, fmt(s.tokens_b)),
        ),
      );
    }
    slots.appendChild(sb);

    const out: Child[] = [sides, w.tableWrap('compare-totals', totals), w.tableWrap('compare-slots', slots)];
    const items = itemChanges(d, 'only in A', 'only in B');
    if (items) out.push(el('h3', null, 'Kept by one side only'), items);
    const f = d.first_difference;
    if (f) {
      out.push(
        el(
          'p',
          { class: 'first-diff-line' },
          firstDifferenceText(f),
          ' ',
          button('Show it', () => showFirstDifference(), { class: 'secondary small', attrs: { 'data-key': 'show-first-diff' } }),
        ),
      );
    } else {
      out.push(el('p', { class: 'muted' }, 'A and B render the same messages.'));
    }
    out.push(
      el('p', { class: 'muted compare-command' }, 'The same diff in a terminal: ', el('code', null, visibleNode(['ctxlens', ...c.command].join(' ')))),
      el('p', null, button('Stop comparing', () => ctx.post({ type: 'setCompare', target: null }), { class: 'secondary small', attrs: { 'data-key': 'stop-compare' } })),
    );
    return out;
  });
}

/**
 * "Show it": scrolls the first differing message into view (A's; B's is beside it in the wide
 * layout and right after it in one column), clear of the sticky headings above it (the toolbar
 * in the one-column layout, the column's own heading), and moves focus to it, so that keyboard
 * and screen reader users land on it too.
 */
function showFirstDifference(): void {
  // A's message: B's is beside it (wide layout) or follows it (one column).
  const marked = Array.from(document.querySelectorAll<HTMLElement>('.compare-col.side-a .first-diff, .compare-col.side-b .first-diff')).slice(0, 1);
  if (marked.length === 0) return;
  for (const e of marked) {
    e.scrollIntoView({ block: 'start' });
    let covered = 0;
    for (const sticky of Array.from(document.querySelectorAll<HTMLElement>('.toolbar, .compare-col-head'))) {
      const r = sticky.getBoundingClientRect();
      const t = e.getBoundingClientRect();
      // A heading covers the message when it overlaps it horizontally and reaches below its top.
      if (getComputedStyle(sticky).position === 'sticky' && r.left < t.right && r.right > t.left && r.top <= t.top + 1 && r.bottom > t.top) covered = Math.max(covered, r.bottom - t.top);
    }
    if (covered > 0) scrollerOf(e).scrollBy(0, -(covered + 8));
  }
  marked[0].focus({ preventScroll: true });
}

/** The element that scrolls `e` vertically (a column in the wide layout), or the window. */
function scrollerOf(e: HTMLElement): { scrollBy(x: number, y: number): void } {
  for (let p = e.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    if ((o === 'auto' || o === 'scroll') && p.scrollHeight > p.clientHeight) return p;
  }
  return window;
}

/** Marks the first differing message of one side, with the line where the two start to differ. */
function markFirstDifference(li: HTMLElement, f: FirstDifference, side: 'a' | 'b', w: Widgets): void {
  li.classList.add('first-diff');
  // Focusable from script only, for "Show it".
  li.setAttribute('tabindex', '-1');
  const text = side === 'a' ? f.a : f.b;
  const callout = el('div', { class: 'diff-callout' }, w.badge('first difference', 'warn'), ` line ${f.line}: `, el('code', { class: 'diff-text' }, visibleNode(text.length > 300 ? `${text.slice(0, 300)}…` : text)));
  li.insertBefore(callout, li.children[1] ?? null);
}

/** The requests of A and B side by side, the first differing message highlighted in both. */
export function compareColumns(c: PreviewComparison, ctx: RenderContext, loc: Locations, w: Widgets): HTMLElement {
  const f = c.diff.first_difference;
  const cols = (['a', 'b'] as const).map((k) => {
    const side = c[k];
    const r = side.result;
    const letter = k.toUpperCase();
    // B's items come from another fixture when the comparison is by fixture: they have no locations here.
    const where = k === 'b' && c.target.kind === 'fixture' ? NO_LOCATIONS : loc;
    const head = el('div', { class: 'compare-col-head' }, el('h2', null, `${letter} · `, visibleNode(side.label)), el('span', { class: 'muted' }, r.ok ? `${r.messages.length} message${r.messages.length === 1 ? '' : 's'} · ${fmt(r.trace.input_tokens)} tokens` : 'cannot be built'));
    const body: Child[] = [head];
    if (!r.ok) body.push(el('p', { class: 'muted' }, `No request: ${r.error ?? 'assembly failed'}.`));
    else {
      const list = el('ol', { class: 'messages', attrs: { 'aria-label': `Messages of ${letter}` } });
      r.messages.forEach((m, i) => {
        const li = w.messageItem(m, i, ctx, where, `${k}-`);
        if (f && f.message === i) markFirstDifference(li, f, k, w);
        list.appendChild(li);
      });
      if (f && f.message >= r.messages.length) {
        list.appendChild(el('li', { class: 'msg first-diff missing', attrs: { value: f.message + 1, tabindex: -1 } }, w.badge('first difference', 'warn'), ` ${letter} has no message #${f.message + 1}.`));
      }
      body.push(list);
    }
    return el('section', { class: `compare-col side-${k}`, attrs: { 'aria-label': `${letter}: ${visibleString(side.label)}`, 'data-side': k } }, ...body);
  });
  return el('div', { class: 'compare-cols' }, ...cols);
}
