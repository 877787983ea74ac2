/**
 * The typed channel between the extension host (src/extension/previewPanel.ts) and the preview
 * webview (src/webview/main.ts). Every message is declared once here, with the side that sends it
 * and why, and a parser that accepts exactly the protocol's shape.
 *
 * Discipline of the channel (the "webview discipline" of GitLens and vscode-extension-samples):
 * - the webview posts `ready` first; the host sends nothing before it;
 * - the host sends complete snapshots stamped with the template uri, the document version and a
 *   sequence number, never deltas; the webview keeps no model of its own;
 * - the host treats everything the webview posts as untrusted input: `validateWebviewMessage`
 *   rebuilds each message from its known fields and returns undefined for anything else, and
 *   `checkActionAgainstSnapshot` confirms that paths, fixtures and models named by the webview are
 *   ones the host itself sent.
 *
 * The module is pure (no `vscode`, no DOM, no `node:*`), so both bundles and the tests import it.
 */
import type { AssemblyDiff } from '../core/eval/diff';
import type { BudgetReport, Finding, RenderedMessage, Severity, Trace } from '../core/types';

/**
 * The core's data types the snapshot is made of, re-exported so that the webview takes every type
 * it renders from this module and imports nothing from the core (eslint.config.mjs enforces it).
 */
export type { AssemblyDiff, FirstDifference } from '../core/eval/diff';
export type { BudgetLine, BudgetReport, MessagePart, OmitReason, OmittedItem, RenderedMessage, Role, Severity, SlotTrace, Trace, TraceItem } from '../core/types';

/** The webview panel's viewType, used by the panel, its serializer and package.json. */
export const PREVIEW_VIEW_TYPE = 'contextLens.preview';

// ---------------------------------------------------------------------------
// Snapshot: the complete picture the webview renders
// ---------------------------------------------------------------------------

/**
 * A place in a workspace file. `path` is absolute with `/` separators, as the core names files;
 * `line` is 0-based (the LSP and `vscode.Position` convention; the webview shows line + 1).
 */
export interface SourceLocation {
  path: string;
  line: number;
}

/** A fixture the template can be previewed with. `path` is the identity sent back in `selectFixture`. */
export interface FixtureChoice {
  path: string;
  name: string;
}

/** Where each thing shown in the panel comes from, so a click can reveal it in the editor. */
export interface PreviewLocations {
  /** Fixture items by slot and id (the ids of the trace's retained and omitted items). */
  items: Array<{ slot: string; id: string } & SourceLocation>;
  /** Slot declarations in the context config. */
  slots: Array<{ slot: string } & SourceLocation>;
  /** Role markers in the template, by message index; null when a message has no marker of its own. */
  messages: Array<SourceLocation | null>;
}

/** One finding, flattened to what the panel lists. */
export interface PreviewFinding {
  rule: string;
  severity: Severity;
  message: string;
  location: SourceLocation;
}

/** The findings of the template, config and fixture: counts, and the first few for display. */
export interface FindingsSummary {
  counts: Record<Severity, number>;
  /** At most `FINDINGS_SHOWN` findings, errors first. */
  items: PreviewFinding[];
}

/** How many findings a snapshot carries for display; the counts cover all of them. */
export const FINDINGS_SHOWN = 50;

/** The parts of an `AssemblyResult` the panel shows. */
export interface PreviewResult {
  ok: boolean;
  /** Why assembly failed, when it did (required slots alone overflow the input budget). */
  error?: string;
  budget: BudgetReport;
  trace: Trace;
  messages: RenderedMessage[];
}

/**
 * What the second side (B) of a comparison changes against the panel's request (A): another
 * fixture, another model, or the budgets (A as the config writes them, B with the what-if budgets).
 */
export type CompareTarget = { kind: 'fixture'; path: string } | { kind: 'model'; model: string } | { kind: 'budget' };

/** One side of a comparison, assembled as `ctxlens diff` assembles it. */
export interface CompareSide {
  /** "fixture post-retries · gpt-4o · budget evidence=400", as `ctxlens diff` labels it. */
  label: string;
  /** Fixture name. */
  fixture?: string;
  model?: string;
  /** What-if budgets this side was assembled with. */
  budgets?: Record<string, number>;
  result: PreviewResult;
}

