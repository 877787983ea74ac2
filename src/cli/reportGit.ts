/**
 * The base revision of `ctxlens report`, read with git and never checked out: the repository's
 * top folder, the base commit (a missing base, or one a shallow clone lacks, is a clear error),
 * git's rename detection between the base and the working tree, and a `FileHost` over the base
 * commit's tree that answers with the same absolute paths as the disk, so the core's parse caches
 * (keyed by path and text) serve every file the change did not touch.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { FileHost } from '../core/host';
import { globFolderFilter, globMatcher, MAX_GLOB_PATTERN, toPosix } from '../node/fileHost';
import { climbGlob } from '../core/paths';

/** An error the report explains and exits 2 on: not a repository, no such base, a shallow clone. */
export class GitError extends Error {}

/** Folders a disk glob never enters (DiskFileHost's list); the base host skips the same ones. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', '.cache', '.vscode-test']);
/** Files larger than this are left out of the batch read (the analysis does not read them whole either). */
const PRELOAD_MAX = 5 * 1024 * 1024;
/** Bytes a batch read may hold in memory at once. */
const PRELOAD_BUDGET = 256 * 1024 * 1024;

function git(cwd: string, args: string[], input?: string | Buffer): { code: number; stdout: Buffer; stderr: string } {
  // GIT_OPTIONAL_LOCKS=0: a report only reads; git must not refresh (write) the index as it goes.
  const r = spawnSync('git', args, { cwd, input, maxBuffer: 1 << 30, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' } });
  if (r.error) throw new GitError(`cannot run git: ${r.error.message}`);
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr.toString('utf8').trim() };
}

/** The repository's top folder (with `/`), or a GitError when `cwd` is not inside one. */
export function gitTop(cwd: string): string {
  const r = git(cwd, ['rev-parse', '--show-toplevel']);
  if (r.code !== 0) throw new GitError(`not a git repository: ${cwd} (ctxlens report compares a revision with the working tree)`);
  return toPosix(path.resolve(r.stdout.toString('utf8').trim()));
}

/** The commit a ref names; a GitError that says why when there is none. */
export function resolveCommit(top: string, ref: string): string {
  if (ref.startsWith('-') || /[\0\n]/.test(ref)) throw new GitError(`'${ref}' is not a revision`);
  const r = git(top, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (r.code === 0) return r.stdout.toString('utf8').trim();
  const shallow = git(top, ['rev-parse', '--is-shallow-repository']).stdout.toString('utf8').trim() === 'true';
  if (shallow) {
    throw new GitError(
      `the base '${ref}' is not in this shallow clone: fetch it first (actions/checkout with 'fetch-depth: 0', or 'git fetch --deepen=50 origin', or 'git fetch origin ${ref}')`,
    );
  }
  throw new GitError(`unknown base revision '${ref}': no commit of that name in ${top}`);
}

/** The working tree's HEAD commit, or undefined in a repository without commits. */
export function headCommit(top: string): string | undefined {
  const r = git(top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
}

/**
 * Files git sees renamed between the base commit and the working tree (tracked files; the index
 * and the working tree as they are), as absolute paths: old -> new. `paths` are absolute limits.
 */
export function renames(top: string, commit: string, paths: readonly string[]): Map<string, string> {
  const rel = paths.map((p) => toPosix(path.relative(top, p)) || '.');
  const r = git(top, ['-c', 'core.quotepath=off', 'diff', '--name-status', '-z', '-M', '--no-ext-diff', commit, '--', ...rel]);
  const out = new Map<string, string>();
  if (r.code !== 0) return out;
  const parts = r.stdout.toString('utf8').split('\0');
  for (let i = 0; i < parts.length; ) {
    const status = parts[i++];
    if (!status) continue;
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = parts[i++];
      const to = parts[i++];
      if (status.startsWith('R') && from && to) out.set(`${top}/${from}`, `${top}/${to}`);
    } else i++;
  }
  return out;
}

interface Entry {
  object: string;
  size: number;
}

function within(roots: readonly string[], p: string): boolean {
  return roots.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : r + '/'));
}

/**
 * The files of one commit as a `FileHost`: regular files only (links and submodules are not
 * offered, as the disk host offers no link that leaves the workspace), inside the same roots as
 * the disk host. `preload` names folders whose files are read in one `git cat-file --batch` run;
 * other files are read one by one when asked for.
 */
export class GitTreeHost implements FileHost {
  private readonly files = new Map<string, Entry>();
  private readonly dirs = new Set<string>();
  private readonly texts = new Map<string, string>();
  private readonly globs = new Map<string, string[]>();
  /** Files under a folder, by folder: a config's glob looks through its own folder's files only. */
  private readonly under = new Map<string, string[]>();

