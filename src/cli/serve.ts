/**
 * `ctxlens serve`: the context-assembly service (src/service) from the CLI. The command line is
 * the service's own (src/service/run.ts), so `ctxlens serve` and `node dist/service.js` take the
 * same flags.
 */
export { SERVE_OPTIONS, SERVE_USAGE, serveMain as serve } from '../service/run';
