/**
 * Makes sure dist/media/webview.js and webview.css exist and are newer than their sources. `npm
 * test` builds everything first, so this normally does nothing; when the tier runs alone
 * (`npx vitest run test/webview`) after a source change, it rebuilds just the webview entry with the
 * options esbuild.js uses for it, so the tier never tests a stale bundle and does not depend on the
 * other entries building.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

export const REPO = resolve(__dirname, '..', '..');
export const MEDIA = join(REPO, 'dist', 'media');

function newestMtime(paths: string[]): number {
  let newest = 0;
  for (const p of paths) {
    if (!existsSync(p)) continue;
    const st = statSync(p);
    if (st.isDirectory()) newest = Math.max(newest, newestMtime(readdirSync(p).map((f) => join(p, f))));
    else newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

export async function ensureWebviewBundle(): Promise<void> {
  const js = join(MEDIA, 'webview.js');
  const css = join(MEDIA, 'webview.css');
  const sources = newestMtime([join(REPO, 'src', 'webview'), join(REPO, 'src', 'protocol'), join(REPO, 'src', 'core', 'types.ts')]);
  const built = existsSync(js) && existsSync(css) ? Math.min(statSync(js).mtimeMs, statSync(css).mtimeMs) : 0;
  if (built >= sources) return;
  mkdirSync(MEDIA, { recursive: true });
  // Mirrors the webview target of esbuild.js.
  await build({
    entryPoints: [join(REPO, 'src', 'webview', 'main.ts')],
    outfile: js,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome114',
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'warning',
  });
  copyFileSync(join(REPO, 'src', 'webview', 'style.css'), css);
}
