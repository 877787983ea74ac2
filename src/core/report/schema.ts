/**
 * The shape of `ctxlens report --format json`: what a change (a base revision against the working
 * tree) does to every request of the templates under some paths. This zod schema is the source of
 * truth: the report's types come from it and `schemas/report.schema.json` is generated from it
 * (test/cli/report.test.ts keeps the file in step; `UPDATE_SCHEMA=1 npx vitest run
 * test/cli/report.test.ts -t schema` rewrites it). `version` is bumped when a field changes meaning or
 * goes away; new optional fields keep it.
 */
import { z } from 'zod';

export const REPORT_VERSION = 1;

const delta = z
  .object({
    base: z.number().nullable().describe('The figure at the base revision (null: the request does not exist there, or has no price).'),
    head: z.number().nullable().describe('The figure in the working tree.'),
    delta: z.number().describe('head - base; the side that is missing counts as 0.'),
  })
  .strict();

const FindingSchema = z
  .object({
    path: z.string().describe('File of the finding, relative to the current folder, as in the working tree (base paths are mapped through renames).'),
    line: z.number().int().min(1).optional().describe('1-based line on the side the finding belongs to.'),
    rule: z.string(),
    severity: z.enum(['error', 'warning', 'info', 'hint']),
    message: z.string(),
  })
  .strict();

const SideSchema = z
  .object({
    ok: z.boolean().describe('The request can be built (required content fits the input budget).'),
    fits: z.boolean().describe('The request can be built and its budget equation fits the window.'),
    error: z.string().optional(),
    model: z.string().optional(),
    input_tokens: z.number().int(),
    output_reserve: z.number().int(),
    cost: z.number().optional().describe('Input cost of one request in USD (absent: the model has no price).'),
    requests_per_day: z.number().optional(),
    cost_per_day: z.number().optional().describe('Input cost of a day of requests in USD (absent without `requests_per_day`).'),
    cache_prefix_tokens: z.number().int().describe('Tokens of the prefix every fixture of the template shares (the cacheable part).'),
  })
  .strict();

const ItemChangeSchema = z
  .object({
    id: z.string(),
    base: z.string().describe('What the base did with the item: `kept #n` or the omission reason.'),
    head: z.string().describe('What the working tree does with it.'),
  })
  .strict();

const SlotChangeSchema = z
  .object({
    slot: z.string(),
    required: z.boolean(),
    kept: z.object({ base: z.number().int(), head: z.number().int() }).strict(),
    total: z.object({ base: z.number().int(), head: z.number().int() }).strict(),
    tokens: delta,
    dropped: z.array(ItemChangeSchema).describe('Items the base kept and the working tree drops.'),
    added: z.array(ItemChangeSchema).describe('Items the working tree keeps and the base dropped (or did not have).'),
  })
  .strict();

const RequestSchema = z
  .object({
    fixture: z.string().describe('The fixture name (`sample`: the template\'s own sample data).'),
    status: z.enum(['added', 'removed', 'changed', 'unchanged']),
    base: SideSchema.optional(),
    head: SideSchema.optional(),
    input_tokens: delta,
    cost: delta.optional(),
    cost_per_day: delta.optional(),
    slots: z.array(SlotChangeSchema).describe('Slots whose kept items or tokens differ.'),
    first_difference: z
      .object({
        message: z.number().int().min(1).describe('1-based message number.'),
        role_base: z.string().optional(),
        role_head: z.string().optional(),
        line: z.number().int().min(1),
        base: z.string(),
        head: z.string(),
      })
      .strict()
      .optional()
      .describe('The first message line where the rendered requests differ.'),
  })
  .strict();

const EvalSideSchema = z
  .object({
    evidence_coverage: z.number().nullable(),
    selection_recall: z.number().nullable(),
    passed: z.boolean(),
    cases: z.number().int(),
  })
  .strict();

const EvalChangeSchema = z
  .object({
    file: z.string(),
    base: EvalSideSchema.optional(),
    head: EvalSideSchema.optional(),
    required_dropped: z.array(z.object({ case: z.string(), id: z.string() }).strict()).describe('Required evidence the base kept and the working tree no longer keeps.'),
  })
  .strict();

