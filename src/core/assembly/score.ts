/**
 * The selection score of seed 002:
 *
 *   0.45 relevance + 0.20 authority + 0.15 version_match + 0.10 recency + 0.10 novelty
 *   - contradiction_penalty x contradiction_risk
 *
 * with the weights from the config's `scoring` (these are the defaults). A slot is scored only
 * when at least one of its items carries metadata (relevance, authority, version, published_at);
 * otherwise its rank is the fixture order. Every ordering breaks ties by fixture index, so equal
 * scores never depend on sort stability.
 *
 * Factors, each in [0, 1]:
 * - relevance, authority: as written in the fixture (absent = 0).
 * - version_match: 1 when the item's version matches `filters.version`, 0.5 when the item states no
 *   version, 0 otherwise; 0 for every item when no version filter is set.
 * - recency: 0.5^(age / 365 days) from published_at to the reference time (`filters.now` or `now`;
 *   without one, the newest published_at in the slot, so no clock is read). Absent = 0.
 * - novelty: 1 - the highest word-set (Jaccard) overlap with the NOVELTY_WINDOW items ranked just
 *   above it by the score without novelty. Near-duplicates score alike and sit next to each other
 *   in that ranking, so a bounded window finds them while keeping the stage linear.
 * - contradiction_risk: `contradiction_risk` from the item's extra metadata (absent = 0).
 */
import type { ScoringWeights } from '../config/schema';
import type { WorkItem } from './item';
import { timeOf } from './item';
import { versionMatches } from './filters';

export const DEFAULT_WEIGHTS: ScoringWeights = {
  relevance: 0.45,
  authority: 0.2,
  version_match: 0.15,
  recency: 0.1,
  novelty: 0.1,
  contradiction_penalty: 0,
};

export const NOVELTY_WINDOW = 8;
const NOVELTY_MAX_WORDS = 512;
const DAY_MS = 86_400_000;
const HALF_LIFE_DAYS = 365;

export interface ScoreOptions {
  weights?: Partial<ScoringWeights>;
  /** `filters.version`: the version the request is about. */
  version?: string;
  /** Reference time (ISO 8601) for recency. */
  now?: string;
}

export function hasScoringMetadata(items: readonly WorkItem[]): boolean {
  return items.some((i) => i.relevance !== undefined || i.authority !== undefined || i.version !== undefined || i.published_at !== undefined);
}

/** Word set of a text, capped so one huge item cannot make the stage slow. */
export function wordSet(text: string): Set<string> {
  const set = new Set<string>();
  const re = /[\p{L}\p{N}]+/gu;
  let m: RegExpExecArray | null;
  let n = 0;
  const lower = text.length > 20_000 ? text.slice(0, 20_000).toLowerCase() : text.toLowerCase();
  while ((m = re.exec(lower)) !== null && n < NOVELTY_MAX_WORDS) {
    set.add(m[0]);
    n++;
  }
  return set;
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let inter = 0;
  for (const w of small) if (large.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Scores the items (sets `score`) and returns them best first. Without metadata the items come back
 * in fixture order with no score.
 */
export function rankItems(items: readonly WorkItem[], opts: ScoreOptions = {}): WorkItem[] {
  const byIndex = [...items].sort((a, b) => a.index - b.index);
  if (!hasScoringMetadata(items)) return byIndex;
  const w: ScoringWeights = { ...DEFAULT_WEIGHTS, ...opts.weights };
  let refMs = timeOf(opts.now);
  if (refMs === undefined) {
    for (const i of items) {
      const t = timeOf(i.published_at);
      if (t !== undefined && (refMs === undefined || t > refMs)) refMs = t;
    }
  }
  const base = new Map<WorkItem, number>();
  for (const item of byIndex) {
    const rel = clamp01(item.relevance ?? 0);
    const auth = clamp01(item.authority ?? 0);
    let vm = 0;
    if (opts.version !== undefined) vm = item.version === undefined ? 0.5 : versionMatches(item.version, opts.version) ? 1 : 0;
    let rec = 0;
    const pub = timeOf(item.published_at);
    if (pub !== undefined && refMs !== undefined) rec = Math.pow(0.5, Math.max(0, refMs - pub) / DAY_MS / HALF_LIFE_DAYS);
    const risk = typeof item.meta.contradiction_risk === 'number' ? clamp01(item.meta.contradiction_risk) : 0;
    base.set(item, w.relevance * rel + w.authority * auth + w.version_match * vm + w.recency * rec - w.contradiction_penalty * risk);
  }
  const baseOrder = [...byIndex].sort((a, b) => base.get(b)! - base.get(a)! || a.index - b.index);
  const sets: Array<Set<string>> = [];
  for (let i = 0; i < baseOrder.length; i++) {
    const set = w.novelty !== 0 ? wordSet(baseOrder[i].text) : new Set<string>();
    let maxOverlap = 0;
    if (w.novelty !== 0) for (let j = Math.max(0, i - NOVELTY_WINDOW); j < i; j++) maxOverlap = Math.max(maxOverlap, jaccard(set, sets[j]));
    sets.push(set);
    baseOrder[i].score = round4(base.get(baseOrder[i])! + w.novelty * (1 - maxOverlap));
  }
  return baseOrder.sort((a, b) => b.score! - a.score! || a.index - b.index);
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
