/**
 * Another editor as the client: Debian's Neovim (installed by scripts/prereqs.mjs), headless, runs
 * the built language server (`dist/server.js --stdio`, as the VS Code extension starts it) through
 * its own LSP client with the small init in ./neovim/init.lua, opens examples/defects/leaky.prompt,
 * waits (bounded, vim.wait) for the diagnostics and writes them, the code lenses and a hover to a
 * JSON file. The planted findings of examples/README.md for that file must be there with their rule
 * ids as diagnostic codes.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const SERVER = join(ROOT, 'dist/server.js');
const INIT = join(__dirname, 'neovim', 'init.lua');
const FILE = 'defects/leaky.prompt';

function nvimPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'nvim'))) return join(dir, 'nvim');
  }
  return undefined;
}

interface NvimReport {
  nvim: string;
  filetype: string;
  attached: boolean;
  found: boolean;
  waited_ms: number;
  clients: Array<{ name: string }>;
  diagnostics: Array<{ lnum: number; col: number; severity: number; source: string | null; code: string | null; message: string }>;
  lenses: Array<{ line: number; title: string; command: string }>;
  hover: string | null;
  error?: string;
}

/** Planted findings of examples/README.md in one file. */
function plantedIn(file: string): Array<{ line: number; rule: string; severity: string }> {
  const text = readFileSync(join(ROOT, 'examples/README.md'), 'utf8');
  return [...text.matchAll(/^\| `([^`]+)` \| (\d+) \| `([a-z0-9-]+)` \| (error|warning|info|hint) \|/gm)]
    .filter((m) => m[1] === file)
    .map((m) => ({ line: Number(m[2]), rule: m[3]!, severity: m[4]! }));
}

// vim.diagnostic.severity: ERROR 1, WARN 2, INFO 3, HINT 4 (the LSP numbers).
const SEVERITY: Record<string, number> = { error: 1, warning: 2, info: 3, hint: 4 };

describe('Neovim (headless) as the language client of dist/server.js', () => {
  let tmp: string;
  let report: NvimReport;
  let stderr = '';
  let ms = 0;

  beforeAll(() => {
    const nvim = nvimPath();
    if (!nvim) throw new Error('nvim is not installed: run `node scripts/prereqs.mjs` (installs Debian\'s neovim) or `apt-get install -y neovim`');
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first`);
    tmp = mkdtempSync(join(tmpdir(), 'ctxlens-nvim-'));
    const ws = join(tmp, 'examples');
    cpSync(join(ROOT, 'examples'), ws, { recursive: true });
    const xdg = join(tmp, 'xdg');
    for (const d of ['config', 'data', 'state', 'cache']) mkdirSync(join(xdg, d), { recursive: true });
    const out = join(tmp, 'report.json');
    // Hover on the slot name inside {{complaint}} (0-based line and character, as LSP counts).
    const lines = readFileSync(join(ws, FILE), 'utf8').split('\n');
    const hoverLine = lines.findIndex((l) => l.includes('{{complaint}}'));
    const hoverCol = lines[hoverLine]!.indexOf('{{complaint}}') + 3;
    const t0 = Date.now();
    const r = spawnSync(nvim, ['--headless', '-n', '-i', 'NONE', '-u', INIT, FILE], {
      cwd: ws,
      env: {
        ...process.env,
        // Nothing from a user's configuration, and nothing written into their home.
        XDG_CONFIG_HOME: join(xdg, 'config'),
        XDG_DATA_HOME: join(xdg, 'data'),
        XDG_STATE_HOME: join(xdg, 'state'),
        XDG_CACHE_HOME: join(xdg, 'cache'),
        CTXLENS_NODE: process.execPath,
        CTXLENS_SERVER: SERVER,
        CTXLENS_ROOT: ws,
        CTXLENS_NVIM_OUT: out,
        CTXLENS_NVIM_HOVER: `${hoverLine}:${hoverCol}`,
        CTXLENS_NVIM_TIMEOUT_MS: '30000',
      },
      encoding: 'utf8',
      // Every wait inside is bounded by 30 s; this bounds the process as a whole.
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    ms = Date.now() - t0;
    stderr = `${r.error ? `${r.error.message}\n` : ''}${r.stderr ?? ''}`;
    if (!existsSync(out)) throw new Error(`nvim wrote no report (exit ${r.status}, signal ${r.signal}):\n${stderr}\n${r.stdout}`);
    report = JSON.parse(readFileSync(out, 'utf8')) as NvimReport;
    process.stderr.write(`[neovim] nvim ${report.nvim}: report in ${ms} ms (diagnostics after ${report.waited_ms} ms)\n`);
  }, 150_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('starts the server for a .prompt buffer and receives the planted diagnostics with their rule ids', () => {
    expect(report.error, stderr).toBeUndefined();
    expect(report.filetype).toBe('dotprompt');
    expect(report.attached).toBe(true);
    expect(report.clients.map((c) => c.name)).toContain('context-lens');
    expect(report.found, `diagnostics seen: ${JSON.stringify(report.diagnostics)}`).toBe(true);
    const planted = plantedIn(FILE);
    expect(planted.length).toBeGreaterThanOrEqual(3);
    const codes = report.diagnostics.map((d) => d.code);
    expect(codes).toContain('slot-undefined');
    for (const p of planted) {
      const d = report.diagnostics.find((x) => x.code === p.rule && x.lnum + 1 === p.line);
      expect(d, `${p.rule} on line ${p.line} in ${JSON.stringify(report.diagnostics)}`).toBeDefined();
      expect(d!.severity).toBe(SEVERITY[p.severity]);
      expect(d!.source).toBe('context-lens');
    }
  });

  it('answers code lens and hover requests of the same client', () => {
    const titles = report.lenses.map((l) => l.title);
    expect(titles.some((t) => /tok/.test(t)), JSON.stringify(titles)).toBe(true);
    expect(titles.some((t) => t.startsWith('complaint · ')), JSON.stringify(titles)).toBe(true);
    expect(report.lenses.every((l) => l.command.startsWith('contextLens.'))).toBe(true);
    expect(report.hover).toMatch(/\*\*complaint\*\*/);
  });
});
