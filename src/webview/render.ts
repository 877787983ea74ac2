/**
 * Renders one preview snapshot into the webview's DOM: the toolbar (pickers, actions), the budget
 * bar, the slot table, findings, kept items with their placement, omitted items with reasons, and
 * the rendered messages with slot boundaries, item ids, untrusted data and hidden characters.
 *
 * Every string from the snapshot reaches the DOM through `el()` text children or
 * `appendVisibleText`, i.e. as text nodes. Large snapshots stay fast because long message bodies
 * and long tables are cut to a first screenful with a "show all" control, and text is split only
 * where hidden characters occur.
 */
import type { BudgetReport, MessagePart, PersistedPreviewState, PreviewSnapshot, RenderedMessage, SlotTrace, SourceLocation, Trace, WebviewMessage } from '../protocol/preview';
import { selectedFixtureName } from './announce';
import { commitOnIntent } from './commit';
import { append, button, el, srOnly } from './dom';
import type { Child } from './dom';
import { basename, describeReason, fmt, fmtChars, fmtScore, pct, plural } from './format';
import { appendVisibleText, breakableNode, visibleNode, visibleString } from './hiddenChars';
import { budgetEditor, compareColumns, compareError, comparePicker, compareSection, whatIfActions, whatIfBanner } from './variant';
import type { Widgets } from './variant';
import type { RenderContext } from './context';

/** Characters of a message body shown before "show all" (about three screens of text). */
export const BODY_LIMIT = 12_000;
/** Rows of the kept/omitted tables shown before "show all". */
export const ROW_LIMIT = 50;

export type { RenderContext } from './context';

/** Lookup tables from the snapshot's locations. */
export interface Locations {
  item(slot: string, id: string): SourceLocation | undefined;
  slot(slot: string): SourceLocation | undefined;
  message(index: number): SourceLocation | undefined;
}

function indexLocations(s: PreviewSnapshot): Locations {
  const items = new Map<string, SourceLocation>();
  for (const l of s.locations.items) items.set(`${l.slot}\u0000${l.id}`, { path: l.path, line: l.line });
  const slots = new Map<string, SourceLocation>();
  for (const l of s.locations.slots) slots.set(l.slot, { path: l.path, line: l.line });
  return {
    item: (slot, id) => items.get(`${slot}\u0000${id}`),
    slot: (slot) => slots.get(slot),
    message: (i) => s.locations.messages[i] ?? undefined,
  };
}

function where(loc: SourceLocation): string {
  return `${basename(loc.path)}:${loc.line + 1}`;
}

/** A link-styled button that asks the host to reveal `loc`; plain text when there is no location. */
function revealButton(ctx: RenderContext, text: string, loc: SourceLocation | undefined, what: string, key: string, cls = 'link'): HTMLElement {
  // Ids and names come from fixtures: a zero-width character must not make two look the same.
  if (!loc) return el('span', { class: `${cls} no-loc` }, breakableNode(text));
  // The accessible name starts with the visible text (WCAG "label in name"), then says what a click does.
  const shown = visibleString(text);
  const b = button('', () => ctx.post({ type: 'revealSource', path: loc.path, line: loc.line }), {
    class: cls,
    label: `${shown}, reveal ${visibleString(what)} at ${visibleString(where(loc))}`,
    // The key names the same link in the next render, so that it keeps focus across refreshes.
    attrs: { title: `Reveal ${visibleString(what)} at ${visibleString(where(loc))}`, 'data-key': `reveal-${key}` },
  });
  b.appendChild(breakableNode(text));
  return b;
}

/** A collapsible section with a heading whose button toggles it (state kept in `ui.open`). */
function section(ctx: RenderContext, id: string, title: string, extra: Child, body: () => Child[]): HTMLElement {
  const open = ctx.ui.open[id] ?? true;
  const bodyId = `sec-${id}-body`;
  const toggle = button('', () => {
    ctx.ui.open[id] = !open;
    ctx.changed();
  }, { class: 'section-toggle', attrs: { 'aria-expanded': String(open), 'aria-controls': bodyId, 'data-key': `toggle-${id}` } });
  // The arrow is decoration (aria-expanded says it): out of the heading's accessible name.
  toggle.append(el('span', { class: 'toggle-arrow', attrs: { 'aria-hidden': 'true' } }, open ? '▾' : '▸'), title);
  const head = el('div', { class: 'section-head' }, el('h2', { attrs: { id: `sec-${id}-title` } }, toggle), extra);
  const sec = el('section', { class: `section${open ? '' : ' collapsed'}`, attrs: { id: `sec-${id}`, 'aria-labelledby': `sec-${id}-title`, 'data-anchor': `sec-${id}` } }, head);
  if (open) sec.appendChild(el('div', { class: 'section-body', attrs: { id: bodyId } }, ...body()));
  return sec;
}

/**
 * The frame of a table that may be wider than a narrow panel: it scrolls sideways on its own.
 * `markScrollRegions` makes a frame that does scroll reachable by keyboard.
 */
function tableWrap(name: string, table: HTMLTableElement): HTMLElement {
  return el('div', { class: 'table-wrap', attrs: { 'data-anchor': `wrap-${name}` } }, table);
}

/**
 * A frame whose table is wider than it gets `tabindex=0`, so that the arrow keys scroll it, and
 * is named as a region after its table's caption; a frame that fits is not a tab stop. Run after
 * the paint of every render and when the panel is resized (the widths are real only after
 * layout); `known`, the frames that scrolled in the last render, marks them without measuring.
 */
export function markScrollRegions(root: HTMLElement, known?: ReadonlySet<string>): void {
  for (const wrap of Array.from(root.querySelectorAll<HTMLElement>('.table-wrap'))) {
    const scrolls = known ? known.has(wrap.dataset.anchor ?? '') : wrap.scrollWidth > wrap.clientWidth + 1;
    if (scrolls === wrap.hasAttribute('tabindex')) continue;
    if (scrolls) {
      const caption = wrap.querySelector('caption')?.textContent ?? 'Table';
      wrap.setAttribute('tabindex', '0');
      wrap.setAttribute('role', 'region');
      wrap.setAttribute('aria-label', `${caption} (scrolls sideways)`);
      wrap.classList.add('scrolls');
    } else {
      wrap.removeAttribute('tabindex');
      wrap.removeAttribute('role');
      wrap.removeAttribute('aria-label');
      wrap.classList.remove('scrolls');
    }
  }
}

