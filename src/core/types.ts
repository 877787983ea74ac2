/**
 * The shared vocabulary of the core: spans, findings, parsed documents, assembly results.
 * Every front end (CLI, language server, preview) speaks in these types. The core works in
 * UTF-16 offsets into a file's text; conversion to line/character happens at the edges
 * (see text/lineIndex.ts).
 */

export type Severity = 'error' | 'warning' | 'info' | 'hint';

/** Half-open range of UTF-16 code unit offsets into one file's text. */
export interface Span {
  start: number;
  end: number;
}

export interface RelatedLocation {
  path: string;
  span: Span;
  message: string;
}

/**
 * A structured hint a front end can turn into a quick fix. The core says *what* would fix the
 * finding; the language server turns it into a WorkspaceEdit.
 */
export interface FixHint {
  title: string;
  edits: Array<{ path: string; span: Span; newText: string }>;
  preferred?: boolean;
}

export interface Finding {
  rule: string;
  severity: Severity;
  message: string;
  /** File the finding is shown on (workspace-relative or absolute, as the caller gave it). */
  path: string;
  span: Span;
  related?: RelatedLocation[];
  fixes?: FixHint[];
}

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/**
 * A template format: the `id` of one language of `src/core/language/registry.ts`. `prompt`
 * dotprompt, `prompty` Prompty, `baml` a BAML function, `plain` a plain prompt file (f-string,
 * Jinja2, Mustache or text) or a request composed of them, `agent` a coding agent's instruction,
 * rule or prompt file.
 */
export type TemplateFormat = 'prompt' | 'prompty' | 'baml' | 'plain' | 'agent';

/** A node of the render-ready template body. */
export type TemplateNode =
  | { type: 'text'; text: string; span: Span }
  /** `{{question}}`, `{{ question }}`, `{{d.text}}` (path[0] is a slot or a loop variable). */
  | { type: 'var'; path: string[]; span: Span; raw: boolean }
  /** `{{#each evidence}}...{{/each}}` or `{% for d in evidence %}...{% endfor %}`. */
  | { type: 'each'; path: string[]; alias?: string; body: TemplateNode[]; inverse?: TemplateNode[]; span: Span; headSpan: Span }
  /** `{{#if x}}`, `{{#unless x}}`, `{% if x %}`: rendered when the value is non-empty (negated for unless). */
  | { type: 'if'; path: string[]; negate: boolean; body: TemplateNode[]; inverse?: TemplateNode[]; span: Span; headSpan: Span }
  /** dotprompt `{{history}}`: the history slot's items become messages of their own roles here. */
  | { type: 'history'; slot: string; span: Span };

export interface TemplateMessage {
  role: Role;
  /** Span of the role marker (`{{role "system"}}`, `system:`), or of the body start for the implicit first message. */
  markerSpan: Span;
  span: Span;
  nodes: TemplateNode[];
}

export interface SlotUse {
  slot: string;
  span: Span;
  role: Role;
  /** How the slot is used. */
  form: 'var' | 'each' | 'if' | 'history';
  /**
   * Name of the delimiter the use is enclosed in within the template text, when it is
   * (an XML-like tag pair `<docs>...</docs>`, or bracket lines `[EVIDENCE]...[/EVIDENCE]`,
   * or a fenced block). Undefined when the placeholder stands bare.
   */
  delimiter?: string;
  /**
   * The file the span lies in when it is not the template's own: a use in another file of a
   * request composed of several plain prompt files (a context config's `messages`).
   */
  path?: string;
}

export interface TemplateDoc {
  path: string;
  format: TemplateFormat;
  text: string;
  /** Parsed front matter (YAML), or undefined when the file has none. */
  frontMatter?: {
    data: Record<string, unknown>;
    span: Span;
    /** `context:` key: a relative path to a config, or an inline config object. */
    context?: { value: string | Record<string, unknown>; span: Span };
    model?: { value: string; span: Span };
    /** Declared input variables (dotprompt `input.schema`, prompty `inputs`), name -> key span. */
    inputs: Record<string, Span>;
    /**
     * The front matter's YAML as parsed once by the template parser (spans shifted into the
     * template; the shape of text/yaml.ts's YamlSource): every later reader of the front matter
     * (inline configs, tool lists) reads this tree instead of parsing again. Not enumerable, so it
     * never travels with a serialised document.
     */
    readonly yaml?: { doc: import('yaml').Document.Parsed; text: string; base: number };
  };
  bodySpan: Span;
  messages: TemplateMessage[];
  /** Every top-level slot reference, in source order. Loop aliases and `this` are not slots. */
  uses: SlotUse[];
  findings: Finding[];
}

