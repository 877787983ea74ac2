/**
 * `ctxlens check` on worker threads. The core's `checkFiles` is two steps over a sorted file list
 * (every template with its fixtures, then the configs and fixtures no template reached); each
 * step's items are independent, so the threads take contiguous batches of them (templates of one
 * folder share their configs' and fixtures' parses) and the findings are concatenated in the
 * serial order before they are grouped: the output is byte-identical to a serial run.
 *
 * `--jobs N` is N threads checking: the main thread and N - 1 workers. The main thread has the
 * code loaded and the files listed already, so it checks batches too instead of waiting: a worker
 * costs a second load of the bundle and its own warm-up, which on a small machine is most of what
 * it would save. The workers are this bundle (dist/cli.js) started again with `workerData` naming
 * the job; each reads the disk through its own snapshot host with the same roots as the main thread.
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { checkOrder, checkTemplate, checkUncovered, classifyFile, groupFindings } from '../core/analyze';
import type { FileHost } from '../core/host';
import type { Finding } from '../core/types';
import { DiskFileHost, SnapshotFileHost } from '../node/fileHost';

/** Marks the worker's `workerData`, so the bundle knows to serve batches instead of parsing argv. */
const WORKER_TAG = 'ctxlens-check-worker';

/** Fewer templates than this per worker are checked on the main thread: starting one costs more. */
const TEMPLATES_PER_WORKER = 48;
/** Most workers `--jobs auto` starts. */
const MAX_AUTO_JOBS = 8;

type Job = { id: number; step: 'templates' | 'uncovered'; paths: string[] };
type Reply = { id: number; templates?: Array<{ findings: Finding[]; covered: string[] }>; uncovered?: Finding[][]; error?: string };

/**
 * Threads `--jobs auto` checks with for this many templates on this machine (1: the main thread
 * alone): one per idle core, as `make -l` counts them (cores less the 1-minute load average). A
 * serial run already keeps more than one core busy (V8 compiles and collects on helper threads)
 * and each worker compiles the code again, so on a machine other jobs are loading, workers only
 * add work.
 */
export function autoJobs(templates: number): number {
  const idle = Math.round(availableParallelism() - loadavg()[0]);
  return Math.max(1, Math.min(idle, MAX_AUTO_JOBS, Math.floor(templates / TEMPLATES_PER_WORKER)));
}

/** Whether this bundle can start copies of itself (it cannot when run from the TypeScript sources). */
export function canStartWorkers(): boolean {
  return isMainThread && /\.c?js$/.test(__filename);
}

/** True inside a check worker; `serveCheckWorker` then answers the main thread's batches. */
export function isCheckWorker(): boolean {
  return !isMainThread && (workerData as { tag?: string } | null)?.tag === WORKER_TAG;
}

/** The worker's side: checks each batch it is sent and replies with the findings, in order. */
export function serveCheckWorker(): void {
  const { roots } = workerData as { roots: string[] };
  const host = new SnapshotFileHost(new DiskFileHost(roots, { cacheListings: true }));
  parentPort!.on('message', (job: Job) => {
    let reply: Reply;
    try {
      reply =
        job.step === 'templates'
          ? { id: job.id, templates: job.paths.map((p) => checkTemplate(host, p)) }
          : { id: job.id, uncovered: job.paths.map((p) => checkUncovered(host, p)) };
    } catch (e) {
      reply = { id: job.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
    }
    parentPort!.postMessage(reply);
  });
}

/** Contiguous batches of about `size` items, in order. */
function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A pool of check workers that hands out batches as workers become free. */
class Pool {
  private readonly workers: Worker[] = [];
  private nextId = 0;

  constructor(jobs: number, roots: readonly string[]) {
    for (let i = 0; i < jobs; i++) this.workers.push(new Worker(__filename, { workerData: { tag: WORKER_TAG, roots: [...roots] } }));
  }

  /**
   * Runs every batch of one step, on the workers and on this thread (`here` checks one batch);
   * resolves with the replies in batch order. Each worker has a second batch waiting while it
   * checks one, so it does not idle while this thread is busy with its own batch.
   */
  run(step: Job['step'], groups: string[][], here: (paths: string[]) => Reply): Promise<Reply[]> {
    const replies: Reply[] = new Array(groups.length);
    let next = 0;
    let done = 0;
    let failed = false;
    return new Promise<Reply[]>((resolve, reject) => {
      if (groups.length === 0) return resolve(replies);
      const fail = (e: Error): void => {
        failed = true;
        reject(e);
      };
      const finish = (index: number, r: Reply): void => {
        replies[index] = r;
        if (++done === groups.length) resolve(replies);
      };
      const feed = (w: Worker): void => {
        if (next >= groups.length || failed) return;
        const index = next++;
        const id = this.nextId++;
        const onMessage = (r: Reply): void => {
          if (r.id !== id) return;
          w.off('message', onMessage);
          w.off('error', fail);
          if (r.error !== undefined) return fail(new Error(r.error));
          finish(index, r);
          feed(w);
        };
        w.on('message', onMessage);
        w.on('error', fail);
        w.postMessage({ id, step, paths: groups[index] } satisfies Job);
      };
      for (const w of this.workers) {
        feed(w);
        feed(w);
      }
      // This thread takes the next batch whenever it is free, yielding in between so that the
      // workers' replies are read and they are fed.
      const local = (): void => {
        if (next >= groups.length || failed) return;
        const index = next++;
        try {
          finish(index, here(groups[index]));
        } catch (e) {
          return fail(e instanceof Error ? e : new Error(String(e)));
        }
        setImmediate(local);
      };
      setImmediate(local);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * `checkFiles` for the same roots on `jobs` threads (this one, reading through `host`, and
 * `jobs - 1` workers): the same map, in the same order.
 */
export async function checkFilesInParallel(files: readonly string[], host: FileHost, jobs: number): Promise<Map<string, Finding[]>> {
  const { sorted, templates } = checkOrder(files);
  const pool = new Pool(Math.max(1, jobs - 1), host.roots);
  try {
    // A few batches per thread keep them busy to the end; contiguous ones keep a folder's files together.
    const size = (n: number): number => Math.max(1, Math.min(64, Math.ceil(n / (jobs * 4))));
    const all: Finding[] = [];
    const covered = new Set<string>();
    const hereTemplates = (paths: string[]): Reply => ({ id: -1, templates: paths.map((p) => checkTemplate(host, p)) });
    for (const r of await pool.run('templates', batches(templates, size(templates.length)), hereTemplates)) {
      for (const step of r.templates ?? []) {
        all.push(...step.findings);
        for (const c of step.covered) covered.add(c);
      }
    }
    const rest = sorted.filter((p) => !covered.has(p) && classifyFile(p) !== 'template');
    const hereUncovered = (paths: string[]): Reply => ({ id: -1, uncovered: paths.map((p) => checkUncovered(host, p)) });
    for (const r of await pool.run('uncovered', batches(rest, size(rest.length)), hereUncovered)) {
      for (const findings of r.uncovered ?? []) all.push(...findings);
    }
    return groupFindings(all);
  } finally {
    await pool.close();
  }
}
