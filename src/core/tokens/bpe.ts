/**
 * Byte-pair merging of one pre-tokenized piece, counting the tokens it becomes.
 *
 * The merge rule is tiktoken's (`_byte_pair_merge` in its Rust core): repeatedly merge the
 * adjacent pair of parts whose concatenated bytes have the lowest rank, the leftmost one on ties,
 * until no adjacent pair is a token. Short pieces (nearly all of them) use tiktoken's own array
 * scan, which is fastest when n is small. Long pieces use a binary heap keyed by (rank, start)
 * over a linked list of parts: the same merge order (lowest rank, then leftmost start, and
 * starts keep their order), in O(n log n) instead of O(n^2), so one pasted blob without spaces
 * cannot freeze the counter.
 */
import { HASH_MUL, NO_RANK, type RankTable } from './rankTable';

/** Pieces up to this many bytes use the array scan. */
export const HEAP_THRESHOLD = 128;

/** Heap entries are rank * 2^32 + position: one float orders by rank, then by position. */
export const TWO32 = 4294967296;
/** Scratch arrays larger than this are dropped after use. */
const SCRATCH_KEEP = 1 << 16;

/** Scratch buffers, grown on demand and reused (the counter is synchronous and single-threaded). */
let prefix = new Int32Array(1024);
let partStart = new Int32Array(1024);
let partRank = new Int32Array(1024);

function ensureScratch(n: number): void {
  if (prefix.length > n + 1) return;
  let size = prefix.length;
  while (size <= n + 1) size *= 2;
  prefix = new Int32Array(size);
  partStart = new Int32Array(size);
  partRank = new Int32Array(size);
}

/** Fills prefix[k] with the polynomial hash of buf[0..k). */
function fillPrefix(buf: Uint8Array, n: number): void {
  let h = 0;
  prefix[0] = 0;
  for (let k = 0; k < n; k++) {
    h = (Math.imul(h, HASH_MUL) + buf[k]) | 0;
    prefix[k + 1] = h;
  }
}

/** Rank of buf[a..c), using the prefix hashes. */
function spanRank(table: RankTable, buf: Uint8Array, a: number, c: number): number {
  const len = c - a;
  if (len === 2) return table.pair[(buf[a] << 8) | buf[a + 1]];
  if (len > table.maxLen) return NO_RANK;
  const h = (prefix[c] - Math.imul(prefix[a], table.pow[len])) | 0;
  return table.lookup(buf, a, c, h);
}

/** Number of tokens the piece buf[0..n) becomes. */
export function countPieceBytes(table: RankTable, buf: Uint8Array, n: number): number {
  if (n <= 1) return n;
  if (n <= table.maxLen && table.lookupSpan(buf, 0, n) !== NO_RANK) return 1;
  ensureScratch(n);
  fillPrefix(buf, n);
  if (n <= HEAP_THRESHOLD) return scan(table, buf, n);
  const count = heapMerge(table, buf, n);
  if (prefix.length > SCRATCH_KEEP) {
    // A pasted blob grew the scratch arrays; do not hold megabytes for the next short piece.
    prefix = new Int32Array(1024);
    partStart = new Int32Array(1024);
    partRank = new Int32Array(1024);
  }
  return count;
}

/** tiktoken's O(n*m) merge loop, whatever n is. Exported for the equivalence tests. */
export function countScan(table: RankTable, buf: Uint8Array, n: number): number {
  if (n <= 1) return n;
  ensureScratch(n);
  fillPrefix(buf, n);
  return scan(table, buf, n);
}

/** The heap-ordered merge, whatever n is. Exported for the equivalence tests. */
export function countHeap(table: RankTable, buf: Uint8Array, n: number): number {
  if (n <= 1) return n;
  ensureScratch(n);
  fillPrefix(buf, n);
  return heapMerge(table, buf, n);
}

