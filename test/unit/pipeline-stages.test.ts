/**
 * The pipeline's shape: stages with typed inputs and outputs composed in `assemble`, decisions
 * appended to one log, and the fixture-side stages memoized in two levels (load .. score by slot
 * settings, select by budget), so changing a budget re-selects without re-scoring and the trace is
 * the same warm or cold.
 */
import { describe, expect, it } from 'vitest';
import { ASSEMBLY_VERSION, assemble, type AssembleInput } from '../../src/core/assembly';
import { prepare } from '../../src/core/assembly/stages/env';
import { loadItems, loadSlots } from '../../src/core/assembly/stages/load';
import { DecisionLog } from '../../src/core/assembly/stages/log';
import { rankSlots, selectSlots } from '../../src/core/assembly/stages/slots';
import { budgetSlots } from '../../src/core/assembly/stages/budget';
import { fitRequest } from '../../src/core/assembly/stages/request';
import { buildTrace } from '../../src/core/assembly/stages/trace';
import { checkRequest } from '../../src/core/assembly/stages/checks';
import type { ItemSpec } from './support/assemblyBuilders';
import { chars4, config, fixture, t, template, textOfTokens } from './support/assemblyBuilders';

const tpl = () => template([t.msg('system', t.v('policy')), t.msg('user', t.each('evidence', [t.v('this'), t.text('\n')]), t.v('question'))]);
const cfg = (budget: number) => config({ window: 3000, output: 500, overhead: { item: 4, message: 3, request: 3 }, filters: { version: '4.2' }, slots: { policy: { kind: 'policy', trust: 'trusted', required: true }, evidence: { kind: 'evidence', trust: 'untrusted', label: 'EVIDENCE', budget, priority: 1, pack: 'skip' }, question: { kind: 'user', trust: 'untrusted', required: true } } });
const evidence = (n: number): ItemSpec[] => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, source: `s${i % 7}`, version: i % 9 === 0 ? '3.9' : '4.2', relevance: ((i * 37) % 100) / 100, text: `${textOfTokens(20 + (i % 30), 'wxyz')} passage ${i}` }));

describe('stages compose into assemble', () => {
  it('running the stages by hand gives what assemble gives, byte for byte', () => {
    const fx = fixture({ policy: 'Cite ids.', question: 'Why?', evidence: evidence(60) });
    const input = { template: tpl(), config: cfg(900), fixture: fx, tokenizer: chars4 };
    const env = prepare(input);
    const loaded = loadSlots(env);
    const log = new DecisionLog(loaded.map((r) => r.state.name));
    const ranked = rankSlots(env, loaded, log);
    const budgeted = budgetSlots(env.budget, ranked);
    const selected = selectSlots(env, budgeted, log);
    const request = fitRequest(env, selected, log);
    const checks = checkRequest(env, selected, request, log);
    const trace = buildTrace(env, selected, request, checks, log, ASSEMBLY_VERSION);
    const whole = assemble(input);
    expect(JSON.stringify(trace)).toBe(JSON.stringify(whole.trace));
    expect(request.messages).toEqual(whole.messages);
    expect(log.findings).toEqual(whole.findings);
    // Each stage's decisions are in the log: filter, then select, in slot order.
    const reasons = log.omissions.map((o) => o.reason);
    expect(reasons.indexOf('filtered:version')).toBeLessThan(reasons.indexOf('over-slot-budget'));
  });

  /** The stages by hand on frozen state: a stage that wrote into an earlier stage's value would throw (modules run in strict mode). */
  function frozenRun(input: AssembleInput) {
    const freeze = <T extends object>(xs: T[]): T[] => Object.freeze(xs.map((x) => Object.freeze(x))) as T[];
    const env = Object.freeze(prepare(input));
    const budgetBefore = JSON.stringify(env.budget);
    Object.freeze(env.budget);
    const loaded = freeze(loadSlots(env));
    const log = new DecisionLog(loaded.map((r) => r.state.name));
    const ranked = freeze(rankSlots(env, loaded, log));
    for (const s of ranked) Object.freeze(s.ranked);
    const budgeted = freeze(budgetSlots(env.budget, ranked));
    const selected = freeze(selectSlots(env, budgeted, log));
    for (const s of selected) Object.freeze(s.packed);
    const packedBefore = selected.map((s) => s.packed.map((i) => i.id));
    const request = fitRequest(env, selected, log);
    const checks = checkRequest(env, selected, request, log);
    const trace = buildTrace(env, selected, request, checks, log, ASSEMBLY_VERSION);
    expect(JSON.stringify(env.budget)).toBe(budgetBefore);
    // Fit returns what it keeps: the selections' lists keep every item.
    expect(selected.map((s) => s.packed.map((i) => i.id))).toEqual(packedBefore);
    return { loaded, ranked, budgeted, selected, request, trace };
  }

  it('no stage fills a field of an earlier stage: each returns a new value (frozen inputs stay as they were)', () => {
    const fx = fixture({ policy: 'Cite ids.', question: 'Why?', evidence: evidence(120) });
    const input = { template: tpl(), config: cfg(2450), fixture: fx, tokenizer: chars4 };
    const whole = assemble(input);
    const run = frozenRun(input);
    expect(JSON.stringify(run.trace)).toBe(JSON.stringify(whole.trace));
    // Each stage's value is new, the earlier one unchanged: load has no candidates, the candidates no budget.
    const ev = (xs: readonly object[]) => xs[1] as Record<string, unknown>;
    expect(Object.keys(ev(run.loaded))).not.toContain('candidates');
    expect(Object.keys(ev(run.ranked))).not.toContain('budget');
    expect(ev(run.budgeted).budget).toBe(2450);
    expect(Object.keys(ev(run.budgeted))).not.toContain('packed');
    // The window is small: fit trims the request.
    expect(run.request.trimmed.length).toBeGreaterThan(0);
  });

  it('a hybrid history on frozen state: the remainder is its budget, the plan and the trace are what assemble gives', () => {
    const turns = Array.from({ length: 30 }, (_, i): ItemSpec => ({ id: `t${i + 1}`, role: i % 2 ? 'assistant' : 'user', at: `2026-08-12T10:${String(i).padStart(2, '0')}:00Z`, text: `${textOfTokens(40, 'turn')} refund ${i}` }));
    const summaries: ItemSpec[] = [{ id: 's1', text: `${textOfTokens(30, 'summ')} refund`, meta: { summary_of: ['t1', 't2', 't3', 't4', 't5', 't6'] } }];
    const htpl = template([t.msg('system', t.v('policy'), t.history()), t.msg('user', t.v('question'))]);
    const hcfg = config({ window: 1600, output: 200, overhead: { item: 2, message: 3, request: 3 }, slots: { policy: { kind: 'policy', trust: 'trusted', required: true, budget: 200 }, history: { kind: 'history', trust: 'untrusted', policy: 'hybrid' }, question: { kind: 'user', trust: 'untrusted', required: true, budget: 100 } } });
    const input = { template: htpl, config: hcfg, fixture: fixture({ policy: 'Be brief.', question: 'Where is my refund?', history: [...turns, ...summaries] }), tokenizer: chars4 };
    const whole = assemble(input);
    const run = frozenRun(input);
    expect(JSON.stringify(run.trace)).toBe(JSON.stringify(whole.trace));
    const history = run.selected.find((s) => s.state.name === 'history')!;
    expect(history.budget).toBe(whole.budget.remainder![0].budget);
    expect(run.trace.history?.[0].policy).toBe('hybrid');
    expect(history.selection?.history?.parts.size).toBeGreaterThan(0);
  });

  it('load gives stable ids and counts', () => {
    const { items } = loadItems('evidence', fixture({ evidence: [{ text: 'a' }, { id: 'x', text: 'bb' }, { id: 'x', text: 'c' }] }).slots.evidence, chars4);
    expect(items.map((i) => [i.id, i.tokens, i.hasId])).toEqual([
      ['evidence_1', 1, false],
      ['x', 1, true],
      ['x~2', 1, true],
    ]);
  });
});

