/**
 * What changes between two assembled requests (two fixtures, two models, two budgets): per slot,
 * the items only one side kept (with the reason the other side gives), the tokens each side spent,
 * the input tokens and cost of the whole request, and the first message where the rendered text
 * differs, with the line it differs on.
 */
import type { AssemblyResult, RenderedMessage } from '../types';
import { roundUsd } from '../cost';

export interface SlotDiff {
  slot: string;
  kept_a: number;
  kept_b: number;
  total_a: number;
  total_b: number;
  tokens_a: number;
  tokens_b: number;
  /** Kept by A only, with B's reason (or "not a candidate"). */
  only_a: Array<{ id: string; b: string }>;
  only_b: Array<{ id: string; a: string }>;
  /** Kept by both, at a different position. */
  moved: Array<{ id: string; a: number; b: number }>;
}

export interface FirstDifference {
  /** 0-based message index. */
  message: number;
  role_a?: string;
  role_b?: string;
  /** 1-based line within the message content. */
  line: number;
  /** Offset of the first differing character in the message content. */
  offset: number;
  a: string;
  b: string;
}

export interface AssemblyDiff {
  ok_a: boolean;
  ok_b: boolean;
  input_tokens: { a: number; b: number; delta: number };
  cost?: { a: number; b: number; delta: number };
  slots: SlotDiff[];
  first_difference?: FirstDifference;
  /** True when both sides render the same messages. */
  same_messages: boolean;
}

function reasonIn(result: AssemblyResult, slot: string, id: string): string {
  const o = result.trace.omitted.find((x) => x.slot === slot && x.id === id);
  return o ? o.reason : 'not a candidate';
}

/** The line (1-based) holding `offset`, and that line's text. */
function lineAt(text: string, offset: number): { line: number; text: string } {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', offset);
  let line = 1;
  for (let i = 0; i < start; i++) if (text.charCodeAt(i) === 10) line++;
  return { line, text: text.slice(start, end < 0 ? undefined : end) };
}

export function firstDifference(a: readonly RenderedMessage[], b: readonly RenderedMessage[]): FirstDifference | undefined {
  const n = Math.max(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a[k];
    const y = b[k];
    if (x && y && x.role === y.role && x.content === y.content) continue;
    const ca = x?.content ?? '';
    const cb = y?.content ?? '';
    let i = 0;
    if (x && y && x.role === y.role) while (i < ca.length && i < cb.length && ca.charCodeAt(i) === cb.charCodeAt(i)) i++;
    const la = lineAt(ca, i);
    const lb = lineAt(cb, i);
    const out: FirstDifference = { message: k, line: la.line, offset: i, a: x ? la.text : '(no message)', b: y ? lb.text : '(no message)' };
    if (x) out.role_a = x.role;
    if (y) out.role_b = y.role;
    return out;
  }
  return undefined;
}

export function diffAssemblies(a: AssemblyResult, b: AssemblyResult): AssemblyDiff {
  const names = [...new Set([...a.trace.slots.map((s) => s.name), ...b.trace.slots.map((s) => s.name)])];
  const slots: SlotDiff[] = names.map((slot) => {
    const sa = a.trace.slots.find((s) => s.name === slot);
    const sb = b.trace.slots.find((s) => s.name === slot);
    const ka = a.trace.retained.filter((r) => r.slot === slot);
    const kb = b.trace.retained.filter((r) => r.slot === slot);
    const idsB = new Map(kb.map((r) => [r.id, r.position]));
    const idsA = new Map(ka.map((r) => [r.id, r.position]));
    return {
      slot,
      kept_a: sa?.kept ?? 0,
      kept_b: sb?.kept ?? 0,
      total_a: sa?.total ?? 0,
      total_b: sb?.total ?? 0,
      tokens_a: sa?.used ?? 0,
      tokens_b: sb?.used ?? 0,
      only_a: ka.filter((r) => !idsB.has(r.id)).map((r) => ({ id: r.id, b: reasonIn(b, slot, r.id) })),
      only_b: kb.filter((r) => !idsA.has(r.id)).map((r) => ({ id: r.id, a: reasonIn(a, slot, r.id) })),
      moved: ka.filter((r) => idsB.has(r.id) && idsB.get(r.id) !== r.position).map((r) => ({ id: r.id, a: r.position, b: idsB.get(r.id)! })),
    };
  });
  const first = firstDifference(a.ok ? a.messages : [], b.ok ? b.messages : []);
  const out: AssemblyDiff = {
    ok_a: a.ok,
    ok_b: b.ok,
    input_tokens: { a: a.trace.input_tokens, b: b.trace.input_tokens, delta: b.trace.input_tokens - a.trace.input_tokens },
    slots,
    same_messages: !first,
  };
  if (a.trace.cost && b.trace.cost) out.cost = { a: a.trace.cost.input, b: b.trace.cost.input, delta: roundUsd(b.trace.cost.input - a.trace.cost.input) };
  if (first) out.first_difference = first;
  return out;
}
