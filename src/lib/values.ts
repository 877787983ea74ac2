/**
 * Checks of request-time values (the library's `slots`, the service's request) before they are
 * typed as a fixture and assembled. Values given at run time come from documents, tools, users and
 * history, so they get the same guarantees as a fixture's, and a few a fixture's author does not
 * need:
 *
 * - a list slot (evidence, history, memory, examples) always holds a list of items: one object or
 *   one bare string is taken as a one-item list, so the tenant, version and product filters see
 *   it as they see any item (a lone object would otherwise be data, printed whole and never
 *   filtered); anything else is refused with its path;
 * - history and memory turns take the roles the slot allows: `user` and `assistant`, `tool` when
 *   the config declares a tool slot, `system` and `developer` only in a slot marked
 *   `trust: trusted`. A refused role is an error with the path of the role, never a system message;
 * - every string is scanned with the same detection as `secret-in-context`; each secret found is a
 *   finding (its path in the message, the secret redacted), and with `redactSecrets` the value is
 *   sent with the secret replaced by its redacted form.
 */
import type { Finding, SlotKind } from '../core/types';
import { FixtureValueError, formatValuePath } from '../core/fixture/values';
import { LIST_KINDS, TURN_KINDS, allowedRoles, refusedRoleMessage } from '../core/fixture/shape';
import type { SlotKinds } from '../core/fixture/shape';
import { findSecrets, redactSecret, redactSecrets } from '../core/text/secrets';
import { finding } from '../core/rules/registry';
import { defineLazy } from '../core/lazy';

export { LIST_KINDS, allowedRoles } from '../core/fixture/shape';
export type { SlotKinds } from '../core/fixture/shape';

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An own property set without invoking a `__proto__` setter. */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The values with every list slot's value as a list of items, checked for roles; throws
 * `FixtureValueError` (with the path) for a value a list slot cannot hold or a refused role.
 */
export function normaliseValues(values: Record<string, unknown>, slots: SlotKinds): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [slot, value] of Object.entries(values)) {
    const kind = Object.hasOwn(slots ?? {}, slot) ? slots?.[slot]?.kind : undefined;
    if (kind === undefined || !LIST_KINDS.has(kind) || value === null || value === undefined) continue;
    let list: unknown[];
    if (Array.isArray(value)) list = value;
    else if (typeof value === 'string' || (isRecord(value) && ('text' in value || 'content' in value || 'file' in value))) {
      list = [value];
      out ??= copy(values);
      setOwn(out, slot, list);
    } else {
      throw new FixtureValueError([slot], `the ${kind} slot '${slot}' takes a list of items (strings, or objects such as { id: "doc_1", text: "..." }); got ${isRecord(value) ? 'an object without text' : typeof value}`);
    }
    if (!TURN_KINDS.has(kind)) continue;
    const roles = allowedRoles(slots, slot);
    list.forEach((it, i) => {
      if (!isRecord(it) || it.role === undefined || it.role === null) return;
      const role = typeof it.role === 'string' ? it.role.toLowerCase() : '';
      if (!roles.has(role)) {
        throw new FixtureValueError([slot, i, 'role'], refusedRoleMessage(kind, slot, typeof it.role === 'string' ? redactSecrets(it.role.slice(0, 40)) : 'given', roles));
      }
    });
  }
  return out ?? values;
}

function copy(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) setOwn(out, k, v);
  return out;
}

/** Most findings reported for secrets in one request: the rest are counted in one last finding. */
export const MAX_SECRET_FINDINGS = 50;

/**
 * `secret-in-context` findings for the secrets in request values (strings at any depth, keys
 * included), reported on `path` with the value's path in the message; and, with `redact`, the values
 * with each secret replaced by its redacted form (the same objects when nothing was found).
 */
