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
export function fitPrefix(total: number, countAfter: (k: number) => number, limit: number): FitResult {
  let recounts = 0;
  const count = (k: number) => {
    recounts++;
    return countAfter(k);
  };
  let tokens = count(0);
  if (tokens <= limit) return { dropped: 0, tokens, ok: true, recounts };
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
