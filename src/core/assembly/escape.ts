/**
 * Reversible escaping of untrusted text placed inside an envelope. Text from documents, users and
 * tools must never close its envelope (`[/EVIDENCE]`, `</evidence>`), open a fake one, or look like
 * the start of a new message (`system:` lines, `<|im_start|>`, `{{role "system"}}`).
 *
 * The scheme: every backslash is doubled, then a single backslash is inserted inside each dangerous
 * sequence (`[/EVIDENCE]` -> `[\/EVIDENCE]`, `system:` -> `system\:`, `<|` -> `<\|`). Because original
 * backslashes always come in pairs, a lone backslash can only be an inserted one, so
 * `unescapeUntrusted` drops lone backslashes and halves pairs: unescape(escape(x)) === x for every x.
 * Inserted backslashes are never whitespace, so escaping cannot create a new line start, and each
 * insertion breaks the sequence it sits in, so the output never contains a closing delimiter.
 */

export type BreakoutKind = 'closing-delimiter' | 'opening-delimiter' | 'role-marker';

export interface Breakout {
  kind: BreakoutKind;
  /** UTF-16 offset of the sequence in the (unescaped) text. */
  index: number;
  /** The offending text as written, e.g. `[/EVIDENCE` or `\nsystem:`-less `system:`. */
  text: string;
}

/** Role words that chat formats (Prompty lines, Anthropic's Human/Assistant, ChatML) treat as markers. */
const ROLE_WORDS = 'system|user|assistant|developer|tool|function|human';

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
    { kind: 'role-marker', source: `((?:^|[\\r\\n\\u2028\\u2029])[ \\t]*(?:#+[ \\t]*)?(?:${ROLE_WORDS})[ \\t]*)(:)` },
    // Special-token syntax: <|im_start|>, <|endoftext|>, and the full-width variant some models use.
    { kind: 'role-marker', source: '(<)([|\\uFF5C])' },
    // Template role and history markers: {{role "system"}}, {{#role "user"}}, {{/role}}, {{history}}.
    { kind: 'role-marker', source: `(\\{)(\\{~?\\s*[#/]?\\s*(?:role|history)\\b)` },
  );
  return alts;
}

interface Compiled {
  re: RegExp;
  kinds: BreakoutKind[];
}

const cache = new Map<string, Compiled>();

/** Every dangerous sequence contains one of these characters; text without them needs no scan. */
const TRIGGER = /[[<{:`]/;

function compile(label: string | readonly string[] | undefined): Compiled {
  const labels = label === undefined ? [] : typeof label === 'string' ? [label] : [...label];
  const key = labels.join('\u0000');
  const hit = cache.get(key);
  if (hit) return hit;
  const alts = alternatives(labels);
  const compiled: Compiled = { re: new RegExp(alts.map((a) => `(?:${a.source})`).join('|'), 'gi'), kinds: alts.map((a) => a.kind) };
  if (cache.size > 256) cache.clear();
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

/**
 * Escapes `text` for a slot whose envelope is `label` (one label, several delimiter names, or none:
 * then only role markers are escaped). Labels match case-insensitively in both the bracket
 * (`[LABEL ...]`) and the XML (`<label ...>`) forms.
 */
export function escapeUntrusted(text: string, label?: string | readonly string[], opts: EscapeOptions = {}): string {
  // A non-space first character takes away the line start; it is removed again below.
  if (opts.inline) return escapeUntrusted(`x${text}`, label).slice(1);
  if (!TRIGGER.test(text)) return text.includes('\\') ? text.replace(/\\/g, '\\\\') : text;
  const { re } = compile(label);
  const doubled = text.includes('\\') ? text.replace(/\\/g, '\\\\') : text;
  re.lastIndex = 0;
  return doubled.replace(re, (...args: unknown[]) => {
    // args: match, g1, g2, g3, ..., offset, string
    for (let i = 1; i + 1 < args.length - 2; i += 2) {
      const a = args[i];
      if (typeof a === 'string') return `${a}\\${args[i + 1] as string}`;
    }
    return args[0] as string;
  });
}

/** Inverse of `escapeUntrusted` (for any label): pairs of backslashes become one, lone ones vanish. */
export function unescapeUntrusted(text: string, label?: string | readonly string[]): string {
  void label;
  if (!text.includes('\\')) return text;
  return text.replace(/\\([\s\S])/g, '$1');
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
      const lead = /^[\r\n\u2028\u2029]/.test(seq) ? 1 : 0;
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
