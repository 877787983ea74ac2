/**
 * The context config schema (`*.context.yaml`). This zod schema is the single source of truth:
 * the parser validates with it, the TypeScript types come from it, and `npm run schema` writes
 * the JSON Schema that editors use to validate and complete config files.
 */
import { z } from 'zod';

/** Longest slot label (envelope name); the assembly never searches for longer delimiters. */
export const MAX_LABEL_LENGTH = 64;
/** Longest fixture glob; longer ones are never matched (src/node/fileHost.ts). */
export const MAX_GLOB_LENGTH = 512;

const percent = z
  .string()
  .regex(/^\d+(\.\d+)?%$/, 'expected a percentage such as "10%"')
  .describe('A percentage of the input budget (window minus reserved output), e.g. "25%".');

/** Tokens, or "N%" of the input budget. */
export const AmountSchema = z.union([z.number().int().nonnegative(), percent]);

/** Tokens, or "N%" of the slot's own budget: the shares of a history slot's policy. */
export const ShareSchema = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^\d+(\.\d+)?%$/, 'expected a percentage such as "60%"').describe("A percentage of the slot's budget, e.g. \"60%\"."),
]);

/** A duration: `90s`, `15m`, `1h`, `2d`, or ISO 8601 such as `PT1H`, `P1DT12H`. */
export const DurationSchema = z
  .string()
  .regex(/^(?:\d+(?:\.\d+)?(?:s|m|h|d)|P(?=\d|T\d)(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?)$/, 'expected a duration such as "1h", "30m", "2d" or "PT1H"')
  .describe('A duration: 90s, 15m, 1h, 2d, or ISO 8601 such as PT1H.');

export const HistoryPolicySchema = z.enum(['window', 'summary', 'retrieval', 'hybrid']);

export const SlotKindSchema = z.enum(['policy', 'history', 'evidence', 'memory', 'tool', 'user', 'examples', 'schema', 'other']);
export const TrustSchema = z.enum(['trusted', 'untrusted']);
export const SeveritySettingSchema = z.enum(['off', 'error', 'warning', 'info', 'hint']);

export const SlotConfigSchema = z
  .object({
    kind: SlotKindSchema.default('other').describe('What the slot holds; decides defaults for trimming and rendering.'),
    trust: TrustSchema.optional().describe('trusted: written by the application. untrusted: data from users, documents, tools or uploads.'),
    required: z.boolean().default(false).describe('Required slots are never dropped; if they alone overflow, assembly fails.'),
    budget: AmountSchema.optional().describe('Token allowance for this slot: tokens, or "N%" of the input budget.'),
    priority: z.number().default(0).describe('Higher priority is kept longer when the request must be trimmed.'),
    label: z
      .string()
      // Bounded: labels become delimiters the assembly searches untrusted text for.
      .max(MAX_LABEL_LENGTH, `a label is at most ${MAX_LABEL_LENGTH} characters, such as EVIDENCE`)
      .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a label is a word such as EVIDENCE')
      .optional()
      .describe('Envelope name each item is wrapped in, e.g. EVIDENCE -> [EVIDENCE ev_0192] ... [/EVIDENCE].'),
    envelope: z.enum(['bracket', 'xml']).default('bracket').describe('bracket: [LABEL id] ... [/LABEL]; xml: <label id="..."> ... </label>.'),
    pack: z.enum(['stop', 'skip']).default('stop').describe('When an item does not fit: stop packing, or skip it and try the next.'),
    order: z.enum(['rank', 'edges', 'chronological']).default('rank').describe('rank: best first; edges: best at both ends; chronological: by time.'),
    max_items: z.number().int().positive().optional().describe('Keep at most this many items.'),
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']).optional().describe('Role the slot is expected to land in (informational).'),
    policy: HistoryPolicySchema.optional().describe('History slots: window (the newest turns that fit), summary (older turns replaced by summaries, items with summary_of), retrieval (turns ranked by relevance to the question), hybrid (recent turns + summaries + retrieved turns, each with its share).'),
    shares: z
      .object({ recent: ShareSchema.optional(), summary: ShareSchema.optional(), retrieved: ShareSchema.optional() })
      .strict()
      .optional()
      .describe('Shares of a history slot\'s budget under summary and hybrid policies (tokens or "N%" of the slot budget); unused tokens pass on from recent to summary to retrieved.'),
    select: z.enum(['rank', 'value-per-token']).optional().describe('rank: best score first (default); value-per-token: greedy by marginal value per token.'),
    requires: z.array(z.string().min(1)).optional().describe('Subtopics the slot must cover: at least one kept item per subtopic (items declare covers: [subtopic]).'),
    max_per_source: z.number().int().positive().optional().describe('Keep at most this many items of one source (diversity).'),
    tool: z.enum(['definitions', 'results']).optional().describe('A tool slot holds function definitions or tool results (default: read from its content).'),
    max_age: DurationSchema.optional().describe('Tool results older than this at `now` are reported (tool-result-stale).'),
  })
  .strict();

export const OverheadSchema = z
  .object({
    message: z.number().int().nonnegative().optional().describe('Tokens the endpoint adds per message (defaults to the model registry value).'),
    request: z.number().int().nonnegative().optional().describe('Tokens the endpoint adds per request (reply priming).'),
    item: z.number().int().nonnegative().default(0).describe('Tokens charged per packed item for its envelope, on top of its text.'),
  })
  .strict();

export const ScoringSchema = z
  .object({
    relevance: z.number().default(0.45),
    authority: z.number().default(0.2),
    version_match: z.number().default(0.15),
    recency: z.number().default(0.1),
    novelty: z.number().default(0.1),
    contradiction_penalty: z.number().default(0.1),
  })
  .strict()
  .describe('Weights of the selection score (seed: 0.45 relevance + 0.20 authority + 0.15 version match + 0.10 recency + 0.10 novelty - contradiction penalty x risk).');

export const FiltersSchema = z
  .object({
    version: z.string().optional().describe('Keep only items whose version matches (items without a version pass).'),
    tenant: z.string().optional().describe('Keep only items of this tenant (items of another tenant are rejected).'),
    tenant_missing: z.enum(['exclude', 'keep']).optional().describe('Under a tenant filter, items without a tenant are excluded (default) or kept; history turns are never filtered by tenant.'),
    expired: z.boolean().default(true).describe('Reject items whose expires_at is before `now`.'),
    now: z.string().optional().describe('Reference time for expiry and recency (ISO 8601); fixed so results are reproducible.'),
    source_types: z.array(z.string()).optional().describe('Allowed source_type values; others are rejected.'),
    exclude_source_types: z.array(z.string()).optional().describe('Rejected source_type values.'),
  })
  .strict();

export const DedupSchema = z
  .object({
    near: z.number().min(0).max(1).optional().describe('Merge near-duplicates of the same version: Jaccard similarity of word shingles at or above this, e.g. 0.8.'),
    shingle: z.number().int().min(1).max(16).optional().describe('Words per shingle for near-duplicates (default 5).'),
  })
  .strict()
  .describe('Deduplication beyond normalized text.');

export const ToolAllowSchema = z.union([
  z.string().min(1),
  z
    .object({
      name: z.string().min(1),
      arguments: z.record(z.string(), z.record(z.string(), z.unknown())).optional().describe('Allowed format of each argument (JSON Schema keywords the definition must declare, such as pattern, enum, maximum).'),
    })
    .strict(),
]);

export const ToolsSchema = z
  .object({
    allow: z.array(ToolAllowSchema).optional().describe('Tools this request may offer, by name, with their allowed argument formats; any other tool is reported (tool-not-allowed).'),
    max_age: DurationSchema.optional().describe('Default max_age of tool results.'),
  })
  .strict();

/** A Handlebars helper name as dotprompt registers it (`defineHelper(name, fn)`): an identifier Handlebars can call. */
const helperName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s{}()=|"'`~!@#%^&*+,;<>/\\[\]]+$/, 'a helper name is one word, such as formatDate');

export const CodeHelperSchema = z.union([
  helperName,
  z.object({ name: helperName, description: z.string().optional().describe('What the helper prints, for readers of the config.') }).strict(),
]);

export const CodePartialSchema = z.union([
  z.string().min(1).max(200),
  z
    .object({
      name: z.string().min(1).max(200),
      file: z.string().min(1).optional().describe('The file holding the partial\'s source (relative to this config); without it the partial renders as a placeholder.'),
    })
    .strict(),
]);

/** The jinja2 Environment an application renders its plain prompt files with (format `jinja2`). */
export const JinjaSettingsSchema = z
  .object({
    trim_blocks: z.boolean().optional().describe('jinja2 trim_blocks: the first newline after a block tag is removed.'),
    lstrip_blocks: z.boolean().optional().describe('jinja2 lstrip_blocks: spaces and tabs before a block tag on its line are removed.'),
    keep_trailing_newline: z.boolean().optional().describe("jinja2 keep_trailing_newline: the file's final newline is kept (jinja2 drops it by default)."),
    undefined: z.enum(['default', 'strict']).optional().describe('default: a missing value renders empty (its attributes still fail); strict: StrictUndefined, any use of a missing value fails.'),
    sandboxed: z.boolean().optional().describe("Render in jinja2's SandboxedEnvironment (LangChain does; default: true with loader: langchain, else false)."),
    filters: z.array(z.string().min(1).max(200)).optional().describe('Filters the application registers on its Environment in code: rendered as the value they filter (an estimate).'),
  })
  .strict();

/** How an application loads its plain prompt files: decides the format of `.md` / `.txt` files. */
export const PlainLoaderSchema = z
  .enum(['langchain', 'jinja2', 'text'])
  .describe('langchain: PromptTemplate.from_file (.md/.txt are f-strings, jinja2 sandboxed); jinja2: a jinja2 Environment; text: files read as text.');

export const PlainFormatSchema = z
  .enum(['f-string', 'jinja2', 'mustache', 'text'])
  .describe("f-string: Python str.format as LangChain's PromptTemplate reads it; jinja2; mustache: LangChain's Mustache; text: no placeholders (see replace).");

/** One message of a request composed of plain prompt files. */
export const MessageEntrySchema = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']).describe('The role of the message.'),
    file: z
      .string()
      .min(1)
      .optional()
      .describe('The prompt file (relative to this config); `file.yaml#key.path` or `file.toml#table.key` for a prompt kept as a key; a LangChain serialized prompt (.yaml/.json with _type) is read as load_prompt reads it.'),
    text: z.string().optional().describe('The message text written here instead of a file.'),
    format: PlainFormatSchema.optional().describe('The template format (default: from the extension: .j2/.jinja/.jinja2 jinja2, .mustache mustache, .md/.txt f-string with loader: langchain, else text).'),
    loader: PlainLoaderSchema.optional(),
    jinja: JinjaSettingsSchema.optional().describe("This file's Environment settings, over the config's `jinja`."),
    replace: z.record(z.string(), z.string()).optional().describe('format text: literal text the application replaces with a value (str.replace, in order), e.g. { "{question}": question }.'),
    strip: z.enum(['file', 'output']).optional().describe('The application strips the file before rendering it, or the rendered output.'),
  })
  .strict();