/** A comparison that could be assembled: both sides, their diff and the CLI command that prints it. */
export interface PreviewComparison {
  target: CompareTarget;
  error?: undefined;
  a: CompareSide;
  b: CompareSide;
  /** `diffAssemblies(a, b)` of src/core/eval/diff.ts, the same data `ctxlens diff --format json` prints. */
  diff: AssemblyDiff;
  /** Arguments of the `ctxlens diff` run that prints this comparison (without `ctxlens`). */
  command: string[];
}

/** The compare state of a snapshot: a comparison, or why the chosen one cannot be made. */
export type PreviewCompare = PreviewComparison | { target: CompareTarget; error: string };

/**
 * What-if budgets: slot budgets the user typed or dragged in the panel, not written anywhere. The
 * snapshot's `result` is then the request re-assembled with them.
 */
export interface WhatIfState {
  /** Slot -> budget in tokens. */
  budgets: Record<string, number>;
  /** The budgets as the config gives them (resolved to tokens; null: none). */
  written: Record<string, number | null>;
  /** Why the budgets could not be applied (the result is then the request as written). */
  error?: string;
  /** As written (A) against what-if (B), as `ctxlens diff --budget` computes it. */
  diff?: AssemblyDiff;
  /** Whether "Apply to config" can write the budgets into a config file, and why not. */
  apply: { ok: true; path: string } | { ok: false; reason: string };
}

/**
 * Sentences for the trace's decisions (src/core/reasonText.ts), written by the server
 * because the webview imports no core code: reason code -> sentence, and one sentence per entry
 * of `trace.conflicts`, in its order.
 */
export interface PreviewExplain {
  reasons: Record<string, string>;
  conflicts: string[];
}

/** Everything the webview renders, complete. The host sends a new one on every change. */
export interface PreviewSnapshot {
  /** Increases with every message the panel posts; the webview ignores anything older than what it shows. */
  seq: number;
  /** The template document's uri (string form), and its version when the snapshot was assembled. */
  templateUri: string;
  documentVersion: number;
  template: { path: string; name: string };
  fixtures: FixtureChoice[];
  /** Path of the fixture the result was assembled with; undefined when the template has none. */
  selectedFixture?: string;
  models: string[];
  selectedModel?: string;
  result: PreviewResult;
  locations: PreviewLocations;
  findings: FindingsSummary;
  /** The trace's reasons and conflicts in words (src/server/explain.ts); absent from hosts that send none, and the panel then shows the codes. */
  explain?: PreviewExplain;
  /** Set while what-if budgets are active; `result` is then the what-if request. */
  whatIf?: WhatIfState;
  /** Set while the panel compares the request with a variant. */
  compare?: PreviewCompare;
}

/** A snapshot before the panel stamps its sequence number (what `PreviewPanel.update` takes). */
export type PreviewSnapshotBody = Omit<PreviewSnapshot, 'seq'>;

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2, hint: 3 };

/**
 * Flattens core findings into a summary. `lineOf` converts a finding's offset into a 0-based line
 * (the caller has the line index of each file).
 */
export function summarizeFindings(findings: readonly Finding[], lineOf: (path: string, offset: number) => number): FindingsSummary {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0, hint: 0 };
  for (const f of findings) counts[f.severity]++;
  const items = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i)
    .slice(0, FINDINGS_SHOWN)
    .map(({ f }) => ({ rule: f.rule, severity: f.severity, message: f.message, location: { path: f.path, line: lineOf(f.path, f.span.start) } }));
  return { counts, items };
}

// ---------------------------------------------------------------------------
// Message descriptors
// ---------------------------------------------------------------------------

type Fields = Record<string, unknown>;

/**
 * One message of the channel: its `type` tag, a parser that rebuilds it from an unknown value
 * (undefined when the value is not this message), and a type guard over the parser.
 */
export interface MessageDescriptor<M extends { type: string }> {
  readonly type: M['type'];
  parse(value: unknown): M | undefined;
  is(value: unknown): value is M;
}

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function defineMessage<M extends { type: string }>(type: M['type'], build: (fields: Fields) => M | undefined): MessageDescriptor<M> {
  const parse = (value: unknown): M | undefined => (isRecord(value) && value.type === type ? build(value) : undefined);
  return { type, parse, is: (value: unknown): value is M => parse(value) !== undefined };
}

/** Bounded so a hostile webview cannot make the host hold or compare huge strings. */
const MAX_STRING = 4096;

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_STRING ? value : undefined;
}

function lineNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

// --- webview -> host --------------------------------------------------------

