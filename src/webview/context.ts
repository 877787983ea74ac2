/**
 * What the panel's renderers get from the page (src/webview/main.ts): posting to the host, the
 * persisted UI state and the live region. Its own module, so render.ts and variant.ts both read
 * it without importing each other.
 */
import type { PersistedPreviewState, WebviewMessage } from '../protocol/preview';

export interface RenderContext {
  post(message: WebviewMessage): void;
  ui: PersistedPreviewState;
  /**
   * Persists `ui` and renders the current snapshot again (after a collapse or "show all"); focus
   * goes to the control with the `data-key` given, else stays on the equivalent of the focused one.
   */
  changed(focusKey?: string): void;
  /** Says `text` in the panel's live region (for feedback that comes with no new snapshot). */
  announce(text: string): void;
  /** Focuses the control with this `data-key` once the next snapshot is rendered (its button is gone by then). */
  focusAfter(key: string): void;
}
