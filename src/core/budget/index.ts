/**
 * The budget equation (3.1) of seed 000:
 *
 *   B_sys + B_hist + B_evidence + B_tools + B_user + B_out + margin <= C
 *
 * computed from a context config (and the model registry entry when the config names a model),
 * for a shared input-and-output window or for separate input and output limits, plus the
 * `budget-overflow` and `reserve-invalid` findings that show the arithmetic at the config nodes.
 */
import type { ContextConfig } from '../config/schema';
import type { Amount, BudgetLine, BudgetReport, ConfigDoc, Finding, ModelInfo, RelatedLocation, Span } from '../types';
import { finding } from '../rules/registry';

/** A token amount, or `N%` of `base`; percentages are floored to whole tokens. */
export function resolveAmount(a: Amount, base: number): number {
  if (typeof a === 'number') return a;
  const pct = Number.parseFloat(a);
  if (!Number.isFinite(pct)) return 0;
  return Math.floor((pct * base) / 100);
}

/** Thousands separators without locale data, so messages are the same on every machine. */
export function formatTokens(n: number): string {
  const sign = n < 0 ? '-' : '';
  return sign + String(Math.abs(Math.round(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export interface BudgetOptions {
  model?: ModelInfo;
  tokenizer: { name: string; exact: boolean };
}

/**
 * Evaluates the equation. The window is `window` from the config, else the model's window, else
 * (with separate limits) input + output limit; 0 means "unknown" and is reported by
 * `budgetFindings`. Separate limits come from `limits` in the config, or from a registry entry
 * with `maxInput`; then the checks are `input allocated + margin <= input limit` and
 * `output <= output limit`. The margin is tokens or a percentage of the window (of the input limit
 * when the limits are separate, because the margin protects the input side only). Percentage slot
 * budgets resolve against the input budget, which is window - output (or the input limit).
 */
export function computeBudget(config: ContextConfig, opts: BudgetOptions): BudgetReport {
  const model = opts.model ?? modelFromConfig(config);
  let limits: { input: number; output: number } | undefined;
  if (config.limits) limits = { input: config.limits.input, output: config.limits.output };
  else if (model?.maxInput !== undefined) limits = { input: model.maxInput, output: model.maxOutput ?? model.window };
  const window = config.window ?? model?.window ?? (limits ? limits.input + limits.output : 0);
  const output = config.output ?? 0;
  const inputBudget = Math.max(0, limits ? limits.input : window - output);
  const margin = resolveAmount((config.margin ?? 0) as Amount, limits ? limits.input : window);

  const slots: BudgetLine[] = [];
  let inputAllocated = 0;
  for (const [name, slot] of Object.entries(config.slots ?? {})) {
    const line: BudgetLine = { name, kind: slot.kind, trust: slot.trust, required: slot.required };
    if (slot.budget !== undefined) {
      line.budget = resolveAmount(slot.budget as Amount, inputBudget);
      line.written = slot.budget as Amount;
      inputAllocated += line.budget;
    }
    slots.push(line);
  }
  const total = inputAllocated + output + margin;
  // Seed 000: over_by is how far the allocation exceeds the capacity itself (evidence +1,500 ->
  // 8,700 > 8,000, over by 700). The margin is a reserve on top: it must also fit for `fits`, and
  // marginLeft says how much of it the allocation leaves.
  let overBy: number;
  let marginLeft: number;
  if (limits) {
    overBy = Math.max(0, inputAllocated - limits.input, output - limits.output);
    marginLeft = limits.input - inputAllocated;
  } else {
    overBy = Math.max(0, inputAllocated + output - window);
    marginLeft = window - inputAllocated - output;
  }
  // A reserve that leaves no input budget cannot fit any request, whatever the slots say.
  const room = (limits ? limits.input : window - output) - margin;
  const fits = window > 0 && overBy === 0 && marginLeft >= margin && room > 0 && (!limits || output <= limits.output);
  const report: BudgetReport = {
    tokenizer: opts.tokenizer.name,
    exact: opts.tokenizer.exact,
    window,
    output,
    margin,
    inputBudget,
    slots,
    inputAllocated,
    total,
    fits,
    overBy,
    marginLeft,
  };
  const modelName = model?.name ?? config.model;
  if (modelName !== undefined) report.model = modelName;
  if (limits) report.limits = limits;
  return report;
}

/** The config's own `models` entry for its `model`, when the caller resolved none. */
export function modelFromConfig(config: ContextConfig): ModelInfo | undefined {
  const name = config.model;
  const e = name !== undefined ? config.models?.[name] : undefined;
  if (!e || name === undefined) return undefined;
  const info: ModelInfo = {
    name,
    provider: 'custom',
    window: e.window,
    tokenizer: e.tokenizer,
    messageOverhead: e.message_overhead,
    requestOverhead: e.request_overhead,
    exact: e.exact,
  };
  if (e.max_output !== undefined) info.maxOutput = e.max_output;
  if (e.max_input !== undefined) info.maxInput = e.max_input;
  return info;
}

/**
 * Tokens left for the slots in `exceptSlots` once every other slot's budget, the output reserve
 * and the margin are taken: seed 000's "16,000-token capacity, 10,000 fixed, 6,000 left for
 * history". Subtract what the excepted slots already use to get what remains after them.
 */
export function remaining(report: BudgetReport, exceptSlots: readonly string[] = []): number {
  const except = new Set(exceptSlots);
  let fixed = 0;
  for (const s of report.slots) if (!except.has(s.name) && s.budget !== undefined) fixed += s.budget;
  return report.inputBudget - report.margin - fixed;
}

/**
 * What a request is fitted to: window - output - margin (input limit - margin with separate
 * limits), and the same as words for messages. The margin is a planning reserve for count
 * variation and chat-template overhead the registry may not know, so it stays on top of seed
 * 000's `build_request` comparison with limit - reserved output. Infinite when no window is known.
 */
export function inputLimit(report: BudgetReport): { tokens: number; text: string } {
  const known = report.window > 0 || !!report.limits;
  return {
    tokens: known ? report.inputBudget - report.margin : Number.POSITIVE_INFINITY,
    text: report.limits
      ? `input limit ${formatTokens(report.limits.input)} - margin ${formatTokens(report.margin)}`
      : `window ${formatTokens(report.window)} - output ${formatTokens(report.output)} - margin ${formatTokens(report.margin)}`,
  };
}

/** The left-hand side of the equation as written in messages: "800 + 1,200 = 2,000 input". */
export function inputSum(report: BudgetReport): string {
  const terms = report.slots.filter((s) => s.budget !== undefined).map((s) => formatTokens(s.budget!));
  if (terms.length === 0) return '0 input';
  if (terms.length === 1) return `${terms[0]} input`;
  return `${terms.join(' + ')} = ${formatTokens(report.inputAllocated)} input`;
}

const ZERO: Span = { start: 0, end: 0 };

/**
 * `budget-overflow` when the equation does not hold, `reserve-invalid` when the output reserve or
 * the margin leaves no input budget, or the reserve exceeds the output limit. Each finding sits on
 * the config node to change and points at the other terms of the equation. Pass the resolved
 * `model` so a reserve above its maximum output is reported too.
 */
export function budgetFindings(report: BudgetReport, configDoc: ConfigDoc, model?: ModelInfo): Finding[] {
  const out: Finding[] = [];
  const path = configDoc.path;
  const at = (p: ReadonlyArray<string | number>) => configDoc.valueSpan(p) ?? configDoc.keySpan(p);
  const rel = (p: ReadonlyArray<string | number>, message: string): RelatedLocation[] => {
    const span = at(p);
    return span ? [{ path, span, message }] : [];
  };
  const config = configDoc.config;
  const fmt = formatTokens;
  const { window, output, margin, limits } = report;

  if (!limits && window <= 0) {
    const span = at(['model']) ?? configDoc.keySpan(['slots']) ?? ZERO;
    out.push(finding('reserve-invalid', path, span, 'No context window: set `window`, `limits`, or a `model` the registry knows, so the budget can be checked.'));
    return out;
  }

  // The reserve must leave a positive input budget (seed 000: 0 <= reserved output < token limit).
  let reserveBroken = false;
  if (!limits && output >= window) {
    reserveBroken = true;
    out.push(
      finding('reserve-invalid', path, at(['output']) ?? ZERO, `Reserved output ${fmt(output)} leaves no input budget in the ${fmt(window)}-token window (output must be less than the window).`, {
        related: rel(['window'], `window: ${fmt(window)}`),
      }),
    );
  }
  if (limits && output > limits.output) {
    reserveBroken = true;
    out.push(
      finding('reserve-invalid', path, at(['output']) ?? ZERO, `Reserved output ${fmt(output)} exceeds the output limit of ${fmt(limits.output)} tokens.`, {
        related: config?.limits ? rel(['limits', 'output'], `output limit: ${fmt(limits.output)}`) : rel(['model'], `model output limit: ${fmt(limits.output)}`),
      }),
    );
  }
  // Output limit of a shared-window model (gpt-4o: 128k window, 16,384 output): from the model info
  // the caller resolved, or from the config's own `models` entry.
  const maxOutput = model?.maxOutput ?? (report.model ? config?.models?.[report.model]?.max_output : undefined);
  if (!limits && maxOutput !== undefined && output > maxOutput) {
    out.push(
      finding('reserve-invalid', path, at(['output']) ?? ZERO, `Reserved output ${fmt(output)} exceeds ${report.model ?? 'the model'}'s maximum output of ${fmt(maxOutput)} tokens.`, {
        related: rel(['model'], `model: ${report.model ?? ''}`),
      }),
    );
  }

  if (margin < 0) {
    out.push(finding('reserve-invalid', path, at(['margin']) ?? ZERO, `The margin is negative (${fmt(margin)}); it must reserve zero or more tokens.`));
  } else if (!reserveBroken) {
    const room = limits ? limits.input : window - output;
    if (margin >= room && margin > 0) {
      const how = limits ? `input limit ${fmt(limits.input)}` : `window ${fmt(window)} - output ${fmt(output)} = ${fmt(room)}`;
      out.push(
        finding('reserve-invalid', path, at(['margin']) ?? ZERO, `Margin ${fmt(margin)} leaves no input budget: ${how} <= ${fmt(margin)} margin.`, {
          related: [...rel(['window'], `window: ${fmt(window)}`), ...rel(['output'], `output: ${fmt(output)}`)],
        }),
      );
    }
  }

  const marginShort = report.marginLeft < margin && margin > 0 && report.overBy === 0;
  // With separate limits an output over its limit is reserve-invalid's finding, not this one.
  const inputOver = limits ? report.inputAllocated > limits.input : report.overBy > 0;
  if (inputOver || marginShort) {
    const related: RelatedLocation[] = [];
    for (const s of report.slots) {
      if (s.budget === undefined) continue;
      const written = typeof s.written === 'string' ? ` (${s.written} of ${fmt(report.inputBudget)})` : '';
      related.push(...rel(['slots', s.name, 'budget'], `${s.name}: ${fmt(s.budget)}${written}`));
    }
    let message: string;
    const keep = margin > 0 ? `; keeping the ${fmt(margin)}-token margin needs ${fmt(margin - report.marginLeft)} less` : '';
    if (marginShort) {
      const cap = limits ? `${fmt(limits.input)} input limit` : `${fmt(window)} window`;
      const lhs = limits ? `${inputSum(report)}` : `${inputSum(report)} + ${fmt(output)} output = ${fmt(report.inputAllocated + output)}`;
      message = `${lhs} fits the ${cap} but leaves ${fmt(Math.max(0, report.marginLeft))} of the ${fmt(margin)}-token margin (short by ${fmt(margin - report.marginLeft)})`;
      if (limits) related.push(...(config?.limits ? rel(['limits', 'input'], `input limit: ${fmt(limits.input)}`) : rel(['model'], `model input limit: ${fmt(limits.input)}`)));
      else related.push(...(config?.window !== undefined ? rel(['window'], `window: ${fmt(window)}`) : rel(['model'], `model window: ${fmt(window)}`)));
    } else if (limits) {
      message = `${inputSum(report)} > ${fmt(limits.input)} input limit (over by ${fmt(report.inputAllocated - limits.input)})${keep}`;
      related.push(...(config?.limits ? rel(['limits', 'input'], `input limit: ${fmt(limits.input)}`) : rel(['model'], `model input limit: ${fmt(limits.input)}`)));
    } else {
      message = `${inputSum(report)} + ${fmt(output)} output = ${fmt(report.inputAllocated + output)} > ${fmt(window)} window (over by ${fmt(report.overBy)})${keep}`;
      related.push(...(config?.window !== undefined ? rel(['window'], `window: ${fmt(window)}`) : rel(['model'], `model window: ${fmt(window)}`)));
    }
    related.push(...rel(['output'], `output: ${fmt(output)}`), ...rel(['margin'], `margin: ${fmt(margin)}`));
    const span = configDoc.keySpan(['slots']) ?? at(['window']) ?? ZERO;
    // Eating into the margin still fits the window: a warning, not an error.
    out.push(finding('budget-overflow', path, span, message, { related, ...(marginShort ? { severity: 'warning' as const } : {}) }));
  }
  return out;
}