// ---------------------------------------------------------------------------
// Context config (*.context.yaml). The zod schema in config/schema.ts is the source of truth;
// these are the types it yields after defaults are applied.
// ---------------------------------------------------------------------------

export type SlotKind = 'policy' | 'history' | 'evidence' | 'memory' | 'tool' | 'user' | 'examples' | 'schema' | 'other';
export type Trust = 'trusted' | 'untrusted';
export type PackPolicy = 'stop' | 'skip';
export type OrderPolicy = 'rank' | 'edges' | 'chronological';
/** A token count, or a percentage of the input budget written as "N%". */
export type Amount = number | `${number}%`;

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

export interface Tokenizer {
  /** Encoding name: o200k_base, cl100k_base, chars4, ... */
  readonly name: string;
  /** True when counts equal the provider's tokenizer; false for estimates. */
  readonly exact: boolean;
  count(text: string): number;
}

export interface ModelInfo {
  name: string;
  provider: 'openai' | 'anthropic' | 'google' | 'mistral' | 'xai' | 'deepseek' | 'qwen' | 'meta' | 'custom';
  window: number;
  /** Maximum output tokens, when the endpoint has one. */
  maxOutput?: number;
  /** Separate input limit, for endpoints that do not share one window. */
  maxInput?: number;
  tokenizer: string;
  /** Tokens the endpoint adds per message (chat template), and per request (reply priming). */
  messageOverhead: number;
  requestOverhead: number;
  /** True when the tokenizer equals the model's own. */
  exact: boolean;
  /** Where the limits were read, and when (registry entries; src/core/models/). */
  source?: string;
  asOf?: string;
  /** The provider shut the model down (`retired`) or announced the day it will (`retires`). */
  retired?: { date?: string; successor?: string; source: string };
  retires?: { date?: string; successor?: string; source: string };
  /** Set when the name is not in the registry and its family's tokenizer and limits stand in for it. */
  estimate?: { family: string; like: string };
}

// ---------------------------------------------------------------------------
// Fixtures (*.fixture.yaml / *.fixture.json)
// ---------------------------------------------------------------------------

/** One item of a list-valued slot. Known metadata keys are typed; the rest stay in `meta`. */
export interface FixtureItem {
  /** Position in the fixture list (0-based), the tie-breaker of every ordering. */
  index: number;
  id?: string;
  text: string;
  title?: string;
  role?: Role;
  at?: string;
  source?: string;
  source_type?: string;
  version?: string;
  authority?: number;
  relevance?: number;
  published_at?: string;
  expires_at?: string;
  tenant?: string;
  /** Any other keys of the item, as written. */
  meta: Record<string, unknown>;
  /** Set when the text was written under `content` (a `{role, content}` message): the template reads it there. */
  textKey?: 'content';
  /** Span of the whole item node, and of its text value, in the fixture file. */
  span: Span;
  textSpan: Span;
  /** `{ file: path }` as written; `file` is the resolved absolute path once resolved. */
  fileRef?: { value: string; span: Span };
  file?: string;
}

export type FixtureValue =
  | { type: 'text'; text: string; span: Span; fileRef?: { value: string; span: Span }; file?: string }
  /** A list; `raw` is the list as written (plain values), passed to the template engine as is for a slot no config declares. */
  | { type: 'items'; items: FixtureItem[]; span: Span; raw?: unknown[] }
  /** Any other value, typed as written: an object, a number, a boolean, null, a list of objects without text. */
  | { type: 'data'; value: unknown; span: Span };

export interface FixtureDoc {
  path: string;
  text: string;
  /** `template:` key, resolved relative to the fixture file. */
  template?: { value: string; span: Span };
  /** Optional display name (`name:`), defaults to the file name without `.fixture.*`. */
  name: string;
  slots: Record<string, FixtureValue>;
  /** dotprompt's context data (`@state`, `@auth`, …): the fixture's `context:` mapping. */
  context?: Record<string, unknown>;
  /** Span of each slot's key in the fixture file. */
  slotKeySpans: Record<string, Span>;
  findings: Finding[];
}

// ---------------------------------------------------------------------------
// Budget and assembly
// ---------------------------------------------------------------------------

