/**
 * Keeps the reader's place across a re-render. Every snapshot is rendered from scratch, so the
 * elements the reader was looking at and the control that had focus are new elements afterwards.
 * Before the render, `readPlace` notes for each scroller (the page, and each column of the wide
 * layout that scrolls on its own) one anchor: the focused control when it is in view, else the
 * element nearest the top of the view, named by its `data-key` (controls) or `data-anchor`
 * (sections, messages, item blocks, table rows), and how far it sat from the top of the view. It
 * also notes the height of every block laid out with `content-visibility: auto` (messages, table
 * frames). After the render, `restorePlace` gives the new blocks those heights as their
 * placeholder size, so that blocks off screen take the room they took before instead of 320 px,
 * and scrolls each scroller so that its anchor is back where it was, within a pixel. The control
 * that had focus gets it back (the same key; the n-th of that key when several share it), or, when
 * it is gone, the nearest control before it that still exists, or its section's heading.
 *
 * Only elements in or next to the view are measured: an element inside a message or table that is
 * off screen is never asked for its position, which would lay out what `content-visibility` skips.
 */

/** Elements that name a place: controls (`data-key`) and blocks (`data-anchor`). */
const PLACES = '[data-key], [data-anchor]';
/** Blocks the stylesheet lays out only near the view (`content-visibility: auto`). */
const LAZY = '.msg, .table-wrap';

interface Name {
  key: string;
  /** Which of the elements with this name (0 for the first). */
  nth: number;
}

interface ScrollerPlace {
  /** `page` or the column's `data-scroll-key`. */
  scroller: string;
  top: number;
  anchor?: Name & { offset: number };
}

export interface Place {
  scrollers: ScrollerPlace[];
  /** Height of each lazily laid out block, by name. */
  heights: Map<string, number>;
  /** The focused control, and the controls before it (nearest first), as fallbacks. */
  focus?: { name: Name; before: Name[]; section?: string };
  /** Anchors of the table frames that scrolled sideways. */
  regions: Set<string>;
}

function nameOf(e: Element): string | undefined {
  const h = e as HTMLElement;
  const k = h.dataset.key;
  if (k !== undefined) return `k:${k}`;
  const a = h.dataset.anchor;
  return a !== undefined ? `a:${a}` : undefined;
}

/** The named elements under `root` in document order, and the n-th index of each. */
function index(root: ParentNode): { list: HTMLElement[]; names: Name[]; byName: Map<string, HTMLElement[]> } {
  const list = Array.from(root.querySelectorAll<HTMLElement>(PLACES));
  const byName = new Map<string, HTMLElement[]>();
  const names: Name[] = [];
  for (const e of list) {
    const key = nameOf(e) ?? '';
    let same = byName.get(key);
    if (!same) byName.set(key, (same = []));
    names.push({ key, nth: same.length });
    same.push(e);
  }
  return { list, names, byName };
}

/** Columns that scroll on their own (the wide layout); in one column the page scrolls. */
function scrollingColumns(root: ParentNode): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>('[data-scroll-key]')).filter((c) => {
    const o = getComputedStyle(c).overflowY;
    return o === 'auto' || o === 'scroll';
  });
}

/** The top of the page's view: below the toolbar when the toolbar sticks over the page. */
function pageViewTop(root: ParentNode): number {
  const bar = root.querySelector<HTMLElement>('.toolbar');
  if (!bar || getComputedStyle(bar).position !== 'sticky') return 0;
  return Math.max(0, bar.getBoundingClientRect().bottom);
}

function view(scroller: HTMLElement | undefined, root: ParentNode): { top: number; bottom: number } {
  if (!scroller) return { top: pageViewTop(root), bottom: window.innerHeight };
  const r = scroller.getBoundingClientRect();
  return { top: r.top, bottom: r.bottom };
}

function scrollerOf(e: Element, columns: readonly HTMLElement[]): HTMLElement | undefined {
  for (const c of columns) if (c.contains(e)) return c;
  return undefined;
}

