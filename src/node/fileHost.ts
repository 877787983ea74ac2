/**
 * FileHost over the local disk, for the CLI and the language server (which layers open editor
 * buffers on top). Globs walk the tree with a bound and skip folders that never hold user files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import type { FileHost } from '../core/host';

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', '.cache', '.vscode-test']);
/** Upper bound on entries visited by one glob, so a huge tree cannot stall a request. */
const MAX_WALK = 50_000;

export function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

export class DiskFileHost implements FileHost {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map((r) => toPosix(path.resolve(r)));
  }

  readFile(p: string): string | undefined {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  }

  size(p: string): number | undefined {
    try {
      const st = fs.statSync(p);
      return st.isFile() ? st.size : undefined;
    } catch {
      return undefined;
    }
  }

  glob(dir: string, pattern: string): string[] {
    const isMatch = picomatch(pattern, { dot: false });
    const out: string[] = [];
    let visited = 0;
    const walk = (abs: string, rel: string): void => {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(abs, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (++visited > MAX_WALK) return;
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('.')) walk(`${abs}/${e.name}`, childRel);
        } else if (e.isFile() && isMatch(childRel)) {
          out.push(`${abs}/${e.name}`);
        }
      }
    };
    // Patterns that climb out of dir (`../fixtures/*.yaml`) are walked from the folder they name.
    let base = dir;
    let pat = pattern;
    while (pat.startsWith('../')) {
      base = base.slice(0, Math.max(base.lastIndexOf('/'), 0)) || '/';
      pat = pat.slice(3);
    }
    if (pat !== pattern) return this.glob(base, pat);
    walk(dir, '');
    // Nothing outside the workspace is ever offered to the core.
    return out.filter((p) => this.roots.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : r + '/'))).sort();
  }
}
