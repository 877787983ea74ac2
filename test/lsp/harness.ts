/**
 * A small LSP client for the test tier and the LSP benchmark: starts the built server
 * (`node dist/server.js --stdio`) as a separate process and talks to it the way an editor does,
 * over vscode-languageserver-protocol's stream reader/writer. Waits are on notifications and
 * responses with an upper bound, never on sleeps. Everything the server writes to stdout is
 * recorded, so a test can check that it carries LSP frames only.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import {
  CancellationTokenSource,
  CodeLensRefreshRequest,
  ConfigurationRequest,
  DidChangeTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import type {
  ClientCapabilities,
  InitializeResult,
  ProtocolConnection,
  PublishDiagnosticsParams,
  TextDocumentContentChangeEvent,
} from 'vscode-languageserver-protocol/node';
import type { InitializationOptions, StatusParams } from '../../src/protocol/lsp';
import { StatusNotification } from '../../src/protocol/lsp';

/** The repository root: found upwards from this file, which also runs bundled from .cache/ (bench). */
function findRepo(): string {
  for (const start of [__dirname, process.cwd()]) {
    let dir = start;
    for (let i = 0; i < 8; i++) {
      if (existsSync(path.join(dir, 'esbuild.js')) && existsSync(path.join(dir, 'package.json'))) return dir;
      dir = path.dirname(dir);
    }
  }
  return process.cwd();
}

export const REPO = findRepo();
export const SERVER = path.join(REPO, 'dist', 'server.js');

/** Builds dist/ when the server bundle is missing (npm test builds first; a lone vitest run may not). */
export function ensureBuilt(): void {
  if (existsSync(SERVER)) return;
  const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

/** A fresh copy of a workspace folder in the temp dir (tests edit files in it). */
export function copyWorkspace(from = path.join(REPO, 'test', 'lsp', 'workspace')): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-lsp-'));
  cpSync(from, dir, { recursive: true });
  return dir;
}

export function removeWorkspace(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function uriOf(p: string): string {
  return pathToFileURL(p).href;
}

/** Waits for a condition re-checked on every event; rejects after `ms` with `what` in the message. */
class Waiters {
  private list: Array<{ check: () => boolean; resolve: () => void }> = [];
  poke(): void {
    this.list = this.list.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }
  until(check: () => boolean, what: string, ms: number): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.list = this.list.filter((w) => w.check !== check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      this.list.push({
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}

export interface StartOptions {
  workspace: string;
  initializationOptions?: InitializationOptions;
  capabilities?: ClientCapabilities;
}

export const DEFAULT_CAPABILITIES: ClientCapabilities = {
  workspace: { codeLens: { refreshSupport: true }, workspaceEdit: { documentChanges: true }, workspaceFolders: true },
  textDocument: {
    publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true, dataSupport: true },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } }, isPreferredSupport: true },
    hover: { contentFormat: ['markdown', 'plaintext'] },
    codeLens: {},
    completion: { completionItem: { snippetSupport: false } },
    documentSymbol: { hierarchicalDocumentSymbolSupport: true },
  },
};

interface OpenDoc {
  uri: string;
  languageId: string;
  version: number;
  text: string;
}

/** One server process and its connection. */
export class LspSession {
  readonly diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  readonly statuses = new Map<string, StatusParams[]>();
  readonly logs: string[] = [];
  lensRefreshes = 0;
  readonly stdout: Buffer[] = [];
  readonly stderr: Buffer[] = [];
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** True once the process has exited and its stdio streams have ended: stdout is complete. */
  closed = false;
  initializeResult!: InitializeResult;
  private readonly waiters = new Waiters();

  private constructor(
    readonly proc: ChildProcess,
    readonly connection: ProtocolConnection,
  ) {}

