/**
 * The analysis cache and scheduler of the language server: one analysis per document version,
 * computed off the request path and read by every feature (diagnostics, lenses, hovers, actions).
 *
 * - Edits are coalesced: a document is analysed `debounceMs` after its last change. Opening a
 *   document analyses it at once.
 * - Work runs one file per macrotask (`setImmediate` between files), so a request for another file
 *   is answered between two analyses instead of after all of them; a document with a request
 *   waiting on it goes to the front of the queue.
 * - No analysis starts while edits are still arriving: the LSP connection handles one message per
 *   macrotask, so a burst of 2,000 edits used to alternate with analyses of each intermediate
 *   version (minutes of stale work, with hovers waiting behind it). The pump waits until a turn of
 *   the event loop passes without a change (or `MAX_SETTLE_MS` since it first waited), then
 *   analyses the latest text once.
 * - Stale work is dropped: a queued analysis of a document that changed again waits for the new
 *   debounce; a closed document is never analysed. `analyzeFile` is synchronous, so an analysis
 *   always describes the text that is current when it is published.
 * - A change to any file re-analyses the open documents whose last analysis read it
 *   (`Analysis.dependencies`); files created or deleted re-analyse everything open (a new fixture
 *   may match a config's globs).
 * - The last good analysis of a document is kept while a new one is pending, with the text it was
 *   made for, so features can map its positions onto the current text (see textMap.ts).
 */
import type { CancellationToken } from 'vscode-languageserver';
import type { Analysis, AnalyzeOptions } from '../core/analyze';
import { analyzeFile } from '../core/analyze';
import type { FileHost } from '../core/host';
import { TextDelta, TextView } from './textMap';

export interface OpenDocument {
  uri: string;
  path: string;
  version: number;
  text: string;
}

export interface AnalysisEntry {
  uri: string;
  path: string;
  /** Document version this entry answers for. */
  version: number;
  /** The text the analysis' offsets refer to (older than the document's when the last run failed). */
  view: TextView;
  analysis: Analysis | undefined;
  /** Increases with every analysis the service makes, across documents. */
  stamp: number;
  /** Milliseconds the analysis took. */
  ms: number;
  /** Set when the last attempt threw; the previous analysis is kept. */
  error?: string;
}

/** An entry seen from the document's current text. */
export interface EntryView {
  entry: AnalysisEntry;
  /** The document's current text. */
  current: TextView;
  /** Maps the entry's offsets onto the current text; undefined when they are the same text. */
  delta?: TextDelta;
  /** True when the entry was made for the current version and nothing it read has changed. */
  fresh: boolean;
}

type Listener = (entry: AnalysisEntry, doc: OpenDocument) => void;

/** Longest a pending analysis waits for a stream of changes to pause (ms). */
const MAX_SETTLE_MS = 250;

export interface AnalysisServiceOptions {
  host: FileHost;
  debounceMs: number;
  optionsFor(path: string): AnalyzeOptions;
  log(message: string): void;
  /** The analysis function; the core's by default (tests of the scheduler may pass another). */
  analyze?: (host: FileHost, path: string, options: AnalyzeOptions) => Analysis | undefined;
}

export class AnalysisService {
  private readonly docs = new Map<string, OpenDocument>();
  private readonly entries = new Map<string, AnalysisEntry>();
  /** Documents whose entry is out of date, with their debounce timer while one runs. */
  private readonly dirty = new Map<string, NodeJS.Timeout | undefined>();
  private queue: string[] = [];
  private pumping = false;
  private readonly waiters = new Map<string, Array<() => void>>();
  private idleWaiters: Array<() => void> = [];
  /** path -> uris of open documents whose last analysis read that path. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly listeners: Listener[] = [];
  private stamp = 0;
  /** Counts changes (edits, opens, closes, invalidations); the pump runs once it stops moving. */
  private changes = 0;
  /** `changes` when the pump was scheduled, and when it first had to wait. */
  private changesAtKick = 0;
  private settlingSince: number | undefined;
  private readonly analyze: NonNullable<AnalysisServiceOptions['analyze']>;
  private lastError = '';

  constructor(private readonly opts: AnalysisServiceOptions) {
    this.analyze = opts.analyze ?? ((host, p, o) => analyzeFile(host, p, o));
  }

  set debounceMs(ms: number) {
    this.opts.debounceMs = Math.max(0, ms);
  }

  onAnalyzed(listener: Listener): void {
    this.listeners.push(listener);
  }