/** Webview -> host. Sent once the webview's message listener is installed; the host sends nothing before it. */
export interface ReadyMessage {
  type: 'ready';
}
export const ReadyMessage = defineMessage<ReadyMessage>('ready', () => ({ type: 'ready' }));

/** Webview -> host. The user picked another fixture in the fixture picker; `path` is a `FixtureChoice.path`. */
export interface SelectFixtureMessage {
  type: 'selectFixture';
  path: string;
}
export const SelectFixtureMessage = defineMessage<SelectFixtureMessage>('selectFixture', (m) => {
  const path = str(m.path);
  return path === undefined ? undefined : { type: 'selectFixture', path };
});

/** Webview -> host. The user picked another model in the model picker; `model` is one of `PreviewSnapshot.models`. */
export interface SelectModelMessage {
  type: 'selectModel';
  model: string;
}
export const SelectModelMessage = defineMessage<SelectModelMessage>('selectModel', (m) => {
  const model = str(m.model);
  return model === undefined ? undefined : { type: 'selectModel', model };
});

export type CopyFormat = 'openai' | 'anthropic';

/**
 * Webview -> host. The user asked to copy the assembled request to the clipboard. The host builds
 * the JSON (the webview has no clipboard access of its own in VS Code).
 */
export interface CopyRequestMessage {
  type: 'copyRequest';
  format: CopyFormat;
}
export const CopyRequestMessage = defineMessage<CopyRequestMessage>('copyRequest', (m) =>
  m.format === 'openai' || m.format === 'anthropic' ? { type: 'copyRequest', format: m.format } : undefined,
);

/** Webview -> host. The user asked to save the trace of the shown request as JSON. */
export interface ExportTraceMessage {
  type: 'exportTrace';
}
export const ExportTraceMessage = defineMessage<ExportTraceMessage>('exportTrace', () => ({ type: 'exportTrace' }));

/** Webview -> host. The user clicked an item, slot, message or finding; reveal that line in an editor. */
export interface RevealSourceMessage {
  type: 'revealSource';
  path: string;
  /** 0-based. */
  line: number;
}
export const RevealSourceMessage = defineMessage<RevealSourceMessage>('revealSource', (m) => {
  const path = str(m.path);
  const line = lineNumber(m.line);
  return path === undefined || line === undefined ? undefined : { type: 'revealSource', path, line };
});

/** Webview -> host. The user asked for a fresh snapshot (the host reassembles and sends one). */
export interface RefreshMessage {
  type: 'refresh';
}
export const RefreshMessage = defineMessage<RefreshMessage>('refresh', () => ({ type: 'refresh' }));

/** Largest what-if budget the host accepts (far above any window; an exact integer). */
export const MAX_WHAT_IF_BUDGET = 100_000_000;

function compareTarget(value: unknown): CompareTarget | null | undefined {
  if (value === null) return null;
  if (!isRecord(value)) return undefined;
  if (value.kind === 'fixture') {
    const path = str(value.path);
    return path === undefined ? undefined : { kind: 'fixture', path };
  }
  if (value.kind === 'model') {
    const model = str(value.model);
    return model === undefined ? undefined : { kind: 'model', model };
  }
  return value.kind === 'budget' ? { kind: 'budget' } : undefined;
}

/**
 * Webview -> host. The user picked what to compare the request with (the "Compare with" picker),
 * or null to stop comparing. A fixture or model must be one the snapshot lists; `budget` compares
 * the budgets as written with the what-if budgets, so it needs what-if budgets.
 */
export interface SetCompareMessage {
  type: 'setCompare';
  target: CompareTarget | null;
}
export const SetCompareMessage = defineMessage<SetCompareMessage>('setCompare', (m) => {
  const target = compareTarget(m.target);
  return target === undefined ? undefined : { type: 'setCompare', target };
});

/**
 * Webview -> host. The user typed or dragged a slot's budget in the budget bar (what-if): the host
 * asks for a re-assembly with it, writing nothing. `budget` null drops the slot's what-if budget.
 */
export interface SetBudgetMessage {
  type: 'setBudget';
  slot: string;
  budget: number | null;
}
export const SetBudgetMessage = defineMessage<SetBudgetMessage>('setBudget', (m) => {
  const slot = typeof m.slot === 'string' && m.slot.length > 0 && m.slot.length <= 256 ? m.slot : undefined;
  const budget = m.budget === null ? null : typeof m.budget === 'number' && Number.isSafeInteger(m.budget) && m.budget >= 0 && m.budget <= MAX_WHAT_IF_BUDGET ? m.budget : undefined;
  return slot === undefined || budget === undefined ? undefined : { type: 'setBudget', slot, budget };
});

