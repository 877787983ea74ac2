import { configDefaults, defineConfig } from 'vitest/config';

// One run covers every tier. Tiers that start processes or browsers (lsp, webview, e2e) run their
// files one at a time so the two cores of a CI machine are not oversubscribed.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/electron is the vscode-API suite: it runs inside an extension host (test/e2e/electron-suite.test.ts), not in vitest.
    exclude: [...configDefaults.exclude, 'test/electron/**'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