export interface BudgetLine {
  name: string;
  kind: SlotKind;
  trust?: Trust;
  required: boolean;
  /** Budget in tokens (percentages resolved against the input budget); undefined when unbudgeted. */
  budget?: number;
  /** The amount as written in the config, e.g. "25%". */
  written?: Amount;
}

/** The budget equation (3.1): sum of slot budgets + output + margin <= window. */
export interface BudgetReport {
  model?: string;
  tokenizer: string;
  exact: boolean;
  window: number;
  /** Separate limits when the endpoint has them. */
  limits?: { input: number; output: number };
  output: number;
  margin: number;
  /** Input budget = window - output (or limits.input). Percent budgets resolve against it. */
  inputBudget: number;
  slots: BudgetLine[];
  inputAllocated: number;
  /** input allocated + output + margin. */
  total: number;
  /** input + output + margin <= window (and, with separate limits, each limit holds). */
  fits: boolean;
  /** How far input + output exceed the capacity (seed 000: 8,700 - 8,000 = 700); 0 when they fit. */
  overBy: number;
  /** Capacity left for the margin: window - input - output (or input limit - input). */
  marginLeft: number;
  /** History slots with a policy: what the equation leaves for them (seed 000's 16,000-token example). */
  remainder?: RemainderReport[];
}

/** The hard filter that rejected an item (filters.ts): the config key, or `tenant-missing`. */
export type FilterKey = 'tenant' | 'tenant-missing' | 'version' | 'expired' | 'source_types' | 'exclude_source_types';

/**
 * Why an item is not in the request, by the stage that dropped it; `filtered:<FilterKey>` from the
 * filters (the template stays open to `string` for traces read from elsewhere).
 * src/core/reasonText.ts says each in words.
 */
export type OmitReason =
  | `filtered:${string}`
  | `duplicate-of:${string}`
  | `near-duplicate-of:${string}`
  | `superseded-by:${string}`
  | `summarised-by:${string}`
  | `policy:${string}`
  | 'summary-redundant'
  | 'not-relevant'
  | 'max-per-source'
  | 'over-slot-budget'
  | 'stop-policy'
  | 'max-items'
  | 'trimmed-for-request';

/**
 * Why a kept item is in the request (stages/trace.ts): its slot is `required`; its metadata
 * (`high_relevance` at relevance >= 0.7, `exact_version` / `version_match` against
 * `filters.version`, `official_source`, `high_authority` at authority >= 0.8); it `covers:<subtopic>`
 * a subtopic its slot requires; it is a `commitment` (a record, or a turn that makes one); the
 * part of its history policy that kept it (`recent`, `summary`, `retrieved`). `within_budget` is
 * the library's selection log for an item the trace gives no reason (it was kept because it fit).
 */
export type KeepReason =
  | 'required'
  | 'high_relevance'
  | 'exact_version'
  | 'version_match'
  | 'official_source'
  | 'high_authority'
  | `covers:${string}`
  | 'commitment'
  | 'recent'
  | 'summary'
  | 'retrieved'
  | 'within_budget';

/**
 * The weighted parts of an item's score (each weight times its factor; contradiction is
 * negative). Selection scores have the first six; history turns ranked for retrieval have the one
 * their score is: `relevance` as written, or `lexical_overlap` with the question.
 */
export interface ScoreBreakdown {
  relevance?: number;
  authority?: number;
  version_match?: number;
  recency?: number;
  novelty?: number;
  contradiction?: number;
  lexical_overlap?: number;
}

/** One contradiction found among a slot's candidates, and how it was resolved. */
export interface TraceConflict {
  slot: string;
  /** claim: same `topic`, different `claim`; version: versions of one source that disagree; supersession: a declared link. */
  kind: 'claim' | 'version' | 'supersession';
  topic?: string;
  items: string[];
  /** The claims (kind claim) or versions (kind version) of `items`, in the same order. */
  values?: string[];
  /**
   * superseded: one item is omitted as superseded-by:<kept>; labelled: both stay, each with a
   * conflict note; filtered: one item (`filtered`) is out of scope by a hard filter (`reason`:
   * `filtered:version` or `filtered:expired`) and the others stay without a note, since the model
   * never sees the filtered one.
   */
  resolution: 'superseded' | 'labelled' | 'filtered';
  kept?: string;
  superseded?: string;
  /** The item a version or expiry filter removed (resolution filtered), and that filter's reason. */
  filtered?: string;
  reason?: OmitReason;
  /** What justified the supersession: a `supersedes` / `superseded_by` link, or the validity interval at `now`. */
  basis?: 'supersedes' | 'superseded_by' | 'valid_from' | 'valid_to';
  /** Items of the conflict that are in the request. */
  retained: string[];
}

