/**
 * The slot uses of a Jinja `.prompty` body as the engine's tree gives them (language/jinja/meta.ts):
 * which names the template reads from its context is decided by the same parser that renders it,
 * never by a second reading. The scanner's tree still supplies what only it models (the loop node
 * a use iterates, Prompty's chat-history loop); a name the scanner took for a slot but the engine
 * does not read (a keyword such as `missing`, a global such as `cycler`, a variable set in the
 * template) is no slot, and a name the scanner missed is.
 */
import type { RawUse } from '../shared';
import { templateVariables } from '../jinja/meta';

/** The `template:` engine a Prompty front matter names (`template: mustache`, `template: { format|type: … }`). */
export function promptyTemplateType(data: Record<string, unknown> | undefined): string | undefined {
  const t = data?.template;
  if (typeof t === 'string') return t;
  if (t && typeof t === 'object') {
    const r = t as Record<string, unknown>;
    const v = r.format ?? r.type;
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/** Offsets of the normalised body (\r\n → \n, as Jinja reads it) back to offsets in the template text. */
function sourceOffsets(text: string, bodyStart: number): (offset: number) => number {
  const collapsed: number[] = [];
  let n = 0;
  for (let i = bodyStart; i < text.length; i++) {
    if (text.charCodeAt(i) === 13 && text.charCodeAt(i + 1) === 10) {
      collapsed.push(i - bodyStart - n);
      n++;
      i++;
    }
  }
  return (offset: number) => {
    let lo = 0;
    let hi = collapsed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (collapsed[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    return bodyStart + offset + lo;
  };
}

/**
 * The uses of a Jinja body from the engine's tree, merged with the scanner's loop information.
 * Undefined when the engine cannot parse the body (the renderer reports it; the scanner's uses
 * are kept so the editor still locates slots).
 */
export function engineUses(text: string, bodyStart: number, scanned: readonly RawUse[]): RawUse[] | undefined {
  let vars;
  try {
    vars = templateVariables(text.slice(bodyStart));
  } catch {
    return undefined;
  }
  const at = sourceOffsets(text, bodyStart);
  const out: RawUse[] = [];
  for (const u of vars.uses) {
    const span = { start: at(u.span.start), end: at(u.span.end) };
    const twin = scanned.find((s) => s.slot === u.name && s.span.start < span.end && span.start < s.span.end);
    if (twin && (twin.form === 'history' || (twin.form === u.form && twin.each))) out.push({ ...twin, span: twin.form === 'history' ? twin.span : span });
    else out.push({ slot: u.name, span, form: u.form });
  }
  return out;
}
