/**
 * Differential suite of the Prompty engine against the other loaders of the `.prompty` format:
 * every case of test/oracle/prompty-golden/golden-promptflow.jsonl (promptflow's own `Prompty`
 * loader, promptflow-core 1.18.2) and golden-azure-inference.jsonl (azure-ai-inference 1.0.0b9's
 * `PromptTemplate.from_prompty` / `.from_string`), rendered by those loaders themselves (see the
 * README there), is rendered in process by src/core/language/prompty/engine.ts with the case's
 * loader named (`loader: 'promptflow'` / `'azure-ai-inference'`), as prompty-golden.test.ts does
 * for Prompty's own runtime lines.
 *
 * - Where the loader renders, the messages must be the same (roles, part kinds, every string to
 *   the character, promptflow's `name` / `tool_call_id` / `tool_calls`), or the engine reports a
 *   located `unsupported-feature` issue (it says it cannot reproduce the case).
 * - Where the loader fails, the engine must report an issue (a refusal) or render nothing.
 *
 * The counts per loader (exact / reported / refused) are printed for the record.
 */
import { describe, expect, it } from 'vitest';
import { LOADER_FILES, compare, readGolden, renderCase, type Bucket, type GoldenCase, type Outcome } from './promptyGolden';

const ACCEPTED: ReadonlySet<Bucket> = new Set(['exact', 'reported', 'error-agrees']);

describe.each(LOADER_FILES)('%s', (file) => {
  const cases = readGolden(file);
  const outcomes = new Map<string, { c: GoldenCase; o: Outcome }>();
  for (const c of cases) outcomes.set(c.id, { c, o: compare(c, renderCase(c)) });

  it('holds every case of its loader', () => {
    expect(cases.length).toBeGreaterThan(1000);
    expect(new Set(cases.map((c) => c.runtime.split(' ')[0])).size).toBe(1);
  });

  it('renders every case as the loader does, or reports it, or refuses where the loader fails', () => {
    const counts: Record<string, number> = {};
    const unexpected: string[] = [];
    for (const [id, { o }] of outcomes) {
      counts[o.bucket] = (counts[o.bucket] ?? 0) + 1;
      if (!ACCEPTED.has(o.bucket)) unexpected.push(`${id}: ${o.bucket}\n  got  ${o.got ?? o.issue ?? ''}\n  want ${o.want ?? ''}`);
    }
    console.log(`${file}: ${JSON.stringify(counts)}`);
    expect(unexpected.slice(0, 40)).toEqual([]);
  });

  it('renders most cases exactly (a report is the exception)', () => {
    const exact = [...outcomes.values()].filter(({ o }) => o.bucket === 'exact').length;
    const rendered = cases.filter((c) => c.status === 'ok' || c.status === 'ok-not-chat').length;
    expect(exact / rendered).toBeGreaterThan(0.5);
  });

  it('locates every report and refusal inside the file', () => {
    for (const { c, o } of outcomes.values()) {
      if (o.bucket === 'exact') continue;
      const r = renderCase(c);
      const source = c.files['case.prompty'] ?? c.files['template.txt'];
      for (const issue of r.issues) {
        expect(issue.span.start, c.id).toBeGreaterThanOrEqual(0);
        expect(issue.span.end, c.id).toBeLessThanOrEqual(source.length);
      }
    }
  });
});
