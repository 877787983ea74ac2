/**
 * Tool results (seed 002, "Tool results"): external state that may be fresher than stored
 * documents, but still untrusted data, and stale by the time it is used. `tool-result-stale`
 * (info) when a result's `at` is older than the slot's `max_age` (else `tools.max_age`) at the
 * reference time `now`; without `now` nothing is judged (the clock is never read).
 */
import type { Finding } from '../types';
import type { Span } from '../types';
import { timeOf } from '../time';
import { finding } from '../rules/registry';

/** Milliseconds of `90s`, `15m`, `1h`, `2d`, `PT1H`, `P1DT12H`; undefined when it does not parse. */
export function durationMs(d: string | undefined): number | undefined {
  if (d === undefined) return undefined;
  const short = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(d);
  if (short) return Number(short[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[short[2] as 's' | 'm' | 'h' | 'd'];
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(d);
  if (!iso || d === 'P' || d.endsWith('T')) return undefined;
  return (Number(iso[1] ?? 0) * 86_400 + Number(iso[2] ?? 0) * 3_600 + Number(iso[3] ?? 0) * 60 + Number(iso[4] ?? 0)) * 1_000;
}

/** `2d 3h`, `14h 39m`, `5m`, `40s`. */
export function formatAge(ms: number): string {
  const s = Math.floor(ms / 1_000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  if (d) return h ? `${d}d ${h}h` : `${d}d`;
  if (h) return m ? `${h}h ${m}m` : `${h}h`;
  if (m) return `${m}m`;
  return `${s}s`;
}

export function staleResults(path: string, slot: string, items: ReadonlyArray<{ id: string; title?: string; at?: string; span: Span }>, maxAge: string | undefined, now: string | undefined): Finding[] {
  const limit = durationMs(maxAge);
  const nowMs = timeOf(now);
  if (limit === undefined || nowMs === undefined) return [];
  const out: Finding[] = [];
  for (const it of items) {
    const at = timeOf(it.at);
    if (at === undefined || nowMs - at <= limit) continue;
    out.push(
      finding('tool-result-stale', path, it.span, `Tool result ${it.id}${it.title !== undefined ? ` (${it.title})` : ''} in '${slot}' is ${formatAge(nowMs - at)} old at ${now}, over its max_age of ${maxAge}; the state it reports may have changed. Re-run the tool, or tell the model how old the result is.`),
    );
  }
  return out;
}
