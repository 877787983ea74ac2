/**
 * The service's worker threads (worker.ts) and the queue in front of them. The serving thread
 * hands each request body to an idle worker, or queues it; a full queue sheds the request
 * (`Overloaded`, answered 503 with `retry-after`), so hostile or heavy traffic makes requests wait
 * or be refused but never stops the serving thread from reading, refusing and answering
 * `/healthz`. A worker that runs one request longer than the work limit, or that dies (its heap is
 * capped, so a request that would exhaust memory ends the worker and not the service), is replaced;
 * the request it held is answered with an error and the others go on.
 */
import { Worker } from 'node:worker_threads';
import type { Lookup } from './store';
import type { Answer, AnswerOptions, AnswerRoute } from './answer';
import { WORKER_MARK } from './worker';
import type { FromWorker, ToWorker } from './worker';

export class Overloaded extends Error {}

/** The worker met an internal error on the request (and logged it, redacted). */
export class WorkerFailed extends Error {}

/** The worker holding a request stopped (work limit, heap limit or a crash). */
export class WorkerLost extends Error {
  constructor(readonly reason: 'timeout' | 'stopped') {
    super(reason === 'timeout' ? 'the request took longer than the work limit' : 'the worker answering the request stopped');
  }
}

export interface PoolOptions {
  /** The worker script (dist/serviceWorker.js). */
  file: string;
  size: number;
  answer: AnswerOptions;
  /** Requests waiting for a worker at most; more are shed. */
  maxQueue: number;
  /** Milliseconds one request may run in a worker before the worker is replaced. */
  maxWorkMs: number;
  /** Old-generation heap of each worker, in MB. */
  heapMb: number;
  /** What the server's store keeps under a `context_id` (a shared store answers asynchronously). */
  evidence(id: string): Promise<Lookup>;
}

interface Job {
  id: number;
  route: AnswerRoute;
  body: Uint8Array;
  resolve(a: Answer): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded and said so: the work limit counts from here, not its start-up. */
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export class AnswerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** Workers replaced since the start (a metric). */
  replaced = 0;

  constructor(private readonly options: PoolOptions) {
    for (let i = 0; i < options.size; i++) this.slots.push(this.spawn());
  }

  get queued(): number {
    return this.queue.length;
  }

  get busy(): number {
    return this.slots.filter((s) => s.job).length;
  }

  get size(): number {
    return this.slots.length;
  }

  run(route: AnswerRoute, body: Uint8Array): Promise<Answer> {
    if (this.closed) return Promise.reject(new WorkerLost('stopped'));
    const idle = this.slots.find((s) => !s.job);
    if (!idle && this.queue.length >= this.options.maxQueue) return Promise.reject(new Overloaded(`${this.queue.length} requests are waiting for the service's ${this.slots.length} worker(s)`));
    return new Promise<Answer>((resolve, reject) => {
      const job: Job = { id: this.nextId++, route, body, resolve, reject };
      if (idle) this.dispatch(idle, job);
      else this.queue.push(job);
    });
  }

  /** Ends the workers; requests still waiting or running are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new WorkerLost('stopped'));
    await Promise.all(
      this.slots.map((s) => {
        clearTimeout(s.timer);
        s.job?.reject(new WorkerLost('stopped'));
        s.job = undefined;
        return s.worker.terminate();
      }),
    );
  }

  private spawn(): Slot {
    const worker = new Worker(this.options.file, {
      workerData: { mark: WORKER_MARK, options: this.options.answer },
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, ready: false };
    worker.on('message', (m: FromWorker) => this.receive(slot, m));
    worker.on('error', () => undefined);
    worker.on('exit', () => this.lost(slot, 'stopped'));
    // Workers do not keep the process alive; the server does. (After the listeners: a 'message'
    // listener refs the worker's port again.)
    worker.unref();
    return slot;
  }

  private dispatch(slot: Slot, job: Job): void {
    slot.job = job;
    if (slot.ready) this.startTimer(slot);
    const m: ToWorker = { type: 'request', id: job.id, route: job.route, body: job.body };
    // A body in a buffer of its own is moved to the worker; a small one (in Node's shared pool) is copied.
    const own = job.body.byteOffset === 0 && job.body.byteLength === job.body.buffer.byteLength && job.body.buffer instanceof ArrayBuffer;
    slot.worker.postMessage(m, own ? [job.body.buffer as ArrayBuffer] : []);
  }

  private startTimer(slot: Slot): void {
    slot.timer = setTimeout(() => this.lost(slot, 'timeout'), this.options.maxWorkMs);
    slot.timer.unref?.();
  }

  private receive(slot: Slot, m: FromWorker): void {
    if ('ready' in m) {
      slot.ready = true;
      if (slot.job) this.startTimer(slot);
      return;
    }
    const job = slot.job;
    if (!job || job.id !== m.id) return;
    if ('need' in m) {
      // The worker waits for the store's answer (bounded by the store's timeout and the work limit).
      void this.options.evidence(m.need).then((found) => {
        if (slot.job !== job || this.closed) return;
        const reply: ToWorker = { type: 'evidence', id: m.id, found };
        slot.worker.postMessage(reply);
      });
      return;
    }
    clearTimeout(slot.timer);
    slot.job = undefined;
    if ('answer' in m) job.resolve(m.answer);
    else job.reject(new WorkerFailed(m.failed));
    this.next(slot);
  }

  private next(slot: Slot): void {
    const job = this.queue.shift();
    if (job) this.dispatch(slot, job);
  }

  /** The worker of `slot` stopped or overran: its request fails, a new worker takes its place. */
  private lost(slot: Slot, reason: 'timeout' | 'stopped'): void {
    const at = this.slots.indexOf(slot);
    if (at < 0 || this.closed) return;
    clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = undefined;
    this.slots.splice(at, 1);
    if (reason === 'timeout') void slot.worker.terminate();
    job?.reject(new WorkerLost(reason));
    this.replaced++;
    const fresh = this.spawn();
    this.slots.push(fresh);
    this.next(fresh);
  }
}