function badge(text: string, cls: string, title?: string): HTMLSpanElement {
  return el('span', { class: `badge ${cls}`, attrs: { title } }, text);
}

// ---------------------------------------------------------------------------
// Toolbar
// ---------------------------------------------------------------------------

function toolbar(s: PreviewSnapshot, ctx: RenderContext): HTMLElement {
  const fixture = el('select', { attrs: { id: 'fixture-picker', 'data-key': 'fixture', disabled: s.fixtures.length === 0 } });
  if (s.fixtures.length === 0) fixture.appendChild(el('option', { attrs: { value: '' } }, 'No fixture'));
  const shownFixture = selectedFixtureName(s);
  for (const f of s.fixtures) {
    const opt = el('option', { attrs: { value: f.path, title: visibleString(f.path) } }, visibleString(f.name));
    if (f.path === s.selectedFixture || (shownFixture !== undefined && f.name === shownFixture && s.fixtures.every((g) => g.path !== s.selectedFixture))) opt.selected = true;
    fixture.appendChild(opt);
  }
  // Arrowing through a picker does not re-assemble at every option it passes.
  let fixtureCommitted = fixture.value;
  commitOnIntent(fixture, () => {
    if (fixture.value === fixtureCommitted) return;
    fixtureCommitted = fixture.value;
    ctx.post({ type: 'selectFixture', path: fixture.value });
  });

  const model = el('select', { attrs: { id: 'model-picker', 'data-key': 'model', disabled: s.models.length === 0 } });
  for (const m of s.models) {
    const opt = el('option', { attrs: { value: m } }, visibleString(m));
    if (m === s.selectedModel) opt.selected = true;
    model.appendChild(opt);
  }
  let modelCommitted = model.value;
  commitOnIntent(model, () => {
    if (model.value === modelCommitted) return;
    modelCommitted = model.value;
    ctx.post({ type: 'selectModel', model: model.value });
  });
  const compare = comparePicker(s, ctx);

  const noRequest = !s.result.ok;
  const copyOpenAi = button('Copy as OpenAI JSON', () => ctx.post({ type: 'copyRequest', format: 'openai' }), {
    attrs: { 'data-key': 'copy-openai', disabled: noRequest, title: 'Copy the Chat Completions messages array' },
  });
  const copyAnthropic = button('Copy as Anthropic JSON', () => ctx.post({ type: 'copyRequest', format: 'anthropic' }), {
    attrs: { 'data-key': 'copy-anthropic', disabled: noRequest, title: 'Copy a Messages API body with system separated' },
  });
  const exportTrace = button('Export trace', () => ctx.post({ type: 'exportTrace' }), {
    class: 'secondary',
    attrs: { 'data-key': 'export-trace', title: 'Save the request trace as JSON' },
  });
  const refresh = button('↻', () => ctx.post({ type: 'refresh' }), {
    class: 'secondary icon',
    label: 'Refresh preview',
    attrs: { 'data-key': 'refresh', title: 'Refresh preview' },
  });

  return el(
    'header',
    { class: 'toolbar' },
    el(
      'div',
      { class: 'title' },
      el('h1', null, visibleNode(s.template.name)),
      el('span', { class: 'muted', attrs: { title: s.templateUri } }, `version ${s.documentVersion}`),
    ),
    el(
      'div',
      { class: 'pickers', attrs: { role: 'group', 'aria-label': 'Fixture, model and comparison' } },
      el('span', { class: 'picker' }, el('label', { attrs: { for: 'fixture-picker' } }, 'Fixture'), fixture),
      el('span', { class: 'picker' }, el('label', { attrs: { for: 'model-picker' } }, 'Model'), model),
      el('span', { class: 'picker' }, el('label', { attrs: { for: 'compare-picker' } }, 'Compare with'), compare),
    ),
    el('div', { class: 'actions', attrs: { role: 'group', 'aria-label': 'Request actions' } }, copyOpenAi, copyAnthropic, exportTrace, refresh),
  );
}

/**
 * The one-line summary under the toolbar. Not a live region: the panel's persistent live region
 * (announce.ts) says what changed, once per re-assembly.
 */
function summaryLine(s: PreviewSnapshot, ctx: RenderContext): HTMLElement {
  const { budget, trace } = s.result;
  const fixture = selectedFixtureName(s);
  const parts: Child[] = [];
  parts.push(el('span', null, [fixture ? `Fixture ${visibleString(fixture)}` : 'No fixture', s.selectedModel ? ` · ${visibleString(s.selectedModel)}` : ''].join('')));
  parts.push(el('span', null, ` · ${budget.tokenizer} `, budget.exact ? badge('exact', 'ok', 'Counts equal the provider tokenizer') : badge('estimate', 'warn', 'Counts are an estimate')));
  // The runtime line a .prompty request follows (Prompty 0.1.x or v2): the two render differently.
  if (trace.runtime !== undefined) parts.push(el('span', { class: 'runtime-line' }, ` · rendered as ${visibleString(trace.runtime)}`));
  if (s.result.ok) parts.push(el('span', null, ` · ${fmt(trace.input_tokens)} input tokens of ${fmt(trace.input_budget)}`));
  if (s.result.ok && trace.omitted.length > 0 && !(s.compare && s.compare.error === undefined)) {
    // What was dropped sits below the kept table: the count, and a way to get there.
    const jump = button(`${plural(trace.omitted.length, 'item')} dropped`, () => {
      if (ctx.ui.open.omitted === false) {
        ctx.ui.open.omitted = true;
        ctx.changed();
      }
      const sec = document.getElementById('sec-omitted');
      if (!sec) return;
      sec.scrollIntoView({ block: 'start' });
      sec.querySelector<HTMLElement>('.section-toggle')?.focus({ preventScroll: true });
    }, { class: 'link summary-link', label: `${plural(trace.omitted.length, 'item')} dropped, go to Omitted items`, attrs: { 'data-key': 'jump-omitted' } });
    parts.push(el('span', null, ' · ', jump));
  }
  if (s.whatIf) parts.push(el('span', null, ' · ', badge('what-if budgets', 'warn', 'The request is re-assembled with budgets changed in this panel; the config is unchanged')));
  if (!budget.fits) parts.push(el('strong', { class: 'over-text' }, ` · budget over by ${fmt(overWindow(budget))}`));
  return el('p', { class: 'summary' }, ...parts);
}

// ---------------------------------------------------------------------------
// Budget bar
// ---------------------------------------------------------------------------

