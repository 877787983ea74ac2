/**
 * Entry point of the preview webview (bundled to dist/media/webview.js). It owns the webview side
 * of the channel in src/protocol/preview.ts: it installs its message listener, posts `ready`,
 * renders nothing until the host sends a snapshot, and then renders each complete snapshot (or
 * the empty / error state) from scratch. It persists only UI state (open sections, expanded
 * messages, "show all" tables, scroll position) plus the template uri the host needs to restore
 * the panel after a reload.
 *
 * Each host message is also said, in one sentence, in a live region that persists across renders
 * (announce.ts); re-renders of the same message (a section collapsed) say nothing.
 *
 * After each render it stamps `data-rendered-seq` on <body> and dispatches a
 * `contextlens:rendered` event with the render time, which the tests and the benchmark wait on.
 */
import type { HostMessage, PersistedPreviewState, WebviewMessage } from '../protocol/preview';
import { validateHostMessage } from '../protocol/preview';
import { announcement, createAnnouncer } from './announce';
import { readPlace, restorePlace } from './place';
import { fitBarLabels, markScrollRegions, renderEmpty, renderError, renderSnapshot } from './render';
import type { RenderContext } from './context';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: PersistedPreviewState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

function initialState(saved: unknown): PersistedPreviewState {
  const base: PersistedPreviewState = { version: 1, open: {}, expanded: [], allRows: [], scroll: {} };
  if (typeof saved !== 'object' || saved === null) return base;
  const s = saved as Partial<PersistedPreviewState>;
  if (s.version !== 1) return base;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const open: Record<string, boolean> = {};
  if (typeof s.open === 'object' && s.open !== null) for (const [k, v] of Object.entries(s.open)) if (typeof v === 'boolean') open[k] = v;
  const scroll: Record<string, number> = {};
  if (typeof s.scroll === 'object' && s.scroll !== null) for (const [k, v] of Object.entries(s.scroll)) if (typeof v === 'number' && Number.isFinite(v)) scroll[k] = v;
  return {
    version: 1,
    templateUri: typeof s.templateUri === 'string' ? s.templateUri : undefined,
    open,
    expanded: strings(s.expanded),
    allRows: strings(s.allRows),
    scroll,
  };
}

function start(): void {
  const vscode = acquireVsCodeApi();
  const ui = initialState(vscode.getState());
  const root = document.getElementById('root') ?? document.body;
  let current: HostMessage | undefined;
  let lastSeq = -Infinity;
  let restoredScroll = false;
  const announcer = createAnnouncer(root);
  /** The control to focus once the next host message is rendered (after Reset or Apply, whose buttons go away). */
  let focusNext: string | undefined;

  const save = (): void => vscode.setState(ui);

  const ctx: RenderContext = {
    post: (message) => vscode.postMessage(message),
    ui,
    changed: (focusKey) => {
      save();
      if (current) render(current, performance.now(), false, focusKey);
    },
    announce: (text) => announcer.say(text),
    focusAfter: (key) => {
      focusNext = key;
    },
  };

  /** Scroll offsets of the page and of each column that scrolls on its own (wide layout). */
  function readScroll(): Record<string, number> {
    const out: Record<string, number> = { page: window.scrollY };
    for (const e of Array.from(root.querySelectorAll<HTMLElement>('[data-scroll-key]'))) out[e.dataset.scrollKey ?? ''] = e.scrollTop;
    return out;
  }

  function render(message: HostMessage, t0: number, fresh = false, asked?: string): void {
    // Re-rendering replaces the DOM: keep the reader's place (the element in view and the focused
    // control, place.ts), and what the user is typing in a field (a budget not yet committed)
    // unless the new snapshot changed it.
    const requested = fresh ? focusNext : asked;
    if (fresh) focusNext = undefined;
    const typing = document.activeElement instanceof HTMLInputElement && document.activeElement.type === 'text' ? document.activeElement : undefined;
    const typed = typing && typing.value !== typing.defaultValue ? { value: typing.value, initial: typing.defaultValue, start: typing.selectionStart, end: typing.selectionEnd, key: typing.dataset.key } : undefined;
    const place = readPlace(root);
    let seq: number;
    if (message.type === 'snapshot') {
      seq = message.snapshot.seq;
      renderSnapshot(root, message.snapshot, ctx);
      if (ui.templateUri !== message.snapshot.templateUri) {
        ui.templateUri = message.snapshot.templateUri;
        save();
      }
    } else if (message.type === 'empty') {
      seq = message.seq;
      renderEmpty(root, message.reason, ctx);
    } else {
      seq = message.seq;
      renderError(root, message.message, ctx);
    }
    // Frames that scrolled sideways before are marked at once (focus may go back to one); all are
    // measured again after the paint, when the layout is done anyway.
    markScrollRegions(root, place.regions);
    // The first snapshot after a reload goes back to where the user was.
    const reload = !restoredScroll && message.type === 'snapshot';
    if (reload) restoredScroll = true;
    restorePlace(root, place, { focusKey: requested, scroll: reload ? ui.scroll : undefined });
    const next = document.activeElement;
    if (typed && next instanceof HTMLInputElement && next.dataset.key === typed.key && next.defaultValue === typed.initial) {
      next.value = typed.value;
      next.setSelectionRange(typed.start, typed.end);
    }
    stickyTop();
    // Measuring the bar's labels forces the layout, so the measured time includes it, as the user would wait for it.
    fitBarLabels(root);
    void document.body.offsetHeight;
    const ms = performance.now() - t0;
    document.body.dataset.renderedSeq = String(seq);
    window.dispatchEvent(new CustomEvent('contextlens:rendered', { detail: { seq, ms } }));
    afterPaint(() => {
      markScrollRegions(root);
      document.body.dataset.settledSeq = String(seq);
    });
  }

  /** Runs `f` once the next frame is painted: its layout is then clean, and reading it is free. */
  function afterPaint(f: () => void): void {
    requestAnimationFrame(() => setTimeout(f, 0));
  }

  /** The toolbar's height while it sticks to the top, as the page's scroll padding (style.css). */
  function stickyTop(): void {
    const bar = root.querySelector<HTMLElement>('.toolbar');
    const sticks = bar !== null && getComputedStyle(bar).position === 'sticky';
    if (sticks) document.documentElement.style.setProperty('--sticky-top', `${bar.offsetHeight + 8}px`);
    else document.documentElement.style.removeProperty('--sticky-top');
  }

  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const t0 = performance.now();
    const message = validateHostMessage(event.data);
    if (!message) return;
    const seq = message.type === 'snapshot' ? message.snapshot.seq : message.seq;
    // Snapshots are complete, so an older one than what is shown is simply stale.
    if (seq < lastSeq) return;
    lastSeq = seq;
    const previous = current?.type === 'snapshot' ? current.snapshot : undefined;
    current = message;
    render(message, t0, true);
    announcer.say(announcement(message, previous));
  });

  // A resized panel changes which tables scroll sideways.
  let resizeFrame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => {
      markScrollRegions(root);
      stickyTop();
    });
  });

  // Scroll events of the page and of the columns (captured: they do not bubble), saved at most
  // every 200 ms.
  let scrollTimer: ReturnType<typeof setTimeout> | undefined;
  document.addEventListener(
    'scroll',
    () => {
      if (scrollTimer !== undefined) return;
      scrollTimer = setTimeout(() => {
        scrollTimer = undefined;
        ui.scroll = readScroll();
        save();
      }, 200);
    },
    { passive: true, capture: true },
  );

  vscode.postMessage({ type: 'ready' });
}

start();
