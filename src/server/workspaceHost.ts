/**
 * The language server's FileHost: the disk (src/node/fileHost.ts) with the editor's open buffers
 * laid over it, so an unsaved config or fixture counts exactly as the user sees it. Disk reads
 * are cached by (mtime, size) and directory walks for globs for a short while, because every
 * keystroke in a template re-analyses it and re-resolves its config and fixtures.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileHost } from '../core/host';
import { DiskFileHost, globMatcher } from '../node/fileHost';
import { toPosix } from './uri';
import { climbGlob } from '../core/paths';

interface Overlay {
  text: string;
  version: number;
  /** UTF-8 byte length, computed once per version (a 5 MB buffer is not measured per read). */
  bytes?: number;
}

interface DiskEntry {
  mtimeMs: number;
  size: number;
  text: string;
}

/** How long a glob result is reused when the client reports no file events (ms). */
const GLOB_TTL_MS = 2_000;
/** Files larger than this are not kept in the read cache (they are re-read, which is rare). */
const MAX_CACHED_BYTES = 8 * 1024 * 1024;
/** The read cache keeps the most recently read files up to this many bytes in all. */
const MAX_CACHE_TOTAL_BYTES = 48 * 1024 * 1024;

/**
 * What the core gets of a fixture over the size limit: only its top-level `template:` and `name:`
 * lines. The core never assembles such a fixture (it reports it as too large), but it does read
 * every candidate fixture to see which template it names, and parsing 5 MB of YAML takes seconds
 * on the thread that answers hovers.
 */
export function skimFixture(text: string): string {
  const head = text.slice(0, 64 * 1024);
  const keep = head.split(/\r?\n/).filter((l) => /^(template|name)\s*:/.test(l));
  return keep.join('\n') + '\nslots: {}\n';
}

export class WorkspaceHost implements FileHost {
  /** Fixtures larger than this (bytes) are handed to the core skimmed (see `skimFixture`). */
  maxFileSize = Number.POSITIVE_INFINITY;
  private workspaceRoots: string[] = [];
  private readonly skims = new Map<string, { text: string; skim: string }>();
  private readonly overlays = new Map<string, Overlay>();
  private readonly diskCache = new Map<string, DiskEntry>();
  private diskCacheBytes = 0;
  private readonly globCache = new Map<string, { at: number; paths: string[] }>();
  /** Reads and sizes; it refuses files whose real path (through symbolic links) leaves the workspace. */
  private readonly disk = new DiskFileHost(() => this.roots);

  /** The real path of a file: open documents are what they say; files on disk through their links. */
  realPath(p: string): string | undefined {
    return this.overlays.has(p) ? p : this.disk.realPath(p);
  }

  /** Workspace folders; without any, the folders of open documents stand in (a lone file opened). */
  get roots(): readonly string[] {
    if (this.workspaceRoots.length > 0) return this.workspaceRoots;
    return [...new Set([...this.overlays.keys()].map((p) => path.posix.dirname(p)))];
  }

  setRoots(roots: readonly string[]): void {
    this.workspaceRoots = roots.map((r) => toPosix(path.resolve(r)));
    this.globCache.clear();
  }

  setOverlay(p: string, text: string, version: number): void {
    const had = this.overlays.has(p);
    this.overlays.set(p, { text, version });
    if (!had) this.globCache.clear();
  }

  removeOverlay(p: string): void {
    if (this.overlays.delete(p)) this.globCache.clear();
  }

  hasOverlay(p: string): boolean {
    return this.overlays.has(p);
  }

  /** A file changed on disk (file watcher): drop what was cached of it. */
  invalidate(p: string, created: boolean): void {
    this.uncache(p);
    if (created) this.globCache.clear();
  }

  /** Lets go of what is cached of these files (read again when asked): the scan is done with them. */
  forget(paths: Iterable<string>): void {
    for (const p of paths) {
      this.uncache(p);
      this.skims.delete(p);
    }
  }

  private uncache(p: string): void {
    const hit = this.diskCache.get(p);
    if (!hit) return;
    this.diskCacheBytes -= hit.size;
    this.diskCache.delete(p);
  }

  /** Files were created or deleted: directory walks must be redone. */
  invalidateTree(): void {
    this.globCache.clear();
  }

  readFile(p: string): string | undefined {
    const text = this.readFull(p);
    if (text === undefined || text.length <= this.maxFileSize / 4 || !/\.fixture\.(ya?ml|json)$/i.test(p)) return text;
    if ((this.size(p) ?? 0) <= this.maxFileSize) return text;
    const hit = this.skims.get(p);
    if (hit && hit.text === text) return hit.skim;
    const skim = /\.json$/i.test(p) ? '{"slots": {}}' : skimFixture(text);
    this.skims.set(p, { text, skim });
    return skim;
  }

  /** The whole text, for the language server's own use (line indexes, light analysis). */
  readFull(p: string): string | undefined {
    const o = this.overlays.get(p);
    if (o) return o.text;
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      this.uncache(p);
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const cached = this.diskCache.get(p);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) {
      // Most recently used last, so the budget below lets go of the oldest reads first.
      this.diskCache.delete(p);
      this.diskCache.set(p, cached);
      return cached.text;
    }
    const text = this.disk.readFile(p);
    this.uncache(p);
    if (text === undefined) return undefined;
    if (st.size <= MAX_CACHED_BYTES) {
      this.diskCache.set(p, { mtimeMs: st.mtimeMs, size: st.size, text });
      this.diskCacheBytes += st.size;
      for (const [old, e] of this.diskCache) {
        if (this.diskCacheBytes <= MAX_CACHE_TOTAL_BYTES || old === p) break;
        this.diskCacheBytes -= e.size;
        this.diskCache.delete(old);
      }
    }
    return text;
  }

  size(p: string): number | undefined {
    const o = this.overlays.get(p);
    if (o) return (o.bytes ??= Buffer.byteLength(o.text, 'utf8'));
    return this.disk.size(p);
  }

  glob(dir: string, pattern: string): string[] {
    const key = `${dir}\0${pattern}`;
    const now = Date.now();
    const hit = this.globCache.get(key);
    let onDisk: string[];
    if (hit && now - hit.at < GLOB_TTL_MS) onDisk = hit.paths;
    else {
      // Built per walk because the roots stand in for workspace folders when there are none.
      onDisk = new DiskFileHost(this.roots).glob(dir, pattern);
      this.globCache.set(key, { at: now, paths: onDisk });
    }
    // Open buffers that are not on disk yet (a new, unsaved fixture) match too.
    const extra = this.overlayMatches(dir, pattern).filter((p) => !onDisk.includes(p));
    return extra.length ? [...onDisk, ...extra].sort() : onDisk;
  }

  private overlayMatches(dir: string, pattern: string): string[] {
    const climbed = climbGlob(dir, pattern);
    const base = climbed.base;
    const pat = climbed.pattern.startsWith('./') ? climbed.pattern.slice(2) : climbed.pattern;
    const isMatch = globMatcher(pat);
    if (!isMatch) return [];
    const prefix = base.endsWith('/') ? base : base + '/';
    const out: string[] = [];
    for (const p of this.overlays.keys()) {
      if (p.startsWith(prefix) && isMatch(p.slice(prefix.length)) && this.insideRoots(p)) out.push(p);
    }
    return out;
  }

  private insideRoots(p: string): boolean {
    return this.roots.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : r + '/'));
  }
}
