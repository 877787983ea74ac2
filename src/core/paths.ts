/**
 * Pure POSIX path helpers and workspace path resolution for the core. The core may run in a
 * browser-like host, so it never imports `node:path`; every path it sees is absolute and uses `/`
 * (see host.ts). A Windows drive prefix such as `c:/` is kept as part of the root.
 *
 * `resolveInWorkspace` is the single gate for `{ file: ... }` and `context:` references: it is
 * purely lexical (symlinks cannot be checked without the file system), refuses absolute and
 * escaping references, and never reads anything.
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
 * workspace root. Backslashes are read as separators, so references written on Windows work.
 */
export function resolveInWorkspace(host: Pick<FileHost, 'roots'>, fromFile: string, ref: string): ResolvedReference {
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
  return { path: resolved };
}