  static async start(opts: StartOptions): Promise<LspSession> {
    ensureBuilt();
    const proc = spawn(process.execPath, [SERVER, '--stdio'], { cwd: opts.workspace, stdio: ['pipe', 'pipe', 'pipe'] });
    const tee = new PassThrough();
    const connection = createProtocolConnection(new StreamMessageReader(tee), new StreamMessageWriter(proc.stdin!));
    const s = new LspSession(proc, connection);
    proc.stdout!.on('data', (b: Buffer) => {
      s.stdout.push(b);
      tee.write(b);
    });
    proc.stderr!.on('data', (b: Buffer) => s.stderr.push(b));
    proc.on('exit', (code, signal) => {
      s.exited = { code, signal };
      s.waiters.poke();
    });
    proc.on('close', () => {
      s.closed = true;
      s.waiters.poke();
    });
    // A write to a dead server must fail the waiting test, not crash the runner.
    proc.stdin!.on('error', () => undefined);
    connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      const list = s.diagnostics.get(p.uri) ?? [];
      list.push(p);
      s.diagnostics.set(p.uri, list);
      s.waiters.poke();
    });
    connection.onNotification(StatusNotification.type, (p) => {
      const list = s.statuses.get(p.uri) ?? [];
      list.push(p);
      s.statuses.set(p.uri, list);
      s.waiters.poke();
    });
    connection.onNotification(LogMessageNotification.type, (p) => {
      s.logs.push(p.message);
    });
    connection.onRequest(CodeLensRefreshRequest.type, () => {
      s.lensRefreshes++;
      s.waiters.poke();
    });
    connection.onRequest(RegistrationRequest.type, () => undefined);
    connection.onRequest(ConfigurationRequest.type, (p) => p.items.map(() => null));
    connection.onError(() => undefined);
    connection.listen();
    s.initializeResult = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: uriOf(opts.workspace),
      workspaceFolders: [{ uri: uriOf(opts.workspace), name: path.basename(opts.workspace) }],
      capabilities: opts.capabilities ?? DEFAULT_CAPABILITIES,
      initializationOptions: { debounceMs: 20, ...opts.initializationOptions },
    });
    await connection.sendNotification(InitializedNotification.type, {});
    return s;
  }

  until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
    return this.waiters.until(() => check() || this.exited !== undefined, what, ms).then(() => {
      if (!check() && this.exited) throw new Error(`server exited (${JSON.stringify(this.exited)}) while waiting for ${what}: ${Buffer.concat(this.stderr).toString()}`);
    });
  }

  /** The next diagnostics published for `uri` after `after` earlier ones that satisfy `pred`. */
  async nextDiagnostics(uri: string, after: number, pred: (p: PublishDiagnosticsParams) => boolean = () => true, ms?: number): Promise<PublishDiagnosticsParams> {
    let found: PublishDiagnosticsParams | undefined;
    await this.until(() => {
      const list = this.diagnostics.get(uri) ?? [];
      found = list.slice(after).find(pred);
      return found !== undefined;
    }, `diagnostics for ${uri}`, ms);
    return found!;
  }

  diagnosticsCount(uri: string): number {
    return this.diagnostics.get(uri)?.length ?? 0;
  }

  latestDiagnostics(uri: string): PublishDiagnosticsParams | undefined {
    const list = this.diagnostics.get(uri);
    return list?.[list.length - 1];
  }

  async shutdown(): Promise<void> {
    if (this.exited) return;
    try {
      await Promise.race([this.connection.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 3000))]);
      await this.connection.sendNotification(ExitNotification.type);
    } catch {
      // The process is ended below either way.
    }
    await this.waiters.until(() => this.exited !== undefined, 'server exit', 5000).catch(() => this.proc.kill('SIGKILL'));
    await this.waiters.until(() => this.closed, 'server stdio closed', 5000).catch(() => undefined);
    this.connection.dispose();
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }
}

/**
 * The client side an editor keeps across server restarts: open documents with their versions.
 * When the server process dies unexpectedly it starts a new one and reopens the documents, as
 * vscode-languageclient does after a crash.
 */
export class LspClient {
  session!: LspSession;
  readonly docs = new Map<string, OpenDoc>();
  restarts = 0;
  private stopping = false;
  private restarting: Promise<void> | undefined;

  private constructor(readonly opts: StartOptions) {}

  static async start(opts: StartOptions): Promise<LspClient> {
    const c = new LspClient(opts);
    await c.spawn();
    return c;
  }

  private async spawn(): Promise<void> {
    this.session = await LspSession.start(this.opts);
    const mine = this.session;
    mine.proc.on('exit', () => {
      if (this.stopping || this.session !== mine) return;
      this.restarts++;
      this.restarting = this.spawn().then(() => this.reopen());
    });
  }

