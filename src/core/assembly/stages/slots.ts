/**
 * The per-slot stages applied to the runs: candidates (load .. score) and selection (select into
 * the slot budget), with their decisions appended to the log: omissions, content findings,
 * conflicts, the history plan, and `slot-overflow` when a fixture gives a slot more than its budget.
 */
import type { PipelineEnv } from './env';
import type { DecisionLog } from './log';
import { finding } from '../../rules/registry';
import { formatTokens as fmt } from '../../budget';
import { configRelated, contentFindings, listIds, slotLocation } from '../findings';
import { slotCandidates, slotSelection } from './candidates';
import type { SlotRun } from './state';

/** Load .. score for every used slot with a list or text value. */
export function runCandidates(env: PipelineEnv, runs: readonly SlotRun[], log: DecisionLog): void {
  const { fixture } = env;
  for (const run of runs) {
    const value = run.value;
    if (!run.used || !value || value.type === 'data') continue;
    const name = run.state.name;
    const st = slotCandidates(env, run, value);
    run.candidates = st;
    run.total = st.total;
    if (st.files.length) log.files[name] = st.files.map(([index, text]) => [index, env.hash(text)]);
    log.omit(name, st.omitted);
    // Content findings are located in the fixture with related locations in the config.
    if (st.findingsFor !== fixture || st.findingsConfig !== env.input.configDoc) {
      st.findings = contentFindings(env.ctx, run.state, st.candidates);
      st.findingsFor = fixture;
      st.findingsConfig = env.input.configDoc;
    }
    log.report(name, st.findings);
    log.conflicts(name, st.conflicts);
    run.ranked = st.ranked;
  }
}

/** Select into each slot's budget. Required slots are never cut: a required slot over its budget is reported instead. */
export function runSelection(env: PipelineEnv, runs: readonly SlotRun[], log: DecisionLog): void {
  const { fixture, ctx } = env;
  for (const run of runs) {
    const st = run.candidates;
    if (!st) continue;
    const name = run.state.name;
    const sel = slotSelection(env, run, st);
    run.selection = sel;
    const cost = sel.cost;
    if (sel.history) log.history(name, sel.history);
    if (run.required) {
      run.packed = [...run.ranked];
    } else {
      const p = sel.picked!;
      run.packed = p.kept;
      log.omit(name, p.omitted);
      // Summary, retrieval and hybrid policies are the declared answer to a history over its budget.
      const byPolicy = run.policy !== undefined && run.policy !== 'window';
      if (run.budget !== undefined && cost > run.budget && fixture && !byPolicy) {
        const loc = slotLocation(ctx, name);
        const dropped = p.omitted.map((o) => ({ id: o.item.id, reason: o.reason }));
        log.report(name, [
          finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives '${name}' ${fmt(cost)} tokens (${run.ranked.length} item${run.ranked.length === 1 ? '' : 's'}${run.overhead ? ` with ${fmt(run.overhead)}-token overhead each` : ''}) > its ${fmt(run.budget)}-token budget; packing (${run.cfg?.pack ?? 'stop'}) keeps ${p.kept.length} (${fmt(p.used)} tokens) and drops ${listIds(dropped)}.`, {
            related: configRelated(ctx, name, 'budget', `budget: ${fmt(run.budget)}`),
          }),
        ]);
      }
    }
    if (run.required && run.budget !== undefined && cost > run.budget && fixture) {
      const loc = slotLocation(ctx, name);
      log.report(name, [
        finding('slot-overflow', loc.path, loc.span, `Fixture '${fixture.name}' gives required slot '${name}' ${fmt(cost)} tokens > its ${fmt(run.budget)}-token budget; required slots are never cut, so the excess comes out of other slots or overflows the request.`, {
          related: configRelated(ctx, name, 'budget', `budget: ${fmt(run.budget)}`),
        }),
      ]);
    }
    run.packIndex = new Map();
    run.packed.forEach((it, i) => run.packIndex.set(it, i));
  }
}
