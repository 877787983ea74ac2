/**
 * History policies (seed 000, 3.2 and 3.4): which earlier turns a history slot keeps.
 *
 * - `window`: the newest turns that fit, newest first until one does not (the sliding window; a
 *   slot without a policy behaves so too, and then treats every item as a turn).
 * - `summary`: the newest turns that fit the recent share, then summaries of the older turns in
 *   what is left. A summary is a fixture item with `summary_of: [turn ids]` (summaries are data
 *   written by the application, never generated here); an older turn a kept summary covers is
 *   omitted as `summarised-by:<summary>`, and the trace keeps that lineage.
 * - `retrieval`: turns ranked by relevance to the question, not recency: their `relevance`
 *   metadata when any turn has it, else the lexical overlap with the user slot's text (the share of
 *   the question's content words the turn contains). Turns with no relevance are `not-relevant`.
 * - `hybrid`: recent turns, summaries and retrieved older turns, each in its own share of the
 *   budget (`shares`, default 60% / 25% / 15%); tokens a part leaves unused pass on to the next.
 *
 * Summaries are used only by `summary` and `hybrid`; under `window` and `retrieval` they are
 * omitted as `policy:<policy>`. A summary that covers no older turn is `summary-redundant`.
 */
import type { HistoryPolicy, SlotConfig } from '../../config/schema';
import type { Omission, WorkItem } from '../item';
import { metaList, timeOf } from '../item';
import { pack } from '../pack';
import { historyShares } from '../../budget/remainder';
import { normalizeForDedup } from '../normalize';
import { append } from '../append';
import type { HistoryPart, HistoryPlan, HistorySelection } from './state';
export type { HistoryPart, HistoryPlan, HistorySelection } from './state';

const isSummary = (it: WorkItem): boolean => metaList(it, 'summary_of').length > 0;

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Short words that carry no topic; left out of the lexical overlap. */
const STOPWORDS = new Set(
  'about also and any are been being but can cannot could did does doing for from had has have her here his how into its just may might more most not now off our out over own same she should than that the their them then there these they this those through too under until very was were what when where which while who whom why will with would you your yours'.split(' '),
);

/** The content words of a text: normalized, three letters or more, no stopwords. */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of normalizeForDedup(text).split(' ')) if (w.length >= 3 && !STOPWORDS.has(w)) out.add(w);
  return out;
}

/** Share of the question's content words that the text contains (0 without a question). */
export function lexicalOverlap(question: ReadonlySet<string>, text: string): number {
  if (!question.size) return 0;
  const words = contentWords(text);
  let n = 0;
  for (const w of question) if (words.has(w)) n++;
  return n / question.size;
}

/**
 * Rank-time work of a history slot with a policy: retrieval scores on the turns (retrieval and
 * hybrid), and a summary's place in time (the first turn it summarises).
 */
export function prepareHistory(candidates: readonly WorkItem[], policy: HistoryPolicy | undefined, question: string): void {
  if (policy === undefined) return;
  const turns = candidates.filter((i) => !isSummary(i));
  if (policy === 'retrieval' || policy === 'hybrid') {
    const byRelevance = turns.some((i) => i.relevance !== undefined);
    const q = contentWords(question);
    for (const it of turns) {
      const s = round4(byRelevance ? Math.min(1, Math.max(0, it.relevance ?? 0)) : lexicalOverlap(q, it.text));
      it.score = s;
      it.breakdown = byRelevance ? { relevance: s } : { lexical_overlap: s };
    }
  }
  if (policy === 'summary' || policy === 'hybrid') {
    const byId = new Map(candidates.map((i) => [i.id, i]));
    for (const it of candidates) {
      if (!isSummary(it)) continue;
      let earliest: number | undefined;
      for (const id of metaList(it, 'summary_of')) {
        const t = byId.get(id);
        const at = t ? timeOf(t.at ?? t.published_at) : undefined;
        if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
      }
      if (earliest !== undefined) it.sortAt = earliest;
    }
  }
}

/**
 * Selects a history slot's items. `recentFirst` is every candidate, most recent first; `budget`
 * the slot's resolved budget (undefined: uncapped).
 */
