/**
 * FileHost over the local disk, for the CLI and the language server (which layers open editor
 * buffers on top). Globs walk the tree with a bound and skip folders that never hold user files.
 *
 * Two kinds of file are never read, whatever the core asks for:
 * - a file whose real path (every symbolic link resolved) is outside every root's real path, so a
 *   link in the workspace cannot lead a read out of it (the core's lexical gate in paths.ts cannot
 *   see links; with `realPath` it can also say why);
 * - anything but a regular file: a FIFO named `x.context.yaml` would block a read forever, a
 *   device would never end. The file is opened non-blocking and checked with fstat before reading.
 * A host built without roots (the language server's reader, whose caller gates paths) only
 * applies the second rule.
 *
 * Glob patterns come from configs, so they are matched by `globMatcher` below, not compiled to a
 * regular expression: picomatch's regexes backtrack, and `*a*a*a*a*b` against a long file name
 * never ends. The matcher takes the usual syntax (`*`, `**`, `?`, `[a-z]`, `[^x]`, `{a,b}`,
 * backslash escapes) and works in time linear in the path for each pattern segment.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileHost } from '../core/host';
import { useSha256 } from '../core/assembly/sha256';
import { compileGlob, globMatches, globMayHold } from '../core/text/glob';
import { installBamlRuntime } from './bamlRuntime';
import { climbGlob } from '../core/paths';

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', '.cache', '.vscode-test']);
/** Upper bound on entries visited by one glob, so a huge tree cannot stall a request. */
const MAX_WALK = 50_000;
/** Longer glob patterns are not matched (the config schema refuses them too). */
export const MAX_GLOB_PATTERN = 512;

/** Whether a glob names the folder `name` as one of its segments (a hidden folder it may enter). */
function namesFolder(pattern: string, name: string): boolean {
  return pattern.split('/').slice(0, -1).includes(name);
}

const splitPath = (relPath: string): string[] => relPath.split('/').filter((s) => s !== '');

/**
 * A matcher for a glob pattern over `/`-separated relative paths, or undefined for a pattern that
 * is empty, too long or expands to too many alternatives (it then matches nothing).
 */
export function globMatcher(pattern: string): ((relPath: string) => boolean) | undefined {
  const compiled = compileGlob(pattern, { maxLength: MAX_GLOB_PATTERN });
  if (!compiled) return undefined;
  return (relPath: string) => globMatches(compiled, splitPath(relPath));
}

/**
 * For a glob pattern, whether a folder (relative path, `''` for the start) can hold a file the
 * pattern matches; undefined where `globMatcher` is.
 */
export function globFolderFilter(pattern: string): ((relDir: string) => boolean) | undefined {
  const compiled = compileGlob(pattern, { maxLength: MAX_GLOB_PATTERN });
  if (!compiled) return undefined;
  return (relDir: string) => globMayHold(compiled, splitPath(relDir));
}

/** Opening a FIFO for reading must not wait for a writer; regular files ignore the flag. Windows has no such flag. */
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

export function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function within(roots: readonly string[], p: string): boolean {
  return roots.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : r + '/'));
}

