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
import { installBamlRuntime } from './bamlRuntime';
import { climbGlob } from '../core/paths';

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', '.cache', '.vscode-test']);
/** Upper bound on entries visited by one glob, so a huge tree cannot stall a request. */
const MAX_WALK = 50_000;
/** Longer glob patterns are not matched (the config schema refuses them too). */
export const MAX_GLOB_PATTERN = 512;
/** Most alternatives a pattern's braces may expand to (`{a,b}{c,d}` is four). */
const MAX_GLOB_ALTERNATIVES = 64;

// ---------------------------------------------------------------------------
// Glob matching without regular expressions
// ---------------------------------------------------------------------------

type GlobToken = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; ch: string } | { kind: 'class'; negated: boolean; ranges: Array<[string, string]> };
/** A path segment of a pattern: `**`, or the tokens of one name. */
type GlobSegment = 'globstar' | GlobToken[];

/** Index of the `}` closing the `{` at `open`, or -1; escapes and nested braces respected. */
function closingBrace(p: string, open: number): number {
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Top-level comma positions inside the braces `open`..`close`. */
function braceCommas(p: string, open: number, close: number): number[] {
  const commas: number[] = [];
  let depth = 0;
  for (let i = open + 1; i < close; i++) {
    const c = p.charAt(i);
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) commas.push(i);
  }
  return commas;
}

/** The pattern with its `{a,b}` alternatives expanded, or undefined when there are too many. */
function expandBraces(p: string, out: string[] = [], from = 0): string[] | undefined {
  for (let i = from; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '{') continue;
    const close = closingBrace(p, i);
    if (close < 0) break;
    const commas = braceCommas(p, i, close);
    // Braces without a comma are literal text, as in picomatch.
    if (!commas.length) continue;
    const cuts = [i, ...commas, close];
    for (let k = 0; k + 1 < cuts.length; k++) {
      const alt = p.slice(0, i) + p.slice(cuts[k] + 1, cuts[k + 1]) + p.slice(close + 1);
      if (!expandBraces(alt, out, i)) return undefined;
    }
    return out;
  }
  if (out.length >= MAX_GLOB_ALTERNATIVES) return undefined;
  out.push(p);
  return out;
}

function parseSegment(seg: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg.charAt(i);
    if (c === '\\' && i + 1 < seg.length) tokens.push({ kind: 'char', ch: seg.charAt(++i) });
    else if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'any' });
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) {
        tokens.push({ kind: 'char', ch: c });
        continue;
      }
      let body = seg.slice(i + 1, end);
      // `^` negates, as in picomatch (which reads `[!a]` as the characters ! and a).
      const negated = body.startsWith('^');
      if (negated) body = body.slice(1);
      const ranges: Array<[string, string]> = [];
      for (let k = 0; k < body.length; k++) {
        if (body.charAt(k + 1) === '-' && k + 2 < body.length) {
          ranges.push([body.charAt(k), body.charAt(k + 2)]);
          k += 2;
        } else ranges.push([body.charAt(k), body.charAt(k)]);
      }
      tokens.push({ kind: 'class', negated, ranges });
      i = end;
    } else tokens.push({ kind: 'char', ch: c });
  }
  return tokens;
}

function tokenMatches(t: GlobToken, ch: string): boolean {
  switch (t.kind) {
    case 'any':
      return true;
    case 'char':
      return t.ch === ch;
    case 'class':
      return t.ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== t.negated;
    default:
      return false;
  }
}

/** Whether a glob names the folder `name` as one of its segments (a hidden folder it may enter). */
function namesFolder(pattern: string, name: string): boolean {
  return pattern.split('/').slice(0, -1).includes(name);
}

/**
 * Whether a file or folder name matches a segment's tokens: the classic wildcard walk that backs
 * up to the last `*` only, O(name × pattern) at worst. A name starting with `.` needs a pattern
 * that starts with `.` (picomatch's `dot: false`).
 */
