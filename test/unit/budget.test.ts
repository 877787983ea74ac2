import { describe, expect, it } from 'vitest';
import { budgetFindings, computeBudget, formatTokens, remaining, resolveAmount } from '../../src/core/budget';
import type { ModelInfo } from '../../src/core/types';
import { config, configDoc } from './support/assemblyBuilders';

const tk = { name: 'o200k_base', exact: true };

const SEED_8000 = `version: 3
window: 8000
output: 1200
margin: 800
slots:
  policy:   { kind: policy,   trust: trusted,   required: true, budget: 800 }
  history:  { kind: history,  trust: untrusted, budget: 1200, priority: 1 }
  evidence: { kind: evidence, trust: untrusted, budget: 3000, priority: 2, label: EVIDENCE }
  tools:    { kind: tool,     trust: trusted,   budget: 600 }
  question: { kind: user,     trust: untrusted, required: true, budget: 400 }
`;

const gpt4o: ModelInfo = { name: 'gpt-4o', provider: 'openai', window: 128000, maxOutput: 16384, tokenizer: 'o200k_base', messageOverhead: 3, requestOverhead: 3, exact: true };

describe('resolveAmount', () => {
  it('takes tokens as written and floors percentages', () => {
    expect(resolveAmount(800, 6800)).toBe(800);
    expect(resolveAmount('10%', 8000)).toBe(800);
    expect(resolveAmount('12.5%', 6801)).toBe(850);
    expect(resolveAmount('33%', 100)).toBe(33);
  });
  it('formats thousands without locale data', () => {
    expect([0, 999, 1000, 9500, 1234567, -1500].map(formatTokens)).toEqual(['0', '999', '1,000', '9,500', '1,234,567', '-1,500']);
  });
});

describe('computeBudget: seed 000, the 8,000-token request', () => {
  const report = computeBudget(configDoc(SEED_8000).config!, { tokenizer: tk });

  it('800 + 1,200 + 3,000 + 600 + 400 = 6,000 input; + 1,200 output = 7,200; + 800 margin = 8,000: fits', () => {
    expect(report.slots.map((s) => s.budget)).toEqual([800, 1200, 3000, 600, 400]);
    expect(report.inputAllocated).toBe(6000);
    expect(report.inputAllocated + report.output).toBe(7200);
    expect(report.margin).toBe(800);
    expect(report.total).toBe(8000);
    expect(report.fits).toBe(true);
    expect(report.overBy).toBe(0);
    expect(report.inputBudget).toBe(6800);
    expect(report.tokenizer).toBe('o200k_base');
    expect(report.exact).toBe(true);
  });

  it('evidence +1,500: 8,700 with the output, 700 over capacity; 1,500 over with the margin kept', () => {
    const cfg = config({ ...configDoc(SEED_8000).config!, slots: { ...configDoc(SEED_8000).config!.slots, evidence: { kind: 'evidence', budget: 4500 } } });
    const r = computeBudget(cfg, { tokenizer: tk });
    expect(r.inputAllocated + r.output).toBe(8700);
    expect(r.inputAllocated + r.output - r.window).toBe(700);
    expect(r.fits).toBe(false);
    // over_by is the seed's 700 over capacity; the margin would need 1,500 in all.
    expect(r.overBy).toBe(700);
    expect(r.margin - r.marginLeft).toBe(1500);
    // Removing 700 fits only by consuming the margin; removing 1,500 restores it.
    const noMargin = computeBudget({ ...cfg, margin: 0 }, { tokenizer: tk });
    expect(noMargin.overBy).toBe(700);
    const trimmed = computeBudget(config({ ...cfg, slots: { ...cfg.slots, evidence: { kind: 'evidence', budget: 3000 } } }), { tokenizer: tk });
    expect(trimmed.fits).toBe(true);
  });

  it('resolves a percentage margin against the window and percentage slots against the input budget', () => {
    const r = computeBudget(config({ window: 8000, output: 1200, margin: '10%', slots: { evidence: { budget: '50%' }, q: {} } }), { tokenizer: tk });
    expect(r.margin).toBe(800);
    expect(r.inputBudget).toBe(6800);
    expect(r.slots[0]).toMatchObject({ name: 'evidence', budget: 3400, written: '50%' });
    expect(r.slots[1].budget).toBeUndefined();
    expect(r.inputAllocated).toBe(3400);
  });
});

