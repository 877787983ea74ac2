/**
 * Every option of every `ctxlens` command, once: what `parseArgs` accepts and the line `--help`
 * prints for it come from the same entry, so a command's help lists every option it takes
 * (test/cli/help.test.ts runs each command's --help and tries each option).
 */

interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's shape in the help (`text|json`, `N`, `FILE`). */
  arg?: string;
  /** One line: what the option does, and its default. */
  help: string;
}

const FORMAT_TEXT_JSON = { type: 'string', arg: 'text|json', help: 'output format (default text)' } as const;
const MODEL = { type: 'string', arg: 'NAME', help: "count and budget for this model instead of the template's or config's" } as const;

export const COMMAND_OPTIONS = {
  check: {
    format: { type: 'string', arg: 'text|json|sarif', help: 'output format: one line per finding, JSON, or SARIF 2.1.0 for code scanning (default text)' },
    'max-warnings': { type: 'string', arg: 'N', help: 'exit 1 when there are more than N warnings (default: warnings never fail)' },
    model: MODEL,
    jobs: { type: 'string', arg: 'auto|N', help: 'check on N threads, 1 to 64 (default auto: by idle cores and the number of templates)' },
  },
  count: {
    tokenizer: { type: 'string', arg: 'NAME', help: 'count with this tokenizer (o200k_base, cl100k_base, chars4, …)' },
    model: { type: 'string', arg: 'NAME', help: "count with this model's tokenizer" },
    format: FORMAT_TEXT_JSON,
    chat: { type: 'boolean', help: "read the input as a JSON messages array and count it with the model's per-message and per-request overhead" },
  },
  budget: {
    format: FORMAT_TEXT_JSON,
    model: MODEL,
    function: { type: 'string', arg: 'NAME', help: 'BAML: the function of the .baml file (also written x.baml#NAME)' },
  },
  assemble: {
    fixture: { type: 'string', arg: 'F|sample', help: "the fixture to assemble with: a name, a path, or sample (the template's own sample data)" },
    function: { type: 'string', arg: 'NAME', help: 'BAML: the function of the .baml file (also written x.baml#NAME)' },
    test: { type: 'string', arg: 'NAME', help: 'BAML: the test block to assemble with (its args are the values)' },
    format: { type: 'string', arg: 'openai|anthropic|text|json|provider', help: 'print the provider request body, the request as text with its decisions, the whole result as JSON, or (BAML) the request its runtime built (default openai; provider for BAML)' },
    trace: { type: 'string', arg: 'FILE', help: 'also write the trace (every decision and count) to FILE' },
    model: MODEL,
  },
  init: {
    force: { type: 'boolean', help: 'overwrite an existing context config' },
    stdout: { type: 'boolean', help: 'print the config instead of writing it' },
    model: MODEL,
  },
  'cite-check': {
    trace: { type: 'string', arg: 'FILE', help: 'the trace of the request the answer answered (required)' },
    format: FORMAT_TEXT_JSON,
    strict: { type: 'boolean', help: 'also exit 1 when a claim cites nothing, not only when a cited id was not supplied' },
  },
  eval: {
    format: { type: 'string', arg: 'text|json|html', help: 'output format (default text)' },
    out: { type: 'string', arg: 'FILE', help: 'write the report to FILE instead of standard output' },
    ablate: { type: 'boolean', help: 'also run every ablation: the built-in ones, then the eval file\'s own' },
    ablation: { type: 'string', multiple: true, arg: 'ID', help: 'run this ablation of the eval file (repeatable)' },
    model: MODEL,
    'requests-per-day': { type: 'string', arg: 'N', help: 'requests per day for the cost figures' },
  },
  variants: {
    move: { type: 'string', arg: 'ID', help: 'the item to move (required)' },
    positions: { type: 'string', arg: 'start,middle,end', help: 'where to put it (default start,middle,end)' },
    fixture: { type: 'string', arg: 'F', help: 'the fixture to assemble with' },
    model: MODEL,
    provider: { type: 'string', arg: 'openai|anthropic', help: 'the provider body to write (default openai)' },
    format: { type: 'string', arg: 'json|jsonl|text', help: 'output format (default json)' },
    out: { type: 'string', arg: 'DIR', help: 'write one file per variant into DIR' },
  },
  diff: {
    fixture: { type: 'string', multiple: true, arg: 'F', help: 'a fixture; twice to compare two fixtures' },
    model: { type: 'string', multiple: true, arg: 'NAME', help: 'a model; twice to compare two models' },
    budget: { type: 'string', multiple: true, arg: 'SPEC', help: 'budgets to change (evidence=1500,window=16000,output=2000,evidence.pack=skip); twice to compare two' },
    format: FORMAT_TEXT_JSON,
  },
  models: {
    format: FORMAT_TEXT_JSON,
  },
  agents: {
    agent: { type: 'string', arg: 'copilot|agents-md|claude|cursor|gemini', help: "only this agent's files (default every agent)" },
    format: FORMAT_TEXT_JSON,
    model: { type: 'string', arg: 'NAME', help: 'count and price for this model (default the model of .context-lens/agents.yaml, else o200k_base counts)' },
  },
  report: {
    base: { type: 'string', arg: 'REF', help: 'the branch, tag or commit to compare the working tree with (required)' },
    format: { type: 'string', arg: 'text|json|markdown', help: 'output format; markdown is the pull-request comment (default text)' },
    out: { type: 'string', arg: 'FILE', help: 'write the report to FILE instead of standard output' },
    'max-token-increase': { type: 'string', arg: 'N|N%', help: 'exit 1 when a request grows by more tokens than this' },
    'max-cost-increase': { type: 'string', arg: 'USD|N%', help: 'exit 1 when the cost per day grows by more than this' },
    'fail-on': { type: 'string', multiple: true, arg: 'new-errors,dropped-required', help: 'exit 1 on new error findings or on required evidence no longer sent' },
    model: MODEL,
  },
} as const satisfies Record<string, Record<string, OptionSpec>>;

export type CommandName = keyof typeof COMMAND_OPTIONS;

type ParseArgsOptions<T extends Record<string, OptionSpec>> = {
  [K in keyof T]: { type: T[K]['type'] } & (T[K] extends { multiple: true } ? { multiple: true } : object);
};

/** The options of a command as node's `parseArgs` takes them. */
export function argOptions<C extends CommandName>(command: C): ParseArgsOptions<(typeof COMMAND_OPTIONS)[C]> {
  return toParseArgs(COMMAND_OPTIONS[command]) as ParseArgsOptions<(typeof COMMAND_OPTIONS)[C]>;
}

/** Node's `parseArgs` options of a table of option specs. */
export function toParseArgs(specs: Readonly<Record<string, OptionSpec>>): Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> {
  const out: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, s] of Object.entries(specs)) out[name] = { type: s.type, ...(s.multiple ? { multiple: true } : {}), ...(s.short ? { short: s.short } : {}) };
  return out;
}

/** The option lines of a help text: `  --flag ARG   what it does`, aligned. */
export function optionLines(specs: Readonly<Record<string, OptionSpec>>): string[] {
  const heads = Object.entries(specs).map(([name, s]) => `${s.short ? `-${s.short}, ` : ''}--${name}${s.arg ? ` ${s.arg}` : ''}${s.multiple ? ' …' : ''}`);
  const width = Math.min(40, Math.max(0, ...heads.map((h) => h.length)));
  return Object.values(specs).map((s, i) => `  ${heads[i].padEnd(width)}  ${s.help}`);
}

export type { OptionSpec };
