/**
 * `ctxlens check` on worker threads. The core's `checkFiles` is two steps over a sorted file list
 * (every template with its fixtures, then the configs and fixtures no template reached); each
 * step's items are independent, so workers take contiguous batches of them (templates of one
 * folder share their configs' and fixtures' parses) and the findings are concatenated in the
 * serial order before they are grouped: the output is byte-identical to a serial run.
 *
 * The workers are this bundle (dist/cli.js) started again with `workerData` naming the job; each
 * reads the disk through its own snapshot host with the same roots as the main thread.
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { checkOrder, checkTemplate, checkUncovered, classifyFile, groupFindings } from '../core/analyze';
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
 * Workers `--jobs auto` uses for this many templates on this machine (1: no workers): one per idle
 * core, as `make -l` counts them (cores less the 1-minute load average). A serial run already keeps
 * more than one core busy (V8 compiles and collects on helper threads) and each worker compiles
 * the code again, so on a machine other jobs are loading, workers only add work.
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

  /** Runs every batch of one step; resolves with the replies in batch order. */
  run(step: Job['step'], groups: string[][]): Promise<Reply[]> {
    const replies: Reply[] = new Array(groups.length);
    let next = 0;
    let done = 0;
    return new Promise<Reply[]>((resolve, reject) => {
      if (groups.length === 0) return resolve(replies);
      const feed = (w: Worker): void => {
        if (next >= groups.length) return;
        const index = next++;
        const id = this.nextId++;
        const onMessage = (r: Reply): void => {
          if (r.id !== id) return;
          w.off('message', onMessage);
          w.off('error', onError);
          if (r.error !== undefined) return reject(new Error(r.error));
          replies[index] = r;
          if (++done === groups.length) resolve(replies);
          else feed(w);
        };
        const onError = (e: Error): void => reject(e);
        w.on('message', onMessage);
        w.on('error', onError);
        w.postMessage({ id, step, paths: groups[index] } satisfies Job);
      };
      for (const w of this.workers) feed(w);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** `checkFiles` for the same roots on `jobs` worker threads: the same map, in the same order. */
export async function checkFilesInParallel(files: readonly string[], roots: readonly string[], jobs: number): Promise<Map<string, Finding[]>> {
  const { sorted, templates } = checkOrder(files);
  const pool = new Pool(jobs, roots);
  try {
    // A few batches per worker keep them busy to the end; contiguous ones keep a folder's files together.
    const size = (n: number): number => Math.max(1, Math.min(64, Math.ceil(n / (jobs * 4))));
    const all: Finding[] = [];
    const covered = new Set<string>();
    for (const r of await pool.run('templates', batches(templates, size(templates.length)))) {
      for (const step of r.templates ?? []) {
        all.push(...step.findings);
        for (const c of step.covered) covered.add(c);
      }
    }
    const rest = sorted.filter((p) => !covered.has(p) && classifyFile(p) !== 'template');
    for (const r of await pool.run('uncovered', batches(rest, size(rest.length)))) {
      for (const findings of r.uncovered ?? []) all.push(...findings);
    }
    return groupFindings(all);
  } finally {
    await pool.close();
  }
}
