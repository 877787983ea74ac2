/**
 * The schema of eval files (`*.eval.yaml`): the golden set a template's context strategy is
 * measured against (seed 002, "Evaluating context instead of trusting intuition"). This zod
 * schema is the source of truth: `parseEval` validates with it, the types come from it, and
 * `schemas/eval.schema.json` is generated from it (test/unit/eval-schema.test.ts keeps the file in
 * step; `UPDATE_SCHEMA=1 npx vitest run test/unit/eval-schema.test.ts` rewrites it).
 *
 * A case names a fixture (or gives slot values inline, or both: inline values replace the
 * fixture's), the question, the evidence the answer needs (item ids as the trace names them), the
 * facts that must survive assembly word for word (exact strings or regular expressions, including
 * qualifiers such as "only when explicitly enabled"), known distractors, and forbidden items (another
 * tenant's document, an outdated version, an injected document, or text that must never appear).
 */
import { z } from 'zod';

const note = z.string().optional().describe('Why this entry is here (shown in reports).');

/** A regular expression source that compiles with its flags. */
function compiles(source: string, flags?: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}

const flags = z
  .string()
  .regex(/^[imsu]*$/, 'regex flags are some of i, m, s, u')
  .optional()
  .describe('Regular expression flags (i, m, s, u).');

export const FactSchema = z
  .union([
    z.string().min(1).describe('Text that must appear in the rendered request, exactly (whitespace runs compare as one space).'),
    z
      .object({
        id: z.string().optional().describe('A short name for reports; defaults to the text.'),
        text: z.string().min(1).describe('Text that must appear in the rendered request (whitespace runs compare as one space).'),
        ignore_case: z.boolean().optional(),
        note,
      })
      .strict(),
    z
      .object({
        id: z.string().optional(),
        regex: z.string().min(1).describe('A regular expression the rendered request must match (whitespace runs are one space before matching).'),
        flags,
        note,
      })
      .strict()
      .refine((f) => compiles(f.regex, f.flags), { message: 'the regular expression does not compile', path: ['regex'] }),
  ])
  .describe('A required fact: an exact string, { text }, or { regex }.');

export const ItemRefSchema = z
  .union([z.string().min(1), z.object({ id: z.string().min(1), note }).strict()])
  .describe('An item id as the trace names it: the fixture id (ev_0192), or <slot>_<n> for items without one (history_2, policy_1).');

export const ForbiddenSchema = z
  .union([
    z.string().min(1).describe('An item id that must never reach the request.'),
    z.object({ id: z.string().min(1), note }).strict(),
    z.object({ text: z.string().min(1), ignore_case: z.boolean().optional(), note }).strict(),
    z
      .object({ regex: z.string().min(1), flags, note })
      .strict()
      .refine((f) => compiles(f.regex, f.flags), { message: 'the regular expression does not compile', path: ['regex'] }),
  ])
  .describe('A forbidden item (by id) or text that must not appear in the rendered request.');

const ratio = z.number().min(0).max(1);

export const ThresholdsSchema = z
  .object({
    min_coverage: ratio.optional().describe('Least evidence coverage (required facts present / all required facts), 0..1.'),
    min_retrieval_recall: ratio.optional().describe('Least retrieval recall (required evidence among the candidates), 0..1.'),
    min_selection_recall: ratio.optional().describe('Least selection recall (required evidence among the kept items), 0..1.'),
    min_precision: ratio.optional().describe('Least context precision (kept required / all kept in the scored slots), 0..1.'),
    max_tokens: z.number().int().nonnegative().optional().describe('Most input tokens of the assembled request.'),
    max_cost: z.number().nonnegative().optional().describe('Most input cost of one request, in USD.'),
    max_forbidden: z.number().int().nonnegative().optional().describe('Most forbidden items or texts in the request (default 0).'),
  })
  .strict();

export const EvalCaseSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a case id is a word such as post-retries'),
    description: z.string().optional(),
    fixture: z.string().optional().describe("A fixture of the template: its name (post-retries), 'sample', or a path relative to this file."),
    slots: z.record(z.string(), z.unknown()).optional().describe('Slot values written inline, as in a fixture; they replace the fixture values of the same slots.'),
    question: z.string().optional().describe("The question; it becomes the value of the config's user slot (kind: user)."),
    required_evidence: z.array(ItemRefSchema).default([]),
    required_facts: z.array(FactSchema).default([]),
    distractors: z.array(ItemRefSchema).default([]).describe('Known distractors: reported when kept; they lower precision.'),
    forbidden: z.array(ForbiddenSchema).default([]).describe('Items or texts that must never reach the request (another tenant, an injected document).'),
    thresholds: ThresholdsSchema.optional().describe("This case's thresholds, over the file's."),
  })
  .strict();

export const AblationSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'an ablation id is a word such as history-summary'),
    description: z.string().optional(),
    drop: z.array(z.string().min(1)).optional().describe('Item ids removed from every case.'),
    replace: z.record(z.string(), z.unknown()).optional().describe('Slot values (as in a fixture) replacing those of every case: a summary instead of the raw history.'),
    config: z.record(z.string(), z.unknown()).optional().describe('A patch merged into the context config (what-if): { slots: { evidence: { budget: 1500 } } }.'),
  })
  .strict()
  .refine((a) => a.drop !== undefined || a.replace !== undefined || a.config !== undefined, { message: 'an ablation needs drop, replace or config' });

export const EvalFileSchema = z
  .object({
    $schema: z.string().optional(),
    template: z.string().min(1).describe('The template under evaluation, relative to this file.'),
    model: z.string().optional().describe("Model overriding the template's and config's."),
    requests_per_day: z.number().nonnegative().optional().describe("Requests per day for the per-day cost (default: the config's requests_per_day)."),
    thresholds: ThresholdsSchema.optional().describe('Thresholds of every case.'),
    cases: z.array(EvalCaseSchema).min(1),
    ablations: z.array(AblationSchema).default([]).describe('Ablations of this eval set, run with `ctxlens eval --ablate` after the built-in ones.'),
  })
  .strict()
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.cases.forEach((c, i) => {
      if (seen.has(c.id)) ctx.addIssue({ code: 'custom', message: `duplicate case id '${c.id}'`, path: ['cases', i, 'id'] });
      seen.add(c.id);
    });
  });

export type Fact = z.infer<typeof FactSchema>;
export type ItemRef = z.infer<typeof ItemRefSchema>;
export type Forbidden = z.infer<typeof ForbiddenSchema>;
export type Thresholds = z.infer<typeof ThresholdsSchema>;
export type EvalCase = z.infer<typeof EvalCaseSchema>;
export type AblationSpec = z.infer<typeof AblationSchema>;
export type EvalFile = z.infer<typeof EvalFileSchema>;

/** JSON Schema of eval files for editors (draft-7, input types so defaults stay optional). */
export function evalJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(EvalFileSchema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'urn:context-lens:eval',
    title: 'Context Lens eval set',
    description: 'Cases, required evidence and facts, distractors, forbidden items and thresholds for `ctxlens eval` (*.eval.yaml).',
  };
}