  document(uri: string): OpenDocument | undefined {
    return this.docs.get(uri);
  }

  documents(): IterableIterator<OpenDocument> {
    return this.docs.values();
  }

  uriOfPath(p: string): string | undefined {
    for (const d of this.docs.values()) if (d.path === p) return d.uri;
    return undefined;
  }

  open(doc: OpenDocument): void {
    this.docs.set(doc.uri, doc);
    this.invalidate([doc.uri], 0);
    this.invalidateDependents(doc.path, doc.uri);
  }

  change(doc: OpenDocument): void {
    this.docs.set(doc.uri, doc);
    this.invalidate([doc.uri], this.opts.debounceMs);
    this.invalidateDependents(doc.path, doc.uri);
  }

  close(uri: string): void {
    const doc = this.docs.get(uri);
    this.docs.delete(uri);
    this.entries.delete(uri);
    const timer = this.dirty.get(uri);
    if (timer) clearTimeout(timer);
    this.dirty.delete(uri);
    this.queue = this.queue.filter((u) => u !== uri);
    for (const set of this.dependents.values()) set.delete(uri);
    this.release(uri);
    // Others may have read the buffer's unsaved text; they now read the disk.
    if (doc) this.invalidateDependents(doc.path, uri);
    this.notifyIdle();
  }

  /** A file changed outside the open buffers (file watcher), or an open buffer was saved. */
  fileChanged(p: string, createdOrDeleted: boolean): void {
    if (createdOrDeleted) this.invalidateAll();
    else this.invalidateDependents(p);
  }

  /** Options changed for every document (settings, model). */
  invalidateAll(): void {
    this.invalidate([...this.docs.keys()], this.opts.debounceMs);
  }

  /** Options changed for the documents at these paths (fixture choice), and whatever reads them. */
  invalidatePaths(paths: Iterable<string>): void {
    const uris = new Set<string>();
    for (const p of paths) {
      const own = this.uriOfPath(p);
      if (own) uris.add(own);
      for (const u of this.dependents.get(p) ?? []) uris.add(u);
    }
    this.invalidate(uris, 0);
  }

  private invalidateDependents(p: string, except?: string): void {
    const deps = this.dependents.get(p);
    if (!deps) return;
    this.invalidate([...deps].filter((u) => u !== except), this.opts.debounceMs);
  }

  private invalidate(uris: Iterable<string>, delay: number): void {
    this.changes++;
    for (const uri of uris) {
      if (!this.docs.has(uri)) continue;
      const old = this.dirty.get(uri);
      if (old) clearTimeout(old);
      if (delay <= 0) {
        this.dirty.set(uri, undefined);
        this.enqueue(uri, false);
      } else {
        // The document leaves the queue until its debounce ends: the edit that reset the timer
        // made any queued run stale.
        this.queue = this.queue.filter((u) => u !== uri);
        this.dirty.set(
          uri,
          setTimeout(() => {
            this.dirty.set(uri, undefined);
            this.enqueue(uri, false);
          }, delay),
        );
      }
    }
  }

  private enqueue(uri: string, front: boolean): void {
    const at = this.queue.indexOf(uri);
    if (at >= 0) {
      if (!front) return;
      this.queue.splice(at, 1);
    }
    if (front) this.queue.unshift(uri);
    else this.queue.push(uri);
    this.kick();
  }

  private kick(): void {
    if (this.pumping || this.queue.length === 0) return;
    this.pumping = true;
    this.changesAtKick = this.changes;
    setImmediate(() => this.pump());
  }

