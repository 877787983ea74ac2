/**
 * The stable, cacheable prefix of a template's requests (seed 001, pro corner: "Prompt caching
 * rewards a stable prefix. Put the instructions first and the changing sources later, and many
 * providers can reuse the cached prefix").
 *
 * - `commonPrefix`: across the requests of every fixture of a template, the longest prefix they
 *   all share, in tokens. Providers cache a request from its start: what every request repeats
 *   byte for byte is the part a cache can serve, and its tokens are billed at the cached price
 *   (cost.ts). Messages are compared in order; each message every request shares whole counts its
 *   per-message overhead and its content; the first message that differs counts its overhead and
 *   the lines of content all requests share (whole lines, so the cut never splits a token that
 *   the rest of the line would merge with). Providers add their own minimums (OpenAI caches
 *   prompts of 1,024 tokens or more, in steps of 128): this is the upper bound they work within.
 * - `cachePrefixFindings`: the template-level rule `cache-prefix-unstable` (info), reported when a
 *   volatile slot (history, evidence, the user's message, tool results) is rendered before a
 *   stable one (policy, tool definitions, examples, schemas): everything after the first volatile
 *   slot differs between requests, so the stable text behind it is never cached.
 */
import type { ContextConfig } from './config/schema';
import type { ConfigDoc, Finding, RenderedMessage, SlotKind, SlotUse, TemplateDoc, Tokenizer } from './types';
import { finding } from './rules/registry';
import { effectiveTrust } from './rules/templateRules';
import { basename } from './paths';

export interface CommonPrefix {
  /** Tokens of the shared prefix (message overheads included). */
  tokens: number;
  /** Messages every request shares whole. */
  messages: number;
  /** Characters of the first differing message's content that every request shares (whole lines). */
  partial_chars: number;
  /** Requests compared. */
  requests: number;
}

/** Length of the common prefix of strings, cut back to the end of the last whole shared line. */
function sharedLines(texts: readonly string[]): number {
  if (!texts.length) return 0;
  const first = texts[0];
  let n = first.length;
  for (const t of texts.slice(1)) {
    let i = 0;
    const max = Math.min(n, t.length);
    while (i < max && t.charCodeAt(i) === first.charCodeAt(i)) i++;
    n = i;
  }
  if (texts.every((t) => t.length === n)) return n;
  const nl = first.lastIndexOf('\n', n - 1);
  return nl < 0 ? 0 : nl + 1;
}

/**
 * The longest prefix every request shares, in tokens of `tokenizer`. One request shares itself
 * whole (its input tokens less the per-request overhead).
 */
export function commonPrefix(requests: ReadonlyArray<readonly RenderedMessage[]>, tokenizer: Tokenizer, messageOverhead = 0): CommonPrefix {
  const out: CommonPrefix = { tokens: 0, messages: 0, partial_chars: 0, requests: requests.length };
  if (!requests.length) return out;
  const shortest = Math.min(...requests.map((r) => r.length));
  for (let k = 0; k < shortest; k++) {
    const role = requests[0][k].role;
    if (requests.some((r) => r[k].role !== role)) return out;
    const contents = requests.map((r) => r[k].content);
    if (contents.every((c) => c === contents[0])) {
      out.messages++;
      out.tokens += messageOverhead + tokenizer.count(contents[0]);
      continue;
    }
    const n = sharedLines(contents);
    out.partial_chars = n;
    out.tokens += messageOverhead + (n ? tokenizer.count(contents[0].slice(0, n)) : 0);
    return out;
  }
  return out;
}

/** Kinds whose text the application writes once for every request. */
const STABLE_KINDS: ReadonlySet<SlotKind> = new Set(['policy', 'examples', 'schema']);
/** Kinds whose text changes from one request to the next. */
const VOLATILE_KINDS: ReadonlySet<SlotKind> = new Set(['history', 'evidence', 'user']);

/**
 * `stable`, `volatile`, or undefined for slots the rule cannot judge (memory, other, undefined
 * slots). A tool slot is stable when it is trusted (definitions the application writes) and
 * volatile when it is untrusted (tool results, which come from outside and change per request).
 */
export function slotStability(config: ContextConfig, slot: string): 'stable' | 'volatile' | undefined {
  const cfg = config.slots?.[slot];
  if (!cfg) return undefined;
  if (cfg.kind === 'tool') return effectiveTrust(cfg) === 'trusted' ? 'stable' : 'volatile';
  if (STABLE_KINDS.has(cfg.kind)) return 'stable';
  if (VOLATILE_KINDS.has(cfg.kind)) return 'volatile';
  return undefined;
}

/**
 * `cache-prefix-unstable`: the first volatile slot the template renders before a stable one, once
 * per template, at that volatile slot's first use, with the stable slots behind it as related
 * locations.
 */
export function cachePrefixFindings(template: TemplateDoc, config: ContextConfig, configDoc?: ConfigDoc): Finding[] {
  // A request composed of several files (uses with a path) lists its uses in the request's order already.
  const uses: SlotUse[] = template.uses.some((u) => u.path) ? [...template.uses] : [...template.uses].sort((x, y) => x.span.start - y.span.start);
  let volatile: SlotUse | undefined;
  const later: SlotUse[] = [];
  for (const use of uses) {
    const s = slotStability(config, use.slot);
    if (s === 'volatile' && !volatile) volatile = use;
    else if (s === 'stable' && volatile && !later.some((u) => u.slot === use.slot)) later.push(use);
  }
  if (!volatile || !later.length) return [];
  const v = volatile;
  const kindOf = (slot: string) => config.slots?.[slot]?.kind ?? 'other';
  const names = later.map((u) => `'${u.slot}' (${kindOf(u.slot)})`).join(', ');
  const related = later.map((u) => ({ path: u.path ?? template.path, span: u.span, message: `stable slot '${u.slot}' rendered after '${v.slot}'` }));
  if (configDoc) {
    const span = configDoc.keySpan(['slots', v.slot]);
    if (span) related.push({ path: configDoc.path, span, message: `'${v.slot}' is kind ${kindOf(v.slot)} in ${basename(configDoc.path)}` });
  }
  return [
    finding(
      'cache-prefix-unstable',
      v.path ?? template.path,
      v.span,
      `'${v.slot}' (${kindOf(v.slot)}) changes with every request but is rendered before ${names}, which ${later.length === 1 ? 'is' : 'are'} the same in every request: a provider's prompt cache serves only the prefix up to '${v.slot}', so the stable text after it is sent uncached each time. Move ${later.length === 1 ? 'it' : 'them'} above '${v.slot}'.`,
      { related },
    ),
  ];
}
