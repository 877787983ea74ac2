/**
 * The trace's decisions in words for the preview: the webview may not import the core, so the
 * server sends the sentences of src/core/reasonText.ts with the snapshot, the same ones
 * the hover and `ctxlens assemble --format text` print.
 */
import type { Trace } from '../core/types';
import type { PreviewExplain } from '../protocol/preview';
import { conflictText, reasonText } from '../core/reasonText';

/**
 * Reasons without an argument, always included: a what-if request (other budgets) can drop items
 * for reasons the trace it was derived from does not show.
 */
const PLAIN_REASONS = ['over-slot-budget', 'stop-policy', 'max-items', 'max-per-source', 'trimmed-for-request', 'not-relevant', 'summary-redundant', 'required', 'recent', 'summary', 'retrieved'];

export function explainTrace(trace: Trace): PreviewExplain {
  const reasons: Record<string, string> = {};
  const add = (r: string) => {
    if (!Object.hasOwn(reasons, r)) reasons[r] = reasonText(r);
  };
  for (const t of trace.retained) for (const r of t.reasons ?? []) add(r);
  for (const o of trace.omitted) add(o.reason);
  for (const c of trace.conflicts ?? []) if (c.reason) add(c.reason);
  for (const r of PLAIN_REASONS) add(r);
  return { reasons, conflicts: (trace.conflicts ?? []).map(conflictText) };
}