export function readPlace(root: HTMLElement): Place {
  const { list, names } = index(root);
  const columns = scrollingColumns(root);
  const views = new Map<HTMLElement | undefined, { top: number; bottom: number }>();
  const viewOf = (s: HTMLElement | undefined): { top: number; bottom: number } => {
    let v = views.get(s);
    if (!v) views.set(s, (v = view(s, root)));
    return v;
  };
  // A lazy block's own box is always known; what is inside it only when it is near the view.
  const heights = new Map<string, number>();
  const near = new Map<Element, boolean>();
  for (const block of Array.from(root.querySelectorAll<HTMLElement>(LAZY))) {
    const r = block.getBoundingClientRect();
    const v = viewOf(scrollerOf(block, columns));
    const name = nameOf(block);
    if (name) heights.set(name, r.height);
    near.set(block, r.bottom >= v.top && r.top <= v.bottom);
  }
  const measurable = (e: HTMLElement): boolean => {
    const block = e.parentElement?.closest(LAZY);
    return !block || near.get(block) === true;
  };

  const active = document.activeElement instanceof HTMLElement && root.contains(document.activeElement) ? document.activeElement : undefined;
  const best = new Map<HTMLElement | undefined, { i: number; top: number }>();
  const covering = new Map<HTMLElement | undefined, { i: number; top: number }>();
  let focused: { i: number; scroller: HTMLElement | undefined } | undefined;
  list.forEach((e, i) => {
    if (!measurable(e)) return;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    const s = scrollerOf(e, columns);
    const v = viewOf(s);
    if (r.bottom <= v.top || r.top >= v.bottom) return;
    if (e === active) focused = { i, scroller: s };
    if (r.top >= v.top - 0.5) {
      // The element that starts nearest the top of the view; the outermost of equals.
      const b = best.get(s);
      if (!b || r.top < b.top - 0.5) best.set(s, { i, top: r.top });
    } else {
      // Failing that, the innermost element that reaches across the top of the view.
      const c = covering.get(s);
      if (!c || r.top >= c.top) covering.set(s, { i, top: r.top });
    }
  });

  const scrollers: ScrollerPlace[] = [];
  const all: Array<[string, HTMLElement | undefined]> = [['page', undefined], ...columns.map((c): [string, HTMLElement] => [c.dataset.scrollKey ?? '', c])];
  for (const [key, s] of all) {
    const top = s ? s.scrollTop : window.scrollY;
    const chosen = focused && focused.scroller === s ? focused : (best.get(s) ?? covering.get(s));
    const place: ScrollerPlace = { scroller: key, top };
    if (chosen && top > 0) {
      const r = list[chosen.i].getBoundingClientRect();
      place.anchor = { ...names[chosen.i], offset: r.top - viewOf(s).top };
    }
    scrollers.push(place);
  }

  let focus: Place['focus'];
  const at = active ? list.indexOf(active) : -1;
  if (active && at >= 0) {
    const before: Name[] = [];
    for (let i = at - 1; i >= 0 && before.length < 8; i--) if (list[i].dataset.key !== undefined) before.push(names[i]);
    const section = active.closest('section.section')?.querySelector<HTMLElement>('.section-toggle')?.dataset.key;
    focus = { name: names[at], before, section: section !== undefined ? `k:${section}` : undefined };
  }
  const regions = new Set(Array.from(root.querySelectorAll<HTMLElement>('.table-wrap.scrolls')).map((w) => w.dataset.anchor ?? ''));
  return { scrollers, heights, focus, regions };
}

export interface RestoreOptions {
  /** A control to focus instead of the one that had focus (after Apply, Reset or "Show all"). */
  focusKey?: string;
  /** Scroll offsets to go back to without anchors (the first snapshot after a reload). */
  scroll?: Record<string, number>;
}

export function restorePlace(root: HTMLElement, place: Place, options: RestoreOptions = {}): void {
  const { byName } = index(root);
  const find = (n: Name | undefined): HTMLElement | undefined => (n ? byName.get(n.key)?.[n.nth] ?? byName.get(n.key)?.[0] : undefined);

  // Blocks off screen take the room they took before, not the stylesheet's placeholder.
  for (const block of Array.from(root.querySelectorAll<HTMLElement>(LAZY))) {
    const name = nameOf(block);
    const h = name !== undefined ? place.heights.get(name) : undefined;
    if (h !== undefined && h > 0) block.style.containIntrinsicHeight = `auto ${h}px`;
  }

  // Focus first, without scrolling: the anchors below put the view back.
  let target: HTMLElement | undefined;
  if (options.focusKey !== undefined) target = byName.get(`k:${options.focusKey}`)?.[0];
  const f = place.focus;
  const kept = !target && f ? find(f.name) : undefined;
  if (!target && f) target = kept ?? f.before.map(find).find((e) => e !== undefined) ?? (f.section ? byName.get(f.section)?.[0] : undefined);
  target?.focus({ preventScroll: true });

  const columns = scrollingColumns(root);
  // After a reload there is no anchor, only the offsets saved with the panel's state.
  const list: ScrollerPlace[] = options.scroll ? Object.entries(options.scroll).map(([scroller, top]) => ({ scroller, top })) : place.scrollers;
  for (const p of list) {
    const s = p.scroller === 'page' ? undefined : columns.find((c) => c.dataset.scrollKey === p.scroller);
    if (p.scroller !== 'page' && !s) continue;
    const scrollTo = (y: number): void => {
      if (s) s.scrollTop = y;
      else window.scrollTo(0, y);
    };
    const current = (): number => (s ? s.scrollTop : window.scrollY);
    // Each write forces a layout, so a fresh scroller already at 0 is left alone.
    if (p.top > 0 || current() > 0) scrollTo(p.top);
    const anchor = find(p.anchor);
    if (!anchor || !p.anchor) continue;
    const off = anchor.getBoundingClientRect().top - view(s, root).top - p.anchor.offset;
    if (Math.abs(off) >= 0.5) scrollTo(current() + off);
  }
  // A control asked for by name is brought into view (it may be where the pressed button was not).
  if (options.focusKey !== undefined && target && !kept) scrollIntoViewIfNeeded(target, root);
}

/** Scrolls `e` into view when it is outside the view or under the sticky toolbar. */
export function scrollIntoViewIfNeeded(e: HTMLElement, root: HTMLElement): void {
  const columns = scrollingColumns(root);
  const s = scrollerOf(e, columns);
  const v = view(s, root);
  const r = e.getBoundingClientRect();
  if (r.top >= v.top && r.bottom <= v.bottom) return;
  const by = r.top < v.top ? r.top - v.top - 8 : Math.min(r.bottom - v.bottom + 8, r.top - v.top - 8);
  if (s) s.scrollTop += by;
  else window.scrollBy(0, by);
}
