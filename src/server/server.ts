/**
 * The language server's wiring: document sync, settings, the analysis service and every LSP
 * feature handler, plus Context Lens's custom requests (src/protocol/lsp.ts). Features only read
 * the analysis cache; nothing here parses or counts.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  LSPErrorCodes,
  ResponseError,
  TextDocumentSyncKind,
} from 'vscode-languageserver';
import type {
  CancellationToken,
  CodeAction,
  CodeLens,
  CompletionItem,
  Connection,
  DocumentSymbol,
  Hover,
  InitializeParams,
  InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Analysis, AnalyzeOptions, TemplateAnalysis } from '../core/analyze';
import { analyzeFile, classifyFile, forgetParsed, templateGlobs } from '../core/analyze';
import { configureLanguages } from '../core/language';
import type { Finding, Span } from '../core/types';
import type { InitializationOptions, ModelsResult, ServerSettings, StatusParams } from '../protocol/lsp';
import {
  AssembleRequest,
  BudgetEditRequest,
  DEFAULT_SERVER_SETTINGS,
  FixturesRequest,
  ModelsRequest,
  PreviewRequest,
  SelectFixtureRequest,
  SelectModelRequest,
  WhatLoadsRequest,
  StatusNotification,
} from '../protocol/lsp';
import type { EntryView } from './analysisService';
import { AnalysisService, dependenciesOf } from './analysisService';
import { actionsFor } from './codeActions';
import { configLenses, fixtureLenses, templateLenses } from './codeLens';
import { agentLenses, whatLoadsReply } from './agents';
import { configCompletions, fixtureCompletions, templateCompletions } from './completion';
import { DiagnosticsPublisher } from './diagnostics';
import { equation, requestEquation, requestTotals } from './format';
import { configHover, fixtureHover, templateHover } from './hover';
import { lightAnalysis } from './light';
import { collectIfGrown } from './memory';
import { modelChoices, tokenizerNames } from './models';
import { installModelFiles } from '../node/modelFiles';
import { assembleReply, previewReply } from './preview';
import { budgetEditReply } from './variant';
import { configSymbols, fixtureSymbols, templateSymbols } from './symbols';
import { TextView, TextViews } from './textMap';
import { UriMap, toPosix, uriToPath } from './uri';
import { WorkspaceHost } from './workspaceHost';

const DEFAULT_DEBOUNCE_MS = 75;

/** Files the client is asked to watch: templates, configs, fixtures and what `{ file: }` usually names. */
const WATCH_GLOB = '**/*.{prompt,prompty,yaml,yml,json,md,markdown,txt,j2,jinja,jinja2,mustache,toml}';

function cancelled(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, 'request cancelled');
}

