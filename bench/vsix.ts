/** Size of the packaged .vsix (issue 5 target: under 5 MB). Packages it first. */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export async function run(): Promise<Record<string, unknown>> {
  const root = resolve(__dirname, '../..');
  const r = spawnSync(process.execPath, ['scripts/package.mjs'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`packaging failed: ${r.stderr}`);
  const vsix = readdirSync(join(root, 'out')).filter((f) => f.endsWith('.vsix')).map((f) => join(root, 'out', f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const bytes = statSync(vsix).size;
  console.log(`.vsix ${(bytes / 1024 / 1024).toFixed(2)} MB (${bytes.toLocaleString('en-US')} bytes)  target < 5 MB: ${bytes < 5 * 1024 * 1024 ? 'met' : 'NOT met'}`);
  return { path: vsix, bytes, targetBytes: 5 * 1024 * 1024, met: bytes < 5 * 1024 * 1024 };
}
