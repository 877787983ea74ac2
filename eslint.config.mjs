// Lint rules that keep the layers in their directions (docs/ARCHITECTURE.md):
// core -> nothing; server -> core; cli -> core + node + lib + service; lib (the npm library) -> core
// + node; service -> lib + core + node; extension -> protocol only (types from core); webview ->
// protocol only, types included. Elsewhere `import type` across layers is allowed.
import tseslint from 'typescript-eslint';

const editorApis = ['vscode', 'vscode-languageserver', 'vscode-languageserver/*', 'vscode-languageclient', 'vscode-languageclient/*', 'vscode-languageserver-textdocument'];

const restrict = (patterns, message) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: patterns, message, allowTypeImports: true }] }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'examples/**', 'test-results/**'] },
  {
    files: ['src/**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: restrict([...editorApis, '../server/*', '../extension/*', '../cli/*', '../webview/*', '../node/*', '../../server/*', '../../extension/*', '../../cli/*', '../../webview/*', '../../node/*', '../lib/*', '../../lib/*', '../service/*', '../../service/*', 'node:*', 'fs', 'path', 'child_process'], 'The core is pure: no editor APIs, no Node built-ins, no outer layers.'),
  },
  {
    files: ['src/server/**/*.ts'],
    rules: { ...restrict(['vscode', 'vscode-languageclient', 'vscode-languageclient/*', '../extension/*', '../webview/*', '../cli/*'], 'The server speaks LSP only; it never imports the client or editor APIs.'), 'no-console': 'error' },
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: restrict(['../core/*', '../core/**', '../server/*', '../cli/*', '../node/*', 'vscode-languageserver', 'vscode-languageserver/*', 'js-tiktoken', 'js-tiktoken/*', 'yaml'], 'The extension host stays thin: parsing, counting and assembly run in the language server.'),
  },
  {
    // Not even types from the core: the page's types all come from src/protocol/.
    files: ['src/webview/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: [...editorApis, '../server/*', '../extension/*', '../node/*', 'node:*'], message: "Can't use vscode in the webview: it renders snapshots it is sent.", allowTypeImports: true },
            { group: ['../core/*', '../core/**', '../../core/*', '../../core/**'], message: 'The webview takes its types from src/protocol/ (preview.ts re-exports the core types it needs).' },
          ],
        },
      ],
    },
  },
  {
    // The npm library: core and the disk host only, so `import 'context-lens'` never loads editor or LSP code.
    files: ['src/lib/**/*.ts'],
    rules: restrict([...editorApis, '../server/*', '../extension/*', '../webview/*', '../cli/*', '../service/*', '../protocol/*'], 'The library is the core as an npm API: no editor APIs, no LSP, no CLI or service.'),
  },
  {
    // The HTTP service: the library, core and node only; it logs to stderr, never to stdout (stdout carries the listening line).
    files: ['src/service/**/*.ts'],
    rules: { ...restrict([...editorApis, '../server/*', '../extension/*', '../webview/*', '../cli/*', '../protocol/*'], 'The service runs on the library: no editor APIs, no LSP, no CLI.'), 'no-console': 'error' },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: restrict(['vscode', '../server/*', '../extension/*', '../webview/*', '../node/*', 'node:*'], 'Protocol modules hold message types only.'),
  },
);