describe('memoized fixture-side stages', () => {
  it('a budget change re-selects from the memoized candidates; warm and cold traces agree', () => {
    const fx = fixture({ policy: 'Cite ids.', question: 'Why?', evidence: evidence(200) });
    const warm = [900, 1200, 900].map((b) => assemble({ template: tpl(), config: cfg(b), fixture: fx, tokenizer: chars4 }));
    const cold = [900, 1200].map((b) => assemble({ template: tpl(), config: cfg(b), fixture: fixture({ policy: 'Cite ids.', question: 'Why?', evidence: evidence(200) }), tokenizer: chars4 }));
    expect(JSON.stringify(warm[0].trace)).toBe(JSON.stringify(cold[0].trace));
    expect(JSON.stringify(warm[1].trace)).toBe(JSON.stringify(cold[1].trace));
    expect(JSON.stringify(warm[2].trace)).toBe(JSON.stringify(warm[0].trace));
    expect(warm[1].trace.slots[1].kept).toBeGreaterThan(warm[0].trace.slots[1].kept);
  });

  it('assembles 10,000 evidence items with every new stage on, deterministically', () => {
    const big = (): ItemSpec[] =>
      Array.from({ length: 10_000 }, (_, i) => ({
        id: `e${i}`,
        source: `s${i % 101}`,
        version: '4.2',
        relevance: ((i * 7919) % 1000) / 1000,
        text: `Passage ${i % 3000} of the retry documentation, with words ${(i % 3000) % 13} ${(i % 3000) % 17}.`,
        meta: { topic: `t${i % 50}`, claim: `c${i % 3}`, covers: [`sub${i % 5}`] },
      }));
    const c = config({ window: 30000, output: 1000, dedup: { near: 0.8 }, slots: { policy: { kind: 'policy', trust: 'trusted', required: true }, evidence: { kind: 'evidence', trust: 'untrusted', label: 'EVIDENCE', budget: 20000, select: 'value-per-token', requires: ['sub0', 'sub4'], max_per_source: 30, pack: 'skip' }, question: { kind: 'user', trust: 'untrusted', required: true } } });
    const t0 = performance.now();
    const a = assemble({ template: tpl(), config: c, fixture: fixture({ policy: 'P', question: 'Q', evidence: big() }), tokenizer: chars4 });
    const ms = performance.now() - t0;
    const b = assemble({ template: tpl(), config: c, fixture: fixture({ policy: 'P', question: 'Q', evidence: big() }), tokenizer: chars4 });
    expect(JSON.stringify(a.trace)).toBe(JSON.stringify(b.trace));
    expect(a.ok).toBe(true);
    expect(a.trace.omitted.some((o) => o.reason.startsWith('duplicate-of:'))).toBe(true);
    expect(a.trace.coverage?.every((x) => x.covered_by.length > 0)).toBe(true);
    // Generous bound for a loaded CI machine; the point is that nothing here is quadratic.
    expect(ms).toBeLessThan(15_000);
  });
});
