/**
 * Context Lens's own messages on the LSP channel between the extension (src/extension) and the
 * language server (src/server), beside the standard LSP ones. Each message is declared once, as a
 * namespace with its `method` and `type` (the vscode-eslint pattern), with a comment saying who
 * sends it and why. Both bundles import this module; it holds types and descriptors only.
 *
 * Documents are named by their uri string exactly as the client sent it in `didOpen`.
 */
import { NotificationType, RequestType } from 'vscode-languageserver-protocol';
import type { Range } from 'vscode-languageserver-protocol';
import type { Trace } from '../core/types';
import type { CompareTarget, PreviewSnapshotBody } from './preview';

/** Output formats of `contextLens/assemble`; the same names as `ctxlens assemble --format`. */
export type AssembleFormat = 'openai' | 'anthropic' | 'text' | 'json';

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

/** The settings the server reads (`contextLens.*` minus the client-only ones). */
export interface ServerSettings {
  /** Model used when a config names none (and overrides nothing a config says). */
  defaultModel?: string;
  /** Per-rule severity overrides, applied after the config's own `rules`. */
  rules: Record<string, 'off' | 'error' | 'warning' | 'info' | 'hint'>;
  codeLens: { enabled: boolean };
  /** When false, a template has no fixture until the user selects one. */
  fixture: { autoSelect: boolean };
  /** Files larger than this (bytes) get a light analysis: no tokenizing, no assembly. */
  maxFileSize: number;
  /** dotprompt helpers and partials the application registers in code (`contextLens.dotprompt.*`). */
  dotprompt?: { helpers: string[]; partials: string[] };
  /** Globs of the Markdown and text files that are prompts (`contextLens.plainPrompts.files`; absent: the default). */
  plainPrompts?: { files: string[] };
  /** The loader of `.prompty` files by glob (`contextLens.prompty.loaders`, e.g. `{ "flows/**": "promptflow" }`). */
  promptyLoaders?: Record<string, 'prompty-0.1' | 'prompty-2' | 'promptflow' | 'azure-ai-inference' | 'typescript' | 'dotnet'>;
}

export const DEFAULT_SERVER_SETTINGS: ServerSettings = {
  rules: {},
  codeLens: { enabled: true },
  fixture: { autoSelect: true },
  maxFileSize: 2 * 1024 * 1024,
};

/** `initializationOptions` of the `initialize` request, sent by the extension (or a test client). */
export interface InitializationOptions {
  /** Absolute path of the installed extension; diagnostics link to the docs/rules.md shipped there. */
  extensionPath?: string;
  /** Milliseconds to wait after the last edit before analysing (default 75; 0 in benchmarks). */
  debounceMs?: number;
  /** Settings for clients that do not answer `workspace/configuration`. */
  settings?: Partial<ServerSettings>;
  /**
   * True when a YAML language server (Red Hat YAML) validates and completes `*.context.yaml`
   * through the contributed JSON Schema; the server then leaves key completion to it, so the user
   * does not see every suggestion twice.
   */
  yamlLanguageServer?: boolean;
}

// ---------------------------------------------------------------------------
// Client -> server requests
// ---------------------------------------------------------------------------

/** What the user chose for a template: a fixture (path or name) and a model. */
export interface TemplateChoice {
  uri: string;
  /** Fixture path or name; omitted = the template's selected or first matching fixture. */
  fixture?: string;
  /** Model name; omitted = the session's selected model, the config's, or the default setting. */
  model?: string;
}

/** A snapshot to render, or the reason there is none (shown by the panel's empty state). */
export type PreviewReply = { snapshot: PreviewSnapshotBody } | { empty: string };

/**
 * What the preview shows besides the template as written: what-if slot budgets and a comparison.
 * Held by the extension per panel and sent with every preview request; the server applies it only
 * when the request leads to `templateUri` (so a variant never leaks onto another template), and
 * the snapshot then carries `whatIf` / `compare`.
 */
export interface PreviewVariant {
  templateUri: string;
  /** Slot -> what-if budget in tokens. */
  budgets?: Record<string, number>;
  compare?: CompareTarget;
}

export interface PreviewParams extends TemplateChoice {
  variant?: PreviewVariant;
}

/**
 * Client -> server. The preview panel asks for the complete picture of a template (or of the
 * template a fixture or config feeds) to render; the server waits for the analysis of the
 * document's current version. The panel stamps the sequence number itself.
 */
export namespace PreviewRequest {
  export const method = 'contextLens/preview' as const;
  export type Params = PreviewParams;
  export type Result = PreviewReply;
  export const type = new RequestType<Params, Result, void>(method);
}

export interface AssembleParams extends TemplateChoice {
  format: AssembleFormat;
}

export interface AssembleResult {
  /** False when assembly failed (required slots alone overflow); `content` then explains. */
  ok: boolean;
  error?: string;
  /** The request in the chosen format, ready to show in an editor. */
  content: string;
  /** VS Code language id for `content`. */
  language: 'json' | 'plaintext';
  trace: Trace;
  /** Path of the fixture used, when there was one. */
  fixture?: string;
}

/**
 * Client -> server. `Context Lens: Assemble Request` and `Export Trace` ask for the assembled
 * request of a template in one of the CLI's formats, with its trace. Null when there is nothing to
 * assemble (not a template, or no context config).
 */