interface Segment {
  key: string;
  label: string;
  /** The slot of a slot segment (its budget can be edited as a what-if). */
  slot?: string;
  tokens: number;
  cls: string;
  used?: number;
}

/**
 * A slot's colour class, keyed by its kind, so that `history` has the same colour in every
 * template (not the colour of its position). Kinds are few; two slots of one kind share a colour
 * and are told apart by their names, which the legend and the bar's labels show.
 */
export function slotColour(kind: string | undefined): string {
  return `k-${kind && /^[a-z]+$/.test(kind) ? kind : 'other'}`;
}

function budgetSegments(budget: BudgetReport, trace: Trace): Segment[] {
  const used = new Map(trace.slots.map((t) => [t.name, t.used]));
  const segs: Segment[] = [];
  budget.slots.forEach((line) => {
    if (line.budget === undefined) return;
    segs.push({ key: `slot-${line.name}`, label: line.name, slot: line.name, tokens: line.budget, cls: `seg-slot ${slotColour(line.kind)}`, used: used.get(line.name) });
  });
  segs.push({ key: 'output', label: 'output reserve', tokens: budget.output, cls: 'seg-output' });
  segs.push({ key: 'margin', label: 'margin', tokens: budget.margin, cls: 'seg-margin' });
  const free = budget.window - budget.total;
  if (free > 0) segs.push({ key: 'free', label: 'free', tokens: free, cls: 'seg-free' });
  return segs;
}

function budgetSection(s: PreviewSnapshot, ctx: RenderContext): HTMLElement {
  const { budget, trace } = s.result;
  const segs = budgetSegments(budget, trace);
  const scale = Math.max(budget.window, budget.total, 1);
  const headline = budget.fits
    ? el('span', { class: 'headline' }, el('strong', null, fmt(budget.total)), ` of ${fmt(budget.window)} tokens allocated`)
    : el('span', { class: 'headline over-text' }, el('strong', null, fmt(budget.total)), ` of ${fmt(budget.window)} tokens allocated — `, el('strong', { class: 'over-by' }, `over by ${fmt(overWindow(budget))}`), overWindow(budget) !== budget.overBy ? ` (${fmt(budget.overBy)} over capacity, the rest eats the margin)` : null);

  return section(ctx, 'budget', 'Budget', headline, () => {
    const spoken = segs.map((g) => `${g.label} ${fmt(g.tokens)}${g.used !== undefined ? ` (${fmt(g.used)} used)` : ''}`).join(', ');
    const verdict = budget.fits ? 'fits' : `over by ${fmt(overWindow(budget))} tokens`;
    const bar = el('div', {
      class: `budget-bar${budget.fits ? '' : ' overflowing'}`,
      attrs: { role: 'img', 'aria-label': `Budget of the ${fmt(budget.window)}-token window: ${spoken}; total ${fmt(budget.total)}, ${verdict}.` },
    });
    let offset = 0;
    const segEls: HTMLElement[] = [];
    for (const g of segs) {
      const seg = el('div', { class: `seg ${g.cls}${s.whatIf?.budgets[g.slot ?? ''] !== undefined ? ' what-if-seg' : ''}`, attrs: { 'data-seg': g.key, 'data-tokens': g.tokens, title: `${g.label}: ${fmt(g.tokens)} tokens (${pct(g.tokens, budget.window)} of the window)` } });
      segEls.push(seg);
      seg.style.left = `${(offset / scale) * 100}%`;
      seg.style.width = `${(g.tokens / scale) * 100}%`;
      if (g.used !== undefined && g.tokens > 0) {
        const fill = el('div', { class: 'used' });
        fill.style.width = `${Math.min(g.used / g.tokens, 1) * 100}%`;
        seg.appendChild(fill);
      }
      // Shown only where it fits whole (fitBarLabels); the legend names every segment anyway.
      if (g.tokens / scale > 0.04) seg.appendChild(el('span', { class: 'seg-label' }, g.label));
      bar.appendChild(seg);
      offset += g.tokens;
    }
    if (!budget.fits) {
      const beyond = budget.total - budget.window;
      const over = el('div', { class: 'overflow', attrs: { 'data-seg': 'overflow', title: `Over the window by ${fmt(overWindow(budget))} tokens` } }, beyond / scale > 0.07 ? el('span', { class: 'seg-label' }, `+${fmt(beyond)}`) : null);
      over.style.left = `${(budget.window / scale) * 100}%`;
      over.style.width = `${(beyond / scale) * 100}%`;
      bar.appendChild(over);
    }
    const marker = el('div', { class: 'window-marker' });
    marker.style.left = `${(budget.window / scale) * 100}%`;
    bar.appendChild(marker);
    for (const e of Array.from(bar.children)) e.setAttribute('aria-hidden', 'true');

    const axis = el('div', { class: 'axis', attrs: { 'aria-hidden': 'true' } }, el('span', null, '0'));
    const windowLabel = el('span', { class: 'axis-window' }, `window ${fmt(budget.window)}`);
    windowLabel.style.left = `${(budget.window / scale) * 100}%`;
    axis.appendChild(windowLabel);

    // While a slider is dragged, the bar follows: the slot's segment and those after it move.
    const dragTo = (index: number, tokens: number): void => {
      let at = 0;
      segs.forEach((g, i) => {
        const t = i === index ? tokens : g.tokens;
        segEls[i].style.left = `${(at / scale) * 100}%`;
        segEls[i].style.width = `${(t / scale) * 100}%`;
        at += t;
      });
    };
    const legend = el('ul', { class: 'legend', attrs: { 'aria-label': 'Budget segments; slot budgets can be changed as a what-if' } });
    segs.forEach((g, i) => {
      const was = g.slot !== undefined && s.whatIf?.budgets[g.slot] !== undefined ? s.whatIf.written[g.slot] : undefined;
      const num = el('span', { class: 'num' }, fmt(g.tokens));
      legend.appendChild(
        el(
          'li',
          { class: g.slot !== undefined ? `slot-budget${was !== undefined ? ' what-if-changed' : ''}` : undefined, attrs: { 'data-seg': g.key } },
          el('span', { class: `swatch ${g.cls}`, attrs: { 'aria-hidden': 'true' } }),
          el('span', { class: 'legend-name' }, g.label),
          num,
          el('span', { class: 'muted num' }, pct(g.tokens, budget.window)),
          // Budget against use in words, not only as the segment's tint against its fill.
          g.used !== undefined ? el('span', { class: 'legend-used muted' }, `${fmt(g.used)} used`, g.used > g.tokens ? el('span', { class: 'over-text' }, ' (over)') : null) : null,
          was !== undefined ? el('span', { class: 'was muted' }, `what-if · written ${was === null ? 'none' : fmt(was)}`) : null,
          g.slot !== undefined
            ? budgetEditor(g.slot, i, g.tokens, budget.window, ctx, (t) => {
                num.textContent = fmt(t);
                dragTo(i, t);
              })
            : null,
        ),
      );
    });
    if (!budget.fits) {
      legend.appendChild(
        el('li', { class: 'over-text', attrs: { 'data-seg': 'overflow' } }, el('span', { class: 'swatch seg-overflow', attrs: { 'aria-hidden': 'true' } }), el('span', { class: 'legend-name' }, 'over the window'), el('span', { class: 'num' }, fmt(overWindow(budget))), el('span', { class: 'muted num' }, pct(overWindow(budget), budget.window))),
      );
    }

    const out: Child[] = [bar, axis, legend, whatIfActions(s, ctx)];
    if (budget.limits) out.push(el('p', { class: 'muted' }, `Separate endpoint limits: input ${fmt(budget.limits.input)}, output ${fmt(budget.limits.output)}.`));
    out.push(requestMeter(trace));
    return out;
  });
}

