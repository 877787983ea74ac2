/**
 * Starts the built service as a separate process (`node dist/cli.js serve --port 0 ...`), reads
 * the bound address from its first stdout line, and stops it with SIGTERM. Waits are on the
 * process's output with an upper bound, never on sleeps.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO } from '../lsp/harness';

export const CLI = path.join(REPO, 'dist', 'cli.js');

/** Builds dist/ when the CLI or the library bundle is missing (npm test builds first). */
export function ensureCliBuilt(): void {
  if (existsSync(CLI) && existsSync(path.join(REPO, 'dist', 'serviceWorker.js')) && existsSync(path.join(REPO, 'dist', 'lib', 'index.cjs'))) return;
  const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

export interface RunningService {
  url: string;
  proc: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Ends the process with SIGTERM; resolves with its exit code. */
  stop(): Promise<number | null>;
}

export function startService(args: string[], opts: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<RunningService> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd: opts.cwd ?? REPO, stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}) });
  const stdout: string[] = [];
  const stderr: string[] = [];
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve((exited = code))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the service printed no listening line within ${opts.timeoutMs ?? 20_000} ms; stderr: ${stderr.join('')}`));
    }, opts.timeoutMs ?? 20_000);
    let buf = '';
    proc.stdout!.setEncoding('utf8');
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (d: string) => stderr.push(d));
    proc.stdout!.on('data', (d: string) => {
      stdout.push(d);
      buf += d;
      const line = buf.split('\n')[0];
      if (!buf.includes('\n')) return;
      const m = /^listening on (http:\/\/\S+)$/.exec(line);
      clearTimeout(timer);
      if (!m) {
        proc.kill('SIGKILL');
        reject(new Error(`unexpected first line '${line}'`));
        return;
      }
      resolve({
        url: m[1],
        proc,
        stdout,
        stderr,
        stop: () => {
          if (exited !== undefined) return Promise.resolve(exited);
          proc.kill('SIGTERM');
          return exit;
        },
      });
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before listening; stderr: ${stderr.join('')}`));
    });
  });
}