function mergeSettings(base: ServerSettings, raw: unknown): ServerSettings {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ServerSettings> & Record<string, unknown>;
  const rules: ServerSettings['rules'] = {};
  if (r.rules && typeof r.rules === 'object') {
    for (const [k, v] of Object.entries(r.rules)) if (typeof v === 'string' && ['off', 'error', 'warning', 'info', 'hint'].includes(v)) rules[k] = v as ServerSettings['rules'][string];
  }
  const maxFileSize = typeof r.maxFileSize === 'number' && r.maxFileSize > 0 ? r.maxFileSize : base.maxFileSize;
  const names = (v: unknown): string[] => (Array.isArray(v) ? [...new Set(v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim()))].slice(0, 512) : []);
  const dp = (r.dotprompt && typeof r.dotprompt === 'object' ? r.dotprompt : {}) as Record<string, unknown>;
  const dotprompt = { helpers: names(dp.helpers), partials: names(dp.partials) };
  const pp = (r.plainPrompts && typeof r.plainPrompts === 'object' ? r.plainPrompts : {}) as Record<string, unknown>;
  const promptFiles = names(pp.files);
  const loaderIds = ['prompty-0.1', 'prompty-2', 'promptflow', 'azure-ai-inference', 'typescript', 'dotnet'] as const;
  const pl = (r.prompty && typeof r.prompty === 'object' ? (r.prompty as Record<string, unknown>).loaders : undefined) ?? {};
  const promptyLoaders: NonNullable<ServerSettings['promptyLoaders']> = {};
  if (pl && typeof pl === 'object') {
    for (const [glob, loader] of Object.entries(pl).slice(0, 512)) if (glob.trim() && (loaderIds as readonly unknown[]).includes(loader)) promptyLoaders[glob.trim()] = loader as (typeof loaderIds)[number];
  }
  return {
    ...(Object.keys(promptyLoaders).length ? { promptyLoaders } : {}),
    ...(dotprompt.helpers.length || dotprompt.partials.length ? { dotprompt } : {}),
    ...(promptFiles.length ? { plainPrompts: { files: promptFiles } } : {}),
    defaultModel: typeof r.defaultModel === 'string' && r.defaultModel.trim() ? r.defaultModel.trim() : base.defaultModel,
    rules: r.rules ? rules : base.rules,
    codeLens: { enabled: typeof r.codeLens?.enabled === 'boolean' ? r.codeLens.enabled : base.codeLens.enabled },
    fixture: { autoSelect: typeof r.fixture?.autoSelect === 'boolean' ? r.fixture.autoSelect : base.fixture.autoSelect },
    maxFileSize,
  };
}

