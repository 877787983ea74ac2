/** Number, path and reason formatting shared by the preview's sections. */
import type { OmitReason } from '../protocol/preview';

const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmt(n: number): string {
  return INTEGER.format(n);
}

/** Percent with one decimal below 10 % (small slots of large windows), none above. */
export function pct(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const p = (part / whole) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p)}%`;
}

export function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

export function fmtScore(score: number | undefined): string {
  return score === undefined ? '—' : score.toFixed(3);
}

/** Size of a text in characters, shortened: 812 chars, 12.4k chars, 1.05M chars. */
export function fmtChars(n: number): string {
  if (n < 1000) return `${n} chars`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k chars`;
  return `${(n / 1_000_000).toFixed(2)}M chars`;
}

/** A sentence for an omit reason code of the trace (the code itself is shown next to it). */
export function describeReason(reason: OmitReason | string): string {
  if (reason.startsWith('filtered:')) return `Removed by the ${reason.slice('filtered:'.length)} filter`;
  if (reason.startsWith('duplicate-of:')) return `Duplicate of ${reason.slice('duplicate-of:'.length)}`;
  switch (reason) {
    case 'over-slot-budget':
      return 'Did not fit the slot budget';
    case 'stop-policy':
      return 'After the first item that did not fit (stop policy)';
    case 'max-items':
      return 'Beyond the slot’s max_items';
    case 'trimmed-for-request':
      return 'Dropped to fit the whole request';
    default:
      return reason;
  }
}

/** "+1,234", "−567", "±0" (the signs `ctxlens diff` prints). */
export function signed(n: number, format: (x: number) => string = fmt): string {
  return n === 0 ? '±0' : `${n > 0 ? '+' : '−'}${format(Math.abs(n))}`;
}

/** "1 item", "3 items". */
export function plural(n: number, word: string): string {
  return `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;
}
