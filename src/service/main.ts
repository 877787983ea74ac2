/**
 * `node dist/service.js [--root DIR] [--host H] [--port P] ...`: the service without the rest of
 * the CLI (the same command line as `ctxlens serve`).
 */
import { serveMain } from './run';

if (require.main === module) {
  const code = serveMain(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), cwd: process.cwd() });
  if (code !== 0) process.exitCode = code;
}
