/**
 * What the budget equation leaves for history slots with a policy (seed 000, 3.4), and the one
 * function that computes a config's budget report with those remainders: the analysis, the
 * binding and the assembly all read the same report.
 */
import type { ContextConfig } from '../config/schema';
import type { Amount, BudgetReport, ModelInfo, RemainderReport } from '../types';
import { computeBudget, formatTokens as fmt, resolveAmount } from './index';

/** Shares of a hybrid policy when the slot declares none. */
export const HYBRID_SHARES = { recent: '60%', summary: '25%', retrieved: '15%' } as const;

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


/** The budget report of a config with its history remainders: the one budget computation. */
export function budgetFor(config: ContextConfig, model: ModelInfo | undefined, tokenizer: { name: string; exact: boolean }): BudgetReport {
  return withRemainder(computeBudget(config, { model, tokenizer }), config);
}
