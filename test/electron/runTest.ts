/**
 * `npm run test:electron`: runs the integration suite (test/electron/suite/, compiled to
 * .cache/electron-suite/ by test/electron/build.mjs) in a desktop VS Code with @vscode/test-electron.
 * The extension under development is the repository itself (its dist/ must be built); the workspace
 * is a temporary copy of examples/. VS Code is downloaded into .vscode-test/ unless
 * VSCODE_EXECUTABLE names an installed one (e.g. /usr/share/code/code); VSCODE_TEST_VERSION picks
 * the version to download (default: stable). CONTEXT_LENS_SUITE_GREP runs a subset.
 * On machines without a desktop VS Code download, the same suite runs inside code-server's
 * extension host as part of `npm test` (test/e2e/electron-suite.test.ts).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runTests } from '@vscode/test-electron';

/** The repository root: the nearest folder above this file whose package.json is Context Lens's. */
function repoRoot(): string {
  for (let dir = __dirname, i = 0; i < 10; i++, dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'context-lens') return dir;
  }
  throw new Error(`no context-lens package.json above ${__dirname}`);
}

async function main(): Promise<void> {
  const root = repoRoot();
  for (const f of ['dist/extension.js', 'dist/server.js']) {
    if (!existsSync(join(root, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
  }
  const workspace = mkdtempSync(join(tmpdir(), 'context-lens-electron-'));
  cpSync(join(root, 'examples'), workspace, { recursive: true });
  try {
    const code = await runTests({
      extensionDevelopmentPath: root,
      extensionTestsPath: join(__dirname, 'suite', 'index.js'),
      ...(process.env.VSCODE_EXECUTABLE ? { vscodeExecutablePath: process.env.VSCODE_EXECUTABLE } : { version: process.env.VSCODE_TEST_VERSION ?? 'stable' }),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes'],
    });
    process.exitCode = code;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`test:electron: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