/** The assembled request's input tokens against the input budget (the trace's numbers). */
function requestMeter(trace: Trace): HTMLElement {
  const over = trace.input_tokens > trace.input_budget;
  const scale = Math.max(trace.input_budget, trace.input_tokens, 1);
  const track = el('div', { class: `meter${over ? ' overflowing' : ''}`, attrs: { 'aria-hidden': 'true' } });
  const fill = el('div', { class: 'meter-fill' });
  fill.style.width = `${(Math.min(trace.input_tokens, trace.input_budget) / scale) * 100}%`;
  track.appendChild(fill);
  if (over) {
    const o = el('div', { class: 'meter-over' });
    o.style.left = `${(trace.input_budget / scale) * 100}%`;
    o.style.width = `${((trace.input_tokens - trace.input_budget) / scale) * 100}%`;
    track.appendChild(o);
  }
  const text = over
    ? el('span', { class: 'over-text' }, `Assembled input: ${fmt(trace.input_tokens)} of ${fmt(trace.input_budget)} tokens — over by ${fmt(trace.input_tokens - trace.input_budget)}`)
    : el('span', null, `Assembled input: ${fmt(trace.input_tokens)} of ${fmt(trace.input_budget)} tokens (${pct(trace.input_tokens, trace.input_budget)})`);
  return el('div', { class: 'request-meter' }, text, track);
}

// ---------------------------------------------------------------------------
// Slot table
// ---------------------------------------------------------------------------

function slotsSection(s: PreviewSnapshot, ctx: RenderContext, loc: Locations): HTMLElement {
  const { budget, trace } = s.result;
  const traced = new Map<string, SlotTrace>(trace.slots.map((t) => [t.name, t]));
  const names = [...budget.slots.map((l) => l.name), ...trace.slots.map((t) => t.name).filter((n) => !budget.slots.some((l) => l.name === n))];
  return section(ctx, 'slots', 'Slots', el('span', { class: 'muted' }, `${names.length} slots`), () => {
    const table = el('table', { class: 'grid-table slots-table' });
    table.appendChild(el('caption', { class: 'sr-only' }, 'Slots: kind, trust, budget, tokens used, items kept and omitted'));
    table.appendChild(
      el(
        'thead',
        null,
        el('tr', null, ...['Slot', 'Kind', 'Trust', 'Budget', 'Used', 'Kept', 'Omitted'].map((h, i) => el('th', { class: i >= 3 ? 'num' : undefined, attrs: { scope: 'col' } }, h))),
      ),
    );
    const tbody = el('tbody');
    names.forEach((name) => {
      const line = budget.slots.find((l) => l.name === name);
      const t = traced.get(name);
      const coloured = budget.slots.some((l) => l.name === name && l.budget !== undefined);
      const trust = line?.trust ?? t?.trust;
      const b = line?.budget ?? t?.budget;
      const over = b !== undefined && t !== undefined && t.used > b;
      tbody.appendChild(
        el(
          'tr',
          { attrs: { 'data-slot': name, 'data-anchor': `slot-row-${name}` } },
          el(
            'th',
            { attrs: { scope: 'row' } },
            el(
              'span',
              { class: 'slot-cell' },
              coloured ? el('span', { class: `swatch seg-slot ${slotColour(line?.kind ?? t?.kind)}`, attrs: { 'aria-hidden': 'true' } }) : null,
              revealButton(ctx, name, loc.slot(name), `slot ${name}`, `slot-${name}`),
            ),
            line?.required ? badge('required', 'neutral', 'Never dropped to fit the request') : null,
          ),
          el('td', null, line?.kind ?? t?.kind ?? ''),
          el('td', null, trust === 'untrusted' ? badge('untrusted', 'untrusted') : trust === 'trusted' ? badge('trusted', 'trusted') : '—'),
          el('td', { class: 'num' }, b === undefined ? '—' : fmt(b), line?.written !== undefined && typeof line.written === 'string' ? el('span', { class: 'muted' }, ` (${line.written})`) : null),
          el('td', { class: `num${over ? ' over-text' : ''}` }, t ? fmt(t.used) : '—', over ? srOnly(' (over budget)') : null),
          el('td', { class: 'num' }, t ? fmt(t.kept) : '—'),
          el('td', { class: `num${t && t.omitted > 0 ? ' warn-text' : ''}` }, t ? fmt(t.omitted) : '—'),
        ),
      );
    });
    table.appendChild(tbody);
    const inputOver = trace.input_tokens > trace.input_budget;
    table.appendChild(
      el(
        'tfoot',
        null,
        el(
          'tr',
          null,
          el('th', { attrs: { scope: 'row', colspan: 3 } }, 'Input (whole request)'),
          el('td', { class: 'num' }, fmt(trace.input_budget)),
          el('td', { class: `num${inputOver ? ' over-text' : ''}` }, fmt(trace.input_tokens)),
          el('td', { class: 'num' }, fmt(trace.retained.length)),
          el('td', { class: 'num' }, fmt(trace.omitted.length)),
        ),
      ),
    );
    return [tableWrap('slots', table)];
  });
}

// ---------------------------------------------------------------------------
// Findings
// ---------------------------------------------------------------------------

