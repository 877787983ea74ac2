/**
 * The fixture-side stages of one slot, memoized:
 *
 *   load (load.ts) -> filter (filters.ts) -> dedup (dedup.ts) -> detect conflicts (conflicts.ts)
 *   -> score (score.ts; history.ts for history turns)                        = SlotCandidates
 *   -> budget (the slot's resolved budget, budget.ts) -> select (select.ts, history.ts) = Selection
 *
 * Both depend on the fixture value and the slot's settings only, not on the template text, so
 * typing in a template does not re-count, filter, dedup, score or select a large fixture: entries
 * are kept by tokenizer, fixture value (object identity: the project layer keeps the resolved
 * fixture while its text and referenced files are unchanged) and a signature of every setting they
 * read. The stages only set fields on the items they create (score, merged sources, conflict notes,
 * cached hashes) while building an entry; an entry is never changed once made, selections never
 * change items, and later stages build new arrays, so sharing an entry between assemblies gives
 * the same results. The content findings of an entry are kept beside it, per fixture document and
 * config document they are located against.
 */
import type { Finding, FixtureDoc, FixtureValue, ConfigDoc, Tokenizer } from '../../types';
import type { Omission, WorkItem } from '../item';
import { applyFilters } from '../filters';
import { DEFAULT_SHINGLE, dedup, nearDedup } from '../dedup';
import { rankItems, DEFAULT_WEIGHTS } from '../score';
import { mostRecentFirst } from '../order';
import { loadItems } from './load';
import { detectConflicts } from './conflicts';
import { prepareHistory, selectHistory } from './history';
import { selectItems } from './select';
import { append } from '../append';
import { contentFindings } from '../findings';
import type { BudgetedSlot, ConflictRecord, LoadedSlot, PipelineEnv, SlotCandidates, Selection } from './state';
export type { SlotCandidates } from './state';

const stageMemo = new WeakMap<Tokenizer, WeakMap<FixtureValue, Map<string, SlotCandidates>>>();
/** Signatures kept per fixture value, and selections per entry (different slot settings tried in a session). */
const STAGE_SIGNATURES = 16;

function remember<T>(map: Map<string, T>, sig: string, make: () => T): T {
  let v = map.get(sig);
  if (v === undefined) {
    v = make();
    if (map.size >= STAGE_SIGNATURES) map.delete(map.keys().next().value as string);
    map.set(sig, v);
  }
  return v;
}

/** The user slot's text: what retrieval ranks history turns against. */
export function questionText(env: PipelineEnv): string {
  for (const [name, s] of Object.entries(env.config.slots ?? {})) {
    if (s.kind !== 'user') continue;
    const v = env.fixture?.slots[name];
    if (v?.type === 'text') return v.text;
    if (v?.type === 'items') return v.items.map((i) => i.text).join('\n');
  }
  return '';
}

/** Load .. score of a used slot with a list or text value (memoized). */
export function slotCandidates(env: PipelineEnv, run: LoadedSlot, value: FixtureValue): SlotCandidates {
  const { config, tokenizer, now } = env;
  const { state, cfg } = run;
  const question = run.policy === 'retrieval' || run.policy === 'hybrid' ? questionText(env) : null;
  const sig = JSON.stringify([state.name, cfg ?? null, config.filters ?? null, config.scoring ?? null, config.dedup ?? null, now ?? null, state.kind, state.untrusted, state.label ?? null, state.escapeWith, question]);
  let byValue = stageMemo.get(tokenizer);
  if (!byValue) stageMemo.set(tokenizer, (byValue = new WeakMap()));
  let bySig = byValue.get(value);
  if (!bySig) byValue.set(value, (bySig = new Map()));
  return remember(bySig, sig, () => {
    const isList = value.type === 'items';
    const history = state.kind === 'history';
    // ---- load
    const { items, files } = loadItems(state.name, value, tokenizer);
    const omitted: Omission[] = [];
    let candidates = items;
    let conflicts: ConflictRecord[] = [];
    if (isList) {
      // ---- filter: hard gates (history turns are the requester's own: never filtered by tenant).
      const f = applyFilters(candidates, config.filters, now, history ? { tenantMissing: 'keep' } : {});
      append(omitted, f.omitted);
      candidates = f.kept;
      // ---- dedup (history turns are never merged: "ok" twice is two turns), then conflicts.
      if (!history) {
        const d = dedup(candidates);
        append(omitted, d.omitted);
        candidates = d.kept;
        if (config.dedup?.near !== undefined) {
          const n = nearDedup(candidates, config.dedup.near, config.dedup.shingle ?? DEFAULT_SHINGLE);
          append(omitted, n.omitted);
          candidates = n.kept;
        }
        // Items out of scope by version or expiry are compared too: their disagreement is recorded as resolved by the filter.
        const c = detectConflicts(candidates, now, f.omitted);
        append(omitted, c.omitted);
        candidates = c.kept;
        conflicts = c.conflicts;
      }
    }
    // ---- score: the selection score where metadata exists, fixture order otherwise; history most recent first.
    let ranked: WorkItem[];
    if (history) {
      prepareHistory(candidates, run.policy, question ?? '');
      ranked = mostRecentFirst(candidates);
    } else ranked = rankItems(candidates, { weights: config.scoring, version: config.filters?.version, now });
    return { total: items.length, files, omitted, candidates, ranked, conflicts, selections: new Map() };
  });
}

/** Content findings of an entry's candidates, by the fixture and config document they are located against. */
const findingsMemo = new WeakMap<SlotCandidates, { fixture?: FixtureDoc; config?: ConfigDoc; findings: Finding[] }>();

/** The content findings of a slot's candidates (findings.ts), located in this assembly's fixture with related locations in its config. */
export function slotContentFindings(env: PipelineEnv, run: LoadedSlot, cands: SlotCandidates): Finding[] {
  const hit = findingsMemo.get(cands);
  if (hit && hit.fixture === env.fixture && hit.config === env.input.configDoc) return hit.findings;
  const findings = contentFindings(env.ctx, run.state, cands.candidates);
  findingsMemo.set(cands, { fixture: env.fixture, config: env.input.configDoc, findings });
  return findings;
}

/** Budget .. select of a slot's candidates (memoized per candidates entry and budget settings). */
export function slotSelection(env: PipelineEnv, run: BudgetedSlot, cands: SlotCandidates): Selection {
  const novelty = env.config.scoring?.novelty ?? DEFAULT_WEIGHTS.novelty;
  const sig = JSON.stringify([run.overhead, run.budget ?? null, run.required, novelty]);
  return remember(cands.selections, sig, () => {
    const cost = cands.ranked.reduce((s, i) => s + i.tokens + run.overhead, 0);
    if (run.required) return { cost, coverFor: new Map(), valuePerToken: new Map() };
    if (run.state.kind === 'history') {
      const h = selectHistory(cands.ranked, run.cfg, run.policy, run.budget, run.overhead);
      return { cost, picked: h.picked, history: h.plan, coverFor: new Map(), valuePerToken: new Map() };
    }
    return { cost, ...selectItems(cands.ranked, { budget: run.budget, overhead: run.overhead, cfg: run.cfg, novelty }) };
  });
}
