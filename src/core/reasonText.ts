/**
 * Reason codes in words: one short sentence for every reason the pipeline records on an item
 * (why it was omitted, why it was kept) and for every conflict record of the trace. The hover,
 * `ctxlens assemble --format text` and the preview (through its snapshot) all say the same thing
 * because they all call this.
 *
 * The tables are keyed by the reason unions of types.ts (`OmitReason`, `KeepReason`, `FilterKey`)
 * through `Code`, so a reason added to a union without a sentence here fails the typecheck.
 * Sentences name config keys plainly (filters.version, max_items) so they read the same as
 * Markdown, as text and in the webview.
 */
import type { FilterKey, KeepReason, OmitReason, TraceConflict } from './types';

/** Every reason the trace can give an item. */
export type Reason = OmitReason | KeepReason;

/** The code of a reason: the part before `:` of a parametrised one (`duplicate-of:<id>`), else the whole reason. */
type CodeOf<R> = R extends `${infer P}:${string}` ? P : R;
export type ReasonCode = CodeOf<Reason>;

const FILTER_TEXT: Record<FilterKey, string> = {
  tenant: "Belongs to another tenant than the request's (filters.tenant): tenant isolation.",
  'tenant-missing': 'States no tenant; under a tenant filter such an item is excluded (filters.tenant_missing: keep allows it).',
  version: 'Its version does not match filters.version: it describes another release.',
  expired: 'Expired: its expires_at is before the reference time (now).',
  source_types: 'Its source type is not one of filters.source_types.',
  exclude_source_types: 'Its source type is one of filters.exclude_source_types.',
};

/** A sentence per code; `arg` is what follows the code's `:` (an id, a subtopic, a filter, a policy). */
const TEXT: Record<ReasonCode, (arg: string) => string | undefined> = {
  // ---- omitted
  filtered: (key) => (Object.hasOwn(FILTER_TEXT, key) ? FILTER_TEXT[key as FilterKey] : undefined),
  'duplicate-of': (id) => `A copy of ${id} (the same text after normalisation, the same version): merged into it, its source kept.`,
  'near-duplicate-of': (id) => `Nearly the same text as ${id} (word-shingle similarity at or above dedup.near, the same version): merged into it, its source kept.`,
  'superseded-by': (id) => `Superseded by ${id}: a supersedes / superseded_by link, or its validity (valid_from / valid_to) at now, says ${id} replaces it.`,
  'summarised-by': (id) => `An older turn that summary ${id} stands for (its summary_of); a citation of ${id} resolves to it.`,
  policy: (p) => `A summary, and the ${p} history policy uses no summaries.`,
  'summary-redundant': () => 'A summary that covers no older turn: every turn it stands for is in the request as it is.',
  'not-relevant': () => 'A turn with no relevance to the question, which the retrieval policy ranks by.',
  'max-per-source': () => 'Its source already has max_per_source items in the slot.',
  'over-slot-budget': () => "Does not fit in what is left of its slot's budget.",
  'stop-policy': () => 'Packing stopped at an earlier item that did not fit (pack: stop).',
  'max-items': () => 'Its slot already holds max_items items.',
  'trimmed-for-request': () => 'Dropped to fit the whole request into the input budget, lowest priority first.',
  // ---- kept
  required: () => 'Its slot is required: never dropped.',
  high_relevance: () => 'Highly relevant: relevance 0.7 or more.',
  exact_version: () => 'Its version is exactly filters.version.',
  version_match: () => 'Its version is a release of filters.version (4.2.1 for 4.2).',
  official_source: () => 'An official source (source_type official_…).',
  high_authority: () => 'A strong authority: 0.8 or more.',
  covers: (sub) => `Covers ${sub}, a subtopic its slot requires.`,
  commitment: () => 'A commitment: a structured record of a promise, or the turn that made one.',
  recent: () => "A recent turn, in the history policy's recent share.",
  summary: () => "A summary of older turns, in the history policy's summary share.",
  retrieved: () => 'An older turn retrieved for its relevance to the question.',
  within_budget: () => "It fit in its slot's budget; the trace gives no other reason.",
};

function split(reason: string): { code: string; arg: string } {
  const i = reason.indexOf(':');
  return i < 0 ? { code: reason, arg: '' } : { code: reason.slice(0, i), arg: reason.slice(i + 1) };
}

function sentence(reason: string): string | undefined {
  const { code, arg } = split(reason);
  if (!Object.hasOwn(TEXT, code)) return undefined;
  const parametrised = reason.includes(':');
  // A code that takes an argument needs one, and one that takes none must not get one.
  if (parametrised !== PARAMETRISED.has(code) || (parametrised && arg === '')) return undefined;
  return TEXT[code as ReasonCode](arg);
}

const PARAMETRISED: ReadonlySet<string> = new Set<ReasonCode>(['filtered', 'duplicate-of', 'near-duplicate-of', 'superseded-by', 'summarised-by', 'policy', 'covers']);

/** Whether `reason` is one the pipeline records (and so has a sentence of its own). */
export function isKnownReason(reason: string): reason is Reason {
  return sentence(reason) !== undefined;
}

/** One sentence for a reason code; an unknown code (another tool's, a newer trace's) comes back as written. */
export function reasonText(reason: string): string {
  return sentence(reason) ?? reason;
}

/** `ev_0192 (4.2)`: an id with the value it holds in the conflict. */
function member(c: TraceConflict, id: string): string {
  const k = c.items.indexOf(id);
  const v = k >= 0 ? c.values?.[k] : undefined;
  if (v === undefined) return id;
  return c.kind === 'claim' ? `${id} ("${v}")` : `${id} (${v})`;
}

function list(ids: readonly string[]): string {
  if (ids.length <= 1) return ids.join('');
  return `${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`;
}

/** One sentence for a conflict record: who disagrees about what, and how it was resolved. */
export function conflictText(c: TraceConflict): string {
  const what = c.kind === 'claim' ? `Claims on ${c.topic ?? 'one topic'}` : c.kind === 'version' ? 'Versions of one source' : 'A declared supersession';
  const all = list(c.items.map((id) => member(c, id)));
  switch (c.resolution) {
    case 'labelled':
      return `${what} disagree: ${all}. ${c.items.length === 2 ? 'Both stay' : 'All stay'} candidates, each envelope naming the items it disagrees with (Conflicts with: …), each scored with a contradiction risk.`;
    case 'superseded': {
      const gone = c.superseded ?? '?';
      const by = c.kept ?? '?';
      if (c.basis === 'supersedes') return `${by} declares that it supersedes ${gone}: ${gone} is omitted (superseded-by:${by}).`;
      if (c.basis === 'superseded_by') return `${gone} declares that ${by} supersedes it: ${gone} is omitted (superseded-by:${by}).`;
      const when = c.basis === 'valid_from' ? 'not valid yet at now (valid_from)' : 'no longer valid at now (valid_to)';
      return `${what} disagree: ${all}. ${gone} is ${when}, so it is omitted, superseded by ${by}.`;
    }
    case 'filtered': {
      const out = c.filtered ?? '?';
      const others = c.items.filter((id) => id !== out);
      const why = c.reason === 'filtered:version' ? ', not the requested version' : c.reason === 'filtered:expired' ? ', expired before now' : '';
      return `${what} disagree: ${all}. ${out} is out of scope (${c.reason ?? 'filtered'}${why}), so the model never sees it and ${list(others)} ${others.length === 1 ? 'carries' : 'carry'} no conflict note.`;
    }
  }
}
