/**
 * Fitting the whole request (seed 000, `build_request`): serialize, count with the endpoint's
 * accounting, and while over the input budget drop the lowest-priority optional item and recount.
 *
 * The drop order does not depend on what has been dropped already (it is fixed by slot priority,
 * item score and position), so "drop one, recount" is a walk along one sequence, and the result is
 * the shortest prefix of that sequence whose removal makes the request fit. The first LINEAR_STEPS
 * prefixes are tried one by one exactly as `build_request` does; beyond that the prefix length is
 * found by galloping and bisection, so a fixture that must shed thousands of items costs
 * O(log n) recounts instead of O(n). The counts are recounts of the real serialization every time,
 * never an assumed subtraction.
 *
 * A caller that can estimate what dropping the first k items saves (`savings(k)`, non-decreasing:
 * the items' own token counts and envelopes, request.ts) gets a guided search instead: the first
 * guess is where the estimate covers the excess; its real count calibrates the estimate (the
 * ratio of real to estimated savings, which absorbs separators and envelope text the estimate
 * leaves out), and the second guess is where the calibrated estimate covers it. Galloping and
 * bisection from the bracket the guesses leave find the exact prefix, usually after four renders
 * of the request instead of twenty. The estimate only steers which prefixes are counted: the
 * answer is the smallest prefix whose real count fits, the same answer as the one-by-one walk on
 * any count that falls as items are dropped.
 */

export const LINEAR_STEPS = 8;

export interface FitResult {
  /** Number of items dropped from the front of the drop sequence. */
  dropped: number;
  /** Input tokens of the request after dropping them. */
  tokens: number;
  /** False when even dropping every optional item leaves the request over the limit. */
  ok: boolean;
  /** Recounts performed (for the trace and the benchmark). */
  recounts: number;
}

/**
 * Smallest k in [0, total] with countAfter(k) <= limit. `countAfter(k)` serializes and counts the
 * request with the first k items of the drop sequence removed.
 */
export function fitPrefix(total: number, countAfter: (k: number) => number, limit: number, savings?: (k: number) => number): FitResult {
  let recounts = 0;
  const count = (k: number) => {
    recounts++;
    return countAfter(k);
  };
  let tokens = count(0);
  if (tokens <= limit) return { dropped: 0, tokens, ok: true, recounts };
  if (savings !== undefined && total > 0) return guided(total, count, tokens, limit, savings, () => recounts);
  const linear = Math.min(total, LINEAR_STEPS);
  for (let k = 1; k <= linear; k++) {
    tokens = count(k);
    if (tokens <= limit) return { dropped: k, tokens, ok: true, recounts };
  }
  if (linear === total) return { dropped: total, tokens, ok: false, recounts };
  // Gallop: lo is known to be over the limit; find hi that fits.
  let lo = linear;
  let step = 1;
  let hi = -1;
  let hiTokens = 0;
  while (true) {
    const k = Math.min(total, lo + step);
    const c = count(k);
    if (c <= limit) {
      hi = k;
      hiTokens = c;
      break;
    }
    if (k === total) return { dropped: total, tokens: c, ok: false, recounts };
    lo = k;
    step *= 2;
  }
  while (hi - lo > 1) {
    const mid = lo + ((hi - lo) >> 1);
    const c = count(mid);
    if (c <= limit) {
      hi = mid;
      hiTokens = c;
    } else lo = mid;
  }
  return { dropped: hi, tokens: hiTokens, ok: true, recounts };
}

/** Smallest k in [1, total] with f(k) >= target (f non-decreasing), or total. */
function firstReaching(total: number, f: (k: number) => number, target: number): number {
  let lo = 1;
  let hi = total;
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1);
    if (f(mid) >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The guided search (count(0) = c0 is known to be over the limit). */
function guided(total: number, count: (k: number) => number, c0: number, limit: number, savings: (k: number) => number, recounts: () => number): FitResult {
  const excess = c0 - limit;
  // lo: largest prefix known over the limit; hi: smallest known to fit (-1: none yet).
  let lo = 0;
  let loTokens = c0;
  let hi = -1;
  let hiTokens = 0;
  const probe = (k: number) => {
    const c = count(k);
    if (c <= limit) {
      if (hi < 0 || k < hi) {
        hi = k;
        hiTokens = c;
      }
    } else if (k > lo) {
      lo = k;
      loTokens = c;
    }
    return c;
  };
  const g1 = firstReaching(total, savings, excess);
  const c1 = probe(g1);
  const estimated = savings(g1);
  const real = c0 - c1;
  if (estimated > 0 && real > 0) {
    const ratio = real / estimated;
    let g2 = firstReaching(total, (k) => savings(k) * ratio, excess);
    if (hi >= 0) g2 = Math.min(g2, hi - 1);
    g2 = Math.max(g2, lo + 1);
    if (g2 !== g1 && (hi < 0 || g2 < hi)) probe(g2);
  }
  if (hi < 0) {
    if (lo === total) return { dropped: total, tokens: loTokens, ok: false, recounts: recounts() };
    // Gallop up from the largest prefix known to be over.
    let step = 1;
    while (hi < 0) {
      const k = Math.min(total, lo + step);
      const c = probe(k);
      if (c > limit && k === total) return { dropped: total, tokens: c, ok: false, recounts: recounts() };
      step *= 2;
    }
  } else {
    // Gallop down from the smallest prefix known to fit.
    let step = 1;
    while (hi - step > lo) {
      const before = hi;
      probe(hi - step);
      if (hi === before) break; // over the limit: lo moved up
      step *= 2;
    }
  }
  while (hi - lo > 1) probe(lo + ((hi - lo) >> 1));
  return { dropped: hi, tokens: hiTokens, ok: true, recounts: recounts() };
}
