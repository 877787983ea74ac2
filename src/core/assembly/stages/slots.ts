/**
 * The per-slot stages: candidates (load .. score, `LoadedSlot` -> `CandidateSlot`) and selection
 * (select into the slot budget, `BudgetedSlot` -> `SelectedSlot`), both memoized (candidates.ts),
 * with their decisions appended to the log: omissions, content findings, conflicts, the history
 * plan, and `slot-overflow` when a fixture gives a slot more than its budget.
 */
import type { DecisionLog } from './log';
import { finding } from '../../rules/registry';
import { formatTokens as fmt } from '../../budget';
import { configRelated, listIds, slotLocation } from '../findings';
import { slotCandidates, slotContentFindings, slotSelection } from './candidates';
import type { Finding } from '../../types';
import type { WorkItem } from '../item';
import type { BudgetedSlot, CandidateSlot, LoadedSlot, Picked, PipelineEnv, SelectedSlot } from './state';

/** Load .. score for every used slot with a list or text value; other slots have no candidates. */
export function rankSlots(env: PipelineEnv, slots: readonly LoadedSlot[], log: DecisionLog): CandidateSlot[] {
  return slots.map((slot): CandidateSlot => {
    const value = slot.value;
    if (!slot.used || !value || value.type === 'data') return { ...slot, total: 0, ranked: [] };
    const name = slot.state.name;
    const st = slotCandidates(env, slot, value);
    log.omit(name, st.omitted);
    // Content findings are located in the fixture with related locations in the config.
    log.report(name, slotContentFindings(env, slot, st));
    log.conflicts(name, st.conflicts);
    return { ...slot, candidates: st, total: st.total, ranked: st.ranked };
  });
}

/** Select into each slot's budget. Required slots are never cut: a required slot over its budget is reported instead. */
export function selectSlots(env: PipelineEnv, slots: readonly BudgetedSlot[], log: DecisionLog): SelectedSlot[] {
  return slots.map((slot): SelectedSlot => {
    const st = slot.candidates;
    if (!st) return { ...slot, packed: [], packIndex: new Map() };
    const sel = slotSelection(env, slot, st);
    if (sel.history) log.history(slot.state.name, sel.history);
    const packed = slot.required ? [...slot.ranked] : sel.picked!.kept;
    if (!slot.required) log.omit(slot.state.name, sel.picked!.omitted);
    log.report(slot.state.name, overflowFindings(env, slot, sel.cost, sel.picked));
    const packIndex = new Map<WorkItem, number>();
    packed.forEach((it, i) => packIndex.set(it, i));
    return { ...slot, selection: sel, packed, packIndex };
  });
}

/**
 * `slot-overflow`: the fixture gives a slot more than its budget. An optional slot is packed into
 * it (unless a summary, retrieval or hybrid policy is the declared answer to a history over its
 * budget); a required slot is never cut, so the excess comes out of other slots.
 */
function overflowFindings(env: PipelineEnv, slot: BudgetedSlot, cost: number, picked: Picked | undefined): Finding[] {
  const { fixture, ctx } = env;
  const name = slot.state.name;
  if (slot.budget === undefined || cost <= slot.budget || !fixture) return [];
  const byPolicy = slot.policy !== undefined && slot.policy !== 'window';
  if (!slot.required && (byPolicy || !picked)) return [];
  const loc = slotLocation(ctx, name);
  const related = configRelated(ctx, name, 'budget', `budget: ${fmt(slot.budget)}`);
  if (slot.required || !picked) {
    return [finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives required slot '${name}' ${fmt(cost)} tokens > its ${fmt(slot.budget)}-token budget; required slots are never cut, so the excess comes out of other slots or overflows the request.`, { related })];
  }
  const dropped = picked.omitted.map((o) => ({ id: o.item.id, reason: o.reason }));
  const n = slot.ranked.length;
  return [
    finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives '${name}' ${fmt(cost)} tokens (${n} item${n === 1 ? '' : 's'}${slot.overhead ? ` with ${fmt(slot.overhead)}-token overhead each` : ''}) > its ${fmt(slot.budget)}-token budget; packing (${slot.cfg?.pack ?? 'stop'}) keeps ${picked.kept.length} (${fmt(picked.used)} tokens) and drops ${listIds(dropped)}.`, {
      related,
    }),
  ];
}