/** tiktoken's O(n*m) merge loop on typed arrays; prefix hashes are filled. */
function scan(table: RankTable, buf: Uint8Array, n: number): number {
  // Locals, so the hot loop reads no module or object state.
  const ps = partStart;
  const pr = partRank;
  const pair = table.pair;
  // parts 0..m-1 start at ps[i]; ps[m] = n is a sentinel; pr[i] ranks merging part i with i+1.
  let m = n;
  for (let i = 0; i < n; i++) ps[i] = i;
  ps[n] = n;
  for (let i = 0; i < n - 1; i++) pr[i] = pair[(buf[i] << 8) | buf[i + 1]];
  pr[n - 1] = NO_RANK;
  for (;;) {
    let min = NO_RANK;
    let at = -1;
    for (let i = 0; i < m - 1; i++) {
      if (pr[i] < min) {
        min = pr[i];
        at = i;
      }
    }
    if (at < 0) break;
    // Merge part at+1 into part at (plain loops: typed-array copyWithin costs more per call
    // than these few moves).
    for (let k = at + 1; k < m; k++) {
      ps[k] = ps[k + 1];
      pr[k] = pr[k + 1];
    }
    m--;
    pr[at] = at + 2 <= m ? spanRank(table, buf, ps[at], ps[at + 2]) : NO_RANK;
    if (at > 0) pr[at - 1] = spanRank(table, buf, ps[at - 1], ps[at + 1]);
  }
  return m;
}

/** Heap-ordered merge for long pieces: same result as scan, O(n log n); prefix hashes are filled. */
function heapMerge(table: RankTable, buf: Uint8Array, n: number): number {
  // Parts are identified by their start byte. next[s] is the start of the following part (n for
  // the last); prev[s] the preceding one. rank[s] is the rank of merging part s with its next.
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const rank = new Int32Array(n + 1);
  const dead = new Uint8Array(n + 1);
  // Min-heap of rank * 2^32 + start; stale entries are skipped when popped.
  let heap = new Float64Array(n + 16);
  let size = 0;
  for (let s = 0; s < n; s++) {
    next[s] = s + 1;
    prev[s] = s - 1;
    const r = s + 1 < n ? table.pair[(buf[s] << 8) | buf[s + 1]] : NO_RANK;
    rank[s] = r;
    if (r !== NO_RANK) heap[size++] = r * TWO32 + s;
  }
  // Heapify bottom-up.
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(heap, size, i);

  let count = n;
  while (size > 0) {
    const top = heap[0];
    size--;
    if (size > 0) {
      heap[0] = heap[size];
      siftDown(heap, size, 0);
    }
    const r = Math.floor(top / TWO32);
    const s = top - r * TWO32;
    if (dead[s] === 1 || rank[s] !== r) continue;
    const t = next[s];
    const u = next[t];
    next[s] = u;
    if (u < n) prev[u] = s;
    dead[t] = 1;
    count--;
    const rs = u < n ? spanRank(table, buf, s, next[u]) : NO_RANK;
    rank[s] = rs;
    if (size + 2 > heap.length) {
      const bigger = new Float64Array(heap.length * 2);
      bigger.set(heap);
      heap = bigger;
    }
    if (rs !== NO_RANK) size = push(heap, size, rs * TWO32 + s);
    if (s > 0) {
      const p = prev[s];
      const rp = spanRank(table, buf, p, u);
      rank[p] = rp;
      if (rp !== NO_RANK) size = push(heap, size, rp * TWO32 + p);
    }
  }
  return count;
}

/** Binary min-heap over packed (rank, position) entries, shared with the merge-list engine (mergeBpe.ts). */
export function siftDown(heap: Float64Array, size: number, i: number): void {
  const v = heap[i];
  for (;;) {
    let c = 2 * i + 1;
    if (c >= size) break;
    if (c + 1 < size && heap[c + 1] < heap[c]) c++;
    if (heap[c] >= v) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = v;
}

export function push(heap: Float64Array, size: number, v: number): number {
  let i = size;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (heap[p] <= v) break;
    heap[i] = heap[p];
    i = p;
  }
  heap[i] = v;
  return size + 1;
}