describe('remaining: seed 000, the 16,000-token history budget', () => {
  const report = computeBudget(
    config({
      window: 16000,
      output: 2000,
      slots: {
        policy: { kind: 'policy', budget: 1800 },
        tools: { kind: 'tool', budget: 600 },
        evidence: { kind: 'evidence', budget: 5000 },
        question: { kind: 'user', budget: 600 },
        history: { kind: 'history' },
      },
    }),
    { tokenizer: tk },
  );
  it('fixed 2,400 + 5,000 + 600 + 2,000 = 10,000; 6,000 left; 4,500 of recent turns leave 1,500', () => {
    expect(report.inputAllocated + report.output).toBe(10000);
    expect(remaining(report, ['history'])).toBe(6000);
    expect(remaining(report, ['history']) - 4500).toBe(1500);
    expect(remaining(report)).toBe(6000);
  });
  it('counts a budgeted slot in the exception list as free room', () => {
    const withHist = computeBudget(config({ window: 16000, output: 2000, slots: { a: { budget: 10000 }, history: { budget: 1000 } } }), { tokenizer: tk });
    expect(remaining(withHist, ['history'])).toBe(4000);
    expect(remaining(withHist)).toBe(3000);
  });
});

describe('computeBudget: windows and limits', () => {
  it('takes the window from the model when the config has none', () => {
    const r = computeBudget(config({ model: 'gpt-4o', output: 4000, slots: {} }), { model: gpt4o, tokenizer: tk });
    expect(r.window).toBe(128000);
    expect(r.model).toBe('gpt-4o');
    expect(r.inputBudget).toBe(124000);
    expect(r.limits).toBeUndefined();
  });

  it('checks separate limits: input allocated + margin <= input limit and output <= output limit', () => {
    const r = computeBudget(config({ limits: { input: 6000, output: 2000 }, output: 1500, margin: 500, slots: { a: { budget: 5000 } } }), { tokenizer: tk });
    expect(r.limits).toEqual({ input: 6000, output: 2000 });
    expect(r.inputBudget).toBe(6000);
    expect(r.window).toBe(8000);
    expect(r.fits).toBe(true);
    const over = computeBudget(config({ limits: { input: 6000, output: 2000 }, output: 1500, margin: 500, slots: { a: { budget: 5600 } } }), { tokenizer: tk });
    expect(over.fits).toBe(false);
    // 5,600 fits the 6,000 input limit itself but leaves 400 of the 500 margin.
    expect(over.overBy).toBe(0);
    expect(over.marginLeft).toBe(400);
    const outOver = computeBudget(config({ limits: { input: 6000, output: 1000 }, output: 1500, slots: {} }), { tokenizer: tk });
    expect(outOver.fits).toBe(false);
    expect(outOver.overBy).toBe(500);
  });

  it('uses a registry entry with a separate input limit', () => {
    const m: ModelInfo = { ...gpt4o, name: 'split', window: 200000, maxInput: 100000, maxOutput: 8000 };
    const r = computeBudget(config({ output: 4000, margin: '5%', slots: {} }), { model: m, tokenizer: tk });
    expect(r.limits).toEqual({ input: 100000, output: 8000 });
    expect(r.margin).toBe(5000);
    expect(r.inputBudget).toBe(100000);
  });
});

