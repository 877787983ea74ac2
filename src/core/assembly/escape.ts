/**
 * Neutralising untrusted text placed inside an envelope. Text from documents, users and tools must
 * never close its envelope (`[/EVIDENCE]`, `</evidence>`), open a fake one (of any slot of the
 * template), close a wrapper tag the template writes around it (`</question>`), or look like the
 * start of a new message (`system:` at a line start, after any line separator a runtime splits on,
 * `<|im_start|>`, `{{role "system"}}`), or become a media part of the request: Prompty 0.1.x turns
 * every Markdown image `![alt](url)` of a message into an image the provider fetches, so `![` in
 * untrusted text is broken (`!\[`) and only the template's own images stay images.
 *
 * Everything else reaches the model byte-identical: benign text (`C:\Users`, a colon in prose) is
 * never touched. In each dangerous sequence one backslash is inserted (`[/EVIDENCE]` ->
 * `[\/EVIDENCE]`, `system:` -> `system\:`, `<|` -> `<\|`); the change is returned with its offset,
 * so the trace and the preview can show every neutralisation, and `restore` undoes them. An inserted
 * backslash is never whitespace, so it cannot create a new line start, and it breaks the sequence
 * it sits in, so the output never contains a closing delimiter.
 */

import { redactSecrets } from '../text/secrets';
import { BoundedCache } from '../cache';

export type BreakoutKind = 'closing-delimiter' | 'opening-delimiter' | 'role-marker' | 'media-marker';

export interface Breakout {
  kind: BreakoutKind;
  /** UTF-16 offset of the sequence in the (unescaped) text. */
  index: number;
  /** The offending text as written, e.g. `[/EVIDENCE` or `\nsystem:`-less `system:`. */
  text: string;
}

/**
 * Role words that chat formats (Prompty lines, Anthropic's Human/Assistant, ChatML) treat as markers,
 * `tools` included (a Prompty role). The letters s and i also match what Python's `(?i)` lets
 * Prompty's parser match (ſ, İ, ı), which a JavaScript `i` flag does not.
 */
const ROLE_WORDS = ['system', 'user', 'assistant', 'developer', 'tools?', 'function', 'human']
  .map((w) => w.replace(/s/g, '[sſ]').replace(/i/g, '[iİı]'))
  .join('|');
/** White space inside a line as Python's `\s` sees it (the line breaks of str.splitlines excluded). */
const LINE_SPACE = '[ \\t\\x1f\\xa0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]';
/** The line breaks of str.splitlines (Prompty splits the rendered text into lines with it). */
const LINE_BREAKS = '\\r\\n\\v\\f\\x1c-\\x1e\\x85\\u2028\\u2029';

interface Alternative {
  kind: BreakoutKind;
  /** Two capturing groups: the backslash goes between them. */
  source: string;
}

function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function alternatives(labels: readonly string[]): Alternative[] {
  const alts: Alternative[] = [];
  for (const label of labels) {
    if (!label) continue;
    if (label.startsWith('`')) {
      // A fenced block ends at the next run of three backticks: break every such run.
      alts.push({ kind: 'closing-delimiter', source: '(`)((?=``))' });
      continue;
    }
    const l = regexEscape(label);
    alts.push(
      { kind: 'closing-delimiter', source: `(\\[)(\\/${l})` },
      { kind: 'closing-delimiter', source: `(<)(\\/${l})` },
      { kind: 'opening-delimiter', source: `(\\[)(${l}(?=[\\s\\]]|$))` },
      { kind: 'opening-delimiter', source: `(<)(${l}(?=[\\s>/]|$))` },
    );
  }
  alts.push(
    // A line (or the text itself) starting with a role word and a colon, optionally after markdown hashes.
    // Line starts as Python's str.splitlines (Prompty) sees them: \n \r \v \f \x1c-\x1e NEL U+2028 U+2029.
    // Spaces are Python's (U+3000 too) and a bracket of arguments may be as long as its line, as
    // in Prompty's parser; every part is a plain run, so the scan stays linear.
    { kind: 'role-marker', source: `((?:^|[${LINE_BREAKS}])${LINE_SPACE}*(?:#+${LINE_SPACE}*)?(?:${ROLE_WORDS})${LINE_SPACE}*(?:\\[[^\\]${LINE_BREAKS}]*\\])?${LINE_SPACE}*)(:)` },
    // A Markdown image (`![alt](url)`, and 1.0-beta Prompty's `![thread]` line): `!\[` matches no image pattern.
    { kind: 'media-marker', source: '(!)(\\[)' },
    // Special-token syntax: <|im_start|>, <|endoftext|>, and the full-width variant some models use.
    { kind: 'role-marker', source: '(<)([|\\uFF5C])' },
    // dotprompt's rendered markers: a value printing <<<dotprompt:role:system>>> really starts a message.
    { kind: 'role-marker', source: '(<)(<<dotprompt:)' },
    // Template role and history markers: {{role "system"}}, {{#role "user"}}, {{/role}}, {{history}}.
    { kind: 'role-marker', source: `(\\{)(\\{~?\\s*[#/]?\\s*(?:role|history)\\b)` },
  );
  return alts;
}

