// Configuration of @vscode/test-cli (`npx vscode-test`): the same integration suite that
// `npm run test:electron` (test/electron/runTest.ts) and the code-server tier
// (test/e2e/electron-suite.test.ts) run. Compile it first: `npm run build && node test/electron/build.mjs`.
// The suite only reads the workspace, so it opens the repository's examples/ directly.
import { defineConfig } from '@vscode/test-cli';

export default defineConfig({
  label: 'integration',
  files: '.cache/electron-suite/suite/*.test.js',
  workspaceFolder: './examples',
  mocha: { ui: 'tdd', timeout: 60_000, color: true },
  launchArgs: ['--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes'],
});
