/**
 * The trace's per-item entries (retained, omitted, citation_map, conflicts) are built when first
 * read (src/core/assembly/stages/trace.ts). Whoever reads the trace must see what an eagerly built
 * one holds: the same JSON in the same key order, through JSON, spreads, structured clones and the
 * descriptor copy that adds the cost, and the same objects on every read.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../src/core/assembly';
import { copyTrace, materializeTrace } from '../../src/core/assembly/stages/trace';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { withCost } from '../../src/core/cost';
import { parseTemplate } from '../../src/core/language';
import { getTokenizer } from '../../src/core/tokens';
import type { FixtureDoc, FixtureItem, Span } from '../../src/core/types';

const Z: Span = { start: 0, end: 0 };
const LAZY = ['retained', 'omitted', 'citation_map', 'conflicts'];

const template = parseTemplate('/t/qa.prompt', ['---', 'model: gpt-4o', '---', '{{role "system"}}', 'Answer.', '{{role "user"}}', '{{#each evidence}}', '{{this}}', '{{/each}}', 'Q: {{question}}', ''].join('\n'));
const config = ContextConfigSchema.parse({
  version: 3,
  window: 2000,
  output: 200,
  filters: { version: '4.2', now: '2026-08-05T00:00:00Z' },
  slots: {
    evidence: { kind: 'evidence', trust: 'untrusted', budget: 60, label: 'EVIDENCE', pack: 'skip' },
    question: { kind: 'user', trust: 'untrusted', required: true },
  },
});

function fixture(): FixtureDoc {
  const texts = ['Retries are on by default for POST.', 'Retries are off by default for POST.', 'Use an idempotency key.', 'Use an idempotency key.', 'Old retry docs.', 'A long passage about backoff and jitter that will not fit in the budget of this slot at all, '.repeat(3)];
  const items: FixtureItem[] = texts.map((text, i) => ({
    index: i,
    id: `ev_${i}`,
    text,
    source: `docs/${i % 2}`,
    version: i === 4 ? '3.9' : '4.2',
    authority: 0.5 + i / 20,
    relevance: 0.9 - i / 10,
    published_at: '2026-01-01T00:00:00Z',
    meta: i < 2 ? { topic: 'retries', claim: i === 0 ? 'on' : 'off' } : {},
    span: Z,
    textSpan: Z,
  }));
  return { path: '/t/f.fixture.json', text: 'f', name: 'f', slots: { evidence: { type: 'items', items, span: Z }, question: { type: 'text', text: 'Why twice?', span: Z } }, slotKeySpans: {}, findings: [] };
}

const run = () => assemble({ template, config, fixture: fixture(), tokenizer: getTokenizer('o200k_base')!, modelName: 'gpt-4o', now: '2026-08-05T00:00:00Z' });

describe('lazy trace', () => {
  it('keeps the per-item entries unbuilt until read, then plain data in place', () => {
    const { trace } = run();
    const keys = Object.keys(trace);
    for (const k of LAZY.filter((k) => keys.includes(k))) expect(typeof Object.getOwnPropertyDescriptor(trace, k)?.get, k).toBe('function');
    const first = trace.omitted;
    expect(first.length).toBeGreaterThan(0);
    expect(trace.omitted).toBe(first);
    expect(Object.getOwnPropertyDescriptor(trace, 'omitted')?.get).toBeUndefined();
    expect(Object.keys(trace)).toEqual(keys);
  });

  it('reads the same through JSON, spreads, structured clones, copies and the cost', () => {
    const eager = JSON.stringify(materializeTrace(run().trace));
    expect(JSON.stringify(run().trace)).toBe(eager);
    expect(JSON.stringify({ ...run().trace })).toBe(eager);
    expect(JSON.stringify(structuredClone(run().trace))).toBe(eager);
    const copied = copyTrace(run().trace);
    expect(typeof Object.getOwnPropertyDescriptor(copied, 'retained')?.get).toBe('function');
    expect(JSON.stringify(copied)).toBe(eager);
    const r = run();
    const costed = withCost(r);
    expect(costed.trace.cost, 'gpt-4o has a list price').toBeDefined();
    expect(typeof Object.getOwnPropertyDescriptor(costed.trace, 'omitted')?.get, 'still lazy after the cost').toBe('function');
    expect(Object.keys(costed.trace)).toEqual([...Object.keys(r.trace), 'cost']);
    const { cost: _cost, ...rest } = costed.trace as typeof costed.trace & { cost?: unknown };
    void _cost;
    expect(JSON.stringify(rest)).toBe(eager);
  });

  it('builds the value once for a trace and its copies; an assignment changes only its object', () => {
    const { trace } = run();
    const copy = copyTrace(trace);
    expect(copy.retained).toBe(trace.retained);
    const other = copyTrace(trace);
    other.omitted = [];
    expect(other.omitted).toEqual([]);
    expect(trace.omitted.length).toBeGreaterThan(0);
    const frozen = Object.freeze(copyTrace(run().trace));
    expect(frozen.citation_map).toBe(frozen.citation_map);
  });
});
