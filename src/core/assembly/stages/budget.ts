/**
 * Stage 6, budget: each slot's token allowance. A slot's `budget` resolves through the budget
 * equation (budget/index.ts). A history slot with a `policy` and no budget of its own gets what the
 * equation leaves for it, seed 000's remainder (3.4):
 *
 *   capacity 16,000 - (2,400 policy and tools + 5,000 evidence + 600 request + 2,000 output) = 6,000
 *
 * and under `summary` / `hybrid` that budget is split into shares (recent turns, summaries,
 * retrieved turns). The remainder is reported with the budget (`BudgetReport.remainder`, printed by
 * `ctxlens budget`) and in the trace (`trace.history`), where it meets what the fixture used: 4,500
 * of recent turns leave 1,500 for summaries.
 */
import type { ContextConfig } from '../../config/schema';
import type { Amount, BudgetReport, RemainderReport } from '../../types';
import type { SlotRun } from './load';
import { formatTokens as fmt, resolveAmount } from '../../budget';
import { HYBRID_SHARES } from './history';

/** What the budget equation leaves for each history slot with a policy. */
export function historyRemainders(config: ContextConfig, report: BudgetReport): RemainderReport[] {
  const out: RemainderReport[] = [];
  const capacity = report.limits ? report.limits.input : report.window;
  for (const [name, slot] of Object.entries(config.slots ?? {})) {
    if (slot.kind !== 'history' || slot.policy === undefined) continue;
    const fixedParts: Array<{ name: string; tokens: number }> = [];
    for (const line of report.slots) if (line.name !== name && line.budget !== undefined) fixedParts.push({ name: line.name, tokens: line.budget });
    if (!report.limits) fixedParts.push({ name: 'output', tokens: report.output });
    if (report.margin) fixedParts.push({ name: 'margin', tokens: report.margin });
    const fixed = fixedParts.reduce((s, p) => s + p.tokens, 0);
    const available = Math.max(0, capacity - fixed);
    const own = report.slots.find((l) => l.name === name)?.budget;
    const budget = own ?? available;
    const r: RemainderReport = { slot: name, capacity, fixed, fixedParts, available, budget };
    if (slot.policy === 'summary' || slot.policy === 'hybrid') {
      const hybrid = slot.policy === 'hybrid';
      const share = (k: 'recent' | 'summary' | 'retrieved', d: string | undefined) => {
        const w = slot.shares?.[k] ?? d;
        return w === undefined ? undefined : resolveAmount(w as Amount, budget);
      };
      const recent = Math.min(budget, share('recent', hybrid ? HYBRID_SHARES.recent : undefined) ?? budget);
      r.shares = { recent, summary: share('summary', hybrid ? HYBRID_SHARES.summary : undefined) ?? budget - recent };
      if (hybrid) r.shares.retrieved = share('retrieved', HYBRID_SHARES.retrieved);
    }
    out.push(r);
  }
  return out;
}

/** The report with its history remainders, when the config has history slots with a policy. */
export function withRemainder(report: BudgetReport, config: ContextConfig): BudgetReport {
  const r = historyRemainders(config, report);
  if (r.length) report.remainder = r;
  return report;
}

/**
 * Lines for `ctxlens budget`: `history (hybrid): 16,000 - 10,000 fixed = 6,000 available;
 * shares recent 3,600 + summary 1,500 + retrieved 900`.
 */
export function remainderLines(report: BudgetReport): string[] {
  return (report.remainder ?? []).map((r) => {
    const parts = r.fixedParts.map((p) => `${p.name} ${fmt(p.tokens)}`).join(' + ');
    let line = `${r.slot}: ${fmt(r.capacity)} - ${fmt(r.fixed)} fixed (${parts || 'nothing'}) = ${fmt(r.available)} available`;
    if (r.budget !== r.available) line += `; its budget is ${fmt(r.budget)}`;
    if (r.shares) {
      const s = [r.shares.recent !== undefined ? `recent ${fmt(r.shares.recent)}` : '', r.shares.summary !== undefined ? `summary ${fmt(r.shares.summary)}` : '', r.shares.retrieved !== undefined ? `retrieved ${fmt(r.shares.retrieved)}` : ''].filter(Boolean);
      line += `; shares ${s.join(' + ')}`;
    }
    return line;
  });
}

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