/** Node's SHA-256 of a string's UTF-8 bytes (lone surrogates as U+FFFD, like the core's own). */
export function nodeSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class DiskFileHost implements FileHost {
  private readonly listRoots: () => readonly string[];
  private realRootsCache?: { key: string; real: string[] };
  /** Folder listings by path, when the host was asked to keep them (`cacheListings`). */
  private readonly listings?: Map<string, fs.Dirent[]>;

  /**
   * `roots` may be a function, for a host whose workspace folders change (the language server's).
   * A disk host also gives the core Node's native SHA-256 (trace hashes, cache keys): every Node
   * front end (library, CLI, service, language server) reads through one.
   */
  constructor(roots: readonly string[] | (() => readonly string[]), options: { cacheListings?: boolean } = {}) {
    // `cacheListings` keeps every folder listing for the host's life: for a one-shot run (the
    // CLI), where a thousand globs walk the same folders.
    if (options.cacheListings) this.listings = new Map();
    useSha256(nodeSha256);
    // BAML's native runtime, required only when a BAML file is first rendered.
    installBamlRuntime();
    if (typeof roots === 'function') this.listRoots = roots;
    else {
      const fixed = roots.map((r) => toPosix(path.resolve(r)));
      this.listRoots = () => fixed;
    }
  }

  get roots(): readonly string[] {
    return this.listRoots();
  }

  realPath(p: string): string | undefined {
    try {
      return toPosix(fs.realpathSync.native(p));
    } catch {
      return undefined;
    }
  }

  /** The roots' own real paths (a workspace opened through a link holds the files of its target). */
  private realRoots(): string[] {
    const roots = this.roots;
    const key = roots.join('\u0000');
    if (this.realRootsCache?.key !== key) this.realRootsCache = { key, real: roots.map((r) => this.realPath(r) ?? r) };
    return this.realRootsCache.real;
  }

  /** Whether a real path may be read: inside a root's real path (any path when there are no roots). */
  private allowed(real: string): boolean {
    return this.roots.length === 0 || within(this.realRoots(), real);
  }

  /** The real path and stats of `p` when it is a regular file this host may read. */
  private regular(p: string): { real: string; stat: fs.Stats } | undefined {
    const real = this.realPath(p);
    if (real === undefined || !this.allowed(real)) return undefined;
    try {
      const stat = fs.statSync(real);
      return stat.isFile() ? { real, stat } : undefined;
    } catch {
      return undefined;
    }
  }

  readFile(p: string): string | undefined {
    const file = this.regular(p);
    if (!file) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(file.real, OPEN_FLAGS);
    } catch {
      return undefined;
    }
    try {
      // The file checked above must be the one opened: not swapped for a FIFO or another file since.
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.dev !== file.stat.dev || (st.ino !== 0 && st.ino !== file.stat.ino)) return undefined;
      return fs.readFileSync(fd, 'utf8');
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  }

  size(p: string): number | undefined {
    return this.regular(p)?.stat.size;
  }

  /**
   * A pattern without wildcards names one file: when no link is on its way (its real path is
   * itself), the walk would list exactly that file if it is a regular file outside skipped and
   * hidden folders, so it is checked directly. Undefined when the walk must decide.
   */
  private literalGlob(dir: string, pattern: string): string[] | undefined {
    if (/[*?[\]{}\\]/.test(pattern)) return undefined;
    const parts = pattern.split('/').filter((x) => x !== '' && x !== '.');
    if (parts.length === 0) return [];
    if (parts.includes('..')) return [];
    // A hidden folder a literal pattern names (`.github/copilot-instructions.md`) is asked for by name.
    if (parts.slice(0, -1).some((d) => SKIP_DIRS.has(d))) return [];
    const file = `${dir}/${parts.join('/')}`;
    const real = this.realPath(file);
    if (real === undefined) return [];
    if (real !== file || this.realPath(dir) !== dir) return undefined;
    if (!this.allowed(real) || !within(this.roots, file)) return [];
    try {
      return fs.statSync(real).isFile() ? [file] : [];
    } catch {
      return [];
    }
  }

  /** A folder's entries, real ones first (a folder is listed under its own path rather than a link's). */
  private list(abs: string): fs.Dirent[] | undefined {
    const hit = this.listings?.get(abs);
    if (hit) return hit;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    entries.sort((a, b) => Number(a.isSymbolicLink()) - Number(b.isSymbolicLink()));
    this.listings?.set(abs, entries);
    return entries;
  }

  glob(dir: string, pattern: string): string[] {
    // Patterns come from configs: an empty or absurd one matches nothing rather than throwing.
    if (!pattern.trim() || pattern.length > MAX_GLOB_PATTERN) return [];
    // Patterns that climb out of dir (`../fixtures/*.yaml`) are walked from the folder they name.
    const { base, pattern: pat } = climbGlob(dir, pattern);
    if (pat !== pattern) return this.glob(base, pat);
    const literal = this.literalGlob(dir, pattern);
    if (literal) return literal;
    const isMatch = globMatcher(pattern);
    const mayHold = globFolderFilter(pattern);
    if (!isMatch || !mayHold) return [];
    const start = this.realPath(dir);
    if (start === undefined || !this.allowed(start)) return [];
    const out: string[] = [];
    // Real paths of the folders walked: a linked folder is walked once, and a link cycle ends.
    const seen = new Set<string>([start]);
    let visited = 0;
    const walk = (abs: string, real: string, rel: string): void => {
      const entries = this.list(abs);
      if (!entries) return;
      for (const e of entries) {
        if (++visited > MAX_WALK) return;
        const childAbs = `${abs}/${e.name}`;
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        let childReal = `${real}/${e.name}`;
        let isDir = e.isDirectory();
        let isFile = e.isFile();
        if (e.isSymbolicLink()) {
          // A link is followed only when its target stays inside the workspace.
          const target = this.realPath(childAbs);
          if (target === undefined || !this.allowed(target)) continue;
          try {
            const st = fs.statSync(target);
            isDir = st.isDirectory();
            isFile = st.isFile();
          } catch {
            continue;
          }
          childReal = target;
        }
        if (isDir) {
          // Folders no match can lie in are not entered (nor counted against the walk's bound below them).
          // Hidden folders are entered only where the pattern names them (`.github/**/*.instructions.md`,
          // `**/.cursor/rules/*.mdc`): a `**` never walks into `.venv` or `.idea`.
          if (SKIP_DIRS.has(e.name) || (e.name.startsWith('.') && !namesFolder(pattern, e.name)) || seen.has(childReal) || !mayHold(childRel)) continue;
          seen.add(childReal);
          walk(childAbs, childReal, childRel);
        } else if (isFile && isMatch(childRel)) {
          // FIFOs, sockets and devices are neither: they are never offered to the core.
          out.push(childAbs);
        }
      }
    };
    walk(dir, start, '');
    // Nothing outside the workspace is ever offered to the core.
    const roots = this.roots;
    return out.filter((p) => within(roots, p)).sort();
  }
}

