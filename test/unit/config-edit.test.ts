/**
 * The edits of the preview's "Apply to config" (src/core/config/edit.ts): a slot's budget set in
 * a context config by replacing just the YAML value node, or by adding the key in the mapping's
 * own style, with every other byte (comments, alignment, quoting, line endings) unchanged; and the
 * refusals when no such edit is safe. Each case checks the exact edited text and that the config
 * parser reads the new budget back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyTextEdits, slotBudgetEdits } from '../../src/core/config/edit';
import { parseConfig, parseInlineConfig } from '../../src/core/config/parse';

const PATH = '/w/support.context.yaml';

/** The edited text, after checking the edits reproduce it and the parser reads the budgets back. */
function edited(text: string, budgets: Record<string, number>, inline = false): string {
  const r = slotBudgetEdits(inline ? '/w/t.prompt' : PATH, text, budgets, { inline });
  if (r.error !== undefined) throw new Error(r.error);
  expect(applyTextEdits(text, r.edits)).toBe(r.text);
  const doc = inline ? parseInlineConfig('/w/t.prompt', r.text) : parseConfig(PATH, r.text);
  expect(doc.findings.filter((f) => f.severity === 'error')).toEqual([]);
  for (const [slot, n] of Object.entries(budgets)) expect(doc.config?.slots?.[slot]?.budget).toBe(n);
  return r.text;
}

function refused(text: string, budgets: Record<string, number>): string {
  const r = slotBudgetEdits(PATH, text, budgets);
  expect(r.edits).toBeUndefined();
  return r.error ?? '';
}

describe('slotBudgetEdits: an existing budget key', () => {
  it('replaces only the number in an aligned flow mapping (the SDK example), comments kept', () => {
    const text = readFileSync(join(__dirname, '..', '..', 'examples', 'sdk-qa', 'sdk-qa.context.yaml'), 'utf8');
    const r = slotBudgetEdits(PATH, text, { evidence: 400 });
    expect(r.edits).toHaveLength(1);
    const at = text.indexOf('budget: 3000') + 'budget: '.length;
    expect(r.edits?.[0]).toEqual({ span: { start: at, end: at + 4 }, newText: '400' });
    expect(edited(text, { evidence: 400 })).toBe(text.replace('budget: 3000,', 'budget: 400,'));
  });

  it('replaces a quoted percentage with tokens', () => {
    const text = 'window: 16000\noutput: 2000\nslots:\n  history: { kind: history, budget: "10%", priority: 1 }\n';
    expect(edited(text, { history: 1200 })).toBe('window: 16000\noutput: 2000\nslots:\n  history: { kind: history, budget: 1200, priority: 1 }\n');
  });

  it('replaces the value in a block mapping and keeps the comment after it', () => {
    const text = ['window: 8000', 'output: 1000', 'slots:', '  evidence:', '    kind: evidence', '    budget: 3000   # keep under 3k', '    trust: untrusted', ''].join('\n');
    expect(edited(text, { evidence: 2500 })).toBe(text.replace('budget: 3000   #', 'budget: 2500   #'));
  });

  it('fills a key written without a value', () => {
    const text = 'window: 8000\noutput: 1000\nslots:\n  evidence:\n    kind: evidence\n    budget:\n    trust: untrusted\n';
    expect(edited(text, { evidence: 700 })).toBe('window: 8000\noutput: 1000\nslots:\n  evidence:\n    kind: evidence\n    budget: 700\n    trust: untrusted\n');
  });
});

describe('slotBudgetEdits: a missing budget key', () => {
  it('adds it to a flow mapping before the closing brace', () => {
    const text = 'window: 8000\noutput: 1000\nslots:\n  evidence: { kind: evidence, trust: untrusted }   # retrieved docs\n';
    expect(edited(text, { evidence: 900 })).toBe('window: 8000\noutput: 1000\nslots:\n  evidence: { kind: evidence, trust: untrusted, budget: 900 }   # retrieved docs\n');
  });

  it('adds it to a multi-line flow mapping with a trailing comma and a comment', () => {
    const text = 'window: 8000\noutput: 1000\nslots:\n  evidence: {\n    kind: evidence,\n    trust: untrusted, # data\n  }\n';
    expect(edited(text, { evidence: 900 })).toBe('window: 8000\noutput: 1000\nslots:\n  evidence: {\n    kind: evidence,\n    trust: untrusted, budget: 900, # data\n  }\n');
  });

  it('adds it inside an empty flow mapping', () => {
    const text = 'window: 8000\noutput: 1000\nslots:\n  notes: {}\n';
    expect(edited(text, { notes: 50 })).toBe('window: 8000\noutput: 1000\nslots:\n  notes: { budget: 50 }\n');
  });

  it('adds a line at the column of the keys of a block mapping, after its last entry and that entry’s comment', () => {
    const text = ['# support config', 'window: 8000', 'output: 1000', 'slots:', '  evidence:', '    kind: evidence', '    trust: untrusted  # from retrieval', '  question:', '    kind: user', 'filters: { version: "4.2" }', ''].join('\n');
    expect(edited(text, { evidence: 1800 })).toBe(
      ['# support config', 'window: 8000', 'output: 1000', 'slots:', '  evidence:', '    kind: evidence', '    trust: untrusted  # from retrieval', '    budget: 1800', '  question:', '    kind: user', 'filters: { version: "4.2" }', ''].join('\n'),
    );
  });

  it('gives a slot written as `name:` alone a flow mapping', () => {
    const text = 'window: 8000\noutput: 1000\nslots:\n  policy: { kind: policy, budget: 500 }\n  question:\n';
    expect(edited(text, { question: 300 })).toBe('window: 8000\noutput: 1000\nslots:\n  policy: { kind: policy, budget: 500 }\n  question: { budget: 300 }\n');
  });
});