  constructor(
    private readonly top: string,
    readonly commit: string,
    readonly roots: readonly string[],
  ) {
    const r = git(top, ['-c', 'core.quotepath=off', 'ls-tree', '-r', '-l', '-z', '--full-tree', commit]);
    if (r.code !== 0) throw new GitError(`cannot list the files of ${commit}: ${r.stderr}`);
    for (const line of r.stdout.toString('utf8').split('\0')) {
      // `<mode> <type> <object> <size>\t<path>`
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const [mode, type, object, size] = line.slice(0, tab).split(/ +/);
      if (type !== 'blob' || (mode !== '100644' && mode !== '100755')) continue;
      const file = `${top}/${line.slice(tab + 1)}`;
      this.files.set(file, { object, size: Number(size) });
      for (let at = file.lastIndexOf('/'); at > top.length; at = file.lastIndexOf('/', at - 1)) {
        const dir = file.slice(0, at);
        if (this.dirs.has(dir)) break;
        this.dirs.add(dir);
      }
    }
    this.dirs.add(top);
  }

  /**
   * A commit's tree holds no links (they are not offered), so every file and folder it has is its
   * own real path, as on a disk without links; what it lacks has none.
   */
  realPath(p: string): string | undefined {
    return this.files.has(p) || this.dirs.has(p) ? p : undefined;
  }

  /** Every file of the commit (absolute paths). */
  list(): string[] {
    return [...this.files.keys()];
  }

  /** Reads the files under these folders (or these files) in one batch. */
  preload(paths: readonly string[], wanted: (p: string) => boolean = () => true): void {
    const todo: Array<[string, Entry]> = [];
    let bytes = 0;
    for (const [p, e] of this.files) {
      if (this.texts.has(p) || e.size > PRELOAD_MAX || !wanted(p)) continue;
      if (!paths.some((d) => p === d || p.startsWith(d.endsWith('/') ? d : d + '/'))) continue;
      if (bytes + e.size > PRELOAD_BUDGET) break;
      bytes += e.size;
      todo.push([p, e]);
    }
    if (!todo.length) return;
    const r = git(this.top, ['cat-file', '--batch'], todo.map(([, e]) => e.object).join('\n') + '\n');
    if (r.code !== 0) throw new GitError(`cannot read the files of ${this.commit}: ${r.stderr}`);
    const buf = r.stdout;
    let at = 0;
    for (const [p] of todo) {
      const nl = buf.indexOf(10, at);
      if (nl < 0) break;
      const head = buf.toString('utf8', at, nl).split(' ');
      const size = Number(head[2]);
      if (head[1] !== 'blob' || !Number.isFinite(size)) {
        at = nl + 1;
        continue;
      }
      this.texts.set(p, buf.toString('utf8', nl + 1, nl + 1 + size));
      at = nl + 1 + size + 1;
    }
  }

  readFile(p: string): string | undefined {
    if (!within(this.roots, p)) return undefined;
    const hit = this.texts.get(p);
    if (hit !== undefined) return hit;
    const e = this.files.get(p);
    if (!e) return undefined;
    const r = git(this.top, ['cat-file', 'blob', e.object]);
    if (r.code !== 0) return undefined;
    const text = r.stdout.toString('utf8');
    this.texts.set(p, text);
    return text;
  }

  size(p: string): number | undefined {
    if (!within(this.roots, p)) return undefined;
    return this.files.get(p)?.size;
  }

  glob(dir: string, pattern: string): string[] {
    if (!pattern.trim() || pattern.length > MAX_GLOB_PATTERN) return [];
    const { base, pattern: pat } = climbGlob(dir, pattern);
    const key = `${base}\u0000${pat}`;
    const hit = this.globs.get(key);
    if (hit) return [...hit];
    const isMatch = globMatcher(pat);
    const mayHold = globFolderFilter(pat);
    const out: string[] = [];
    if (isMatch && mayHold) {
      const prefix = base.endsWith('/') ? base : base + '/';
      let files = this.under.get(prefix);
      if (!files) this.under.set(prefix, (files = [...this.files.keys()].filter((p) => p.startsWith(prefix))));
      for (const p of files) {
        if (!within(this.roots, p)) continue;
        const rel = p.slice(prefix.length);
        const folders = rel.split('/').slice(0, -1);
        // The disk walk enters no hidden or skipped folder; neither does this one.
        if (folders.some((f) => SKIP_DIRS.has(f) || f.startsWith('.'))) continue;
        if (folders.length && !mayHold(folders.join('/'))) continue;
        if (isMatch(rel)) out.push(p);
      }
    }
    out.sort();
    this.globs.set(key, out);
    return [...out];
  }
}