export namespace AssembleRequest {
  export const method = 'contextLens/assemble' as const;
  export type Params = AssembleParams;
  export type Result = AssembleResult | null;
  export const type = new RequestType<Params, Result, void>(method);
}

export interface BudgetEditParams {
  /** The template (or a document leading to it) whose config gets the budgets. */
  uri: string;
  /** Slot -> budget in tokens. */
  budgets: Record<string, number>;
}

/** Text edits of one document, against the version the server read (when it is open). */
export interface BudgetEdit {
  uri: string;
  path: string;
  /** Version of the open document the edits were computed on; absent when read from disk. */
  version?: number;
  edits: Array<{ range: Range; newText: string }>;
}

export type BudgetEditResult = BudgetEdit | { error: string };

/**
 * Client -> server. "Apply to config" of the preview's what-if budgets: the server computes the
 * layout-preserving edits of the config (src/core/config/edit.ts: only the YAML value nodes of
 * the budgets change, or a `budget:` key is added in the mapping's own style) and returns them;
 * the extension applies them as a `WorkspaceEdit`, so they can be undone in the editor.
 */
export namespace BudgetEditRequest {
  export const method = 'contextLens/budgetEdit' as const;
  export type Params = BudgetEditParams;
  export type Result = BudgetEditResult;
  export const type = new RequestType<Params, Result, void>(method);
}

export interface FixtureInfo {
  path: string;
  uri: string;
  name: string;
}

export interface FixturesResult {
  fixtures: FixtureInfo[];
  /** Path of the fixture the template's analysis uses now. */
  active?: string;
  /** True when the user picked it (rather than the first matching one). */
  selected: boolean;
}

/** Client -> server. `Select Fixture` lists the fixtures that match a template (or a fixture's template). */
export namespace FixturesRequest {
  export const method = 'contextLens/fixtures' as const;
  export type Params = { uri: string };
  export type Result = FixturesResult;
  export const type = new RequestType<Params, Result, void>(method);
}

export interface ModelChoice {
  name: string;
  provider: string;
  window: number;
  tokenizer: string;
  exact: boolean;
}

export interface ModelsResult {
  models: ModelChoice[];
  /** The model the session overrides to, when the user picked one. */
  selected?: string;
  /** The model the given document's analysis uses now. */
  active?: string;
}

/** Client -> server. `Select Model / Tokenizer` lists the registry (plus the config's `models` for `uri`). */
export namespace ModelsRequest {
  export const method = 'contextLens/models' as const;
  export type Params = { uri?: string };
  export type Result = ModelsResult;
  export const type = new RequestType<Params, Result, void>(method);
}

/**
 * Client -> server. The user picked a fixture for a template (quick pick, preview picker, or a
 * code lens). Null clears the choice. The server re-analyses the template, republishes its
 * diagnostics and asks the client to refresh code lenses.
 */
export namespace SelectFixtureRequest {
  export const method = 'contextLens/selectFixture' as const;
  export type Params = { uri: string; fixture: string | null };
  export const type = new RequestType<Params, void, void>(method);
}

/**
 * Client -> server. The user picked a model for the session (null returns to the configs' own
 * models). Every open template is re-analysed.
 */
export namespace SelectModelRequest {
  export const method = 'contextLens/selectModel' as const;
  export type Params = { model: string | null };
  export const type = new RequestType<Params, void, void>(method);
}

/** What each coding agent loads for a file (src/core/language/agents), and the Markdown the view shows. */
export interface WhatLoadsResult {
  file: string;
  root: string;
  /** The tokenizer and where it comes from (`o200k_base (default)`, `o200k_base (gpt-4o)`). */
  tokenizer: string;
  model?: string;
  agents: import('../core/language').AgentLoad[];
  findings: import('../core/types').Finding[];
  markdown: string;
}

/**
 * Client -> server. `Context Lens: What Loads for This File` (and the lenses of instruction
 * files): every agent's instruction files for the file, in order, with their tokens. Null when
 * the uri is not a file of the workspace.
 */
export namespace WhatLoadsRequest {
  export const method = 'contextLens/whatLoads' as const;
  export type Params = { uri: string; agent?: 'copilot' | 'agents-md' | 'claude' | 'cursor' | 'gemini' };
  export type Result = WhatLoadsResult | null;
  export const type = new RequestType<Params, Result, void>(method);
}

// ---------------------------------------------------------------------------
// Server -> client notifications
// ---------------------------------------------------------------------------

export interface StatusParams {
  uri: string;
  /** Document version the analysis was made for. */
  version: number;
  kind: 'template' | 'config' | 'fixture';
  model?: string;
  tokenizer: string;
  exact: boolean;
  /** Request tokens (input + reserved output + margin) when assembled, else the allocated total. */
  total?: number;
  window?: number;
  fits?: boolean;
  fixture?: string;
  /** One line for the status bar tooltip. */
  detail: string;
}

/**
 * Server -> client. Sent after every analysis of an open document, with the totals the status bar
 * shows for it. The client keeps the latest per uri, shows the active editor's, and takes it as the
 * signal to refresh an open preview (the analysis behind it changed).
 */
export namespace StatusNotification {
  export const method = 'contextLens/status' as const;
  export type Params = StatusParams;
  export const type = new NotificationType<Params>(method);
}