describe('slotBudgetEdits: several budgets, line endings, inline configs', () => {
  it('edits several slots in one pass, each at its own node', () => {
    const text = 'window: 16000\noutput: 2000\nslots:\n  policy: { kind: policy, budget: 900 }\n  evidence:\n    kind: evidence\n  question: { kind: user, budget: 300 }\n';
    const r = slotBudgetEdits(PATH, text, { policy: 800, evidence: 2000, question: 250 });
    expect(r.edits).toHaveLength(3);
    expect(edited(text, { policy: 800, evidence: 2000, question: 250 })).toBe(
      'window: 16000\noutput: 2000\nslots:\n  policy: { kind: policy, budget: 800 }\n  evidence:\n    kind: evidence\n    budget: 2000\n  question: { kind: user, budget: 250 }\n',
    );
  });

  it('keeps CRLF line endings', () => {
    const text = 'window: 8000\r\noutput: 1000\r\nslots:\r\n  evidence:\r\n    kind: evidence\r\n';
    expect(edited(text, { evidence: 640 })).toBe('window: 8000\r\noutput: 1000\r\nslots:\r\n  evidence:\r\n    kind: evidence\r\n    budget: 640\r\n');
  });

  it('edits a config written inline in a template’s front matter, leaving the body alone', () => {
    const text = ['---', 'model: gpt-4o', 'context:', '  window: 8000', '  output: 1000', '  slots:', '    question: { kind: user, trust: untrusted, budget: 300 }', '---', '{{role "user"}}', 'budget: 300 {{question}}', ''].join('\n');
    expect(edited(text, { question: 120 }, true)).toBe(text.replace('budget: 300 }', 'budget: 120 }'));
  });
});

describe('slotBudgetEdits: refusals', () => {
  it('refuses a config with YAML errors, naming the problem', () => {
    expect(refused('window: 8000\nslots:\n  evidence: { kind: evidence, budget: 3000\n', { evidence: 400 })).toMatch(/YAML errors/);
  });

  it('refuses a slot written as an alias', () => {
    const text = 'window: 8000\noutput: 1000\nbase: &ev { kind: evidence, budget: 100 }\nslots:\n  evidence: *ev\n';
    expect(refused(text, { evidence: 400 })).toMatch(/alias \(\*ev\)/);
  });

  it('refuses a slot that is a list, and a budget that is not a whole number of tokens', () => {
    expect(refused('window: 8000\nslots:\n  evidence: [a, b]\n', { evidence: 400 })).toMatch(/slots\.evidence .* a list/);
    expect(refused('window: 8000\nslots:\n  evidence: { budget: 1 }\n', { evidence: -1 })).toMatch(/whole number/);
    expect(refused('window: 8000\nslots:\n  evidence: { budget: 1 }\n', { evidence: 1.5 })).toMatch(/whole number/);
    expect(refused('window: 8000\nslots:\n  evidence: { budget: 1 }\n', {})).toMatch(/no budgets/);
  });

  it('refuses a slots key that is not a mapping', () => {
    const text = 'window: 8000\nslots: 12\n';
    expect(refused(text, { evidence: 400 })).toMatch(/slots .* single value/);
  });

  it('is never thrown off by hostile text: every result is an edit or a reason', () => {
    for (const text of ['', '---\n', '[1, 2]', 'slots:\n  - a\n', '\u0000\u0001', 'slots: {evidence: {budget: !!binary x}}', 'a: b\n'.repeat(2000), '{'.repeat(200)]) {
      const r = slotBudgetEdits(PATH, text, { evidence: 10 });
      expect(r.error !== undefined || r.edits !== undefined).toBe(true);
    }
  });
});
