/**
 * Bounding the language server's memory during the workspace scan. The scan analyses closed files
 * one after another and keeps nothing of them, but each analysis of a large fixture leaves tens of
 * megabytes of garbage (its YAML document, items, renders), and V8 grows the heap for a long while
 * before it collects: a folder of 2 MB fixtures took the server past 700 MB with under 60 MB live.
 * Between two scanned files, when the heap holds much more than after the last collection, a full
 * collection runs (a few tens of milliseconds, only after files that made that much garbage).
 */
import { setFlagsFromString, getHeapStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Collect once the heap holds this much more than right after the last collection (bytes). */
const GROWTH_BYTES = 48 * 1024 * 1024;

let gc: (() => void) | null | undefined;
let liveAfterLast = 0;

/** V8's full collection, made reachable without a command-line flag (undefined when it cannot be). */
function collector(): (() => void) | null {
  if (gc !== undefined) return gc;
  try {
    const g = (globalThis as { gc?: () => void }).gc;
    if (typeof g === 'function') return (gc = g);
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    gc = typeof fn === 'function' ? (fn as () => void) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Runs a full collection when the heap grew by `GROWTH_BYTES` since the last one; true when it did. */
export function collectIfGrown(): boolean {
  const used = getHeapStatistics().used_heap_size;
  if (used - liveAfterLast < GROWTH_BYTES) return false;
  const run = collector();
  if (!run) return false;
  run();
  liveAfterLast = getHeapStatistics().used_heap_size;
  return true;
}
