/**
 * Times of items and requests: ISO 8601 read the same way everywhere. A date-time without a zone
 * is read as UTC (JavaScript would read it in the machine's zone, and the same fixture must give
 * the same trace everywhere).
 */
export function timeOf(iso: string | undefined): number | undefined {
  if (typeof iso !== 'string') return undefined;
  const s = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(iso) ? `${iso}Z` : iso;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}
