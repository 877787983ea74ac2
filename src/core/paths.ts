/**
 * Pure POSIX path helpers and workspace path resolution for the core. The core may run in a
 * browser-like host, so it never imports `node:path`; every path it sees is absolute and uses `/`
 * (see host.ts). A Windows drive prefix such as `c:/` is kept as part of the root.
 *
 * `resolveInWorkspace` is the single gate for `{ file: ... }` and `context:` references: it
 * refuses absolute and escaping references lexically, and, when the host can resolve symbolic
 * links (`FileHost.realPath`), refuses a reference whose real path leaves every root's real path.
 * It never reads anything.
 */
import type { FileHost } from './host';

const DRIVE = /^[A-Za-z]:(?=\/|$)/;

/** The root prefix of a path: '/', 'c:/', or '' for a relative path. */
function rootOf(path: string): string {
  const drive = DRIVE.exec(path);
  if (drive) return path.charAt(drive[0].length) === '/' ? drive[0] + '/' : drive[0];
  return path.startsWith('/') ? '/' : '';
}

export function isAbsolute(path: string): boolean {
  return rootOf(path) !== '';
}

/**
 * Collapses `.`, `..` and repeated slashes. A `..` that would climb above an absolute root is
 * dropped (as POSIX does for `/..`); for relative paths leading `..` segments are kept.
 * The result has no trailing slash except for a bare root.
 */
export function normalize(path: string): string {
  const root = rootOf(path);
  const rest = path.slice(root.length);
  const out: string[] = [];
  for (const seg of rest.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!root) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const body = out.join('/');
  if (root) return root + body;
  return body || '.';
}

/** Joins segments and normalizes; an absolute segment restarts the path (like path.posix.resolve without cwd). */
export function join(...parts: string[]): string {
  let acc = '';
  for (const p of parts) {
    if (!p) continue;
    if (isAbsolute(p)) acc = p;
    else acc = acc ? `${acc}/${p}` : p;
  }
  return normalize(acc || '.');
}

export function dirname(path: string): string {
  const n = normalize(path);
  const root = rootOf(n);
  const i = n.lastIndexOf('/');
  if (i < root.length) return root || '.';
  if (i === -1) return '.';
  return n.slice(0, i) || root || '.';
}

export function basename(path: string): string {
  const n = normalize(path);
  const i = n.lastIndexOf('/');
  return i === -1 ? n : n.slice(i + 1);
}

/** True when `path` is `root` itself or lies below it (lexically). */
/**
 * A glob pattern that climbs out of its folder (`../fixtures/*.yaml`) as the folder it names and
 * the rest of the pattern, so hosts walk it from there.
 */
export function climbGlob(dir: string, pattern: string): { base: string; pattern: string } {
  let base = dir;
  let pat = pattern;
  while (pat.startsWith('../')) {
    base = base.slice(0, Math.max(base.lastIndexOf('/'), 0)) || '/';
    pat = pat.slice(3);
  }
  return { base, pattern: pat };
}

export function isInside(root: string, path: string): boolean {
  const r = normalize(root);
  const p = normalize(path);
  if (p === r) return true;
  const prefix = r.endsWith('/') ? r : `${r}/`;
  return p.startsWith(prefix);
}

/** Relative path from folder `from` to `to` (both absolute or both relative), POSIX style. */
export function relative(from: string, to: string): string {
  const f = normalize(from);
  const t = normalize(to);
  if (f === t) return '';
  if (rootOf(f) !== rootOf(t)) return t;
  const fs = f.slice(rootOf(f).length).split('/').filter((s) => s && s !== '.');
  const ts = t.slice(rootOf(t).length).split('/').filter((s) => s && s !== '.');
  let i = 0;
  while (i < fs.length && i < ts.length && fs[i] === ts[i]) i++;
  const up = fs.slice(i).map(() => '..');
  return [...up, ...ts.slice(i)].join('/');
}

export interface ResolvedReference {
  /** Absolute, normalized path inside a workspace root. */
  path?: string;
  /** Why the reference was refused (shown to the user). */
  error?: string;
}

/**
 * Resolves a reference written in `fromFile` (e.g. `../policy/support.md`) against that file's
 * folder. Refuses empty, absolute and home-relative references and any that land outside every
 * workspace root, lexically or through a symbolic link. Backslashes are read as separators, so
 * references written on Windows work. The path returned is the one written (links unresolved),
 * so it reads the same in findings and dependency lists.
 */
export function resolveInWorkspace(host: Pick<FileHost, 'roots' | 'realPath'>, fromFile: string, ref: string): ResolvedReference {
  const written = ref.trim();
  if (!written) return { error: 'the file reference is empty' };
  if (written.includes('\0')) return { error: 'the file reference contains a NUL character' };
  const slashed = written.replace(/\\/g, '/');
  if (isAbsolute(slashed) || slashed.startsWith('//')) {
    return { error: `'${written}' is an absolute path; write it relative to ${basename(fromFile)} so it stays inside the workspace` };
  }
  if (slashed === '~' || slashed.startsWith('~/')) {
    return { error: `'${written}' points into the home folder; only files inside the workspace can be referenced` };
  }
  const resolved = join(dirname(fromFile), slashed);
  if (!isAbsolute(resolved)) return { error: `'${written}' cannot be resolved: ${fromFile} is not an absolute path` };
  if (!host.roots.some((root) => isInside(root, resolved))) {
    return { error: `'${written}' resolves to ${resolved}, outside the workspace` };
  }
  const link = linkOutside(host, resolved);
  if (link) return { error: `'${written}' ${link.direct ? 'is a symbolic link' : 'leads through a symbolic link'} to ${link.target}, outside the workspace` };
  return { path: resolved };
}

/**
 * Where `path` really leads when a symbolic link on the way takes it out of every root (roots
 * compared by their own real paths, so a workspace opened through a link still works).
 * `direct` is true when the file itself is the link, false when a folder on its way is.
 */
export function linkOutside(host: Pick<FileHost, 'roots' | 'realPath'>, path: string): { target: string; direct: boolean } | undefined {
  if (!host.realPath) return undefined;
  const real = host.realPath(path);
  // A missing file has no real path: reading it fails anyway, and nothing is leaked.
  if (real === undefined || real === path) return undefined;
  const realRoots = host.roots.map((r) => host.realPath!(r) ?? r);
  if (realRoots.some((r) => isInside(r, real))) return undefined;
  const dir = host.realPath(dirname(path));
  return { target: real, direct: dir === undefined || join(dir, basename(path)) !== real };
}
