/**
 * What the budget equation leaves for history slots with a policy (seed 000, 3.4), the shares a
 * summary or hybrid policy splits a history budget into, each slot's resolved budget, and the one
 * function that computes a config's budget report with those remainders: the analysis, the
 * binding and the assembly all read the same report.
 */
import type { ContextConfig, HistoryPolicy, SlotConfig } from '../config/schema';
import type { Amount, BudgetReport, ModelInfo, RemainderReport } from '../types';
import { computeBudget, formatTokens as fmt, resolveAmount } from './index';

/** Shares of a hybrid policy when the slot declares none. */
export const HYBRID_SHARES = { recent: '60%', summary: '25%', retrieved: '15%' } as const;

/**
 * The shares of a history budget under a summary or hybrid policy: the recent turns' share (at
 * most the budget), the summaries' share (what recent leaves, unless written) and, under hybrid,
 * the retrieved turns' share. A share is written in tokens or "N%" of the budget; hybrid defaults
 * to HYBRID_SHARES. An uncapped budget (infinite) gives uncapped written shares. The selection
 * (assembly/stages/history.ts) passes what one part leaves unused on to the next.
 */
export function historyShares(policy: Extract<HistoryPolicy, 'summary' | 'hybrid'>, shares: SlotConfig['shares'], budget: number): { recent: number; summary: number; retrieved?: number } {
  const hybrid = policy === 'hybrid';
  const share = (k: 'recent' | 'summary' | 'retrieved', fallback: string | undefined): number | undefined => {
    const written = shares?.[k] ?? fallback;
    if (written === undefined) return undefined;
    return Number.isFinite(budget) ? resolveAmount(written as Amount, budget) : Number.POSITIVE_INFINITY;
  };
  const recent = Math.min(budget, share('recent', hybrid ? HYBRID_SHARES.recent : undefined) ?? budget);
  const out: { recent: number; summary: number; retrieved?: number } = { recent, summary: share('summary', hybrid ? HYBRID_SHARES.summary : undefined) ?? budget - recent };
  if (hybrid) out.retrieved = share('retrieved', HYBRID_SHARES.retrieved);
  return out;
}

/**
 * Each slot's resolved budget: its budget line, else, for a history slot with a policy and no
 * budget of its own, what the equation leaves for it (when the window is known). Slots without
 * either are not capped (absent).
 */
export function slotBudgets(report: BudgetReport): Map<string, number> {
  const out = new Map<string, number>();
  const known = report.window > 0 || !!report.limits;
  for (const line of report.slots) if (line.budget !== undefined) out.set(line.name, line.budget);
  if (known) for (const r of report.remainder ?? []) if (!out.has(r.slot)) out.set(r.slot, r.budget);
  return out;
}

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
    if (slot.policy === 'summary' || slot.policy === 'hybrid') r.shares = historyShares(slot.policy, slot.shares, budget);
    out.push(r);
  }
  return out;
}

/** The report with its history remainders, when the config has history slots with a policy (a new report; the one given is not changed). */
export function withRemainder(report: BudgetReport, config: ContextConfig): BudgetReport {
  const r = historyRemainders(config, report);
  return r.length ? { ...report, remainder: r } : report;
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

/** The budget report of a config with its history remainders: the one budget computation. */
export function budgetFor(config: ContextConfig, model: ModelInfo | undefined, tokenizer: { name: string; exact: boolean }): BudgetReport {
  return withRemainder(computeBudget(config, { model, tokenizer }), config);
}
