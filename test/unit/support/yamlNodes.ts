/** Comparing two yaml node trees (the fast reader's tests, src/core/text/yamlFast.ts, against parseYaml). */
import { isMap, isPair, isScalar, isSeq } from 'yaml';

/** The first difference between two yaml node trees, or undefined when they are the same. */
export function difference(a: unknown, b: unknown, at = '$'): string | undefined {
  const x = a as Record<string, unknown> | null | undefined;
  const y = b as Record<string, unknown> | null | undefined;
  if (x?.constructor !== y?.constructor) return `${at}: ${String(x?.constructor?.name)} vs ${String(y?.constructor?.name)}`;
  if (x === null || x === undefined || y === null || y === undefined) return undefined;
  if (JSON.stringify(x.range) !== JSON.stringify(y.range)) return `${at}: range ${JSON.stringify(x.range)} vs ${JSON.stringify(y.range)}`;
  for (const k of ['source', 'type', 'format', 'tag', 'flow', 'minFractionDigits', 'anchor']) {
    if (x[k] !== y[k]) return `${at}: ${k} ${String(x[k])} vs ${String(y[k])}`;
  }
  if (isScalar(x) && isScalar(y) && !Object.is(x.value, y.value)) return `${at}: value ${String(x.value)} vs ${String(y.value)}`;
  if ((isMap(x) && isMap(y)) || (isSeq(x) && isSeq(y))) {
    const xs = x.items as unknown[];
    const ys = y.items as unknown[];
    if (xs.length !== ys.length) return `${at}: ${xs.length} vs ${ys.length} items`;
    for (let i = 0; i < xs.length; i++) {
      const p = xs[i];
      const q = ys[i];
      const d = isPair(p) && isPair(q) ? (difference(p.key, q.key, `${at}.key${i}`) ?? difference(p.value, q.value, `${at}.value${i}`)) : difference(p, q, `${at}[${i}]`);
      if (d) return d;
    }
  }
  return undefined;
}
