/**
 * Every rule Context Lens reports, with its stable id and default severity. The id is the
 * contract shared by the editor (diagnostic `code`), the CLI and docs/rules.md (anchor `rule-<id>`,
 * generated from this list and rule-docs.md by `npm run docs`); rename nothing here, only add.
 */
import type { Finding, Severity, Span } from '../types';
import type { SeveritySetting } from '../config/schema';
import { redactSecrets } from '../text/secrets';

export type RuleCategory = 'budget' | 'trust' | 'slots' | 'config' | 'content' | 'assembly';

export interface RuleInfo {
  id: string;
  severity: Severity;
  category: RuleCategory;
  /** One sentence for listings and hovers. */
  description: string;
  /** Heuristic rules can have false positives and are reported apart from structural ones. */
  heuristic?: boolean;
}

export const RULES: readonly RuleInfo[] = [
  // Files that cannot be understood.
  { id: 'config-invalid', severity: 'error', category: 'config', description: 'The context config is not valid YAML or does not match the schema.' },
  { id: 'template-invalid', severity: 'error', category: 'config', description: 'The template front matter or body cannot be parsed.' },
  { id: 'fixture-invalid', severity: 'error', category: 'config', description: 'The fixture is not valid YAML/JSON or does not have the fixture shape.' },
  { id: 'file-reference', severity: 'error', category: 'config', description: 'A `{ file: ... }` or `context:` path is missing, unreadable or outside the workspace.' },
  { id: 'unsupported-feature', severity: 'warning', category: 'config', description: "A template construct the format's runtime does not render as written (a dotprompt {{#role}} block), or that Context Lens cannot render exactly as the runtime does." },
  { id: 'unknown-helper', severity: 'warning', category: 'config', description: 'A dotprompt template calls a Handlebars helper that dotprompt does not define (or a Jinja2 prompt file a filter jinja2 does not define) and neither the context config nor the editor setting declares as registered in code.' },
  { id: 'unknown-partial', severity: 'warning', category: 'config', description: 'A dotprompt template includes a partial that is neither a file beside it nor declared as registered in code.' },
  { id: 'loader-guessed', severity: 'info', category: 'config', description: "A .prompty file is rendered as the loader its own front matter suggests, but nothing pins that loader and the workspace does not settle it (or names several); a quick fix pins it." },
  { id: 'code-registered', severity: 'info', category: 'config', description: "A declared helper or partial of the application's code is rendered as a placeholder; the request's counts are an estimate." },
  { id: 'config-missing', severity: 'info', category: 'config', description: 'A template has no context config, so budgets and trust cannot be checked.' },
  // Budget equation.
  { id: 'budget-overflow', severity: 'error', category: 'budget', description: 'Slot budgets + reserved output + margin exceed the window (or the input limit).' },
  { id: 'reserve-invalid', severity: 'error', category: 'budget', description: 'The output reserve or margin leaves no positive input budget, or exceeds the model output limit.' },
  { id: 'unknown-model', severity: 'warning', category: 'budget', description: 'The model is not in the built-in registry nor in the config `models`.' },
  { id: 'model-retired', severity: 'warning', category: 'budget', description: 'The model has been shut down by its provider, so requests to it fail; the finding names the successor the provider names.' },
  { id: 'tokenizer-estimate', severity: 'info', category: 'budget', description: 'Counts are estimates (chars4 rule or an approximate tokenizer), not the model tokenizer.' },
  // Trust and labelling.
  { id: 'untrusted-unlabelled', severity: 'warning', category: 'trust', description: 'Untrusted (or undeclared) data is rendered without a label or delimiter around it.' },
  { id: 'trust-missing', severity: 'warning', category: 'trust', description: 'A slot does not declare `trust`.' },
  { id: 'untrusted-in-system', severity: 'error', category: 'trust', description: 'Untrusted data is placed in the system or developer role.' },
  // Slots.
  { id: 'slot-undefined', severity: 'error', category: 'slots', description: 'The template uses a slot the config does not define.' },
  { id: 'slot-unused', severity: 'warning', category: 'slots', description: 'The config defines a slot the template never uses.' },
  { id: 'value-missing', severity: 'info', category: 'slots', description: 'The template reads values no fixture or sample data gives: they are rendered empty and left out of the counts.' },
  { id: 'required-missing', severity: 'error', category: 'slots', description: 'A required slot is not used by the template or has no value in the fixture.' },
  // Content of templates and fixtures.
  { id: 'hidden-characters', severity: 'warning', category: 'content', description: 'Zero-width, bidirectional control or Unicode tag characters hide text from reviewers.' },
  { id: 'secret-in-context', severity: 'error', category: 'content', description: 'An API key, token or private key would be sent to the model.' },
  // Assembly from fixtures.
  { id: 'required-overflow', severity: 'error', category: 'assembly', description: 'Required slots alone exceed the input budget; no request can be built.' },
  { id: 'slot-overflow', severity: 'warning', category: 'assembly', description: "A fixture's content for a slot exceeds the slot budget; items will be dropped." },
  { id: 'request-overflow', severity: 'warning', category: 'assembly', description: 'The assembled request exceeds the input budget and optional items are trimmed.' },
  { id: 'delimiter-breakout', severity: 'error', category: 'assembly', description: "Untrusted text contains the envelope's closing delimiter or a role marker." },
  { id: 'injection-phrase', severity: 'warning', category: 'assembly', description: 'Untrusted content contains instruction-like text (heuristic).', heuristic: true },
  { id: 'citation-missing', severity: 'warning', category: 'assembly', description: 'Evidence items without an id or source cannot be cited.' },
  { id: 'lost-in-the-middle', severity: 'info', category: 'assembly', description: 'A high-ranked item lands in the middle third of a long slot because of `rank` order.' },
  { id: 'commitment-dropped', severity: 'error', category: 'assembly', description: 'Trimming removes a history turn that made a commitment no commitment record keeps, or drops a commitment record.' },
  { id: 'contradiction-unlabelled', severity: 'warning', category: 'assembly', description: 'Items that contradict each other are rendered without the conflict note that says so.' },
  { id: 'coverage-missing', severity: 'warning', category: 'assembly', description: 'A subtopic the slot requires has no item in the request.' },
  { id: 'tool-schema-invalid', severity: 'error', category: 'assembly', description: 'A tool definition is malformed or its parameters are not valid JSON Schema.' },
  { id: 'tool-not-allowed', severity: 'error', category: 'trust', description: "The template or fixture offers a tool, or an argument format, outside the config's tool allowlist." },
  { id: 'tool-result-stale', severity: 'info', category: 'assembly', description: 'A tool result is older than its max_age at the reference time.' },
  { id: 'cache-prefix-unstable', severity: 'info', category: 'slots', description: 'A slot that changes per request (history, evidence, user, tool results) is rendered before a stable one (policy, tool definitions, examples), so the stable text is never in the cached prefix.' },
  // Coding agents' instruction files (src/core/language/agents, docs/agents.md).
  { id: 'instruction-reference', severity: 'warning', category: 'content', description: "An instruction file's import, link or #file reference is missing, not a regular file, outside the workspace or closes an import cycle: the agent loads nothing from it (and it is never read)." },
  { id: 'instruction-pattern-unmatched', severity: 'warning', category: 'config', description: "An instruction file's applyTo (Copilot) or globs (Cursor) pattern matches no file in the workspace, so the agent never loads the file by it." },
  { id: 'instruction-budget', severity: 'warning', category: 'budget', description: "The instructions an agent sends with every request exceed the budget the workspace's agents config sets for it." },
  { id: 'instruction-duplicate', severity: 'info', category: 'content', description: 'A paragraph of instructions repeats one of another instruction file; an agent that loads both pays for it twice.', heuristic: true },
];