describe('budgetFindings', () => {
  it('is silent when the equation holds', () => {
    const doc = configDoc(SEED_8000);
    expect(budgetFindings(computeBudget(doc.config!, { tokenizer: tk }), doc)).toEqual([]);
  });

  it('budget-overflow shows the arithmetic on the slots key, with each term related', () => {
    const doc = configDoc(SEED_8000.replace('budget: 3000', 'budget: 4500'));
    const f = budgetFindings(computeBudget(doc.config!, { tokenizer: tk }), doc);
    expect(f).toHaveLength(1);
    expect(f[0].rule).toBe('budget-overflow');
    expect(f[0].severity).toBe('error');
    expect(f[0].message).toBe('800 + 1,200 + 4,500 + 600 + 400 = 7,500 input + 1,200 output = 8,700 > 8,000 window (over by 700); keeping the 800-token margin needs 1,500 less');
    expect(doc.text.slice(f[0].span.start, f[0].span.end)).toBe('slots');
    const rel = f[0].related!.map((r) => `${doc.text.slice(r.span.start, r.span.end)} | ${r.message}`);
    expect(rel).toContain('4500 | evidence: 4,500');
    expect(rel).toContain('8000 | window: 8,000');
    expect(rel).toContain('1200 | output: 1,200');
    expect(rel).toContain('800 | margin: 800');
  });

  it('budget-overflow against a separate input limit', () => {
    const doc = configDoc('limits: { input: 6000, output: 2000 }\noutput: 1000\nmargin: 800\nslots:\n  a: { budget: 5000 }\n  b: { budget: 1000 }\n');
    const f = budgetFindings(computeBudget(doc.config!, { tokenizer: tk }), doc);
    expect(f.map((x) => x.rule)).toEqual(['budget-overflow']);
    expect(f[0].message).toBe('5,000 + 1,000 = 6,000 input fits the 6,000 input limit but leaves 0 of the 800-token margin (short by 800)');
    expect(f[0].severity).toBe('warning');
    expect(f[0].related!.some((r) => r.message === 'input limit: 6,000')).toBe(true);
  });

  it('reserve-invalid: the output reserve fills the window', () => {
    const doc = configDoc('window: 4000\noutput: 4000\nslots: {}\n');
    const report = computeBudget(doc.config!, { tokenizer: tk });
    expect(report.fits).toBe(false);
    expect(report.overBy).toBe(0);
    const f = budgetFindings(report, doc);
    expect(f.map((x) => x.rule)).toEqual(['reserve-invalid']);
    expect(f[0].message).toMatch(/Reserved output 4,000 leaves no input budget in the 4,000-token window/);
    expect(doc.text.slice(f[0].span.start, f[0].span.end)).toBe('4000');
    expect(f[0].span.start).toBe(doc.text.indexOf('output: 4000') + 8);
  });

  it('reserve-invalid: the margin leaves no input budget', () => {
    const doc = configDoc('window: 2000\noutput: 1200\nmargin: 900\nslots: {}\n');
    const f = budgetFindings(computeBudget(doc.config!, { tokenizer: tk }), doc);
    expect(f[0].rule).toBe('reserve-invalid');
    expect(f[0].message).toBe('Margin 900 leaves no input budget: window 2,000 - output 1,200 = 800 <= 900 margin.');
    expect(doc.text.slice(f[0].span.start, f[0].span.end)).toBe('900');
  });

  it('reserve-invalid: output above the model maximum, or above the separate output limit', () => {
    const doc = configDoc('model: gpt-4o\noutput: 20000\nslots: {}\n');
    const f = budgetFindings(computeBudget(doc.config!, { model: gpt4o, tokenizer: tk }), doc, gpt4o);
    expect(f.map((x) => x.rule)).toEqual(['reserve-invalid']);
    expect(f[0].message).toBe("Reserved output 20,000 exceeds gpt-4o's maximum output of 16,384 tokens.");
    const doc2 = configDoc('limits: { input: 6000, output: 1000 }\noutput: 1500\nslots: {}\n');
    const f2 = budgetFindings(computeBudget(doc2.config!, { tokenizer: tk }), doc2);
    expect(f2.map((x) => x.rule)).toEqual(['reserve-invalid']);
    expect(f2[0].message).toBe('Reserved output 1,500 exceeds the output limit of 1,000 tokens.');
    // The config's own models entry carries the output limit too.
    const doc3 = configDoc('model: mine\noutput: 5000\nmodels:\n  mine: { window: 32000, max_output: 4096 }\nslots: {}\n');
    const f3 = budgetFindings(computeBudget(doc3.config!, { tokenizer: tk }), doc3);
    expect(f3.map((x) => x.message)).toEqual(["Reserved output 5,000 exceeds mine's maximum output of 4,096 tokens."]);
  });

  it('reserve-invalid when no window is known', () => {
    const doc = configDoc('slots:\n  a: { budget: 100 }\n');
    const r = computeBudget(doc.config!, { tokenizer: tk });
    expect(r.window).toBe(0);
    expect(r.fits).toBe(false);
    const f = budgetFindings(r, doc);
    expect(f.map((x) => x.rule)).toEqual(['reserve-invalid']);
    expect(f[0].message).toMatch(/No context window/);
  });
});
