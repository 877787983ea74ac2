/**
 * Merge-list BPE: the algorithm of Hugging Face `tokenizers` (`Word::merge_all` in its BPE model),
 * for vocabularies whose merges are not the byte-span ranks tiktoken's rule assumes.
 *
 * tiktoken merges any two adjacent parts whose concatenation is a token (ranked by that token);
 * a merge list allows only the listed pairs, ranked by their position in the list. The two agree
 * when every split of every token into two tokens is listed in rank order (Llama 3's and gpt-oss's
 * merge lists are; verified when their assets are built), and differ otherwise: Qwen's list has one
 * pair per token, and counting Qwen with tiktoken's rule is off on 23 of 2,001 mixed documents.
 *
 * The rule: parts start as symbols (bytes, or characters with byte fallback); repeatedly merge the
 * adjacent pair with the lowest merge rank, the leftmost one on ties, into the pair's result; stop
 * when no adjacent pair is listed. Short words use an array scan, long ones a heap over a linked
 * list (the same order), as bpe.ts does for ranks.
 */

import { TWO32, push, siftDown } from './bpe';

/** Slot layout of the pair table: [a, b, rank, result]; a = -1 marks an empty slot. */
const SLOT = 4;

/** The merges of a vocabulary, looked up by the ids of the pair. */
export class MergeTable {
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly shift: number;
  readonly size: number;

  /** Merges in rank order: merge k joins a[k] and b[k] into result[k]. */
  constructor(a: Int32Array, b: Int32Array, result: Int32Array) {
    const count = a.length;
    let bits = 1;
    while (1 << bits < count * 2) bits++;
    const slots = new Int32Array(SLOT << bits).fill(-1);
    this.slots = slots;
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
    this.size = count;
    for (let k = 0; k < count; k++) {
      let slot = this.slotOf(a[k], b[k]);
      let duplicate = false;
      while (slots[SLOT * slot] !== -1) {
        if (slots[SLOT * slot] === a[k] && slots[SLOT * slot + 1] === b[k]) {
          duplicate = true; // the reference keeps the first (lowest) rank of a repeated pair
          break;
        }
        slot = (slot + 1) & this.mask;
      }
      if (duplicate) continue;
      const e = SLOT * slot;
      slots[e] = a[k];
      slots[e + 1] = b[k];
      slots[e + 2] = k;
      slots[e + 3] = result[k];
    }
  }

  private slotOf(a: number, b: number): number {
    return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77)) >>> this.shift;
  }

  /** Slot offset of the merge of (a, b), or -1 when that pair is not a merge. */
  find(a: number, b: number): number {
    const slots = this.slots;
    let slot = this.slotOf(a, b);
    for (;;) {
      const e = SLOT * slot;
      const x = slots[e];
      if (x === -1) return -1;
      if (x === a && slots[e + 1] === b) return e;
      slot = (slot + 1) & this.mask;
    }
  }

  /** Rank of the merge at slot offset e (from find). */
  rankAt(e: number): number {
    return this.slots[e + 2];
  }

  /** Result of the merge at slot offset e (from find). */
  resultAt(e: number): number {
    return this.slots[e + 3];
  }

  /** Approximate memory held, for the bench. */
  byteSize(): number {
    return this.slots.byteLength;
  }
}

const NONE = 0x7fffffff;
/** Words up to this many symbols use the array scan. */
export const MERGE_HEAP_THRESHOLD = 128;

let pid = new Int32Array(1024);
let prank = new Int32Array(1024);
let pres = new Int32Array(1024);

function ensure(n: number): void {
  if (pid.length > n) return;
  let size = pid.length;
  while (size <= n) size *= 2;
  pid = new Int32Array(size);
  prank = new Int32Array(size);
  pres = new Int32Array(size);
}

/** Number of tokens the symbols ids[0..n) merge into. */
export function countMerged(table: MergeTable, ids: Int32Array, n: number): number {
  if (n <= 1) return n;
  return n <= MERGE_HEAP_THRESHOLD ? mergeScan(table, ids, n) : mergeHeap(table, ids, n);
}

/** The array scan, whatever n is (exported for the equivalence tests). */
export function mergeScan(table: MergeTable, ids: Int32Array, n: number): number {
  if (n <= 1) return n;
  ensure(n);
  const id = pid;
  const rk = prank;
  const rs = pres;
  for (let i = 0; i < n; i++) id[i] = ids[i];
  const rate = (i: number): void => {
    const e = table.find(id[i], id[i + 1]);
    if (e < 0) rk[i] = NONE;
    else {
      rk[i] = table.rankAt(e);
      rs[i] = table.resultAt(e);
    }
  };
  for (let i = 0; i < n - 1; i++) rate(i);
  rk[n - 1] = NONE;
  let m = n;
  for (;;) {
    let min = NONE;
    let at = -1;
    for (let i = 0; i < m - 1; i++) {
      if (rk[i] < min) {
        min = rk[i];
        at = i;
      }
    }
    if (at < 0) break;
    id[at] = rs[at];
    for (let k = at + 1; k < m - 1; k++) {
      id[k] = id[k + 1];
      rk[k] = rk[k + 1];
      rs[k] = rs[k + 1];
    }
    m--;
    if (at + 1 < m) rate(at);
    else rk[at] = NONE;
    if (at > 0) rate(at - 1);
  }
  if (pid.length > 1 << 16) {
    pid = new Int32Array(1024);
    prank = new Int32Array(1024);
    pres = new Int32Array(1024);
  }
  return m;
}

/** The heap-ordered merge, whatever n is (exported for the equivalence tests). */
export function mergeHeap(table: MergeTable, ids: Int32Array, n: number): number {
  if (n <= 1) return n;
  // Parts are named by their first symbol's index s: id[s], next[s], prev[s]; rank[s]/res[s] are
  // those of merging part s with the part after it.
  const id = Int32Array.from(ids.subarray(0, n));
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const rank = new Int32Array(n);
  const res = new Int32Array(n);
  const dead = new Uint8Array(n);
  let heap = new Float64Array(n + 16);
  let size = 0;
  const rate = (s: number, t: number): void => {
    const e = table.find(id[s], id[t]);
    if (e < 0) rank[s] = NONE;
    else {
      rank[s] = table.rankAt(e);
      res[s] = table.resultAt(e);
    }
  };
  for (let s = 0; s < n; s++) {
    next[s] = s + 1;
    prev[s] = s - 1;
    if (s + 1 < n) rate(s, s + 1);
    else rank[s] = NONE;
    if (rank[s] !== NONE) heap[size++] = rank[s] * TWO32 + s;
  }
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
    id[s] = res[s];
    const u = next[t];
    next[s] = u;
    if (u < n) prev[u] = s;
    dead[t] = 1;
    count--;
    if (size + 2 > heap.length) {
      const bigger = new Float64Array(heap.length * 2);
      bigger.set(heap);
      heap = bigger;
    }
    if (u < n) {
      rate(s, u);
      if (rank[s] !== NONE) size = push(heap, size, rank[s] * TWO32 + s);
    } else rank[s] = NONE;
    if (s > 0) {
      const p = prev[s];
      rate(p, s);
      if (rank[p] !== NONE) size = push(heap, size, rank[p] * TWO32 + p);
    }
  }
  return count;
}
