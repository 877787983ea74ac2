/**
 * `schemas/eval.schema.json` is generated from the zod schema of eval files
 * (src/core/eval/schema.ts) and must stay equal to it. To regenerate the file after changing the
 * schema: `UPDATE_SCHEMA=1 npx vitest run test/unit/eval-schema.test.ts`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EvalFileSchema, evalJsonSchema } from '../../src/core/eval/schema';

const FILE = resolve(__dirname, '../../schemas/eval.schema.json');

describe('schemas/eval.schema.json', () => {
  it('equals the JSON Schema generated from the zod schema', () => {
    const generated = JSON.stringify(evalJsonSchema(), null, 2) + '\n';
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(FILE, generated);
    expect(existsSync(FILE)).toBe(true);
    expect(readFileSync(FILE, 'utf8')).toBe(generated);
  });

  it('describes the keys of an eval file for editors', () => {
    const s = evalJsonSchema() as { $id: string; properties: Record<string, unknown>; required: string[] };
    expect(s.$id).toBe('urn:context-lens:eval');
    expect(Object.keys(s.properties)).toEqual(expect.arrayContaining(['template', 'cases', 'thresholds', 'ablations', 'requests_per_day']));
    expect(s.required).toEqual(['template', 'cases']);
  });

  it('the zod schema rejects thresholds out of range', () => {
    expect(EvalFileSchema.safeParse({ template: 't.prompt', cases: [{ id: 'a' }], thresholds: { min_coverage: 1.5 } }).success).toBe(false);
    expect(EvalFileSchema.safeParse({ template: 't.prompt', cases: [{ id: 'a' }], thresholds: { max_tokens: -1 } }).success).toBe(false);
  });
});