function matchName(tokens: GlobToken[], name: string): boolean {
  if (name.startsWith('.') && !(tokens[0]?.kind === 'char' && tokens[0].ch === '.')) return false;
  let p = 0;
  let i = 0;
  let starP = -1;
  let starI = 0;
  while (i < name.length) {
    const t = tokens[p];
    if (t && t.kind === 'star') {
      starP = p++;
      starI = i;
    } else if (t && tokenMatches(t, name.charAt(i))) {
      p++;
      i++;
    } else if (starP >= 0) {
      p = starP + 1;
      i = ++starI;
    } else return false;
  }
  while (tokens[p]?.kind === 'star') p++;
  return p === tokens.length;
}

/** Whether path segments match pattern segments; `**` takes any number of names not starting with `.`. */
function matchSegments(segs: GlobSegment[], parts: string[]): boolean {
  // memo[si * (parts.length + 1) + pi]: 0 unknown, 1 no, 2 yes. Each state is decided once.
  const width = parts.length + 1;
  const memo = new Uint8Array((segs.length + 1) * width);
  const at = (si: number, pi: number): boolean => {
    const key = si * width + pi;
    if (memo[key]) return memo[key] === 2;
    let ok = false;
    if (si === segs.length) ok = pi === parts.length;
    else {
      const seg = segs[si];
      if (seg === 'globstar') {
        for (let k = pi; k <= parts.length; k++) {
          if (at(si + 1, k)) {
            ok = true;
            break;
          }
          if (k < parts.length && parts[k].startsWith('.')) break;
        }
      } else ok = pi < parts.length && matchName(seg, parts[pi]) && at(si + 1, pi + 1);
    }
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return at(0, 0);
}

/**
 * Whether a file below the folder `parts` could match: the folder's names match a prefix of the
 * segments and at least one segment is left for what lies below. Lets a walk skip folders that
 * cannot hold a match (`fixtures/*.yaml` never enters `src/`), same memoized shape as above.
 */
function mayHoldMatch(segs: GlobSegment[], parts: string[]): boolean {
  const width = parts.length + 1;
  const memo = new Uint8Array((segs.length + 1) * width);
  const at = (si: number, pi: number): boolean => {
    const key = si * width + pi;
    if (memo[key]) return memo[key] === 2;
    let ok: boolean;
    if (pi === parts.length) ok = si < segs.length;
    else if (si === segs.length) ok = false;
    else {
      const seg = segs[si];
      if (seg === 'globstar') ok = at(si + 1, pi) || (!parts[pi].startsWith('.') && at(si, pi + 1));
      else ok = matchName(seg, parts[pi]) && at(si + 1, pi + 1);
    }
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return at(0, 0);
}

function compileGlob(pattern: string): GlobSegment[][] | undefined {
  if (!pattern.trim() || pattern.length > MAX_GLOB_PATTERN) return undefined;
  const alternatives = expandBraces(pattern);
  if (!alternatives) return undefined;
  return alternatives.map((alt) => {
    const segs: GlobSegment[] = [];
    for (const seg of alt.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '**') {
        if (segs[segs.length - 1] !== 'globstar') segs.push('globstar');
      } else segs.push(parseSegment(seg));
    }
    return segs;
  });
}

const splitPath = (relPath: string): string[] => relPath.split('/').filter((s) => s !== '');

/**
 * A matcher for a glob pattern over `/`-separated relative paths, or undefined for a pattern that
 * is empty, too long or expands to too many alternatives (it then matches nothing).
 */
export function globMatcher(pattern: string): ((relPath: string) => boolean) | undefined {
  const compiled = compileGlob(pattern);
  if (!compiled) return undefined;
  return (relPath: string) => {
    const parts = splitPath(relPath);
    return compiled.some((segs) => matchSegments(segs, parts));
  };
}

/**
 * For a glob pattern, whether a folder (relative path, `''` for the start) can hold a file the
 * pattern matches; undefined where `globMatcher` is.
 */
export function globFolderFilter(pattern: string): ((relDir: string) => boolean) | undefined {
  const compiled = compileGlob(pattern);
  if (!compiled) return undefined;
  return (relDir: string) => {
    const parts = splitPath(relDir);
    return compiled.some((segs) => mayHoldMatch(segs, parts));
  };
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