/** How a history slot's policy spent its budget (seed 000, 3.2 and 3.4). */
export interface TraceHistory {
  slot: string;
  policy: 'window' | 'summary' | 'retrieval' | 'hybrid';
  budget: number;
  /** What the budget equation leaves for this slot (seed 000: 16,000 - 10,000 fixed = 6,000). */
  remainder?: { capacity: number; fixed: number; available: number };
  /** Each part with its share of the budget, the tokens it used (overhead included) and the items it kept. */
  recent?: { budget: number; used: number; kept: number };
  summary?: { budget: number; used: number; kept: number };
  retrieved?: { budget: number; used: number; kept: number };
  /** Budget left after the recent turns (seed 000: 6,000 - 4,500 = 1,500 for summaries). */
  left_after_recent?: number;
}

/** A tool definition of the request: offered, or withheld as invalid or not allowed. */
export interface TraceTool {
  slot: string;
  name: string;
  status: 'offered' | 'invalid' | 'not-allowed';
}

/** A function definition as the provider's `tools` parameter takes it (src/core/export.ts). */
export interface ToolDefinitionInfo {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema; `{ type: 'object', properties: {} }` when none is declared). */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/**
 * What the budget equation leaves for a history slot with a policy (seed 000, 3.4): the capacity,
 * every other slot's budget, the output reserve and the margin fixed, and the rest available.
 */
export interface RemainderReport {
  slot: string;
  capacity: number;
  /** What is fixed before the slot: other slots' budgets, the output reserve (shared window) and the margin. */
  fixed: number;
  fixedParts: Array<{ name: string; tokens: number }>;
  /** capacity - fixed: at most this much for the slot's recent turns and summaries. */
  available: number;
  /** The slot's budget: its own `budget`, else `available`. */
  budget: number;
  /** Shares of the budget by part, in tokens, under summary and hybrid policies. */
  shares?: { recent?: number; summary?: number; retrieved?: number };
}

export interface TraceItem {
  slot: string;
  id: string;
  tokens: number;
  score?: number;
  /** 0-based position within its slot after ordering. */
  position: number;
  /** start | middle | end third of its slot. */
  placement: 'start' | 'middle' | 'end';
  sha256: string;
  source?: string;
  /** Other sources merged into this item by deduplication. */
  merged?: string[];
  /** A summary's lineage: the ids of the items it summarises. */
  summary_of?: string[];
  /** Items it contradicts (labelled conflicts), as its envelope's conflict note names them. */
  conflicts_with?: string[];
  /** Why it is kept (KeepReason): required, high_relevance, exact_version, version_match, official_source, high_authority, covers:<subtopic>, commitment, recent, summary, retrieved. */
  reasons?: KeepReason[];
  score_breakdown?: ScoreBreakdown;
  /** Marginal value per token when it was selected (`select: value-per-token`). */
  value_per_token?: number;
}

export interface OmittedItem {
  slot: string;
  id: string;
  tokens: number;
  score?: number;
  reason: OmitReason;
  source?: string;
  /** The weighted parts of its score, when it was scored before it was dropped. */
  score_breakdown?: ScoreBreakdown;
}

export interface SlotTrace {
  name: string;
  kind: SlotKind;
  trust?: Trust;
  budget?: number;
  /** Tokens of the slot's content as packed (text + per-item overhead). */
  used: number;
  kept: number;
  omitted: number;
  total: number;
}

