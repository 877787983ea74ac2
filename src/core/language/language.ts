/**
 * The one interface every template format implements (a format is one folder under
 * `src/core/language/`, listed once in `registry.ts`). Like a Volar `LanguagePlugin`: a language
 * claims its files, parses a file into the one document type (`TemplateDoc`: messages, slot uses,
 * findings, spans) and renders a document with values into the messages its runtime would send.
 * Features read the language's results, never a file's extension.
 *
 * Parsing never throws (the registry's `parseTemplate` also guards it) and rendering never throws:
 * what the runtime would refuse is a `template-invalid` issue, what cannot be reproduced
 * faithfully an `unsupported-feature` issue. A language whose runtime is native code (BAML) is
 * lent that runtime by the Node host (as the host lends SHA-256), so the core stays pure and the
 * browser bundle never loads it; without it the language says so in an issue.
 */
import type { Role, Span, TemplateDoc, TemplateFormat } from '../types';
import type { EngineResult } from './engineTypes';
import type { ConfigDoc, Finding } from '../types';
import type { ContextConfig } from '../config/schema';

/** What a language's render is given: the assembly's values (marked or plain) and the binding's options. */
export interface LanguageRenderInput {
  /** Values by name: every slot's value and any other fixture value. Defaults are not merged in. */
  input: Record<string, unknown>;
  /** The conversation of a history slot, for formats that place it themselves (dotprompt `data.messages`). */
  messages?: unknown[];
  /** The fixture's data frame (dotprompt's `context`). */
  context?: Record<string, unknown>;
  /** False for the analysis of a template without any fixture or sample: render what can be, name what is missing. */
  hasValues: boolean;
  /** Front matter defaults applied under the values (dotprompt `input.default`, Prompty `inputs.*.default`). */
  defaults: Record<string, unknown>;
  /** Partial and include sources by name, read by the caller inside the workspace. */
  partials: Record<string, string>;
  /** Helpers and partials without a source that the application registers in code (rendered as placeholders). */
  codeHelpers?: readonly string[];
  codePartials?: readonly string[];
  /** Reads a file beside the template, inside the workspace only (a runtime that inlines local files). */
  readFile?: (relativePath: string) => string | undefined;
  /**
   * The program the project loads the template with, where a format has several (Prompty: its
   * loaders, language/prompty/loader.ts), and why it was chosen; the binding gives it.
   */
  loader?: { id: string; reason: string; source: 'pin' | 'workspace' | 'file'; guessed: boolean };
  /**
   * A value's text without the assembly's attribution marks: for a value the runtime reads as
   * syntax rather than prints (BAML's `_.role(turn.role)`), which must reach it as written.
   */
  unmarked?: (text: string) => string;
  /** The template's whole project where its runtime loads one (BAML: every `.baml` file, keyed as the runtime names them, and the key of the template's own file). */
  project?: { files: Record<string, string>; self: string };
}

/** A render, and the runtime that made it in words (`Prompty 0.1.x`), for the trace and the views. */
export interface LanguageRenderResult extends EngineResult {
  runtime?: string;
}

/** What the binding gives a language that composes a request of several files: the config and a reader of the files it names. */
export interface ComposeInput {
  configPath: string;
  config: ContextConfig;
  configDoc: ConfigDoc;
  /** The workspace folder that holds the config (what an application run from the project's root reads relative paths from). */
  root?: string;
  /** A file named relative to `from` (default: the config), inside the workspace: its path and text, or why not. */
  read(ref: string, from?: string): { path: string; text: string } | { error: string };
}

/** The document as the binding sees it (the whole request), and the findings and files of the composition. */
export interface ComposeResult {
  doc: TemplateDoc;
  findings: Finding[];
  dependencies: string[];
}

/** Settings of the languages that the editor (or a caller) may change. */
export interface LanguageSettings {
  /** Globs of the Markdown and text files that are prompts (plain prompt files; by default those under a prompts folder). */
  promptFiles?: readonly string[];
}

/** How a language treats a path it is asked about. */
export type Claim = 'template' | 'partial';

export interface TemplateLanguage {
  /** The document's `format`. */
  readonly id: TemplateFormat;
  /** The format's name in words (`dotprompt`, `Prompty`). */
  readonly name: string;
  /** Workspace globs of the files the language may claim (scans, file watchers). */
  readonly globs: readonly string[];
  /** Whether the path is one of its templates, a partial rendered inside templates, or not its file. */
  claim(path: string): Claim | undefined;
  /** The role of text before any role marker. */
  readonly fallbackRole: Role;
  /**
   * The runtime takes a history slot's conversation as messages and places it itself, marker or
   * not (dotprompt's `data.messages` and insertHistory): the config's first history slot is always
   * used, and its items reach the render as messages, not text.
   */
  readonly placesHistory?: true;
  /**
   * The file of a template address, where a format addresses templates inside files (BAML:
   * `baml_src/x.baml#F` is function F of `baml_src/x.baml`). Absent: the address is the file.
   */
  fileOf?(path: string): string;
  /** The addresses of the templates a file holds, where it may hold several (BAML: `x.baml#F` per function). Absent: the file is one template. */
  templatesIn?(file: string, text: string): string[];
  /**
   * The project a template's runtime loads with it (BAML: every `.baml` file under the same
   * `baml_src/`): the folder, the glob of its files, and the name the runtime gives a file at a
   * path relative to the folder. Absent: the template renders alone.
   */
  projectOf?(file: string): { root: string; glob: string; key(relativePath: string): string } | undefined;
  /** The model the template's request names where only its project tells (BAML: a client defined in another file). */
  modelOf?(doc: TemplateDoc, project: { files: Record<string, string>; self: string }): string | undefined;
  /**
   * The template's own fixtures, in order (BAML: the `test` blocks that name the function, their
   * `args` read with BAML's literal syntax); the first is the default. Absent: none.
   */
  fixtures?(doc: TemplateDoc): Array<{ name: string; values: Record<string, unknown>; span: Span }>;
  /** The whole file (or the addressed template in it) as one document. Never throws. */
  parse(path: string, text: string): TemplateDoc;
  /** The messages the format's runtime renders for the values. Never throws. */
  render(doc: TemplateDoc, values: LanguageRenderInput): LanguageRenderResult;
  /**
   * Whether the template only prints, loops over and tests its values (never hands one to a
   * helper, a partial or a measuring lookup), so the assembly may render long texts by reference
   * (see assembly/render.ts). Absent: never.
   */
  printsValuesOnly?(doc: TemplateDoc, values: Pick<LanguageRenderInput, 'partials' | 'defaults' | 'codeHelpers' | 'codePartials'>): boolean;
  /**
   * Whether a context config composes a request of this file with others (the plain language: the
   * config's `messages` name the file). Absent: the file is its own request.
   */
  composedBy?(config: ContextConfig, configPath: string, path: string, resolve: (ref: string) => string | undefined): boolean;
  /** The document of the request a config composes with this file (called when `composedBy` said so). */
  compose?(doc: TemplateDoc, input: ComposeInput): ComposeResult;
  /** Takes the settings that concern it (absent settings: its defaults). */
  configure?(settings: LanguageSettings): void;
}
