/**
 * Stage 6, budget: each slot's token allowance. A slot's `budget` resolves through the budget
 * equation (budget/index.ts). A history slot with a `policy` and no budget of its own gets what the
 * equation leaves for it (budget/remainder.ts), seed 000's remainder (3.4):
 *
 *   capacity 16,000 - (2,400 policy and tools + 5,000 evidence + 600 request + 2,000 output) = 6,000
 *
 * and under `summary` / `hybrid` that budget is split into shares (recent turns, summaries,
 * retrieved turns). The remainder is reported with the budget (`BudgetReport.remainder`, printed by
 * `ctxlens budget`) and in the trace (`trace.history`), where it meets what the fixture used: 4,500
 * of recent turns leave 1,500 for summaries.
 */
import type { BudgetReport } from '../../types';
import type { SlotRun } from './state';

/** Sets each run's budget: its budget line, or the remainder for a history slot with a policy. */
export function slotBudgets(report: BudgetReport, runs: readonly SlotRun[]): void {
  const byName = new Map(report.slots.map((l) => [l.name, l.budget]));
  const remainder = new Map((report.remainder ?? []).map((r) => [r.slot, r]));
  const known = report.window > 0 || !!report.limits;
  for (const run of runs) {
    run.budget = byName.get(run.state.name);
    const r = remainder.get(run.state.name);
    if (run.budget === undefined && r && known) run.budget = r.budget;
  }
}