  /** Analyses one queued document, publishes it, and yields before the next. */
  private pump(): void {
    this.pumping = false;
    // The connection handles the next queued message in this same turn, after us: wait one more
    // turn whenever the last one brought a change, so a burst is analysed once, at its end.
    if (this.changes !== this.changesAtKick) {
      const now = performance.now();
      this.settlingSince ??= now;
      if (now - this.settlingSince < MAX_SETTLE_MS) return this.kick();
    }
    this.settlingSince = undefined;
    const uri = this.queue.shift();
    if (uri !== undefined) {
      const doc = this.docs.get(uri);
      if (doc && this.dirty.has(uri) && this.dirty.get(uri) === undefined) this.run(doc);
    }
    this.kick();
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.busy || this.idleWaiters.length === 0) return;
    const list = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of list) resolve();
  }

  /** Resolves once no open document waits for analysis (the workspace scan gives way to them). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Whether an open document is at this path or its last analysis read it. */
  needs(p: string): boolean {
    return this.uriOfPath(p) !== undefined || (this.dependents.get(p)?.size ?? 0) > 0;
  }

  private run(doc: OpenDocument): void {
    this.dirty.delete(doc.uri);
    const prev = this.entries.get(doc.uri);
    const started = performance.now();
    let analysis: Analysis | undefined;
    let error: string | undefined;
    try {
      analysis = this.analyze(this.opts.host, doc.path, this.opts.optionsFor(doc.path));
    } catch (e) {
      error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
    const ms = performance.now() - started;
    let entry: AnalysisEntry;
    if (error !== undefined) {
      // Keep serving the last good analysis (mapped onto the new text) rather than nothing.
      if (error !== this.lastError) this.opts.log(`analysis of ${doc.path} failed: ${error}`);
      this.lastError = error;
      entry = prev
        ? { ...prev, version: doc.version, stamp: ++this.stamp, ms, error }
        : { uri: doc.uri, path: doc.path, version: doc.version, view: new TextView(doc.text), analysis: undefined, stamp: ++this.stamp, ms, error };
    } else {
      entry = { uri: doc.uri, path: doc.path, version: doc.version, view: new TextView(doc.text), analysis, stamp: ++this.stamp, ms };
      this.index(doc.uri, analysis);
    }
    this.entries.set(doc.uri, entry);
    for (const l of this.listeners) {
      try {
        l(entry, doc);
      } catch (e) {
        this.opts.log(`publishing ${doc.path} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    }
    this.release(doc.uri);
  }

  private index(uri: string, analysis: Analysis | undefined): void {
    for (const set of this.dependents.values()) set.delete(uri);
    if (!analysis) return;
    for (const p of dependenciesOf(analysis)) {
      let set = this.dependents.get(p);
      if (!set) this.dependents.set(p, (set = new Set()));
      set.add(uri);
    }
  }

  private release(uri: string): void {
    const w = this.waiters.get(uri);
    if (!w) return;
    this.waiters.delete(uri);
    for (const resolve of w) resolve();
  }

  isFresh(uri: string): boolean {
    const doc = this.docs.get(uri);
    const entry = this.entries.get(uri);
    return !!doc && !!entry && entry.version === doc.version && !this.dirty.has(uri);
  }

  /** The last analysis of an open document, seen from its current text (possibly pending). */
  view(uri: string): EntryView | undefined {
    const doc = this.docs.get(uri);
    const entry = this.entries.get(uri);
    if (!doc || !entry) return undefined;
    const fresh = this.isFresh(uri);
    if (entry.view.text === doc.text) return { entry, current: entry.view, fresh };
    const delta = new TextDelta(entry.view.text, doc.text);
    return { entry, current: new TextView(doc.text), delta: delta.identity ? undefined : delta, fresh };
  }

  /**
   * The analysis of the document's current version, waiting for it when it is pending (the wait
   * moves the document to the front of the queue but keeps its debounce). Undefined when the
   * request is cancelled or the document closes.
   */
  async fresh(uri: string, token?: CancellationToken): Promise<EntryView | undefined> {
    // Bounded: each round waits for one analysis of this document.
    for (let round = 0; round < 50; round++) {
      if (!this.docs.has(uri) || token?.isCancellationRequested) return undefined;
      if (this.isFresh(uri)) return this.view(uri);
      if (!this.dirty.has(uri)) this.invalidate([uri], 0);
      if (this.dirty.get(uri) === undefined) this.enqueue(uri, true);
      await new Promise<void>((resolve) => {
        const list = this.waiters.get(uri) ?? [];
        list.push(resolve);
        this.waiters.set(uri, list);
        token?.onCancellationRequested(() => resolve());
      });
    }
    return this.view(uri);
  }

  /** True while any document waits for analysis. */
  get busy(): boolean {
    return this.dirty.size > 0 || this.queue.length > 0;
  }
}

/** Every path an analysis read, including the templates a config or fixture analysis looked at. */
export function dependenciesOf(a: Analysis): Set<string> {
  const out = new Set<string>(a.dependencies);
  if (a.kind === 'template') {
    if (a.config && !a.config.inline) out.add(a.config.path);
    if (a.fixture) out.add(a.fixture.path);
  } else if (a.kind === 'config') {
    for (const t of a.templates) out.add(t);
  } else if (a.template) {
    out.add(a.template.path);
    for (const d of a.template.dependencies) out.add(d);
  }
  out.delete(a.path);
  return out;
}
