/**
 * Hidden characters in instruction files, judged by what they can carry. The scan is the project's
 * own (text/scan.ts: one finding per run, tag text decoded, emoji joiners and joiners between
 * letters of scripts that need them left alone); here each run gets the severity an agent's rule
 * file deserves:
 * - Unicode tag characters (U+E0000–U+E007F) spell text the model reads and a reviewer cannot see:
 *   an error, with the decoded text in the message.
 * - Bidirectional overrides, embeddings and isolates reorder the words around them: an error, with
 *   the text they reorder (to their closing control or the end of the line) shown.
 * - A run of word joiners (U+2060) only is typography, as in real rule files: information.
 * - Anything else (zero-width spaces, marks): the rule's warning.
 */
import type { Finding } from '../../types';
import { scanHiddenCharacters } from '../../text/scan';
import { redactSecrets } from '../../text/secrets';

const BIDI_OPEN = /[\u202A-\u202E\u2066-\u2068]/;
const BIDI_CLOSE = /[\u202C\u2069\n]/;

/** Where the reordered text ends: the closing control, the end of the line, or 200 characters on. */
function reorderedEnd(text: string, end: number): number {
  let stop = end;
  while (stop < text.length && stop - end < 200 && !BIDI_CLOSE.test(text.charAt(stop))) stop++;
  return stop;
}

export function agentHiddenCharacters(path: string, text: string): Finding[] {
  return scanHiddenCharacters(path, text).map((f) => {
    const run = text.slice(f.span.start, f.span.end);
    if (/[\uDB40]/.test(run)) return { ...f, severity: 'error' as const };
    if (BIDI_OPEN.test(run)) {
      // The message stays the scan's own (so the analysis' scan of the same text is the same finding); the reordered text is related.
      const stop = reorderedEnd(text, f.span.end);
      const covered = redactSecrets(text.slice(f.span.end, stop).replace(/[\u200B-\u200F\u202A-\u202E\u2060-\u2069]/g, ''));
      const shown = covered.length > 60 ? `${covered.slice(0, 60)}…` : covered;
      return { ...f, severity: 'error' as const, related: [{ path, span: { start: f.span.end, end: stop }, message: `the text they reorder: '${shown}' (a reviewer sees another order than the model reads)` }] };
    }
    if (/^\u2060+$/.test(run)) return { ...f, severity: 'info' as const };
    return f;
  });
}