export function scanValueSecrets(values: Record<string, unknown>, path: string, redact: boolean): { values: Record<string, unknown>; findings: Finding[] } {
  const findings: Finding[] = [];
  let extra = 0;
  // A value's path as a chain from its parent, made into a list only for a finding.
  type At = { up: At | undefined; key: string | number } | undefined;
  const pathOf = (at: At): Array<string | number> => {
    const out: Array<string | number> = [];
    for (let a = at; a; a = a.up) out.push(a.key);
    return out.reverse();
  };
  const report = (at: At, s: string) => {
    for (const h of findSecrets(s)) {
      if (findings.length >= MAX_SECRET_FINDINGS) {
        extra++;
        continue;
      }
      const where = formatValuePath(pathOf(at));
      const shown = h.pattern.block ? h.secret : redactSecret(h.secret);
      findings.push(finding('secret-in-context', path, { start: 0, end: 0 }, `${where}: looks like ${/^[AEIOU]/.test(h.pattern.name) ? 'an' : 'a'} ${h.pattern.name} (${shown}) in a request value; it would be sent to the model${redact ? ' (redacted before sending)' : ''}. Remove it at the source and rotate the credential.`));
    }
  };
  const walk = (v: unknown, at: At, depth: number): unknown => {
    if (typeof v === 'string') {
      report(at, v);
      return redact ? redactSecrets(v) : v;
    }
    if (depth > 64 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      let changed: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const n = walk(v[i], { up: at, key: i }, depth + 1);
        if (n !== v[i]) (changed ??= v.slice())[i] = n;
      }
      return changed ?? v;
    }
    let changed: Record<string, unknown> | undefined;
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const here = { up: at, key: k };
      report(here, k);
      const key = redact ? redactSecrets(k) : k;
      const n = walk(o[k], here, depth + 1);
      if (n !== o[k] || key !== k) {
        if (!changed) {
          changed = {};
          for (const k2 of Object.keys(o)) setOwn(changed, k2, o[k2]);
        }
        if (key !== k) delete changed[k];
        setOwn(changed, key, n);
      }
    }
    return changed ?? o;
  };
  const out = walk(values, undefined, 0) as Record<string, unknown>;
  if (extra) findings.push(finding('secret-in-context', path, { start: 0, end: 0 }, `${extra} more secret${extra === 1 ? '' : 's'} in request values (only the first ${MAX_SECRET_FINDINGS} are listed).`));
  return { values: out, findings };
}

/**
 * A copy of a JSON-like value with every detected secret in its strings (keys included) redacted;
 * the same object when there is none. For traces and other explanations that echo item metadata.
 */
/**
 * `redactDeep` of a trace that keeps its lazy entries lazy (the core builds a trace's per-item
 * entries when they are read): a lazy entry of the copy is redacted when it is first read, then
 * becomes a plain data property in the same place, so the copy's JSON and key order are those of
 * `redactDeep(trace)`.
 */
export function redactTrace<T extends object>(trace: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(trace))) {
    if (!d.enumerable) continue;
    if (d.get) defineLazy(out, key, () => redactDeep((trace as Record<string, unknown>)[key]));
    else setOwn(out, key, redactDeep(d.value));
  }
  return out as T;
}

export function redactDeep<T>(v: T, depth = 0): T {
  if (typeof v === 'string') return redactSecrets(v) as T;
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let changed: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const n = redactDeep(v[i] as unknown, depth + 1);
      if (n !== v[i]) (changed ??= v.slice())[i] = n;
    }
    return (changed ?? v) as T;
  }
  const o = v as Record<string, unknown>;
  let changed: Record<string, unknown> | undefined;
  for (const k of Object.keys(o)) {
    const key = redactSecrets(k);
    const n = redactDeep(o[k], depth + 1);
    if (n !== o[k] || key !== k) {
      if (!changed) {
        changed = {};
        for (const k2 of Object.keys(o)) setOwn(changed, k2, o[k2]);
      }
      if (key !== k) delete changed[k];
      setOwn(changed, key, n);
    }
  }
  return (changed ?? o) as T;
}