export function selectHistory(recentFirst: readonly WorkItem[], cfg: SlotConfig | undefined, policy: HistoryPolicy | undefined, budget: number | undefined, overhead: number): HistorySelection {
  const packPolicy = cfg?.pack ?? 'stop';
  const maxItems = cfg?.max_items;
  if (policy === undefined) {
    const p = pack(recentFirst, budget, overhead, packPolicy, maxItems);
    return { picked: { kept: p.kept, omitted: p.omitted, used: p.used } };
  }
  const cap = budget ?? Number.POSITIVE_INFINITY;
  const turns = recentFirst.filter((i) => !isSummary(i));
  const summaries = recentFirst.filter(isSummary);
  const parts = new Map<WorkItem, HistoryPart>();
  const plan: HistoryPlan = { policy, budget: Number.isFinite(cap) ? cap : 0, parts };
  const omitted: Omission[] = [];
  const kept: WorkItem[] = [];
  let used = 0;
  const cost = (i: WorkItem) => i.tokens + overhead;
  const room = () => (maxItems === undefined ? Number.POSITIVE_INFINITY : maxItems - kept.length);
  const take = (i: WorkItem, part: HistoryPart) => {
    kept.push(i);
    parts.set(i, part);
    used += cost(i);
  };
  const partStats = (part: HistoryPart, partBudget: number) => {
    const mine = kept.filter((i) => parts.get(i) === part);
    return { budget: Number.isFinite(partBudget) ? partBudget : 0, used: mine.reduce((s, i) => s + cost(i), 0), kept: mine.length };
  };

  if (policy === 'window' || policy === 'retrieval') {
    for (const s of summaries) omitted.push({ item: s, reason: `policy:${policy}` });
    if (policy === 'window') {
      const p = pack(turns, budget, overhead, packPolicy, maxItems);
      for (const i of p.kept) take(i, 'recent');
      append(omitted, append(p.omitted.slice(), omitted.splice(0)));
      plan.recent = partStats('recent', cap);
    } else {
      // Best first; equal relevance, the more recent first (recentFirst order).
      const pos = new Map(turns.map((t, k) => [t, k]));
      const relevant = turns.filter((t) => (t.score ?? 0) > 0).sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || pos.get(a)! - pos.get(b)!);
      const p = pack(relevant, budget, overhead, packPolicy, maxItems);
      for (const i of p.kept) take(i, 'retrieved');
      append(omitted, append(append(p.omitted.slice(), turns.filter((t) => (t.score ?? 0) <= 0).map((t): Omission => ({ item: t, reason: 'not-relevant' }))), omitted.splice(0)));
      plan.retrieved = partStats('retrieved', cap);
    }
    return { picked: { kept, omitted, used }, plan };
  }

  // ---- summary and hybrid: recent turns first, a contiguous window (stop at the first that does not fit).
  const hybrid = policy === 'hybrid';
  // The shares of the budget (budget/remainder.ts); what a part leaves unused passes on to the next.
  const shares = historyShares(policy, cfg?.shares, cap);
  const recentCap = shares.recent;
  const windowOmitted = new Map<WorkItem, Omission['reason']>();
  let stopped = false;
  for (const t of turns) {
    if (stopped) {
      windowOmitted.set(t, 'stop-policy');
      continue;
    }
    if (room() <= 0) {
      windowOmitted.set(t, 'max-items');
      continue;
    }
    if (used + cost(t) <= recentCap) take(t, 'recent');
    else {
      windowOmitted.set(t, 'over-slot-budget');
      stopped = true;
    }
  }
  plan.recent = partStats('recent', recentCap);
  plan.leftAfterRecent = Number.isFinite(cap) ? cap - used : 0;

  // ---- Summaries of the older turns, newest first, in the summary share plus what recent left.
  const older = new Set(turns.filter((t) => !parts.has(t)));
  const summaryCap = Math.min(cap - used, shares.summary + (recentCap - plan.recent.used));
  const summaryStart = used;
  const coveredBy = new Map<WorkItem, WorkItem>();
  const byId = new Map(turns.map((t) => [t.id, t]));
  // Newest summaries first: the one that covers the most recent older turns.
  const posOf = new Map(turns.map((t, k) => [t.id, k]));
  const newest = (s: WorkItem) => {
    let best = -1;
    for (const id of metaList(s, 'summary_of')) {
      const k = posOf.get(id);
      if (k !== undefined) best = Math.max(best, turns.length - k);
    }
    return best;
  };
  const summaryOrder = [...summaries].sort((a, b) => newest(b) - newest(a) || b.index - a.index);
  for (const s of summaryOrder) {
    const covers = metaList(s, 'summary_of')
      .map((id) => byId.get(id))
      .filter((t): t is WorkItem => t !== undefined && older.has(t));
    if (!covers.length || covers.every((t) => coveredBy.has(t))) {
      omitted.push({ item: s, reason: 'summary-redundant' });
      continue;
    }
    if (room() <= 0) {
      omitted.push({ item: s, reason: 'max-items' });
      continue;
    }
    if (used - summaryStart + cost(s) > summaryCap) {
      omitted.push({ item: s, reason: 'over-slot-budget' });
      continue;
    }
    take(s, 'summary');
    for (const t of covers) if (!coveredBy.has(t)) coveredBy.set(t, s);
  }
  plan.summary = partStats('summary', summaryCap);

  // ---- Retrieved older turns (hybrid), best first, in the retrieved share plus what summaries left.
  if (hybrid) {
    const retrievedCap = Math.min(cap - used, (shares.retrieved ?? 0) + (summaryCap - plan.summary.used));
    const start = used;
    const pos = new Map(turns.map((t, k) => [t, k]));
    const ranked = [...older].filter((t) => (t.score ?? 0) > 0).sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || pos.get(a)! - pos.get(b)!);
    for (const t of ranked) {
      if (room() <= 0) break;
      if (used - start + cost(t) <= retrievedCap) take(t, 'retrieved');
    }
    plan.retrieved = partStats('retrieved', retrievedCap);
  }

  // Older turns not kept: represented by a summary, else dropped by the window.
  const turnOmissions: Omission[] = [];
  for (const t of turns) {
    if (parts.has(t)) continue;
    const s = coveredBy.get(t);
    turnOmissions.push({ item: t, reason: s ? `summarised-by:${s.id}` : (windowOmitted.get(t) ?? 'over-slot-budget') });
  }
  return { picked: { kept, omitted: [...turnOmissions, ...omitted], used }, plan };
}