/** Webview -> host. The user dropped every what-if budget ("Reset"): back to the request as written. */
export interface ResetWhatIfMessage {
  type: 'resetWhatIf';
}
export const ResetWhatIfMessage = defineMessage<ResetWhatIfMessage>('resetWhatIf', () => ({ type: 'resetWhatIf' }));

/**
 * Webview -> host. "Apply to config": write the what-if budgets of the shown snapshot into the
 * config through a workspace edit (undoable in the editor). Carries nothing: the host writes the
 * budgets it itself asked the server to assemble, never values from the webview.
 */
export interface ApplyWhatIfMessage {
  type: 'applyWhatIf';
}
export const ApplyWhatIfMessage = defineMessage<ApplyWhatIfMessage>('applyWhatIf', () => ({ type: 'applyWhatIf' }));

export type WebviewMessage =
  | ReadyMessage
  | SelectFixtureMessage
  | SelectModelMessage
  | CopyRequestMessage
  | ExportTraceMessage
  | RevealSourceMessage
  | RefreshMessage
  | SetCompareMessage
  | SetBudgetMessage
  | ResetWhatIfMessage
  | ApplyWhatIfMessage;

/** The messages that ask the extension to do something (everything but the `ready` handshake). */
export type PreviewAction = Exclude<WebviewMessage, ReadyMessage>;

const WEBVIEW_MESSAGES: ReadonlyArray<MessageDescriptor<WebviewMessage>> = [
  ReadyMessage,
  SelectFixtureMessage,
  SelectModelMessage,
  CopyRequestMessage,
  ExportTraceMessage,
  RevealSourceMessage,
  RefreshMessage,
  SetCompareMessage,
  SetBudgetMessage,
  ResetWhatIfMessage,
  ApplyWhatIfMessage,
];

/**
 * The host's gate for everything the webview posts: returns a fresh message holding only the
 * protocol's fields, or undefined for unknown types and wrong field types. Extra fields are dropped.
 */
export function validateWebviewMessage(value: unknown): WebviewMessage | undefined {
  if (!isRecord(value) || typeof value.type !== 'string') return undefined;
  const descriptor = WEBVIEW_MESSAGES.find((d) => d.type === value.type);
  return descriptor?.parse(value);
}

/** Every file path a snapshot names; `revealSource` may only name one of these. */
export function snapshotPaths(snapshot: PreviewSnapshot | PreviewSnapshotBody): Set<string> {
  const paths = new Set<string>([snapshot.template.path]);
  for (const f of snapshot.fixtures) paths.add(f.path);
  const { trace } = snapshot.result;
  for (const ref of [trace.template, trace.config, trace.fixture]) if (ref) paths.add(ref.path);
  for (const l of snapshot.locations.items) paths.add(l.path);
  for (const l of snapshot.locations.slots) paths.add(l.path);
  for (const l of snapshot.locations.messages) if (l) paths.add(l.path);
  for (const f of snapshot.findings.items) paths.add(f.location.path);
  return paths;
}

/**
 * Whether an action names only things the host offered in the snapshot the webview shows: a listed
 * fixture, a listed model, a path the snapshot names. A compromised webview therefore cannot make
 * the host open arbitrary files or load arbitrary fixtures.
 */
export function checkActionAgainstSnapshot(action: PreviewAction, snapshot: PreviewSnapshot | PreviewSnapshotBody | undefined): boolean {
  switch (action.type) {
    case 'refresh':
      return true;
    case 'selectFixture':
      return snapshot !== undefined && snapshot.fixtures.some((f) => f.path === action.path);
    case 'selectModel':
      return snapshot !== undefined && snapshot.models.includes(action.model);
    case 'copyRequest':
      return snapshot !== undefined && snapshot.result.ok;
    case 'exportTrace':
      return snapshot !== undefined;
    case 'revealSource':
      return snapshot !== undefined && snapshotPaths(snapshot).has(action.path);
    case 'setCompare': {
      if (snapshot === undefined) return false;
      const t = action.target;
      if (t === null) return true;
      if (t.kind === 'fixture') return snapshot.fixtures.some((f) => f.path === t.path);
      if (t.kind === 'model') return snapshot.models.includes(t.model);
      return snapshot.whatIf !== undefined;
    }
    case 'setBudget':
      // Only slots of the budget the snapshot shows.
      return snapshot !== undefined && snapshot.result.budget.slots.some((l) => l.name === action.slot);
    case 'resetWhatIf':
      return snapshot?.whatIf !== undefined;
    case 'applyWhatIf':
      return snapshot?.whatIf !== undefined && snapshot.whatIf.apply.ok && snapshot.whatIf.error === undefined && Object.keys(snapshot.whatIf.budgets).length > 0;
  }
}

