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
 * of recent turns leave 1,500 for summaries. The arithmetic is budget/'s; this stage gives each
 * slot its number.
 */
import type { BudgetReport } from '../../types';
import { slotBudgets } from '../../budget/remainder';
import type { BudgetedSlot, CandidateSlot } from './state';

/** Each slot with its budget: its budget line, or the remainder for a history slot with a policy. */
export function budgetSlots(report: BudgetReport, slots: readonly CandidateSlot[]): BudgetedSlot[] {
  const budgets = slotBudgets(report);
  return slots.map((slot): BudgetedSlot => {
    const budget = budgets.get(slot.state.name);
    return budget === undefined ? slot : { ...slot, budget };
  });
}
