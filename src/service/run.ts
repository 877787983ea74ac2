/**
 * The command line of the service, shared by `ctxlens serve` (src/cli/serve.ts) and
 * `node dist/service.js`: starts the context-assembly service over the templates under --root.
 * The first line on stdout is `listening on http://HOST:PORT` (with the bound port when --port 0
 * asked for a free one), so scripts and tests can read where it is. SIGINT and SIGTERM close the
 * server and end the process with 0.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CACHE_SIZE, DEFAULT_HOST, DEFAULT_MAX_BODY, DEFAULT_PORT, DEFAULT_RESPONSE_CACHE, createService } from './server';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

export const SERVE_USAGE = `ctxlens serve [--root DIR] [--host 127.0.0.1] [--port ${DEFAULT_PORT}] [--max-body 2mb] [--cache-size ${DEFAULT_CACHE_SIZE}] [--response-cache ${DEFAULT_RESPONSE_CACHE}] [--model M]`;

/** `2097152`, `512kb`, `2mb` as bytes. */
export function parseSize(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|k|kib|mb|m|mib)?$/i.exec(s.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase();
  const mult = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1;
  const n = Math.floor(Number(m[1]) * mult);
  return n > 0 ? n : undefined;
}

function usage(io: Io, message: string): number {
  io.err(`ctxlens serve: ${message}\n\nUsage: ${SERVE_USAGE}\n`);
  return 2;
}

/** Starts the service; returns 0 once listening is under way, 2 on a usage error. */
export function serveMain(args: string[], io: Io, opts: { signals?: boolean } = { signals: true }): number {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      allowPositionals: false,
      options: { root: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, 'max-body': { type: 'string' }, 'cache-size': { type: 'string' }, 'response-cache': { type: 'string' }, model: { type: 'string' } },
    }).values;
  } catch (e) {
    return usage(io, (e as Error).message);
  }
  const root = path.resolve(io.cwd, (values.root as string | undefined) ?? '.');
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return usage(io, `--root ${root} is not a folder`);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(io, '--port takes a port number (0 picks a free one)');
  const maxBody = values['max-body'] === undefined ? DEFAULT_MAX_BODY : parseSize(values['max-body'] as string);
  if (maxBody === undefined) return usage(io, '--max-body takes a size such as 2097152, 512kb or 2mb');
  const cacheSize = values['cache-size'] === undefined ? DEFAULT_CACHE_SIZE : Number(values['cache-size']);
  if (!Number.isInteger(cacheSize) || cacheSize < 0) return usage(io, '--cache-size takes a whole number (0 turns the context_id cache off)');
  const responseCache = values['response-cache'] === undefined ? DEFAULT_RESPONSE_CACHE : Number(values['response-cache']);
  if (!Number.isInteger(responseCache) || responseCache < 0) return usage(io, '--response-cache takes a whole number (0 turns the response cache off)');
  const service = createService({ root, host: (values.host as string | undefined) ?? DEFAULT_HOST, port, maxBody, cacheSize, responseCache, defaultModel: values.model as string | undefined });
  service
    .listen()
    .then((a) => {
      io.out(`listening on ${a.url}\n`);
      io.err(`ctxlens serve: templates under ${root}; POST /v1/context, POST /v1/validate, GET /healthz, GET /metrics\n`);
    })
    .catch((e: NodeJS.ErrnoException) => {
      io.err(`ctxlens serve: cannot listen: ${e.code === 'EADDRINUSE' ? `port ${port} is in use` : e.message}\n`);
      process.exitCode = 2;
    });
  if (opts.signals !== false) {
    const stop = () => {
      void service.close().then(() => process.exit(process.exitCode ?? 0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  return 0;
}