// --- host -> webview --------------------------------------------------------

/** Host -> webview. The complete state to render; replaces whatever the webview showed. */
export interface SnapshotMessage {
  type: 'snapshot';
  snapshot: PreviewSnapshot;
}
export const SnapshotMessage = defineMessage<SnapshotMessage>('snapshot', (m) => {
  const s = m.snapshot;
  // The host is trusted; this is a shape check so a malformed message cannot crash the renderer.
  if (!isRecord(s) || typeof s.seq !== 'number' || typeof s.templateUri !== 'string' || !isRecord(s.result)) return undefined;
  const r = s.result;
  if (!isRecord(r.budget) || !isRecord(r.trace) || !Array.isArray(r.messages)) return undefined;
  if (!Array.isArray(s.fixtures) || !Array.isArray(s.models) || !isRecord(s.template) || !isRecord(s.locations) || !isRecord(s.findings)) return undefined;
  if (s.whatIf !== undefined && !(isRecord(s.whatIf) && isRecord(s.whatIf.budgets) && isRecord(s.whatIf.apply))) return undefined;
  if (s.compare !== undefined && !(isRecord(s.compare) && isRecord(s.compare.target) && (typeof s.compare.error === 'string' || (isRecord(s.compare.a) && isRecord(s.compare.b) && isRecord(s.compare.diff))))) return undefined;
  return { type: 'snapshot', snapshot: s as unknown as PreviewSnapshot };
});

/** Host -> webview. Nothing to preview (no template active, or the template has no context); `reason` says what to do. */
export interface EmptyMessage {
  type: 'empty';
  seq: number;
  reason: string;
}
export const EmptyMessage = defineMessage<EmptyMessage>('empty', (m) =>
  typeof m.seq === 'number' && typeof m.reason === 'string' ? { type: 'empty', seq: m.seq, reason: m.reason } : undefined,
);

/** Host -> webview. The snapshot could not be produced (e.g. the language server is not running). */
export interface ErrorMessage {
  type: 'error';
  seq: number;
  message: string;
  templateUri?: string;
}
export const ErrorMessage = defineMessage<ErrorMessage>('error', (m) => {
  if (typeof m.seq !== 'number' || typeof m.message !== 'string') return undefined;
  const msg: ErrorMessage = { type: 'error', seq: m.seq, message: m.message };
  if (typeof m.templateUri === 'string') msg.templateUri = m.templateUri;
  return msg;
});

export type HostMessage = SnapshotMessage | EmptyMessage | ErrorMessage;

/** The webview's gate for what arrives on `window.onmessage`. */
export function validateHostMessage(value: unknown): HostMessage | undefined {
  if (!isRecord(value)) return undefined;
  switch (value.type) {
    case 'snapshot':
      return SnapshotMessage.parse(value);
    case 'empty':
      return EmptyMessage.parse(value);
    case 'error':
      return ErrorMessage.parse(value);
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Persisted webview state
// ---------------------------------------------------------------------------

/**
 * What the webview stores with `setState`: UI state only, plus the template uri so that the
 * host's `WebviewPanelSerializer` can reopen the panel for the same template after a reload.
 */
export interface PersistedPreviewState {
  version: 1;
  templateUri?: string;
  /** Section id -> open. */
  open: Record<string, boolean>;
  /** Keys of messages whose long bodies the user expanded. */
  expanded: string[];
  /** Table ids whose "show all rows" the user chose. */
  allRows: string[];
  /** Scroll offsets by scroller: `page`, and the `numbers` and `request` columns of the wide layout. */
  scroll: Record<string, number>;
}

/** Reads the template uri out of a persisted state of unknown shape (the serializer's input). */
export function templateUriFromState(state: unknown): string | undefined {
  return isRecord(state) ? str(state.templateUri) : undefined;
}