function findingsSection(s: PreviewSnapshot, ctx: RenderContext): HTMLElement | undefined {
  const { counts, items } = s.findings;
  const total = counts.error + counts.warning + counts.info + counts.hint;
  if (total === 0) return undefined;
  const label = (['error', 'warning', 'info', 'hint'] as const)
    .filter((k) => counts[k] > 0)
    .map((k) => `${counts[k]} ${k}${counts[k] === 1 ? '' : k === 'info' ? '' : 's'}`)
    .join(' · ');
  return section(ctx, 'findings', 'Findings', el('span', { class: counts.error > 0 ? 'over-text' : 'muted' }, label), () => {
    const list = el('ul', { class: 'findings' });
    items.forEach((f, i) => {
      const msg = el('span', { class: 'finding-message' });
      appendVisibleText(msg, f.message);
      list.appendChild(
        el(
          'li',
          { class: `finding sev-${f.severity}`, attrs: { 'data-anchor': `finding-${i}` } },
          el(
            'div',
            { class: 'finding-head' },
            badge(f.severity, `sev sev-${f.severity}`),
            el('code', { class: 'rule' }, f.rule),
            el('span', { class: 'spacer' }),
            revealButton(ctx, where(f.location), f.location, `finding ${f.rule}`, `finding-${i}`, 'link loc'),
          ),
          msg,
        ),
      );
    });
    const out: Child[] = [list];
    if (total > items.length) out.push(el('p', { class: 'muted' }, `${total - items.length} more not shown; see the Problems panel.`));
    return out;
  });
}

// ---------------------------------------------------------------------------
// Kept and omitted items
// ---------------------------------------------------------------------------

/**
 * A table cut to ROW_LIMIT rows unless the user chose "show all" for it. After "Show all", whose
 * button goes away, focus moves to the first row it brought, by the key `focusKey` gives that row.
 */
function limitedRows<T>(ctx: RenderContext, tableId: string, rows: readonly T[], focusKey?: (row: T) => string): { shown: readonly T[]; more: Child } {
  const all = ctx.ui.allRows.includes(tableId);
  if (all || rows.length <= ROW_LIMIT) return { shown: rows, more: null };
  const more = el(
    'p',
    { class: 'more' },
    `Showing ${fmt(ROW_LIMIT)} of ${fmt(rows.length)} rows. `,
    button(`Show all ${fmt(rows.length)}`, () => {
      ctx.ui.allRows.push(tableId);
      ctx.changed(focusKey ? focusKey(rows[ROW_LIMIT]) : `wrap-${tableId}`);
    }, { class: 'secondary small', attrs: { 'data-key': `all-${tableId}` } }),
  );
  return { shown: rows.slice(0, ROW_LIMIT), more };
}

function placementCell(p: 'start' | 'middle' | 'end'): HTMLElement {
  const pips = el('span', { class: 'pips', attrs: { 'aria-hidden': 'true' } }, ...(['start', 'middle', 'end'] as const).map((k) => el('span', { class: `pip${k === p ? ' on' : ''}${k === 'middle' && p === 'middle' ? ' mid' : ''}` })));
  return el('td', { class: `placement place-${p}` }, pips, p);
}

/** Names of a kept or an omitted item's row and link, the same in every render of the item. */
function keptKey(r: { slot: string; id: string }): string {
  return `kept-${r.slot}-${r.id}`;
}

function omittedKey(o: { slot: string; id: string }): string {
  return `omitted-${o.slot}-${o.id}`;
}

function keptSection(s: PreviewSnapshot, ctx: RenderContext, loc: Locations): HTMLElement | undefined {
  const { trace } = s.result;
  if (trace.retained.length === 0) return undefined;
  const middle = trace.retained.filter((r) => r.placement === 'middle').length;
  return section(ctx, 'kept', 'Kept items', el('span', { class: 'muted' }, `${fmt(trace.retained.length)} kept${middle ? ` · ${middle} in the middle of a slot` : ''}`), () => {
    const { shown, more } = limitedRows(ctx, 'kept', trace.retained, (r) => `reveal-${keptKey(r)}`);
    const table = el('table', { class: 'grid-table kept-table' });
    table.appendChild(el('caption', { class: 'sr-only' }, 'Kept items in final order, with where each landed in its slot'));
    table.appendChild(el('thead', null, el('tr', null, ...['Slot', '#', 'Item', 'Tokens', 'Score', 'Placement'].map((h, i) => el('th', { class: i === 1 || i === 3 || i === 4 ? 'num' : undefined, attrs: { scope: 'col' } }, h)))));
    const tbody = el('tbody');
    for (const r of shown) {
      const itemCell = el('td', null, revealButton(ctx, r.id, loc.item(r.slot, r.id), `item ${r.id}`, keptKey(r)));
      if (r.merged && r.merged.length > 0) itemCell.appendChild(badge(`+${r.merged.length} merged`, 'neutral', `Merged duplicates: ${r.merged.join(', ')}`));
      if (r.conflicts_with?.length) itemCell.appendChild(badge(`conflicts with ${visibleString(r.conflicts_with.join(', '))}`, 'warn', 'Its envelope names the items it disagrees with (see Conflicts)'));
      for (const why of r.reasons ?? []) itemCell.appendChild(badge(visibleString(why), 'neutral reason', reasonSentence(s, why)));
      tbody.appendChild(
        el('tr', { attrs: { 'data-item': r.id, 'data-anchor': `row-${keptKey(r)}` } }, el('td', null, visibleNode(r.slot)), el('td', { class: 'num' }, String(r.position + 1)), itemCell, el('td', { class: 'num' }, fmt(r.tokens)), el('td', { class: 'num' }, fmtScore(r.score)), placementCell(r.placement)),
      );
    }
    table.appendChild(tbody);
    return [tableWrap('kept', table), more];
  });
}

