/**
 * How numbers and budget facts read in lenses, hovers and titles: thousands separators, "≈" on
 * estimates, percentages with at most one decimal. One place, so every surface says it alike.
 */
import type { SlotSummary, TemplateAnalysis } from '../core/analyze';
import type { BudgetReport } from '../core/types';
import { formatUsd } from '../core/cost';

const NUM = new Intl.NumberFormat('en-US');

export function num(n: number): string {
  return NUM.format(Math.round(n));
}

/** A token count, prefixed with "≈" when the tokenizer only estimates. */
export function tok(n: number, exact: boolean): string {
  return `${exact ? '' : '≈'}${num(n)}`;
}

export function pct(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const p = (part / whole) * 100;
  const rounded = p >= 10 || Number.isInteger(p) ? Math.round(p) : Math.round(p * 10) / 10;
  return `${rounded}%`;
}

export function plural(n: number, one: string, many = one + 's'): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** The request as the budget equation sees it: what is sent plus what is reserved. */
export interface RequestTotals {
  /** Input tokens of the assembled request, or the allocated input when nothing was assembled. */
  input: number;
  output: number;
  margin: number;
  /** What is compared with `window`: input + output + margin, or input + margin under separate limits. */
  total: number;
  /** The shared window, or the input limit when the endpoint has separate limits. */
  window: number;
  /** Separate input and output limits, when the endpoint has them. */
  limits?: { input: number; output: number };
  fits: boolean;
  /** True when `input` comes from an assembled fixture, false when it is the slots' allocation. */
  assembled: boolean;
}

export function requestTotals(a: TemplateAnalysis): RequestTotals | undefined {
  const b = a.assembly?.budget ?? a.budget;
  if (!b) return undefined;
  // Without a fixture the assembly holds the template text only: the allocation says more.
  const trace = a.fixture && a.assembly?.ok ? a.assembly.trace : undefined;
  const input = trace ? trace.input_tokens : b.inputAllocated;
  if (b.limits) {
    // Separate limits: the input side (with its margin) against the input limit, the output reserve against the output limit.
    const total = input + b.margin;
    return { input, output: b.output, margin: b.margin, total, window: b.limits.input, limits: b.limits, fits: total <= b.limits.input && b.output <= b.limits.output, assembled: !!trace };
  }
  const total = input + b.output + b.margin;
  return { input, output: b.output, margin: b.margin, total, window: b.window, fits: b.window > 0 && total <= b.window, assembled: !!trace };
}

/**
 * The request first, then the equation: "input 272 tok · + output 1,500 + margin 1,200 = 2,972 / 12,000",
 * or under separate limits "input 272 tok · + margin 100 = 372 / 6,000 input limit · output 1,000 / 1,000".
 */
export function requestEquation(t: RequestTotals, exact: boolean): string {
  const head = `${t.assembled ? 'input' : 'allocated input'} ${tok(t.input, exact)} tok`;
  if (t.limits) {
    const over = t.total > t.limits.input ? ` ✗ over by ${num(t.total - t.limits.input)}` : '';
    const outOver = t.output > t.limits.output ? ' ✗' : '';
    return `${head} · + margin ${num(t.margin)} = ${tok(t.total, exact)} / ${num(t.limits.input)} input limit${over} · output ${num(t.output)} / ${num(t.limits.output)}${outOver}`;
  }
  const over = t.window > 0 && t.total > t.window ? ` ✗ over by ${num(t.total - t.window)}` : '';
  return `${head} · + output ${num(t.output)} + margin ${num(t.margin)} = ${tok(t.total, exact)} / ${t.window > 0 ? num(t.window) : 'unknown window'}${over}`;
}

/** "6,000 input + 1,200 output + 800 margin = 8,000 / 8,000 ✓" */
export function equation(b: BudgetReport): string {
  const exact = b.exact;
  const mark = b.fits ? '✓' : `✗ over by ${num(b.overBy)}`;
  if (b.limits) {
    return `${tok(b.inputAllocated, exact)} input + ${num(b.margin)} margin = ${tok(b.inputAllocated + b.margin, exact)} / ${num(b.limits.input)} input limit · output ${num(b.output)} / ${num(b.limits.output)} ${mark}`;
  }
  return `${tok(b.inputAllocated, exact)} input + ${num(b.output)} output + ${num(b.margin)} margin = ${tok(b.total, exact)} / ${num(b.window)} ${mark}`;
}

/** How a slot's budget was written and what it resolves to: "25% of 6,800 input = 1,700 tok". */
export function budgetResolution(b: BudgetReport, slot: string): string | undefined {
  const line = b.slots.find((s) => s.name === slot);
  if (!line || line.budget === undefined) return undefined;
  if (typeof line.written === 'string' && line.written.endsWith('%')) {
    return `${line.written} of ${num(b.inputBudget)} input = ${num(line.budget)} tok`;
  }
  return `${num(line.budget)} tok`;
}

export function trustLabel(s: Pick<SlotSummary, 'trust'>): string {
  return s.trust ?? 'trust not declared';
}

/**
 * The request's cost, appended to the request lens: " · $0.0047", and " · $470/day" when the
 * config sets `requests_per_day`. Empty when nothing was assembled or the model has no price.
 */
export function costSuffix(a: TemplateAnalysis): string {
  const cost = a.fixture && a.assembly?.ok ? a.assembly.trace.cost : undefined;
  if (!cost) return '';
  return ` · ${formatUsd(cost.input)}${cost.per_day ? ` · ${formatUsd(cost.per_day.input)}/day` : ''}`;
}

/** Hover lines with the cost arithmetic and the price's date and source. */
export function costLines(a: TemplateAnalysis): string[] {
  const cost = a.fixture && a.assembly?.ok ? a.assembly.trace.cost : undefined;
  if (!cost) return [];
  const p = cost.price;
  const lines = ['**Cost**', '', `- ${num(cost.input_tokens)} input tok × $${p.input} per million = ${formatUsd(cost.input)} per request`];
  if (cost.output_max !== undefined && p.output !== undefined) lines.push(`- up to ${num(cost.output_reserved)} output tok × $${p.output} per million = ${formatUsd(cost.output_max)} more (the whole reserve)`);
  if (cost.per_day && cost.requests_per_day !== undefined) lines.push(`- × ${num(cost.requests_per_day)} requests a day = ${formatUsd(cost.per_day.input)} input per day`);
  lines.push(`- price of \`${cost.model}\`: ${p.origin === 'config' ? `prices: in the context config (${p.as_of})` : `${p.as_of}, ${p.source}`}`);
  return lines;
}
