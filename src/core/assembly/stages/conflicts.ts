/**
 * Stage 4, detect conflicts (seed 002, "Contradictory context"): among a slot's candidates after
 * dedup, group the evidence by the claim it supports, find the items that disagree, resolve what
 * the metadata justifies, and label the rest.
 *
 * - Declared supersession: `supersedes: <id or ids>` on the newer item, or `superseded_by: <id>` on
 *   the older one. The older item is omitted as `superseded-by:<newer>` when the newer one is a
 *   candidate. Links that contradict each other (each item superseding the other) are ignored.
 * - Claims: items that declare the same `topic` with different `claim` values (compared after the
 *   dedup normalization: case, punctuation and spacing do not make a disagreement). One conflict
 *   per topic.
 * - Versions of one source that disagree: the same `source`, different `version`s, different
 *   normalized texts, unless both declare the same topic (their claims decide then). One conflict
 *   per source.
 *
 * A disagreement is resolved automatically only by metadata: an item that is not valid at `now` by
 * its `valid_from` / `valid_to`, while an item it disagrees with is, is superseded by the first
 * such item. Without a reference time no validity is judged (the clock is never read). Every other
 * disagreement is kept: the items stay candidates, each with a conflict note naming the items it
 * disagrees with (envelope.ts prints it), and each gets a contradiction risk for the score: 1 when
 * an item at least as authoritative disagrees with it, 0.5 when only less authoritative ones do.
 * Contradictions are data to reason about, not noise to delete.
 *
 * Items a hard filter removed for their scope in time or version (`filtered:version`,
 * `filtered:expired`: seed 002's "applies to another version", "outdated") are compared too, as
 * `outOfScope`: the 3.9 retry docs disagree with the 4.2 ones whether or not the request shows
 * them. Such a disagreement is already resolved by the filter (resolution `filtered`, with the
 * filter's reason): it is recorded in the trace, and the kept items get no note and no risk from
 * it, since the model never sees the other item and a note would name a block that is not there.
 * Items removed by the tenant or source-type filters are not compared at all: they are not the
 * requester's evidence, and no record may hint at them.
 */
import type { OmitReason } from '../../types';
import type { Omission, WorkItem } from '../item';
import { fingerprintOf, metaList, metaString, timeOf } from '../item';
import { normalizeForDedup } from '../normalize';
import type { ConflictRecord } from './state';
export type { ConflictRecord } from './state';

/** Items compared per topic or source; more are rare and would make the comparisons quadratic. */
export const MAX_GROUP = 64;

export interface ConflictResult {
  kept: WorkItem[];
  omitted: Omission[];
  conflicts: ConflictRecord[];
}

const normVersion = (v: string) => v.trim().replace(/^v/i, '');

/** A group of candidates that may disagree, and how to tell two of its items apart. */
interface Group {
  kind: 'claim' | 'version';
  topic?: string;
  items: WorkItem[];
  /** Out-of-scope items of the group (removed by a version or expiry filter). */
  out: WorkItem[];
  /** The value each item holds (claim or version), as written. */
  value(it: WorkItem): string;
  /** The value as compared (normalized): items with equal keys never disagree. */
  key(it: WorkItem): string;
  disagree(a: WorkItem, b: WorkItem): boolean;
}

/** The filters whose rejections are compared as out of scope: time and version, not permission or policy. */
export const SCOPE_FILTERS: ReadonlySet<OmitReason> = new Set<OmitReason>(['filtered:version', 'filtered:expired']);