/** Texts a `SnapshotFileHost` keeps at most (UTF-16 code units, summed); beyond it files are re-read. */
const SNAPSHOT_TEXT_BUDGET = 64 * 1024 * 1024;

/**
 * A host that answers each question once: for one run of the CLI, which reads the same configs,
 * fixtures and folders for every template that uses them (1,000 templates asking for their
 * neighbours' `template:` keys made 100,000 reads of the same files). The files are taken not to
 * change during the run. Texts are kept up to a budget; larger totals are read again.
 */
export class SnapshotFileHost implements FileHost {
  private readonly texts = new Map<string, string | undefined>();
  private readonly sizes = new Map<string, number | undefined>();
  private readonly reals = new Map<string, string | undefined>();
  private readonly globs = new Map<string, string[]>();
  private kept = 0;
  /** The run takes its files not to change: memos of the core made from this host's answers hold for its life. */
  readonly unchanging = true;

  constructor(private readonly inner: FileHost & Required<Pick<FileHost, 'realPath'>>) {}

  get roots(): readonly string[] {
    return this.inner.roots;
  }

  readFile(p: string): string | undefined {
    if (this.texts.has(p)) return this.texts.get(p);
    const text = this.inner.readFile(p);
    const cost = text?.length ?? 0;
    if (this.kept + cost <= SNAPSHOT_TEXT_BUDGET) {
      this.kept += cost;
      this.texts.set(p, text);
    }
    return text;
  }

  size(p: string): number | undefined {
    if (this.sizes.has(p)) return this.sizes.get(p);
    const n = this.inner.size(p);
    this.sizes.set(p, n);
    return n;
  }

  glob(dir: string, pattern: string): string[] {
    const key = `${dir}\u0000${pattern}`;
    let hit = this.globs.get(key);
    if (!hit) this.globs.set(key, (hit = this.inner.glob(dir, pattern)));
    // Callers may sort or extend what they get.
    return [...hit];
  }

  realPath(p: string): string | undefined {
    if (this.reals.has(p)) return this.reals.get(p);
    const r = this.inner.realPath(p);
    this.reals.set(p, r);
    return r;
  }
}
