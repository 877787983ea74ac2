/**
 * A worker thread of the service (`dist/serviceWorker.js`): it answers request bodies (answer.ts)
 * that the serving thread sends it, one at a time, so parsing, checking and assembling never hold
 * up the thread that accepts connections, reads bodies and answers `/healthz`.
 *
 * Messages in: `{ type: 'request', id, route, body }` and, for a validation by `context_id` that
 * asked for its evidence, `{ type: 'evidence', id, found }` (what the store answered, store.ts). Messages out: `{ id, answer }`,
 * `{ id, need }` (the `context_id` whose evidence the server keeps), or `{ id, failed }` (an
 * internal error, logged redacted on stderr); `{ ready: true }` once, when it has loaded.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Lookup } from './store';
import { redactSecrets } from '../core/text/secrets';
import { createAnswerer } from './answer';
import type { Answer, AnswerOptions, AnswerRoute, NeedsEvidence } from './answer';

export type ToWorker = { type: 'request'; id: number; route: AnswerRoute; body: Uint8Array } | { type: 'evidence'; id: number; found: Lookup };
export type FromWorker = { ready: true } | { id: number; answer: Answer } | { id: number; need: string } | { id: number; failed: string };

/** Marks the worker's `workerData`, so the bundle never starts answering in another thread by mistake. */
export const WORKER_MARK = 'ctxlens-service-worker';

/** The nice value of a worker thread (Linux): below the serving thread, which answers `/healthz`. */
export const WORKER_NICE = 10;

function start(): void {
  const port = parentPort;
  const data = workerData as { mark?: string; options?: AnswerOptions } | undefined;
  if (!port || data?.mark !== WORKER_MARK || !data.options) return;
  // Assembling is batch work beside the serving thread's I/O: this thread yields the CPU to it.
  // (On Linux the nice value is the calling thread's; elsewhere it may be the process's, so it is
  // only lowered where it is per thread.)
  if (process.platform === 'linux') {
    try {
      setPriority(WORKER_NICE);
    } catch {
      // Not allowed here: the worker runs at the serving thread's priority.
    }
  }
  const answerer = createAnswerer(data.options);
  const waiting = new Map<number, NeedsEvidence['resume']>();
  const post = (m: FromWorker) => port.postMessage(m);
  post({ ready: true });
  const run = (id: number, what: string, f: () => Answer | NeedsEvidence) => {
    try {
      const a = f();
      if ('need' in a) {
        waiting.set(id, a.resume);
        post({ id, need: a.need });
      } else {
        // The JSON text crosses as bytes in a buffer of its own, moved (not copied) to the serving thread.
        if (typeof a.payload !== 'string') post({ id, answer: a });
        else {
          const bytes = new Uint8Array(Buffer.byteLength(a.payload));
          Buffer.from(bytes.buffer).write(a.payload, 'utf8');
          port.postMessage({ id, answer: { ...a, payload: bytes } } satisfies FromWorker, [bytes.buffer]);
        }
      }
    } catch (e) {
      // The log line is redacted too: an exception's message can quote request values.
      process.stderr.write(redactSecrets(`ctxlens serve: internal error on ${what}: ${(e as Error).stack ?? String(e)}`) + '\n');
      post({ id, failed: 'internal' });
    }
  };
  port.on('message', (m: ToWorker) => {
    if (m.type === 'request') run(m.id, `POST ${m.route}`, () => answerer.answer(m.route, m.body));
    else {
      const resume = waiting.get(m.id);
      waiting.delete(m.id);
      if (resume) run(m.id, 'POST /v1/validate', () => resume(m.found));
    }
  });
}

start();