export interface Trace {
  version: 1;
  template: { path: string; sha256: string };
  config?: { path: string; sha256: string };
  fixture?: { path: string; sha256: string };
  policy_version?: string | number;
  model?: string;
  /** The runtime line the request was rendered as: `Prompty 0.1.x` or `Prompty v2` (absent for dotprompt). */
  runtime?: string;
  tokenizer: string;
  exact: boolean;
  window: number;
  reserved_output: number;
  margin: number;
  /** The provider HTTP request the template's runtime built (BAML: `buildRequestSync`), without its headers; its body as serialised. */
  provider_request?: { url: string; method: string; body: string };
  /** Tokens the request is fitted to: window - reserved output - margin. */
  input_budget: number;
  input_tokens: number;
  slots: SlotTrace[];
  retained: TraceItem[];
  omitted: OmittedItem[];
  /**
   * Labelled items by id. A summary also carries its lineage (`summary_of`) and `resolves_to`,
   * the original items it stands for (through summaries of summaries), so a citation of the
   * summary resolves to them.
   */
  citation_map: Record<string, { source?: string; sha256: string; sources?: string[]; summary_of?: string[]; resolves_to?: Array<{ id: string; source?: string; sha256: string }> }>;
  /** Every sequence of untrusted text neutralised so it cannot forge an envelope, a wrapper or a role marker. */
  neutralised?: Array<{ slot: string; id?: string; offset: number; kind: 'closing-delimiter' | 'opening-delimiter' | 'role-marker' | 'media-marker'; sequence: string; field?: boolean }>;
  /** History slots with a policy: what each part of the policy used. */
  history?: TraceHistory[];
  /** Contradictions among candidates and how each was resolved. */
  conflicts?: TraceConflict[];
  /** Required subtopics of slots with `requires`, and the retained items that cover each. */
  coverage?: Array<{ slot: string; subtopic: string; covered_by: string[] }>;
  /** Tool definitions of the request's tool slots. */
  tools?: TraceTool[];
  cache_key: string;
  /**
   * What the request costs at the price table's (or the config's `prices:`) price of its model
   * (src/core/cost.ts); set by the analysis after assembly, absent for a model without a price.
   */
  cost?: RequestCost;
  /** Tokens of the prefix every fixture of the template shares, the cacheable part (src/core/prefix.ts); set by `ctxlens eval`. */
  cache_prefix_tokens?: number;
}

/** A piece of a rendered message, so views can mark slot boundaries and untrusted data. */
export interface MessagePart {
  text: string;
  slot?: string;
  itemId?: string;
  untrusted?: boolean;
  /** A media part (dotprompt `{{media}}`, Prompty `![alt](url)`): `text` is empty. */
  media?: { url: string; contentType?: string };
  /** A pending section part (dotprompt `{{section "name"}}`): `text` is empty. */
  section?: string;
}

export interface RenderedMessage {
  role: Role;
  content: string;
  parts: MessagePart[];
  /** The role as the template's runtime names it, when it differs (`model`, `function`). */
  runtimeRole?: string;
}

export interface AssemblyResult {
  ok: boolean;
  /** Set when assembly failed (required slots alone overflow the input budget). */
  error?: string;
  messages: RenderedMessage[];
  trace: Trace;
  budget: BudgetReport;
  findings: Finding[];
  /** Valid, allowed tool definitions of the request's tool slots, for the provider's `tools` parameter. */
  tools?: ToolDefinitionInfo[];
}

// ---------------------------------------------------------------------------
// Parsed config document
// ---------------------------------------------------------------------------

import type { ContextConfig } from './config/schema';

export interface ConfigDoc {
  path: string;
  text: string;
  /**
   * The validated config with defaults applied. Best effort: an invalid slot entry or field is
   * reported (config-invalid at its node) and left out, so the rest can still be checked.
   * Undefined only when the file is not a YAML mapping at all.
   */
  config?: ContextConfig;
  /** Span of the key at a YAML path such as ['slots', 'evidence', 'budget']. */
  keySpan(path: ReadonlyArray<string | number>): Span | undefined;
  /** Span of the value at a YAML path. */
  valueSpan(path: ReadonlyArray<string | number>): Span | undefined;
  findings: Finding[];
}

/** What one request costs at its model's price (src/core/cost.ts computes it). */
export interface RequestCost {
  currency: 'USD';
  /** The price-table (or config) key that priced the request. */
  model: string;
  price: { input: number; cached_input?: number; output?: number; as_of: string; source: string; origin: 'builtin' | 'config' };
  input_tokens: number;
  /** Input tokens at the input price: what sending this request costs. */
  input: number;
  /** Tokens of the stable prefix billed at the cached price, when that prefix is known (`ctxlens eval`). */
  cached_input_tokens?: number;
  /** Input cost when the cached prefix is billed at the cached price (the input price where the model has none). */
  input_cached?: number;
  /** The output reserve of the request. */
  output_reserved: number;
  /** Cost of the whole output reserve, the most one answer can cost; absent without an output price. */
  output_max?: number;
  /** `input + output_max`. */
  total_max?: number;
  /** The configured request rate (`requests_per_day`), and the same figures for a day of requests. */
  requests_per_day?: number;
  per_day?: { input: number; input_cached?: number; total_max?: number };
}
