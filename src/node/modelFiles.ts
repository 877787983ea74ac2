/**
 * The model files a Node host installs into the core's registry: the workspace's
 * `.context-lens/models.yaml` (the nearest one from a folder up to its repository root) and the
 * user's `$XDG_CONFIG_HOME/context-lens/models.yaml` (default `~/.config/…`). docs/models.md has
 * the format; src/core/models/file.ts parses it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { useModelFiles, type ModelLayer } from '../core/models';
import { parseModelFile } from '../core/models/file';

/** The model files that apply to `dirs` (workspace files first, in the order of `dirs`, then the user's). */
export function modelFilePaths(dirs: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const start of dirs) {
    let dir = path.resolve(start);
    for (;;) {
      const p = path.join(dir, '.context-lens', 'models.yaml');
      if (fs.existsSync(p)) {
        if (!out.includes(p)) out.push(p);
        break;
      }
      if (fs.existsSync(path.join(dir, '.git'))) break;
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  const home = env.HOME || os.homedir();
  const base = env.XDG_CONFIG_HOME || (home ? path.join(home, '.config') : undefined);
  if (base) {
    const user = path.join(base, 'context-lens', 'models.yaml');
    if (fs.existsSync(user) && !out.includes(user)) out.push(user);
  }
  return out;
}

/**
 * Reads the model files of `dirs` and installs them (replacing any installed before). Problems
 * (an unreadable file, a bad entry, which is skipped) go to `warn`, one line each.
 */
export function installModelFiles(dirs: readonly string[], warn: (line: string) => void, env: NodeJS.ProcessEnv = process.env): readonly ModelLayer[] {
  const layers: ModelLayer[] = [];
  for (const p of modelFilePaths(dirs, env)) {
    let text: string;
    try {
      text = fs.readFileSync(p, 'utf8');
    } catch (e) {
      warn(`cannot read ${p}: ${(e as Error).message}`);
      continue;
    }
    const r = parseModelFile(text, p.split(path.sep).join('/'));
    for (const e of r.errors) warn(e);
    layers.push(r.layer);
  }
  useModelFiles(layers);
  return layers;
}