export function detectConflicts(items: readonly WorkItem[], now: string | undefined, outOfScope: readonly Omission[] = []): ConflictResult {
  const conflicts: ConflictRecord[] = [];
  const byId = new Map<string, WorkItem>();
  for (const it of items) byId.set(it.id, it);
  const inOrder = (a: WorkItem, b: WorkItem): WorkItem[] => (a.index <= b.index ? [a, b] : [b, a]);

  // ---- Declared supersession.
  const link = new Map<WorkItem, { by: WorkItem; basis: 'supersedes' | 'superseded_by' }>();
  for (const a of items) {
    for (const id of metaList(a, 'supersedes')) {
      const b = byId.get(id);
      if (b && b !== a && !link.has(b)) link.set(b, { by: a, basis: 'supersedes' });
    }
  }
  for (const b of items) {
    const id = metaString(b, 'superseded_by');
    const a = id !== undefined ? byId.get(id) : undefined;
    if (a && a !== b && !link.has(b)) link.set(b, { by: a, basis: 'superseded_by' });
  }
  for (const [b, { by }] of [...link]) {
    if (link.get(by)?.by === b) {
      link.delete(b);
      link.delete(by);
    }
  }
  const superseded = new Map<WorkItem, WorkItem>();
  for (const b of items) {
    const l = link.get(b);
    if (!l) continue;
    superseded.set(b, l.by);
    conflicts.push({ kind: 'supersession', items: inOrder(l.by, b), resolution: 'superseded', kept: l.by, superseded: b, basis: l.basis });
  }

  // ---- Groups: claims by topic, versions by source; live candidates and out-of-scope items apart.
  const rest = items.filter((i) => !superseded.has(i));
  const outReason = new Map<WorkItem, OmitReason>();
  for (const o of outOfScope) if (SCOPE_FILTERS.has(o.reason)) outReason.set(o.item, o.reason);
  const outside = [...outReason.keys()];
  const groups: Group[] = [];
  const claimOf = new Map<WorkItem, string>();
  const topicOf = new Map<WorkItem, string>();
  type Members = { items: WorkItem[]; out: WorkItem[] };
  const add = (map: Map<string, Members>, key: string, it: WorkItem, out: boolean) => {
    let m = map.get(key);
    if (!m) map.set(key, (m = { items: [], out: [] }));
    const list = out ? m.out : m.items;
    if (list.length < MAX_GROUP) list.push(it);
  };
  const topics = new Map<string, Members>();
  for (const [list, out] of [[rest, false], [outside, true]] as const) {
    for (const it of list) {
      const topic = metaString(it, 'topic');
      const claim = metaString(it, 'claim');
      if (topic === undefined || claim === undefined) continue;
      const key = topic.trim().toLowerCase();
      topicOf.set(it, key);
      claimOf.set(it, normalizeForDedup(claim));
      add(topics, key, it, out);
    }
  }
  for (const m of topics.values()) {
    if (!m.items.length || new Set([...m.items, ...m.out].map((i) => claimOf.get(i))).size < 2) continue;
    groups.push({ kind: 'claim', topic: metaString(m.items[0], 'topic'), items: m.items, out: m.out, value: (i) => metaString(i, 'claim')!, key: (i) => claimOf.get(i)!, disagree: (a, b) => claimOf.get(a) !== claimOf.get(b) });
  }
  const sources = new Map<string, Members>();
  for (const [list, out] of [[rest, false], [outside, true]] as const) {
    for (const it of list) if (it.source !== undefined && it.version !== undefined) add(sources, it.source, it, out);
  }
  const versionOf = new Map<WorkItem, string>();
  const nv = (i: WorkItem) => {
    let v = versionOf.get(i);
    if (v === undefined) versionOf.set(i, (v = normVersion(i.version!)));
    return v;
  };
  const textOf = new Map<WorkItem, string>();
  const norm = (i: WorkItem) => {
    let t = textOf.get(i);
    if (t === undefined) textOf.set(i, (t = normalizeForDedup(i.text)));
    return t;
  };
  // The same text after normalization: the fingerprint's hash of the normalized text (dedup
  // computed it for most items already) tells most pairs apart; equal hashes are confirmed.
  const sameText = (a: WorkItem, b: WorkItem) => a.text === b.text || (fingerprintOf(a).key === fingerprintOf(b).key && norm(a) === norm(b));
  for (const m of sources.values()) {
    if (!m.items.length || new Set([...m.items, ...m.out].map(nv)).size < 2) continue;
    groups.push({
      kind: 'version',
      items: m.items,
      out: m.out,
      value: (i) => i.version!,
      key: nv,
      disagree: (a, b) => nv(a) !== nv(b) && !(topicOf.has(a) && topicOf.get(a) === topicOf.get(b)) && !sameText(a, b),
    });
  }

  // ---- Resolve each group: validity at `now` first, then label what still disagrees.
  const nowMs = timeOf(now);
  const invalidBound = (it: WorkItem): 'valid_from' | 'valid_to' | undefined => {
    if (nowMs === undefined) return undefined;
    const from = timeOf(metaString(it, 'valid_from'));
    const to = timeOf(metaString(it, 'valid_to'));
    if (from !== undefined && from > nowMs) return 'valid_from';
    if (to !== undefined && to < nowMs) return 'valid_to';
    return undefined;
  };
  const partners = new Map<WorkItem, Set<WorkItem>>();
  for (const g of groups) {
    const live = g.items.filter((i) => !superseded.has(i));
    for (const it of live) {
      const bound = invalidBound(it);
      if (bound === undefined) continue;
      const by = live.find((o) => o !== it && !superseded.has(o) && invalidBound(o) === undefined && g.disagree(it, o));
      if (!by) continue;
      superseded.set(it, by);
      conflicts.push({ kind: g.kind, ...(g.topic !== undefined ? { topic: g.topic } : {}), items: inOrder(it, by), values: inOrder(it, by).map(g.value), resolution: 'superseded', kept: by, superseded: it, basis: bound });
    }
    const left = live.filter((i) => !superseded.has(i));
    // One value among the live items (a source's 4.2 pages beside its filtered 3.9 one): nothing to label.
    const disagreeing = new Set(left.map(g.key)).size < 2 ? [] : left.filter((a) => left.some((b) => b !== a && g.disagree(a, b)));
    if (disagreeing.length >= 2) {
      conflicts.push({ kind: g.kind, ...(g.topic !== undefined ? { topic: g.topic } : {}), items: disagreeing, values: disagreeing.map(g.value), resolution: 'labelled' });
      for (const a of disagreeing) {
        let set = partners.get(a);
        if (!set) partners.set(a, (set = new Set()));
        for (const b of disagreeing) if (b !== a && g.disagree(a, b)) set.add(b);
      }
    }
    // Out of scope: each filtered item against the candidates it disagrees with; copies of one
    // filtered text (same value) are one record.
    const recorded: WorkItem[] = [];
    for (const o of g.out) {
      if (recorded.some((p) => g.value(p) === g.value(o) && sameText(p, o))) continue;
      const against = left.filter((i) => g.disagree(o, i));
      if (!against.length) continue;
      recorded.push(o);
      const members = [o, ...against].sort((a, b) => a.index - b.index);
      conflicts.push({ kind: g.kind, ...(g.topic !== undefined ? { topic: g.topic } : {}), items: members, values: members.map(g.value), resolution: 'filtered', filtered: o, reason: outReason.get(o)! });
    }
  }
  for (const [item, set] of partners) {
    const live = [...set].sort((x, y) => x.index - y.index);
    item.conflicts = live.map((p) => ({ id: p.id, ...(p.version !== undefined ? { version: p.version } : {}), ...(p.source_type !== undefined ? { source_type: p.source_type } : {}) }));
    const own = item.authority ?? 0;
    item.risk = live.some((p) => (p.authority ?? 0) >= own) ? 1 : 0.5;
  }

  const kept: WorkItem[] = [];
  const omitted: Omission[] = [];
  for (const it of items) {
    const by = superseded.get(it);
    if (by) omitted.push({ item: it, reason: `superseded-by:${by.id}` });
    else kept.push(it);
  }
  return { kept, omitted, conflicts };
}
