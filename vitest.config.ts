import { defineConfig } from 'vitest/config';

// One run covers every tier. Tiers that start processes or browsers (lsp, webview, e2e) run their
// files one at a time so the two cores of a CI machine are not oversubscribed.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