function omittedSection(s: PreviewSnapshot, ctx: RenderContext, loc: Locations): HTMLElement | undefined {
  const { trace } = s.result;
  if (trace.omitted.length === 0) return undefined;
  return section(ctx, 'omitted', 'Omitted items', el('span', { class: 'warn-text' }, `${fmt(trace.omitted.length)} omitted`), () => {
    const { shown, more } = limitedRows(ctx, 'omitted', trace.omitted, (o) => `reveal-${omittedKey(o)}`);
    const table = el('table', { class: 'grid-table omitted-table' });
    table.appendChild(el('caption', { class: 'sr-only' }, 'Omitted items with the reason each was left out'));
    table.appendChild(el('thead', null, el('tr', null, ...['Slot', 'Item', 'Tokens', 'Reason'].map((h, i) => el('th', { class: i === 2 ? 'num' : undefined, attrs: { scope: 'col' } }, h)))));
    const tbody = el('tbody');
    for (const o of shown) {
      tbody.appendChild(
        el(
          'tr',
          { attrs: { 'data-item': o.id, 'data-anchor': `row-${omittedKey(o)}` } },
          el('td', null, visibleNode(o.slot)),
          el('td', null, revealButton(ctx, o.id, loc.item(o.slot, o.id), `item ${o.id}`, omittedKey(o))),
          el('td', { class: 'num' }, fmt(o.tokens)),
          el('td', { class: 'reason' }, el('span', null, visibleNode(reasonSentence(s, o.reason))), ' ', el('code', { class: 'reason-code' }, visibleNode(o.reason))),
        ),
      );
    }
    table.appendChild(tbody);
    return [tableWrap('omitted', table), more];
  });
}

/** A reason code in words: the server's sentence (src/core/reasonText.ts via the snapshot), else the panel's short one. */
function reasonSentence(s: PreviewSnapshot, reason: string): string {
  const e = s.explain;
  return e && Object.hasOwn(e.reasons, reason) ? e.reasons[reason] : describeReason(reason);
}

/** Contradictions among candidates and how each was resolved, in the server's words. */
function conflictsSection(s: PreviewSnapshot, ctx: RenderContext): HTMLElement | undefined {
  const list = s.result.trace.conflicts ?? [];
  if (list.length === 0) return undefined;
  const labelled = list.filter((c) => c.resolution === 'labelled').length;
  return section(ctx, 'conflicts', 'Conflicts', el('span', { class: labelled ? 'warn-text' : 'muted' }, `${fmt(list.length)} found · ${fmt(labelled)} labelled`), () => {
    const ul = el('ul', { class: 'conflicts-list' });
    list.forEach((c, i) => {
      const text = s.explain?.conflicts[i] ?? `${c.kind}: ${c.items.join(', ')} (${c.resolution}${c.reason ? ` ${c.reason}` : ''})`;
      ul.appendChild(el('li', { attrs: { 'data-resolution': c.resolution } }, el('code', { class: 'reason-code' }, visibleNode(c.slot)), ' ', visibleNode(text)));
    });
    return [ul];
  });
}