export function startServer(connection: Connection): void {
  const host = new WorkspaceHost();
  const uris = new UriMap();
  const docs = new Map<string, TextDocument>();
  let settings: ServerSettings = { ...DEFAULT_SERVER_SETTINGS };
  let rulesDocUri: string | undefined;
  let yamlLanguageServer = false;
  const caps = { configuration: false, codeLensRefresh: false, documentChanges: false, watchers: false };
  /** The fixture the user picked per template path. */
  const selectedFixture = new Map<string, string>();
  /** The model the user picked for the session. */
  let selectedModel: string | undefined;

  const log = (message: string): void => connection.console.log(message);

  function optionsFor(p: string): AnalyzeOptions {
    // `autoFixture` asks the core for no fixture unless one is chosen (fixture.autoSelect: false).
    const opts: AnalyzeOptions & { autoFixture?: boolean } = {
      severities: settings.rules,
      maxFileSize: settings.maxFileSize,
    };
    if (selectedModel) opts.model = selectedModel;
    if (settings.defaultModel) opts.defaultModel = settings.defaultModel;
    if (settings.dotprompt) opts.codeRegistered = settings.dotprompt;
    if (settings.promptyLoaders) opts.promptyLoaders = settings.promptyLoaders;
    const fixture = selectedFixture.get(p);
    if (fixture) opts.fixture = fixture;
    else if (!settings.fixture.autoSelect) opts.autoFixture = false;
    return opts;
  }

  const service = new AnalysisService({
    host,
    debounceMs: DEFAULT_DEBOUNCE_MS,
    optionsFor,
    log,
    analyze: (h, p, o) => {
      const kind = classifyFile(p);
      const bytes = h.size(p);
      if (kind && bytes !== undefined && bytes > settings.maxFileSize) return lightAnalysis(p, kind, bytes, settings.maxFileSize);
      return analyzeFile(h, p, o);
    },
  });

  const resolvePath = (p: string): string => {
    if (path.posix.isAbsolute(p) || /^[A-Za-z]:\//.test(p)) return p;
    const root = host.roots[0] ?? process.cwd();
    return toPosix(path.resolve(root, p));
  };

  const views = new TextViews();
  const viewOfPath = (p: string): TextView | undefined => {
    const text = host.readFull(p);
    return text === undefined ? undefined : views.of(p, text);
  };

  const publisher = new DiagnosticsPublisher(
    {
      viewOf: viewOfPath,
      uriOf: (p) => uris.uriOf(p),
      get rulesDocUri() {
        return rulesDocUri;
      },
    },
    (t) => void connection.sendDiagnostics({ uri: t.uri, version: t.version, diagnostics: t.diagnostics }),
    (p) => {
      const uri = service.uriOfPath(p);
      return uri ? service.document(uri)?.version : undefined;
    },
    // Scan sources (closed files) speak next to each other, never next to an open file's own
    // analysis, which is always newer.
    (source, own) => (source.startsWith('scan:') ? !own.startsWith('scan:') : !service.isFresh(source)),
  );

  // Lens refreshes are coalesced: one request after a burst of analyses.
  let refreshQueued = false;
  function queueLensRefresh(): void {
    if (!caps.codeLensRefresh || !settings.codeLens.enabled || refreshQueued) return;
    refreshQueued = true;
    setImmediate(() => {
      refreshQueued = false;
      connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
    });
  }

  service.onAnalyzed((entry, doc) => {
    if (entry.ms > 250) log(`analysis of ${doc.path} (version ${doc.version}) took ${Math.round(entry.ms)} ms`);
    if (!entry.error || entry.analysis === undefined) {
      // The entry's view of the document is the one its diagnostics are placed in (one line index per version).
      views.seed(doc.path, entry.view);
      publisher.setFindings(doc.uri, doc.path, entry.error ? [] : (entry.analysis?.findings ?? []), resolvePath);
      // The open file's own analysis now speaks for it: retire what the scan said from it.
      if (scanned.delete(doc.path)) publisher.removeSource(`scan:${doc.path}`, doc.path);
    }
    const status = statusOf(entry.analysis, doc.uri, doc.version);
    if (status) void connection.sendNotification(StatusNotification.type, status);
    queueLensRefresh();
  });

  // -------------------------------------------------------------------------
  // Workspace scan: diagnostics for files that are not open, so that opening a folder shows its
  // problems in the Problems panel (as `ctxlens check` would). Each closed file is analysed as its
  // own source `scan:<path>`; once the file is open its own analysis takes over (the publisher
  // hides a pending source's findings next to the file's own). One file per event-loop turn, so
  // requests are answered in between; a bounded number of files.
  // -------------------------------------------------------------------------

  const MAX_SCANNED_FILES = 2_000;
  /** The first scan starts this long after the client is initialised (ms). */
  const INITIAL_SCAN_DELAY_MS = 1_000;
  /** Longest the scan waits for open documents' analyses before its next file (ms). */
  const SCAN_YIELD_MS = 2_000;
  const scanned = new Set<string>();
  let scanTimer: NodeJS.Timeout | undefined;
  let scanRun = 0;

  function scheduleScan(delayMs = 300): void {
    if (scanTimer) clearTimeout(scanTimer);
    scanTimer = setTimeout(() => {
      scanTimer = undefined;
      void scanWorkspace();
    }, delayMs);
  }

  async function scanWorkspace(): Promise<void> {
    const run = ++scanRun;
    const files = new Set<string>();
    for (const root of host.roots) {
      for (const pattern of [...templateGlobs(), '**/*.context.yaml', '**/*.context.yml', '**/*.fixture.yaml', '**/*.fixture.yml', '**/*.fixture.json']) {
        for (const f of host.glob(root, pattern)) if (files.size < MAX_SCANNED_FILES) files.add(f);
      }
    }
    for (const gone of [...scanned].filter((f) => !files.has(f))) {
      scanned.delete(gone);
      publisher.removeSource(`scan:${gone}`, gone);
    }
    for (const f of [...files].sort()) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      // Open documents go first: the scan waits while one of them has an analysis pending.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SCAN_YIELD_MS);
        void service.idle().then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (run !== scanRun) return; // a newer scan started
      const uri = uris.uriOf(f);
      if (docs.has(uri)) continue; // open: its own analysis speaks for it
      const bytes = host.size(f);
      const kind = classifyFile(f);
      let findings: readonly Finding[] = [];
      let read: Iterable<string> = [f];
      try {
        const a = kind && bytes !== undefined && bytes > settings.maxFileSize ? lightAnalysis(f, kind, bytes, settings.maxFileSize) : analyzeFile(host, f, optionsFor(f));
        findings = a?.findings ?? [];
        if (a) read = [f, ...dependenciesOf(a)];
      } catch (e) {
        log(`workspace scan of ${f} failed: ${(e as Error).message}`);
      }
      scanned.add(f);
      publisher.setFindings(`scan:${f}`, f, findings, resolvePath);
      // What the scan read for a closed file is let go unless an open document needs it: the
      // texts and parses of a folder of 2 MB fixtures would otherwise all stay in memory.
      const done = [...read].filter((p) => !service.needs(p));
      host.forget(done);
      forgetParsed(done);
      collectIfGrown();
    }
  }

  // -------------------------------------------------------------------------
  // Lifecycle and settings
  // -------------------------------------------------------------------------

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const init = (params.initializationOptions ?? {}) as InitializationOptions;
    const folders = params.workspaceFolders?.map((f) => uriToPath(f.uri)).filter((p): p is string => !!p) ?? [];
    if (folders.length === 0 && params.rootUri) {
      const root = uriToPath(params.rootUri);
      if (root) folders.push(root);
    }
    host.setRoots(folders);
    installModelFiles(folders, (line) => log(`model file: ${line}`));
    if (typeof init.debounceMs === 'number') service.debounceMs = init.debounceMs;
    settings = mergeSettings(DEFAULT_SERVER_SETTINGS, init.settings);
    host.maxFileSize = settings.maxFileSize;
    configureLanguages({ ...(settings.plainPrompts ? { promptFiles: settings.plainPrompts.files } : {}) });
    yamlLanguageServer = init.yamlLanguageServer === true;
    // The rule documentation (docs/rules.md) ships in the extension and in the npm package; without
    // an extension path (a test client, another editor) the page next to the bundled server is used.
    const rulesDoc = init.extensionPath ? path.join(init.extensionPath, 'docs', 'rules.md') : path.resolve(__dirname, '..', 'docs', 'rules.md');
    rulesDocUri = pathToFileURL(rulesDoc).href;
    const c = params.capabilities;
    caps.configuration = c.workspace?.configuration === true;
    caps.codeLensRefresh = c.workspace?.codeLens?.refreshSupport === true;
    caps.documentChanges = c.workspace?.workspaceEdit?.documentChanges === true;
    caps.watchers = c.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        codeLensProvider: { resolveProvider: false },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix], resolveProvider: false },
        completionProvider: { triggerCharacters: ['{', ' ', ':', '%'], resolveProvider: false },
        documentSymbolProvider: true,
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'context-lens', version: '0.1.0' },
    };
  });

  async function pullSettings(): Promise<void> {
    if (!caps.configuration) return;
    try {
      const raw: unknown = await connection.workspace.getConfiguration('contextLens');
      const next = mergeSettings(DEFAULT_SERVER_SETTINGS, raw);
      const changed = JSON.stringify(next) !== JSON.stringify(settings);
      settings = next;
      host.maxFileSize = settings.maxFileSize;
      configureLanguages({ ...(settings.plainPrompts ? { promptFiles: settings.plainPrompts.files } : {}) });
      if (changed) {
        service.invalidateAll();
        if (scanRun > 0) scheduleScan();
      }
    } catch (e) {
      log(`reading settings failed: ${String(e)}`);
    }
  }

  connection.onInitialized(() => {
    // A moment after start: the documents the editor restores open first, and the scan does not
    // let go of what their analyses are about to read.
    void pullSettings().then(() => scheduleScan(INITIAL_SCAN_DELAY_MS));
    if (caps.watchers) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: WATCH_GLOB }] }).catch(() => undefined);
    }
    if (connection.workspace) {
      try {
        connection.workspace.onDidChangeWorkspaceFolders((e) => {
          const current = new Set(host.roots);
          for (const f of e.removed) {
            const p = uriToPath(f.uri);
            if (p) current.delete(p);
          }
          for (const f of e.added) {
            const p = uriToPath(f.uri);
            if (p) current.add(p);
          }
          host.setRoots([...current]);
          service.invalidateAll();
        });
      } catch {
        // The client did not announce workspace folder support; nothing to follow.
      }
    }
  });

  connection.onDidChangeConfiguration((change) => {
    if (caps.configuration) {
      void pullSettings();
      return;
    }
    const raw = (change.settings as { contextLens?: unknown } | undefined)?.contextLens;
    if (raw) {
      settings = mergeSettings(settings, raw);
      host.maxFileSize = settings.maxFileSize;
      configureLanguages({ ...(settings.plainPrompts ? { promptFiles: settings.plainPrompts.files } : {}) });
      service.invalidateAll();
      scheduleScan();
    }
  });

  // -------------------------------------------------------------------------
  // Documents
  // -------------------------------------------------------------------------

  connection.onDidOpenTextDocument(({ textDocument: td }) => {
    const p = uriToPath(td.uri);
    if (!p || !classifyFile(p)) return;
    const doc = TextDocument.create(td.uri, td.languageId, td.version, td.text);
    docs.set(td.uri, doc);
    uris.remember(td.uri, p);
    host.setOverlay(p, td.text, td.version);
    service.open({ uri: td.uri, path: p, version: td.version, text: td.text });
  });

  connection.onDidChangeTextDocument(({ textDocument: td, contentChanges }) => {
    const doc = docs.get(td.uri);
    const p = uriToPath(td.uri);
    if (!doc || !p) return;
    const next = TextDocument.update(doc, contentChanges, td.version);
    docs.set(td.uri, next);
    const text = next.getText();
    host.setOverlay(p, text, td.version);
    service.change({ uri: td.uri, path: p, version: td.version, text });
  });

  connection.onDidCloseTextDocument(({ textDocument: td }) => {
    const p = uriToPath(td.uri);
    if (!docs.delete(td.uri) || !p) return;
    host.removeOverlay(p);
    uris.forget(p);
    service.close(td.uri);
    publisher.removeSource(td.uri, p);
    // The closed file (and what it touched) goes back to the scan's care.
    scheduleScan();
  });

  connection.onDidChangeWatchedFiles(({ changes }) => {
    for (const c of changes) {
      const p = uriToPath(c.uri);
      if (!p) continue;
      const createdOrDeleted = c.type !== FileChangeType.Changed;
      host.invalidate(p, createdOrDeleted);
      // An open buffer wins over the disk: its saves change nothing the analyses read.
      if (host.hasOverlay(p)) continue;
      service.fileChanged(p, createdOrDeleted && classifyFile(p) !== undefined);
    }
    if (changes.length) scheduleScan();
  });

  // -------------------------------------------------------------------------
  // Reading the cache
  // -------------------------------------------------------------------------

  /** The last analysis (mapped onto the current text when an edit is pending), or the first one. */
  async function latest(uri: string, token: CancellationToken): Promise<EntryView | undefined> {
    return service.view(uri) ?? (await service.fresh(uri, token));
  }

  function mapper(view: EntryView): { toOld(offset: number): number; range(span: Span): ReturnType<TextView['range']> } {
    return {
      toOld: (o) => (view.delta ? view.delta.toOld(o) : o),
      range: (s) => view.current.range(view.delta ? view.delta.spanToNew(s) : s),
    };
  }

  connection.onCodeLens(async ({ textDocument }, token): Promise<CodeLens[] | ResponseError<void>> => {
    if (!settings.codeLens.enabled) return [];
    const view = await latest(textDocument.uri, token);
    if (token.isCancellationRequested) return cancelled();
    const a = view?.entry.analysis;
    if (!view || !a) return [];
    const ctx = { uri: textDocument.uri, uriOf: (p: string) => uris.uriOf(p) };
    // Instruction files: their own lenses (a prompt file keeps its request lenses before them).
    if (a.kind === 'template' && a.template.format === 'agent') return [...(/\.prompt\.md$/i.test(a.path) ? templateLenses(a, view, ctx) : []), ...agentLenses(a, view, host, selectedModel ?? settings.defaultModel, textDocument.uri)];
    if (a.kind === 'template') return templateLenses(a, view, ctx);
    if (a.kind === 'config') return configLenses(a, view, ctx);
    return fixtureLenses(a, view, ctx);
  });

  connection.onHover(async ({ textDocument, position }, token): Promise<Hover | null | ResponseError<void>> => {
    const view = await latest(textDocument.uri, token);
    if (token.isCancellationRequested) return cancelled();
    const a = view?.entry.analysis;
    if (!view || !a) return null;
    const m = mapper(view);
    const offset = m.toOld(view.current.offsetAt(position));
    const h = a.kind === 'template' ? templateHover(a, offset, m.range) : a.kind === 'config' ? configHover(a, offset, m.range) : fixtureHover(a, offset, m.range);
    return h ?? null;
  });

  connection.onCodeAction(async ({ textDocument, range, context }, token): Promise<CodeAction[] | ResponseError<void>> => {
    const p = uriToPath(textDocument.uri);
    if (!p) return [];
    // Edits must apply to the text the user has now: wait for the analysis of this version.
    const view = await service.fresh(textDocument.uri, token);
    if (token.isCancellationRequested) return cancelled();
    if (!view) return [];
    const ctx = {
      uriOf: (x: string) => uris.uriOf(x),
      versionOf: (x: string) => {
        const u = service.uriOfPath(x);
        return u ? service.document(u)?.version : undefined;
      },
      textOf: (x: string) => host.readFull(x),
      documentChanges: caps.documentChanges,
    };
    const only = context.only;
    if (only && !only.some((k) => k === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(k + '.') || k === '')) return [];
    const out: CodeAction[] = [];
    const titles = new Set<string>();
    for (const { source, finding, diagnostic } of publisher.findingsFor(p)) {
      if (!overlapsRange(diagnostic.range, range)) continue;
      // Only analyses of the current texts may propose edits.
      if (!service.isFresh(source)) continue;
      const a = service.view(source)?.entry.analysis;
      if (!a) continue;
      const clientDiag = context.diagnostics.find((d) => d.code === diagnostic.code && sameRange(d.range, diagnostic.range)) ?? diagnostic;
      for (const action of actionsFor(finding, clientDiag, a, ctx)) {
        if (titles.has(action.title)) continue;
        titles.add(action.title);
        out.push(action);
      }
    }
    return out;
  });

  connection.onCompletion(async ({ textDocument, position }, token): Promise<CompletionItem[] | ResponseError<void>> => {
    const doc = docs.get(textDocument.uri);
    const p = uriToPath(textDocument.uri);
    if (!doc || !p) return [];
    const text = doc.getText();
    const offset = doc.offsetAt(position);
    const kind = classifyFile(p);
    if (kind === 'config') {
      const view = service.view(textDocument.uri);
      return configCompletions(text, offset, { models: modelChoices(view?.entry.analysis).map((m) => m.name), tokenizers: tokenizerNames() }, !yamlLanguageServer);
    }
    const view = await latest(textDocument.uri, token);
    if (token.isCancellationRequested) return cancelled();
    const a = view?.entry.analysis;
    if (!a) return [];
    if (a.kind === 'template') return templateCompletions(a, text, offset);
    return fixtureCompletions(a, text, offset);
  });

  connection.onDocumentSymbol(async ({ textDocument }, token): Promise<DocumentSymbol[] | ResponseError<void>> => {
    const view = await service.fresh(textDocument.uri, token);
    if (token.isCancellationRequested) return cancelled();
    const a = view?.entry.analysis;
    if (!view || !a) return [];
    if (a.kind === 'template') return templateSymbols(a, view.entry.view);
    if (a.kind === 'config') return configSymbols(a, view.entry.view);
    return fixtureSymbols(a, view.entry.view);
  });

  // -------------------------------------------------------------------------
  // Custom requests
  // -------------------------------------------------------------------------

  /** The template analysis behind a document (itself, a fixture's template, a config's first template). */
  async function templateFor(
    uri: string,
    choice: { fixture?: string; model?: string },
    token: CancellationToken,
  ): Promise<{ analysis: TemplateAnalysis; uri: string; version: number } | undefined> {
    const p = uriToPath(uri);
    if (!p) return undefined;
    const analyse = async (q: string): Promise<{ a: Analysis | undefined; version: number }> => {
      const open = service.uriOfPath(q);
      if (open) {
        const v = await service.fresh(open, token);
        return { a: v?.entry.analysis, version: v?.entry.version ?? 0 };
      }
      // Not open (a restored preview, a config's template): analysed once, not cached.
      return { a: analyzeFile(host, q, optionsFor(q)), version: 0 };
    };
    let { a, version } = await analyse(p);
    let templateUri = uri;
    if (a?.kind === 'fixture') {
      if (!a.template) return undefined;
      templateUri = uris.uriOf(a.template.path);
      const open = service.uriOfPath(a.template.path);
      version = open ? (service.document(open)?.version ?? 0) : 0;
      a = a.template;
    } else if (a?.kind === 'config') {
      const t = a.templates[0];
      if (!t) return undefined;
      templateUri = uris.uriOf(t);
      ({ a, version } = await analyse(t));
    }
    if (!a || a.kind !== 'template') return undefined;
    const wantsFixture = choice.fixture && choice.fixture !== a.fixture?.path && choice.fixture !== a.fixture?.name;
    const wantsModel = choice.model && choice.model !== a.model?.name;
    if (wantsFixture || wantsModel) {
      const opts = optionsFor(a.path);
      if (choice.fixture) opts.fixture = choice.fixture;
      if (choice.model) opts.model = choice.model;
      const again = analyzeFile(host, a.path, opts);
      if (again?.kind === 'template') a = again;
    }
    return { analysis: a, uri: templateUri, version };
  }

  connection.onRequest(PreviewRequest.type, async (params, token) => {
    const t = await templateFor(params.uri, params, token);
    if (token.isCancellationRequested) return cancelled();
    if (!t) return { empty: 'Open a .prompt or .prompty template (or a fixture or config bound to one) to preview its request.' };
    // What-if budgets and comparisons apply to the template they were made for only.
    const variant = params.variant && params.variant.templateUri === t.uri ? params.variant : undefined;
    return previewReply({
      analysis: t.analysis,
      uri: t.uri,
      version: t.version,
      models: modelChoices(t.analysis).map((m) => m.name),
      readFile: (p) => host.readFull(p),
      ...(variant ? { variant: { value: variant, context: { host, roots: host.roots, sessionModel: selectedModel !== undefined || settings.defaultModel !== undefined } } } : {}),
    });
  });

  connection.onRequest(BudgetEditRequest.type, async ({ uri, budgets }, token) => {
    const t = await templateFor(uri, {}, token);
    if (token.isCancellationRequested) return cancelled();
    if (!t) return { error: 'no template to write budgets for' };
    return budgetEditReply(t.analysis, budgets, {
      textOf: (p) => host.readFull(p),
      uriOf: (p) => uris.uriOf(p),
      versionOf: (p) => {
        const u = service.uriOfPath(p);
        return u ? service.document(u)?.version : undefined;
      },
    });
  });

  connection.onRequest(AssembleRequest.type, async (params, token) => {
    const t = await templateFor(params.uri, params, token);
    if (token.isCancellationRequested) return cancelled();
    return t ? assembleReply(t.analysis, params.format) : null;
  });

  connection.onRequest(FixturesRequest.type, async ({ uri }, token) => {
    const t = await templateFor(uri, {}, token);
    if (token.isCancellationRequested) return cancelled();
    if (!t) return { fixtures: [], selected: false };
    const a = t.analysis;
    return {
      fixtures: a.fixtures.map((f) => ({ path: f.path, name: f.name, uri: uris.uriOf(f.path) })),
      active: a.fixture?.path,
      selected: selectedFixture.has(a.path),
    };
  });

  connection.onRequest(ModelsRequest.type, async ({ uri }, token): Promise<ModelsResult | ResponseError<void>> => {
    const view = uri ? await latest(uri, token) : undefined;
    if (token.isCancellationRequested) return cancelled();
    const a = view?.entry.analysis;
    const active = a?.kind === 'template' ? a.model?.name : a?.kind === 'fixture' ? a.template?.model?.name : a?.budget?.model;
    return { models: modelChoices(a), selected: selectedModel, active };
  });

  connection.onRequest(SelectFixtureRequest.type, async ({ uri, fixture }, token) => {
    const p = uriToPath(uri);
    if (!p) return;
    let templatePath = p;
    const kind = classifyFile(p);
    if (kind !== 'template') {
      const t = await templateFor(uri, {}, token);
      if (!t) return;
      templatePath = t.analysis.path;
      // Choosing from a fixture file with no fixture named means "this fixture".
      if (fixture === null && kind === 'fixture') fixture = p;
    }
    if (fixture) selectedFixture.set(templatePath, fixture);
    else selectedFixture.delete(templatePath);
    service.invalidatePaths([templatePath]);
  });

  connection.onRequest(WhatLoadsRequest.type, ({ uri, agent }) => {
    const p = uriToPath(uri);
    if (!p) return null;
    return whatLoadsReply(host, p, { model: selectedModel ?? settings.defaultModel, ...(agent ? { agent } : {}), maxFileSize: settings.maxFileSize });
  });

  connection.onRequest(SelectModelRequest.type, ({ model }) => {
    selectedModel = model ?? undefined;
    service.invalidateAll();
  });

  // -------------------------------------------------------------------------
  // Status
  // -------------------------------------------------------------------------

  function statusOf(a: Analysis | undefined, uri: string, version: number): StatusParams | undefined {
    if (!a) return undefined;
    if (a.kind === 'config') {
      const b = a.budget;
      return {
        uri,
        version,
        kind: 'config',
        model: b?.model,
        tokenizer: a.tokenizer.name,
        exact: a.tokenizer.exact,
        total: b?.total,
        window: b?.window,
        fits: b?.fits,
        detail: b ? equation(b) : 'config has no budget',
      };
    }
    const t = a.kind === 'template' ? a : a.template;
    if (!t) return { uri, version, kind: a.kind, tokenizer: 'none', exact: false, detail: 'fixture is not bound to a template' };
    const totals = requestTotals(t);
    return {
      uri,
      version,
      kind: a.kind,
      model: t.model?.name,
      tokenizer: t.tokenizer.name,
      exact: t.tokenizer.exact,
      total: totals?.total,
      window: totals?.window,
      fits: totals?.fits,
      fixture: t.fixture?.name,
      detail: totals ? requestEquation(totals, t.tokenizer.exact) : 'no context config',
    };
  }
}

function overlapsRange(a: { start: { line: number; character: number }; end: { line: number; character: number } }, b: typeof a): boolean {
  const before = (x: typeof a.start, y: typeof a.start): boolean => x.line < y.line || (x.line === y.line && x.character <= y.character);
  return before(a.start, b.end) && before(b.start, a.end);
}

function sameRange(a: { start: { line: number; character: number }; end: { line: number; character: number } }, b: typeof a): boolean {
  return a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
}