export const ModelEntrySchema = z
  .object({
    window: z.number().int().positive(),
    max_output: z.number().int().positive().optional(),
    max_input: z.number().int().positive().optional(),
    tokenizer: z.string().default('chars4'),
    message_overhead: z.number().int().nonnegative().default(0),
    request_overhead: z.number().int().nonnegative().default(0),
    exact: z.boolean().default(false),
  })
  .strict();

/** A price override (src/core/cost.ts): USD per million tokens, with the date and source of the price. */
export const PriceEntrySchema = z
  .object({
    input: z.number().nonnegative().describe('USD per million input tokens.'),
    cached_input: z.number().nonnegative().optional().describe('USD per million input tokens read from the prompt cache.'),
    output: z.number().nonnegative().optional().describe('USD per million output tokens.'),
    as_of: z.string().optional().describe('Date the price was read, e.g. 2026-01-15.'),
    source: z.string().optional().describe('Where the price was read (a pricing page, a contract).'),
  })
  .strict();

export const ContextConfigSchema = z
  .object({
    $schema: z.string().optional(),
    version: z.union([z.string(), z.number()]).optional().describe('Policy version, recorded in every trace.'),
    model: z.string().optional().describe('Model name from the registry (or `models`), e.g. gpt-4o.'),
    tokenizer: z.string().optional().describe('Tokenizer: o200k_base, cl100k_base, p50k_base, r50k_base, chars4.'),
    window: z.number().int().positive().optional().describe('Context window C shared by input and output.'),
    limits: z
      .object({ input: z.number().int().positive(), output: z.number().int().positive() })
      .strict()
      .optional()
      .describe('Separate input and output limits, for endpoints that check both.'),
    output: z.number().int().nonnegative().default(0).describe('Tokens reserved for the answer.'),
    margin: AmountSchema.default(0).describe('Safety margin: tokens, or "N%" of the window.'),
    overhead: OverheadSchema.default({ item: 0 }),
    slots: z.record(z.string(), SlotConfigSchema).default({}),
    scoring: ScoringSchema.optional(),
    filters: FiltersSchema.optional(),
    fixtures: z
      .array(
        z
          .string()
          .max(MAX_GLOB_LENGTH, `a fixture glob is at most ${MAX_GLOB_LENGTH} characters`)
          .regex(/\S/, 'a fixture glob cannot be empty; write one such as fixtures/*.fixture.yaml'),
      )
      .default([])
      .describe('Globs (relative to this file) of fixture files for templates using this config.'),
    dedup: DedupSchema.optional(),
    tools: ToolsSchema.optional(),
    helpers: z
      .array(CodeHelperSchema)
      .optional()
      .describe("dotprompt: Handlebars helpers the application registers in code (dotprompt's defineHelper, Genkit's ai.defineHelper). Context Lens cannot run them: each call renders as a placeholder and the counts become an estimate."),
    partials: z
      .array(CodePartialSchema)
      .optional()
      .describe("dotprompt: partials the application registers in code (definePartial, Genkit's ai.definePartial): a name, and the file with its source when there is one."),
    messages: z
      .array(MessageEntrySchema)
      .optional()
      .describe('The messages of a request composed of plain prompt files (Markdown, text, Jinja2, Mustache, LangChain prompts), in order; each file is rendered in its format and the request is assembled with these slots.'),
    loader: PlainLoaderSchema.optional(),
    jinja: JinjaSettingsSchema.optional().describe('The jinja2 Environment settings of the plain prompt files this config composes.'),
    prompty: z
      .object({
        loader: z
          .enum(['prompty-0.1', 'prompty-2', 'promptflow', 'azure-ai-inference', 'typescript', 'dotnet'])
          .describe("The program that loads the .prompty templates bound to this config: Prompty's own runtimes (0.1.x, 2.x), promptflow's Prompty, azure-ai-inference's PromptTemplate, Prompty's TypeScript or .NET runtime (docs/prompty-runtimes.md)."),
      })
      .strict()
      .optional()
      .describe('How the .prompty templates bound to this config are loaded.'),
    rules: z.record(z.string(), SeveritySettingSchema).default({}).describe('Per-rule severity overrides, e.g. { injection-phrase: off }.'),
    models: z.record(z.string(), ModelEntrySchema).default({}).describe('Extra or overriding model registry entries.'),
    prices: z.record(z.string(), PriceEntrySchema).optional().describe('Price overrides per model (USD per million tokens); the built-in table is dated, see src/core/cost.ts.'),
    requests_per_day: z.number().nonnegative().optional().describe('Expected requests per day, for the per-day cost figure.'),
  })
  .strict();

export type SlotConfig = z.infer<typeof SlotConfigSchema>;
export type ContextConfig = z.infer<typeof ContextConfigSchema>;
export type ScoringWeights = z.infer<typeof ScoringSchema>;
export type Filters = z.infer<typeof FiltersSchema>;
export type ModelEntry = z.infer<typeof ModelEntrySchema>;
export type PriceEntry = z.infer<typeof PriceEntrySchema>;
export type SeveritySetting = z.infer<typeof SeveritySettingSchema>;
export type HistoryPolicy = z.infer<typeof HistoryPolicySchema>;
export type ToolAllow = z.infer<typeof ToolAllowSchema>;
export type CodeHelper = z.infer<typeof CodeHelperSchema>;
export type CodePartial = z.infer<typeof CodePartialSchema>;
export type MessageEntry = z.infer<typeof MessageEntrySchema>;
export type JinjaSettingsConfig = z.infer<typeof JinjaSettingsSchema>;

/** JSON Schema for editors (draft 2020-12 via zod), with input types so defaults stay optional. */
export function contextConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ContextConfigSchema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'urn:context-lens:context-config',
    title: 'Context Lens context config',
    description: 'Budget, slots and policies of one LLM request (*.context.yaml).',
  };
}