interface Compiled {
  re: RegExp;
  kinds: BreakoutKind[];
}

/** Compiled patterns by label set. */
const cache = new BoundedCache<string, Compiled>(256);

/** Longer delimiter names are not escaped for (the config schema refuses them). */
export const MAX_LABEL = 128;

/** Every dangerous sequence contains one of these characters; text without them needs no scan. */
const TRIGGER = /[[<{:`]/;

function compile(label: string | readonly string[] | undefined): Compiled {
  // Labels come from configs and templates: bounded, so no user text makes an unbounded pattern.
  const labels = (label === undefined ? [] : typeof label === 'string' ? [label] : [...label]).filter((l) => l.length <= MAX_LABEL).slice(0, 64);
  const key = labels.join('\u0000');
  const hit = cache.get(key);
  if (hit) return hit;
  const alts = alternatives(labels);
  const compiled: Compiled = { re: new RegExp(alts.map((a) => `(?:${a.source})`).join('|'), 'gi'), kinds: alts.map((a) => a.kind) };
  cache.set(key, compiled);
  return compiled;
}

export interface EscapeOptions {
  /**
   * The text continues a line (an envelope header value such as `Source: tool:lookup`), so its
   * start is not a line start and a leading `tool:` is not a role marker.
   */
  inline?: boolean;
}

/** One neutralised sequence: where it was in the original text, and what it was. */
export interface Neutralised {
  /** UTF-16 offset in the original text where the backslash was inserted. */
  index: number;
  kind: BreakoutKind;
  /** The sequence as written (up to the insertion and the character after it). */
  sequence: string;
  /** True when the text was a metadata field (title, source, …) rather than the item's text. */
  field?: boolean;
}

/**
 * Neutralises `text` for a slot whose envelope is `label` (one label, several delimiter names, or
 * none: then only role markers are neutralised). Labels match case-insensitively in both the
 * bracket (`[LABEL ...]`) and the XML (`<label ...>`) forms.
 */
export function neutralise(text: string, label?: string | readonly string[], opts: EscapeOptions = {}): { text: string; changes: Neutralised[] } {
  if (!TRIGGER.test(text)) return { text, changes: [] };
  // A non-space first character takes away the line start; it is removed again below.
  const lead = opts.inline ? 1 : 0;
  const src = opts.inline ? `x${text}` : text;
  const { re, kinds } = compile(label);
  re.lastIndex = 0;
  const changes: Neutralised[] = [];
  const out = src.replace(re, (...args: unknown[]) => {
    // args: match, g1, g2, g3, ..., offset, string
    const offset = args[args.length - 2] as number;
    for (let i = 1; i + 1 < args.length - 2; i += 2) {
      const a = args[i];
      if (typeof a === 'string') {
        const b = args[i + 1] as string;
        const kindIndex = (i - 1) / 2;
        changes.push({ index: offset + a.length - lead, kind: kinds[kindIndex], sequence: redactSecrets((a.replace(/^[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]/, '') + b).slice(0, 80)) });
        return `${a}\\${b}`;
      }
    }
    return args[0] as string;
  });
  return { text: opts.inline ? out.slice(1) : out, changes };
}

/** `neutralise(text).text`. */
export function escapeUntrusted(text: string, label?: string | readonly string[], opts: EscapeOptions = {}): string {
  return neutralise(text, label, opts).text;
}

/** Undoes `neutralise`: removes the backslash of each change (offsets into the original text). */
export function restore(text: string, changes: readonly Neutralised[]): string {
  let out = '';
  let from = 0;
  changes.forEach((c, k) => {
    const at = c.index + k;
    out += text.slice(from, at);
    from = at + 1;
  });
  return out + text.slice(from);
}

/**
 * The sources of the breakout patterns, for a cache key of the breakout scan (contentCache.ts):
 * the patterns without a label and with a probe label, so a change to any pattern of this module
 * changes the key.
 */
export function breakoutPatternSources(): string[] {
  return [compile(undefined).re.source, compile('LABEL').re.source];
}

/** Every sequence `escapeUntrusted` would neutralise, in text order. */
export function findBreakouts(text: string, label?: string | readonly string[]): Breakout[] {
  const out: Breakout[] = [];
  if (!TRIGGER.test(text)) return out;
  const { re, kinds } = compile(label);
  re.lastIndex = 0;
  for (const m of text.matchAll(re)) {
    for (let i = 0; i < kinds.length; i++) {
      const pre = m[1 + i * 2];
      if (pre === undefined) continue;
      let index = m.index ?? 0;
      let seq = m[0];
      // Report a role line without the line break that precedes it.
      const lead = /^[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]/.test(seq) ? 1 : 0;
      index += lead;
      seq = seq.slice(lead).replace(/^[ \t]+/, (ws) => {
        index += ws.length;
        return '';
      });
      out.push({ kind: kinds[i], index, text: seq });
      break;
    }
  }
  return out;
}
