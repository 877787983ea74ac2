/**
 * Canonical JSON: object keys sorted, undefined members left out, no whitespace. Two values that
 * mean the same give the same string, so hashes of it (cache keys) do not depend on key order.
 *
 * Built by appending to one string (V8 ropes), without the per-level arrays of map/filter/join:
 * the service canonicalizes every request's slot values, so this is on its hot path.
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

function write(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string') return JSON.stringify(value);
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
    if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    if (typeof value === 'bigint') return JSON.stringify(String(value));
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v = value[i];
      out += v === undefined ? 'null' : write(v);
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(k) + ':' + write(v);
  }
  return out + '}';
}
