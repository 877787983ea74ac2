/**
 * Entry point of the Context Lens language server (bundled to dist/server.js). Runs over stdio
 * (`--stdio`, what the extension and the tests use) or node IPC (`--node-ipc`). In stdio mode
 * stdout carries LSP frames only, so the console is redirected to the LSP log before anything
 * else can print.
 */
import { ProposedFeatures, createConnection } from 'vscode-languageserver/node';
import { startServer } from './server';

type Sink = (message: string) => void;
let sink: Sink = (message) => process.stderr.write(message + '\n');

/* eslint-disable no-console -- this block is the one place the console is touched: it is rerouted. */
const format = (args: unknown[]): string => args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? (a.stack ?? a.message) : safeJson(a))).join(' ');
console.log = (...args: unknown[]) => sink(format(args));
console.info = console.log;
console.debug = console.log;
console.warn = (...args: unknown[]) => sink(`[warn] ${format(args)}`);
console.error = (...args: unknown[]) => sink(`[error] ${format(args)}`);
console.trace = console.log;
/* eslint-enable no-console */

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

const connection = createConnection(ProposedFeatures.all);
sink = (message) => connection.console.log(message);

// A bug in one handler must not take the server (and every open editor's diagnostics) down.
process.on('uncaughtException', (e) => connection.console.error(`uncaught: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
process.on('unhandledRejection', (e) => connection.console.error(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));

startServer(connection);
connection.listen();