const byId = new Map(RULES.map((r) => [r.id, r]));

export function ruleInfo(id: string): RuleInfo | undefined {
  return byId.get(id);
}

/**
 * Builds a finding with the rule's default severity. Messages often quote what the user wrote (a
 * key, a value, a YAML error's source text): any credential in one is redacted here, so no
 * finding, and nothing printed from one, ever carries a whole secret.
 */
export function finding(rule: string, path: string, span: Span, message: string, extra: Partial<Finding> = {}): Finding {
  const info = byId.get(rule);
  if (!info) throw new Error(`unknown rule id ${rule}`);
  const f: Finding = { rule, severity: info.severity, message: redactSecrets(message), path, span, ...extra };
  if (f.related) f.related = f.related.map((r) => ({ ...r, message: redactSecrets(r.message) }));
  // A quick fix's title quotes names too ("Add 'trust: untrusted' to slot '…'"); its edits are file text.
  if (f.fixes) f.fixes = f.fixes.map((x) => ({ ...x, title: redactSecrets(x.title) }));
  return f;
}

/**
 * Applies per-rule severity overrides (config `rules:` and editor settings, later ones win).
 * Findings of rules set to `off` are removed.
 */
export function applySeverities(findings: Finding[], ...overrides: Array<Record<string, SeveritySetting> | undefined>): Finding[] {
  const out: Finding[] = [];
  for (const f of findings) {
    let sev: SeveritySetting = f.severity;
    for (const o of overrides) if (o && o[f.rule]) sev = o[f.rule];
    if (sev === 'off') continue;
    out.push(sev === f.severity ? f : { ...f, severity: sev });
  }
  return out;
}
