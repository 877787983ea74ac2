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
 *   in that ranking, so a bounded window finds them while keeping the stage linear. Overlap is
 *   measured on bottom-k word-hash sketches (fingerprint.ts): exact while the two texts have at
 *   most 32 distinct words between them, an estimate beyond.
 * - contradiction_risk: computed from the item's unresolved conflicts (stages/conflicts.ts: 1 when
 *   an item at least as authoritative contradicts it, 0.5 when only less authoritative ones do), or
 *   `contradiction_risk` from its extra metadata, whichever is higher (absent = 0).
 *
 * Each scored item also gets its score's weighted parts (`breakdown`, the trace's score_breakdown)
 * and its score without novelty (`base`), which value-per-token selection reuses.
 */
import type { ScoringWeights } from '../config/schema';
import type { WorkItem } from './item';
import { timeOf } from './item';
import { versionMatcher } from './filters';
import { fingerprintOf } from './item';
import { sketchOverlap } from './fingerprint';

export const DEFAULT_WEIGHTS: ScoringWeights = {
  relevance: 0.45,
  authority: 0.2,
  version_match: 0.15,
  recency: 0.1,
  novelty: 0.1,
  contradiction_penalty: 0.1,
};

export const NOVELTY_WINDOW = 8;
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

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Scores the items (sets `score`) and returns them best first. Without metadata the items come back
 * in fixture order with no score.
 */
export function rankItems(items: readonly WorkItem[], opts: ScoreOptions = {}): WorkItem[] {
  const byIndex = [...items].sort((a, b) => a.index - b.index);
  if (!hasScoringMetadata(items)) return byIndex;
  const w: ScoringWeights = { ...DEFAULT_WEIGHTS, ...opts.weights };
  const n = byIndex.length;
  const published = new Float64Array(n);
  let refMs = timeOf(opts.now);
  for (let i = 0; i < n; i++) {
    const t = timeOf(byIndex[i].published_at);
    published[i] = t ?? Number.NaN;
    if (opts.now === undefined && t !== undefined && (refMs === undefined || t > refMs)) refMs = t;
  }
  // Scores live in an array indexed by fixture position, so sorting does no map lookups.
  const base = new Float64Array(n);
  const matches = opts.version !== undefined ? versionMatcher(opts.version) : undefined;
  for (let i = 0; i < n; i++) {
    const item = byIndex[i];
    const rel = clamp01(item.relevance ?? 0);
    const auth = clamp01(item.authority ?? 0);
    let vm = 0;
    if (matches) vm = item.version === undefined ? 0.5 : matches(item.version) ? 1 : 0;
    let rec = 0;
    const pub = published[i];
    if (!Number.isNaN(pub) && refMs !== undefined) rec = Math.pow(0.5, Math.max(0, refMs - pub) / DAY_MS / HALF_LIFE_DAYS);
    const risk = Math.max(item.risk ?? 0, typeof item.meta.contradiction_risk === 'number' ? clamp01(item.meta.contradiction_risk) : 0);
    base[i] = w.relevance * rel + w.authority * auth + w.version_match * vm + w.recency * rec - w.contradiction_penalty * risk;
    item.base = base[i];
    item.breakdown = {
      relevance: round4(w.relevance * rel),
      authority: round4(w.authority * auth),
      version_match: round4(w.version_match * vm),
      recency: round4(w.recency * rec),
      novelty: 0,
      contradiction: round4(-w.contradiction_penalty * risk),
    };
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => base[b] - base[a] || a - b);
  const score = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    const item = byIndex[i];
    let maxOverlap = 0;
    if (w.novelty !== 0) {
      const sk = fingerprintOf(item).sketch;
      for (let j = Math.max(0, k - NOVELTY_WINDOW); j < k && maxOverlap < 1; j++) maxOverlap = Math.max(maxOverlap, sketchOverlap(sk, fingerprintOf(byIndex[order[j]]).sketch));
    }
    score[i] = round4(base[i] + w.novelty * (1 - maxOverlap));
    item.score = score[i];
    item.breakdown!.novelty = round4(w.novelty * (1 - maxOverlap));
  }
  return order.sort((a, b) => score[b] - score[a] || a - b).map((i) => byIndex[i]);
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