  private async reopen(): Promise<void> {
    for (const d of this.docs.values()) {
      await this.session.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { ...d } });
    }
  }

  /** Resolves once a restart that is under way has reopened every document. */
  async restarted(ms = 15_000): Promise<void> {
    const start = Date.now();
    while (!this.restarting) {
      if (Date.now() - start > ms) throw new Error('no restart happened');
      await new Promise((r) => setImmediate(r));
    }
    await this.restarting;
  }

  get connection(): ProtocolConnection {
    return this.session.connection;
  }

  async open(file: string, languageId = languageOf(file)): Promise<string> {
    const uri = uriOf(file);
    const doc: OpenDoc = { uri, languageId, version: 1, text: readFileSync(file, 'utf8') };
    this.docs.set(uri, doc);
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { ...doc } });
    return uri;
  }

  text(uri: string): string {
    return this.docs.get(uri)!.text;
  }

  version(uri: string): number {
    return this.docs.get(uri)!.version;
  }

  /** Replaces `from` (first occurrence) with `to` as an incremental change; returns the new version. */
  async replace(uri: string, from: string, to: string): Promise<number> {
    const doc = this.docs.get(uri)!;
    const at = doc.text.indexOf(from);
    if (at < 0) throw new Error(`'${from}' not in ${uri}`);
    return this.edit(uri, at, at + from.length, to);
  }

  async edit(uri: string, start: number, end: number, newText: string): Promise<number> {
    const doc = this.docs.get(uri)!;
    const change: TextDocumentContentChangeEvent = { range: { start: positionAt(doc.text, start), end: positionAt(doc.text, end) }, text: newText };
    doc.text = doc.text.slice(0, start) + newText + doc.text.slice(end);
    doc.version++;
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: doc.version }, contentChanges: [change] });
    return doc.version;
  }

  async close(uri: string): Promise<void> {
    this.docs.delete(uri);
    await this.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }

  async watchedFileChanged(file: string, type: 1 | 2 | 3): Promise<void> {
    await this.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uriOf(file), type }] });
  }

  cancellable(): CancellationTokenSource {
    return new CancellationTokenSource();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.session.shutdown();
  }
}

export function languageOf(file: string): string {
  if (file.endsWith('.prompt')) return 'dotprompt';
  if (file.endsWith('.prompty')) return 'prompty';
  if (/\.fixture\.json$/.test(file)) return 'json';
  if (/\.fixture\.ya?ml$/.test(file)) return 'contextlens-fixture';
  return 'yaml';
}

export function positionAt(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, character: offset - lineStart };
}

export function offsetAt(text: string, pos: { line: number; character: number }): number {
  let line = 0;
  let i = 0;
  while (line < pos.line && i < text.length) {
    if (text.charCodeAt(i) === 10) line++;
    i++;
  }
  return i + pos.character;
}

/** The position of the first occurrence of `needle` (plus `delta` characters) in `text`. */
export function positionOf(text: string, needle: string, delta = 0): { line: number; character: number } {
  const at = text.indexOf(needle);
  if (at < 0) throw new Error(`'${needle}' not found`);
  return positionAt(text, at + delta);
}

/**
 * Splits recorded stdout into LSP frames: every byte must belong to a `Content-Length` header
 * block followed by exactly that many bytes of a JSON-RPC 2.0 message. Returns the messages;
 * throws on anything else (a stray console.log would land here).
 */
export function parseFrames(chunks: Buffer[]): unknown[] {
  const buf = Buffer.concat(chunks);
  const out: unknown[] = [];
  let at = 0;
  while (at < buf.length) {
    const headerEnd = buf.indexOf('\r\n\r\n', at);
    if (headerEnd < 0) throw new Error(`stdout has bytes outside an LSP frame at ${at}: ${JSON.stringify(buf.subarray(at, at + 80).toString())}`);
    const header = buf.subarray(at, headerEnd).toString('ascii');
    const lines = header.split('\r\n');
    let length: number | undefined;
    for (const l of lines) {
      const m = /^([A-Za-z-]+): (.*)$/.exec(l);
      if (!m) throw new Error(`not an LSP header line: ${JSON.stringify(l)}`);
      if (m[1].toLowerCase() === 'content-length') length = Number(m[2]);
    }
    if (length === undefined || !Number.isInteger(length)) throw new Error(`frame without Content-Length: ${JSON.stringify(header)}`);
    const body = buf.subarray(headerEnd + 4, headerEnd + 4 + length);
    if (body.length !== length) throw new Error('truncated frame');
    const msg = JSON.parse(body.toString('utf8')) as { jsonrpc?: string };
    if (msg.jsonrpc !== '2.0') throw new Error(`not a JSON-RPC 2.0 message: ${body.toString('utf8').slice(0, 80)}`);
    out.push(msg);
    at = headerEnd + 4 + length;
  }
  return out;
}

/** Applies LSP text edits (non-overlapping, any order) to a text. */
export function applyEdits(text: string, edits: ReadonlyArray<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }>): string {
  const spans = edits
    .map((e) => ({ start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end), newText: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const e of spans) out = out.slice(0, e.start) + e.newText + out.slice(e.end);
  return out;
}

/** The edits a code action makes to one document (documentChanges or changes form). */
export function editsFor(action: { edit?: { documentChanges?: unknown[]; changes?: Record<string, unknown[]> } }, uri: string): Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }> {
  type Edit = { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string };
  const dc = action.edit?.documentChanges as Array<{ textDocument: { uri: string }; edits: Edit[] }> | undefined;
  if (dc) return dc.filter((d) => d.textDocument.uri === uri).flatMap((d) => d.edits);
  return (action.edit?.changes?.[uri] as Edit[] | undefined) ?? [];
}
