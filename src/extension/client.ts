/**
 * The language client: starts dist/server.js as a separate Node process over stdio and talks LSP
 * to it. The extension host does no parsing or counting of its own; everything it shows comes
 * from this connection. A crashed server is restarted by the client's default error handler (up to
 * 4 times in 3 minutes) and by `Context Lens: Restart Server` after that.
 */
import * as vscode from 'vscode';
import type { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import type { InitializationOptions } from '../protocol/lsp';

/**
 * The documents the server serves (templates and their configs and fixtures here, the agents'
 * instruction files in DOCUMENT_SELECTOR below), and why their languages are what they are:
 * - `.prompt` is language `dotprompt`, not `prompt`: VS Code already uses the id `prompt` for
 *   Copilot's `*.prompt.md` files, and sharing it would put our grammar and server on those.
 * - `.prompty` is `prompty`, the id Microsoft's Prompty extension uses too, so the two agree.
 * - `*.context.yaml` stays `yaml` and is selected by file name: the Red Hat YAML extension then
 *   validates, completes and documents it with the contributed JSON Schema (`yamlValidation`),
 *   which it would not do for a language of ours; the server adds lenses, hovers, diagnostics and
 *   completion (key completion is left to the YAML extension when it is installed).
 * - `*.fixture.yaml|yml` is `contextlens-fixture`, a YAML grammar that also highlights envelopes
 *   and role markers inside values (no schema to lose); `*.fixture.json` stays `json`.
 */
export const TEMPLATE_SELECTOR = [
  { scheme: 'file', language: 'dotprompt' },
  { scheme: 'file', language: 'prompty' },
  { scheme: 'file', language: 'contextlens-fixture' },
  { scheme: 'file', pattern: '**/*.context.{yaml,yml}' },
  { scheme: 'file', pattern: '**/*.fixture.{yaml,yml,json}' },
  // Plain prompt files (src/core/language/plain): Markdown and text under a prompts/ folder, Jinja2 and Mustache anywhere.
  { scheme: 'file', pattern: '**/prompts/**/*.{md,txt}' },
  { scheme: 'file', pattern: '**/*.{j2,jinja,jinja2,mustache}' },
  // BAML files (src/core/language/baml), by file name: BAML's own extension owns the language id.
  { scheme: 'file', pattern: '**/*.baml' },
];

/** The user's `contextLens.plainPrompts.files`: more Markdown and text files that are prompts (read when asked). */
export function userPromptSelector(): Array<{ scheme: string; pattern: string }> {
  const promptFiles = vscode.workspace.getConfiguration('contextLens').get<unknown>('plainPrompts.files');
  return Array.isArray(promptFiles) ? promptFiles.filter((g): g is string => typeof g === 'string' && g.trim() !== '').map((pattern) => ({ scheme: 'file', pattern })) : [];
}

export const DOCUMENT_SELECTOR = [
  ...TEMPLATE_SELECTOR,
  // Coding agents' instruction, rule and prompt files (docs/agents.md): Markdown that other
  // extensions own, selected by file name so the server adds lenses and diagnostics beside them.
  { scheme: 'file', pattern: '**/{AGENTS,CLAUDE,CLAUDE.local,GEMINI}.md' },
  { scheme: 'file', pattern: '**/*.{instructions,prompt}.md' },
  { scheme: 'file', pattern: '**/.github/copilot-instructions.md' },
  { scheme: 'file', pattern: '**/*.mdc' },
  { scheme: 'file', pattern: '**/.cursorrules' },
];

/**
 * Creates the client. The client library (most of the extension bundle) is required here, not at
 * the top of the module, so loading the extension and `activate()` stay short; the bundler keeps
 * the library's module body lazy until this first call.
 */
export function createClient(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): LanguageClient {
  const { LanguageClient, TransportKind } = require('vscode-languageclient/node') as typeof import('vscode-languageclient/node');
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.stdio },
    debug: { module, transport: TransportKind.stdio, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const initializationOptions: InitializationOptions = {
    extensionPath: context.extensionPath,
    yamlLanguageServer: vscode.extensions.getExtension('redhat.vscode-yaml') !== undefined,
  };
  // The Markdown and text files the user's `contextLens.plainPrompts.files` makes prompts (read at start).
  const extra = userPromptSelector();
  const clientOptions: LanguageClientOptions = {
    documentSelector: [...DOCUMENT_SELECTOR, ...extra],
    initializationOptions,
    // The server pulls `contextLens.*` with workspace/configuration; this makes the client tell it
    // when the section changes.
    synchronize: { configurationSection: 'contextLens' },
    outputChannel: output,
  };
  // The id `contextLens` makes the client read `contextLens.trace.server`.
  return new LanguageClient('contextLens', 'Context Lens', serverOptions, clientOptions);
}