const TemplateSchema = z
  .object({
    path: z.string().describe('The template in the working tree (for a removed template: at the base).'),
    base_path: z.string().optional().describe('Its path at the base, when it was renamed.'),
    status: z.enum(['added', 'removed', 'renamed', 'modified', 'unchanged']),
    requests: z.array(RequestSchema),
    cache_prefix_tokens: delta,
    findings: z.object({ new: z.array(FindingSchema), fixed: z.array(FindingSchema) }).strict(),
    eval: z.array(EvalChangeSchema),
  })
  .strict();

const GateSchema = z
  .object({
    gate: z.enum(['max-token-increase', 'max-cost-increase', 'new-errors', 'dropped-required']),
    limit: z.string().optional(),
    passed: z.boolean(),
    reasons: z.array(z.string()),
  })
  .strict();

const AgentChangeSchema = z
  .object({
    agent: z.enum(['copilot', 'agents-md', 'claude', 'cursor', 'gemini']),
    name: z.string(),
    always: delta.describe('Tokens of instructions the agent sends with every request (always-on files and what they import).'),
    cost_per_1000_requests: delta.optional().describe('Input cost of the always-sent instructions over 1,000 requests, in USD, at the model of `model` (absent without a priced model).'),
    patterns: z
      .array(
        z
          .object({
            file: z.string(),
            pattern: z.string().describe('applyTo, globs, or `folder/**` for a nested AGENTS.md, CLAUDE.md or GEMINI.md.'),
            tokens: delta,
          })
          .strict(),
      )
      .describe('Files that load only for files matching their pattern, whose tokens or pattern changed.'),
  })
  .strict();

export const ReportSchema = z
  .object({
    version: z.literal(REPORT_VERSION),
    base: z.object({ ref: z.string(), commit: z.string() }).strict(),
    head: z.object({ ref: z.literal('working tree'), commit: z.string().optional() }).strict(),
    summary: z
      .object({
        templates: z.number().int(),
        templates_added: z.number().int(),
        templates_removed: z.number().int(),
        templates_renamed: z.number().int(),
        requests: z.number().int().describe('Requests (template × fixture) on either side.'),
        requests_changed: z.number().int().describe('Requests added, removed or changed.'),
        input_tokens: delta,
        cost: delta.optional().describe('Summed cost of one of each request (USD), over requests whose model has a price.'),
        cost_per_day: delta.optional().describe('Summed cost per day (USD), over requests with `requests_per_day`.'),
        new_errors: z.number().int().describe('New findings at error level, and requests that could be built at the base and no longer can.'),
        new_findings: z.number().int(),
        fixed_findings: z.number().int(),
        dropped_required: z.number().int(),
      })
      .strict(),
    templates: z.array(TemplateSchema).describe('Every template under the paths, unchanged ones included.'),
    gates: z.array(GateSchema),
    passed: z.boolean().describe('Every gate passed.'),
    agents: z
      .object({
        tokenizer: z.string(),
        model: z.string().optional(),
        changes: z.array(AgentChangeSchema),
      })
      .strict()
      .optional()
      .describe("Coding agents' instruction files (docs/agents.md): per agent, the change in tokens sent with every request and per pattern. Absent when no instruction file changed."),
  })
  .strict();

export type Report = z.infer<typeof ReportSchema>;
export type ReportTemplate = z.infer<typeof TemplateSchema>;
export type ReportRequest = z.infer<typeof RequestSchema>;
export type ReportSide = z.infer<typeof SideSchema>;
export type ReportSlotChange = z.infer<typeof SlotChangeSchema>;
export type ReportFinding = z.infer<typeof FindingSchema>;
export type ReportEval = z.infer<typeof EvalChangeSchema>;
export type ReportEvalSide = z.infer<typeof EvalSideSchema>;
export type ReportGate = z.infer<typeof GateSchema>;
export type ReportDelta = z.infer<typeof delta>;
export type ReportAgentChange = z.infer<typeof AgentChangeSchema>;

/** JSON Schema of the report (draft-7), for consumers of `ctxlens report --format json`. */
export function reportJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ReportSchema, { io: 'output', target: 'draft-7' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: `urn:context-lens:report:v${REPORT_VERSION}`,
    title: 'Context Lens impact report',
    description: 'What a change does to every request: `ctxlens report --base REF --format json`.',
  };
}