/** Every sequence of untrusted text that was neutralised (a backslash inserted) before it was sent. */
function neutralisedSection(s: PreviewSnapshot, ctx: RenderContext, loc: Locations): HTMLElement | undefined {
  const list = s.result.trace.neutralised ?? [];
  if (list.length === 0) return undefined;
  return section(ctx, 'neutralised', 'Neutralised in untrusted text', el('span', { class: 'warn-text' }, `${fmt(list.length)} changed`), () => {
    const { shown, more } = limitedRows(ctx, 'neutralised', list);
    const table = el('table', { class: 'grid-table neutralised-table' });
    table.appendChild(el('caption', { class: 'sr-only' }, 'Sequences of untrusted text that could forge an envelope, a wrapper or a role marker, each with a backslash inserted'));
    table.appendChild(el('thead', null, el('tr', null, ...['Slot', 'Item', 'Offset', 'Sequence'].map((h, i) => el('th', { class: i === 2 ? 'num' : undefined, attrs: { scope: 'col' } }, h)))));
    const tbody = el('tbody');
    for (const n of shown) {
      tbody.appendChild(
        el(
          'tr',
          { attrs: { 'data-anchor': `row-neutralised-${n.slot}-${n.id ?? ''}-${n.offset}` } },
          el('td', null, visibleNode(n.slot)),
          el('td', null, n.id ? revealButton(ctx, n.id, loc.item(n.slot, n.id), `item ${n.id}`, `neutralised-${n.slot}-${n.id}-${n.offset}`) : '—'),
          el('td', { class: 'num' }, fmt(n.offset)),
          el('td', { class: 'reason' }, el('code', { class: 'reason-code' }, visibleNode(n.sequence)), ' ', el('span', null, n.kind.replace(/-/g, ' ') + (n.field ? ' (metadata)' : ''))),
        ),
      );
    }
    table.appendChild(tbody);
    return [tableWrap('neutralised', table), more];
  });
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/** Cuts `text` to `n` code units without splitting a surrogate pair. */
function cut(text: string, n: number): string {
  if (n >= text.length) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/**
 * The assembler's envelope around an item's data when one part carries all three
 * (src/core/assembly/envelope.ts): `[LABEL id]`, header lines and `Content:` before the data and
 * `[/LABEL]` after it, or `<tag id="…" …>` and `</tag>`. The envelope is markup the assembler
 * wrote; it is dimmed so the data it wraps stands out.
 */
const BRACKET_OPEN = /^\[([A-Za-z0-9_.-]+) [^\n]*\]\n(?:(?:Title|Version|Authority|Source|Conflicts with): [^\n]*\n)*Content:\n/;
const XML_OPEN = /^<([A-Za-z][\w.-]*) id="[^"\n]*"[^\n]*>\n/;

export function splitEnvelope(text: string): { open: string; data: string; close: string } | undefined {
  const bracket = BRACKET_OPEN.exec(text);
  const xml = bracket ? null : XML_OPEN.exec(text);
  const m = bracket ?? xml;
  if (!m) return undefined;
  const close = bracket ? `\n[/${m[1]}]` : `\n</${m[1]}>`;
  if (!text.endsWith(close) || text.length < m[0].length + close.length) return undefined;
  return { open: m[0], data: text.slice(m[0].length, text.length - close.length), close };
}

/** A slot's part that belongs to no item and holds only white space: the separator between two items. */
function isSeparator(p: MessagePart): boolean {
  return p.itemId === undefined && /^\s*$/.test(p.text);
}

/**
 * Renders a message's parts. Consecutive parts of the same slot item form a group; a group that
 * starts at a line start and ends at a line end (its own last newline, or the newline that starts
 * the next part, as between the envelopes the server writes) becomes a block with a header (slot,
 * item id, one "untrusted data" badge), otherwise an inline span. Parts of a slot that belong to
 * no item and hold only white space (the separators between items) are plain text: no badge of
 * their own. Untrusted text is tinted and outlined as data; envelopes, as separate parts or inside
 * the item's one part, are dimmed as markup. Stops after `limit` characters.
 */
function renderParts(body: HTMLElement, parts: readonly MessagePart[], limit: number, ctx: RenderContext, loc: Locations, key: string): void {
  let left = limit;
  let atLineStart = true;
  // A block's boundary is a line break: it stands for the newline the next part starts with.
  let dropNewline = false;
  const put = (parent: Node, text: string, cls?: string): void => {
    if (left <= 0 || text.length === 0) return;
    const t = cut(text, left);
    left -= t.length;
    if (!cls) {
      appendVisibleText(parent, t);
      return;
    }
    const span = el('span', { class: cls });
    appendVisibleText(span, t);
    parent.appendChild(span);
  };
  for (let i = 0; i < parts.length && left > 0; ) {
    const p = parts[i];
    if (p.slot === undefined || isSeparator(p)) {
      put(body, dropNewline && p.text.startsWith('\n') ? p.text.slice(1) : p.text);
      dropNewline = false;
      if (p.text.length > 0) atLineStart = p.text.endsWith('\n');
      i++;
      continue;
    }
    let j = i + 1;
    while (j < parts.length && parts[j].slot === p.slot && parts[j].itemId === p.itemId) j++;
    const group = parts.slice(i, j);
    const untrusted = group.some((g) => g.untrusted);
    const last = group[group.length - 1].text;
    const next = parts[j] as MessagePart | undefined;
    const endsLine = last.endsWith('\n') || next === undefined || next.text.startsWith('\n');
    const block: boolean = atLineStart && endsLine;
    const cls = `${block ? 'item' : 'slot-inline'}${untrusted ? ' untrusted' : ''}`;
    const container = el(block ? 'div' : 'span', { class: cls, attrs: { 'data-slot': p.slot, 'data-item': p.itemId, 'data-anchor': block ? `${key}-${p.slot}-${p.itemId ?? ''}` : undefined } });
    if (block) {
      const head = el('div', { class: 'item-head' }, el('span', { class: 'slot-name' }, visibleNode(p.slot)));
      if (p.itemId) head.appendChild(revealButton(ctx, p.itemId, loc.item(p.slot, p.itemId), `item ${p.itemId}`, `${key}-${p.slot}-${p.itemId}`, 'link item-id'));
      if (untrusted) head.appendChild(badge('untrusted data', 'untrusted', 'Content from an untrusted source: the model is told to treat it as data'));
      container.appendChild(head);
    } else if (untrusted) {
      container.appendChild(badge('untrusted data', 'untrusted inline-badge', `Slot ${visibleString(p.slot)}: untrusted data`));
    }
    const textBox = block ? el('div', { class: 'item-text' }) : container;
    if (block) container.appendChild(textBox);
    group.forEach((g, k) => {
      let text = g.text;
      if (k === 0 && dropNewline && text.startsWith('\n')) text = text.slice(1);
      // The block boundary is itself the line break that ends the group.
      if (block && k === group.length - 1 && text.endsWith('\n')) text = text.slice(0, -1);
      const env = g.untrusted ? splitEnvelope(text) : undefined;
      if (env) {
        put(textBox, env.open, 'envelope');
        put(textBox, env.data, 'data');
        put(textBox, env.close, 'envelope');
      } else {
        put(textBox, text, g.untrusted ? 'data' : untrusted ? 'envelope' : 'slot-text');
      }
    });
    body.appendChild(container);
    dropNewline = block && !last.endsWith('\n');
    atLineStart = block || last.endsWith('\n');
    i = j;
  }
}

function messageItem(m: RenderedMessage, index: number, ctx: RenderContext, loc: Locations, keyPrefix = ''): HTMLElement {
  // The prefix keeps the expanded state of A's and B's messages apart in compare mode.
  const key = `${keyPrefix}msg-${index}`;
  const total = m.parts.reduce((n, p) => n + p.text.length, 0);
  const expanded = ctx.ui.expanded.includes(key);
  const limit = expanded ? Infinity : BODY_LIMIT;
  // Items, not parts: an item's envelope, its data and the separators after it are several parts.
  const untrustedItems = new Set(m.parts.filter((p) => p.untrusted && p.slot !== undefined && !isSeparator(p)).map((p) => `${p.slot}\u0000${p.itemId ?? ''}`)).size;
  const head = el(
    'div',
    { class: 'msg-head' },
    el('span', { class: `role role-${m.role}` }, m.role),
    el('span', { class: 'muted' }, `#${index + 1} · ${fmtChars(m.content.length)}`),
    untrustedItems > 0 ? badge(`${plural(untrustedItems, 'untrusted item')}`, 'untrusted subtle') : null,
    el('span', { class: 'spacer' }),
    loc.message(index) ? revealButton(ctx, `template line ${(loc.message(index)?.line ?? 0) + 1}`, loc.message(index), `the ${m.role} message`, key, 'link loc') : null,
  );
  const body = el('div', { class: 'msg-body' });
  if (m.parts.length > 0) renderParts(body, m.parts, limit, ctx, loc, key);
  else appendVisibleText(body, cut(m.content, limit));
  const shownAll = total <= BODY_LIMIT && m.content.length <= BODY_LIMIT;
  let more: Child = null;
  if (!shownAll) {
    more = el(
      'div',
      { class: 'more' },
      expanded ? `Showing all ${fmtChars(Math.max(total, m.content.length))}. ` : `Showing the first ${fmtChars(BODY_LIMIT)} of ${fmtChars(Math.max(total, m.content.length))}. `,
      button(expanded ? 'Collapse' : 'Show all', () => {
        ctx.ui.expanded = expanded ? ctx.ui.expanded.filter((k) => k !== key) : [...ctx.ui.expanded, key];
        ctx.changed();
      }, { class: 'secondary small', attrs: { 'data-key': `expand-${key}`, 'aria-expanded': String(expanded) } }),
    );
  }
  return el('li', { class: `msg role-${m.role}`, attrs: { 'data-role': m.role, 'data-anchor': key } }, head, body, more);
}

function messagesSection(s: PreviewSnapshot, ctx: RenderContext, loc: Locations): HTMLElement {
  const { messages, trace } = s.result;
  const extra = el('span', { class: 'muted' }, `${messages.length} message${messages.length === 1 ? '' : 's'}${s.result.ok ? ` · ${fmt(trace.input_tokens)} tokens` : ''}`);
  return section(ctx, 'messages', 'Request', extra, () => {
    if (!s.result.ok) return [el('p', { class: 'muted' }, 'No request: assembly failed.')];
    if (messages.length === 0) return [el('p', { class: 'muted' }, 'The template renders no messages.')];
    const list = el('ol', { class: 'messages', attrs: { 'aria-label': 'Rendered messages' } });
    messages.forEach((m, i) => list.appendChild(messageItem(m, i, ctx, loc)));
    return [list];
  });
}

// ---------------------------------------------------------------------------
// Whole views
// ---------------------------------------------------------------------------

/**
 * "Skip to the request": the first Tab stop, past the toolbar and the numbers (45 to 74 stops in
 * the examples) to the Request section's heading, or to A's request when comparing.
 */
function skipLink(): HTMLElement {
  return button('Skip to the request', () => {
    const target = document.querySelector<HTMLElement>('#sec-messages .section-toggle') ?? document.querySelector<HTMLElement>('.compare-col.side-a');
    if (!target) return;
    if (!target.matches('button')) target.setAttribute('tabindex', '-1');
    target.scrollIntoView({ block: 'start' });
    target.focus({ preventScroll: true });
  }, { class: 'skip-link', attrs: { 'data-key': 'skip-request' } });
}

/** What the what-if and compare views (variant.ts) reuse of this renderer. */
const WIDGETS: Widgets = { section, badge, messageItem, tableWrap };

export function renderSnapshot(root: HTMLElement, s: PreviewSnapshot, ctx: RenderContext): void {
  const loc = indexLocations(s);
  const frag = document.createDocumentFragment();
  frag.appendChild(skipLink());
  frag.appendChild(toolbar(s, ctx));
  // Compare mode puts A and B side by side; a comparison that failed says why above the usual view.
  const comparing = s.compare && s.compare.error === undefined ? s.compare : undefined;
  const main = el('main', { class: [s.whatIf ? 'what-if' : '', comparing ? 'comparing' : ''].filter(Boolean).join(' ') || undefined, attrs: { 'aria-label': `Preview of ${s.template.name}` } });
  main.appendChild(summaryLine(s, ctx));
  // Banners are not alerts: the panel's live region already says each of them once (announce.ts),
  // and an alert re-created by every re-render would be said again each time.
  if (!s.result.ok) {
    main.appendChild(el('div', { class: 'banner error' }, el('strong', null, 'Assembly failed: '), s.result.error ?? 'unknown error'));
  }
  append(main, [whatIfBanner(s, ctx, WIDGETS), s.compare ? compareError(s.compare, ctx) : null]);
  const side = el('div', { class: 'col col-numbers', attrs: { 'data-scroll-key': 'numbers' } });
  if (comparing) {
    append(side, [budgetSection(s, ctx), compareSection(comparing, ctx, WIDGETS), findingsSection(s, ctx)]);
    const request = el('div', { class: 'col col-request', attrs: { 'data-scroll-key': 'request' } }, compareColumns(comparing, ctx, loc, WIDGETS));
    main.appendChild(el('div', { class: 'layout' }, side, request));
    frag.appendChild(main);
    root.replaceChildren(frag);
    return;
  }
  append(side, [budgetSection(s, ctx), slotsSection(s, ctx, loc), findingsSection(s, ctx), keptSection(s, ctx, loc), omittedSection(s, ctx, loc), conflictsSection(s, ctx), neutralisedSection(s, ctx, loc)]);
  const request = el('div', { class: 'col col-request', attrs: { 'data-scroll-key': 'request' } }, messagesSection(s, ctx, loc));
  main.appendChild(el('div', { class: 'layout' }, side, request));
  frag.appendChild(main);
  root.replaceChildren(frag);
}

/**
 * Hides the budget bar's labels that do not fit their segment whole (after layout, so the widths
 * are real): a label is shown entire or not at all, never cut to "output rese". The legend names
 * every segment.
 */
export function fitBarLabels(root: HTMLElement): void {
  for (const label of Array.from(root.querySelectorAll<HTMLElement>('.budget-bar .seg-label'))) {
    const seg = label.parentElement;
    if (!seg) continue;
    label.hidden = false;
    if (label.offsetWidth + 6 > seg.clientWidth) label.hidden = true;
  }
  // What lies beyond the window is drawn under the red overflow, which covers it whole: a label
  // there ("output reserve") would name a segment the reader cannot see.
  for (const over of Array.from(root.querySelectorAll<HTMLElement>('.budget-bar .overflow'))) {
    const o = over.getBoundingClientRect();
    for (const label of Array.from(over.parentElement?.querySelectorAll<HTMLElement>('.seg .seg-label:not([hidden])') ?? [])) {
      const r = label.getBoundingClientRect();
      if (r.right > o.left && r.left < o.right) label.hidden = true;
    }
  }
}

export function renderEmpty(root: HTMLElement, reason: string, ctx: RenderContext): void {
  // "Create context config" is a quick fix, not a command: say where it is, and what else works.
  const how = /Create context config/.test(reason)
    ? el(
        'ul',
        { class: 'empty-how' },
        el('li', null, 'Create context config: in the template, put the cursor on the first line and press ', el('kbd', null, 'Ctrl+.'), ' (', el('kbd', null, '⌘.'), ' on macOS), then choose “Create context config”. In a terminal: ', el('code', null, 'ctxlens init <template>'), '.'),
        el('li', null, 'Or add sample data to the template’s front matter, or a fixture that names it.'),
      )
    : null;
  root.replaceChildren(
    el(
      'main',
      { class: 'empty', attrs: { 'aria-label': 'Context Lens preview' } },
      el('h1', null, 'Nothing to preview'),
      el('p', null, reason),
      how,
      el('p', { class: 'muted' }, 'The preview follows your edits by itself. Refresh asks the language server again now.'),
      button('Refresh', () => ctx.post({ type: 'refresh' }), { class: 'secondary', attrs: { 'data-key': 'refresh' } }),
    ),
  );
}

export function renderError(root: HTMLElement, message: string, ctx: RenderContext): void {
  root.replaceChildren(
    el(
      'main',
      { class: 'empty', attrs: { 'aria-label': 'Context Lens preview' } },
      el('div', { class: 'banner error' }, el('strong', null, 'Preview unavailable: '), message),
      button('Try again', () => ctx.post({ type: 'refresh' }), { class: 'secondary', attrs: { 'data-key': 'refresh' } }),
    ),
  );
}

/**
 * How far the bar (slots + output reserve + margin) reaches beyond the window. The budget's own
 * `overBy` counts capacity only (seed 000: 700 for 8,700 of 8,000); the bar also draws the margin.
 */
function overWindow(budget: BudgetReport): number {
  return Math.max(0, budget.total - budget.window);
}
