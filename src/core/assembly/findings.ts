/**
 * Fixture-driven rules: what the assembly of one fixture reveals. Each finding sits on the
 * fixture item or slot key it is about, with a related location at the slot's entry in the config.
 * Rule ids and default severities come from rules/registry.ts; the config's `rules:` overrides are
 * applied by the caller (analyze.ts), like every other rule.
 */
import type { ConfigDoc, Finding, FixtureDoc, RelatedLocation, Span, TemplateDoc } from '../types';
import type { WorkItem } from './item';
import type { SlotState } from './render';
import { finding } from '../rules/registry';
import { formatTokens as fmt } from '../budget';
import { breakoutPatternSources, findBreakouts } from './escape';
import { placementOf } from './order';
import { dataVersion } from './contentCache';
import { itemScan } from './item';

export interface FindingContext {
  template: TemplateDoc;
  fixture?: FixtureDoc;
  configDoc?: ConfigDoc;
}

const ZERO: Span = { start: 0, end: 0 };

export function configRelated(ctx: FindingContext, slot: string, key?: string, message?: string): RelatedLocation[] {
  const doc = ctx.configDoc;
  if (!doc) return [];
  const span = (key ? doc.keySpan(['slots', slot, key]) : undefined) ?? doc.keySpan(['slots', slot]);
  return span ? [{ path: doc.path, span, message: message ?? `slot '${slot}' in the config` }] : [];
}

/** The slot's key in the fixture, else its first use in the template. */
export function slotLocation(ctx: FindingContext, slot: string): { path: string; span: Span } {
  const key = ctx.fixture?.slotKeySpans[slot];
  if (ctx.fixture && key) return { path: ctx.fixture.path, span: key };
  const use = ctx.template.uses.find((u) => u.slot === slot);
  return { path: ctx.template.path, span: use?.span ?? ctx.template.bodySpan ?? ZERO };
}

/**
 * The span in the fixture of `needle`, found at `index` of the item's text: the same occurrence
 * (the k-th of that needle) in the item's source text, when it is written there verbatim. YAML
 * folding and escapes move offsets, so the text is searched rather than offset-mapped.
 */
function spanOf(ctx: FindingContext, item: WorkItem, needle: string, index: number): Span {
  const fx = ctx.fixture;
  if (!fx || item.file !== undefined || !needle) return item.textSpan;
  let k = 0;
  for (let i = item.text.indexOf(needle); i >= 0 && i < index; i = item.text.indexOf(needle, i + 1)) k++;
  const region = fx.text.slice(item.textSpan.start, item.textSpan.end);
  let at = region.indexOf(needle);
  for (let j = 0; j < k && at >= 0; j++) at = region.indexOf(needle, at + 1);
  return at >= 0 ? { start: item.textSpan.start + at, end: item.textSpan.start + at + needle.length } : item.textSpan;
}

function describe(slot: SlotState, item: WorkItem): string {
  return slot.isText ? `slot '${slot.name}'` : `${slot.name} item ${item.id}`;
}

/**
 * Instruction-like phrases (a heuristic, reported apart from the structural rules). Override
 * phrases try to replace the application's instructions and are suspicious in any untrusted text,
 * the user's own messages included (direct injection). Action phrases ask for an operation; in
 * conversation turns and the user's question they are the ordinary business of the request ("I'd
 * like you to issue the refund"), so they are only looked for in data slots (documents, tool
 * results, memory). An action phrase after a modal or a negation ("can't issue the refund",
 * "never send your API key") is a statement about the action, not an order, and does not match.
 */
const NOT_AFTER = "(?<!\\b(?:can|cannot|can't|could|may|might|will|won't|would|should|shall|must|to|not|never|don't|doesn't|we|they|agents?)\\s)";

export const OVERRIDE_PATTERNS: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:of\s+the\s+)?(?:previous|prior|above|earlier|preceding|former|system|your)\s+(?:instructions?|rules|prompts?|directions|guidelines|messages)\b/i,
  /\bdisregard\s+(?:the\s+|your\s+)?system\s+prompt\b/i,
  /\byou\s+are\s+now\s+(?:an?\s+\w+|the\s+\w+|in\s+\w+\s+mode|no\s+longer\b|free\b|unrestricted\b|called\b|dan\b|jailbroken\b)/i,
  /\bnew\s+instructions?\s*:/i,
  /\b(?:reveal|print|show|repeat|leak)\s+(?:me\s+)?(?:your\s+|the\s+)?(?:system\s+prompt|hidden\s+prompt|hidden\s+instructions|initial\s+instructions)\b/i,
  /\bsystem\s+override\b/i,
];

export const ACTION_PATTERNS: readonly RegExp[] = [
  new RegExp(`${NOT_AFTER}\\bissue\\s+(?:a\\s+|the\\s+)?(?:full\\s+)?refund\\b`, 'i'),
  new RegExp(`${NOT_AFTER}\\bupload\\s+(?:the\\s+|all\\s+|your\\s+)?(?:database|db)\\b`, 'i'),
  new RegExp(`${NOT_AFTER}\\bact\\s+as\\s+(?:an?\\s+|the\\s+)?(?:admin(?:istrator)?|system|developer|root)\\b`, 'i'),
  /\b(?:do\s+not|don't|never)\s+(?:tell|inform|warn)\s+the\s+user\b/i,
  new RegExp(`${NOT_AFTER}\\b(?:send|email|post|exfiltrate|forward)\\s+(?:me\\s+)?(?:the\\s+|your\\s+|all\\s+)?(?:api\\s+keys?|passwords?|credentials|secrets|private\\s+keys?)\\b`, 'i'),
];

/** Every pattern, override first. */
export const INJECTION_PATTERNS: readonly RegExp[] = [...OVERRIDE_PATTERNS, ...ACTION_PATTERNS];

/** All patterns of a list in one expression: one scan rules out the (usual) clean text. */
function anyOf(list: readonly RegExp[]): RegExp {
  return new RegExp(list.map((p) => `(?:${p.source})`).join('|'), 'i');
}
const ANY_OVERRIDE = anyOf(OVERRIDE_PATTERNS);
const ANY_INJECTION = anyOf(INJECTION_PATTERNS);
/** Cache keys of the two phrase scans (contentCache.ts): named by their options and their patterns. */
const PHRASES_KEY = `phrases:${dataVersion(ANY_INJECTION.source, ANY_OVERRIDE.source)}`;
/** Cache key prefix of the breakout scan: named by the version of its patterns (the delimiters follow). */
const BREAKOUTS_KEY = `breakouts:${dataVersion(...breakoutPatternSources())}`;

/** Instruction-like phrases in `text`; `actions: false` looks for override phrases only. */
export function findInjectionPhrases(text: string, opts: { actions?: boolean } = {}): Array<{ index: number; text: string }> {
  const actions = opts.actions ?? true;
  const out: Array<{ index: number; text: string }> = [];
  if (!(actions ? ANY_INJECTION : ANY_OVERRIDE).test(text)) return out;
  for (const re of actions ? INJECTION_PATTERNS : OVERRIDE_PATTERNS) {
    const m = re.exec(text);
    if (m) out.push({ index: m.index, text: m[0] });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** delimiter-breakout, injection-phrase and citation-missing for the items that could reach the request. */
export function contentFindings(ctx: FindingContext, slot: SlotState, items: readonly WorkItem[]): Finding[] {
  const fx = ctx.fixture;
  if (!fx) return [];
  const out: Finding[] = [];
  for (const item of items) {
    if (slot.untrusted) {
      const seen = new Set<string>();
      for (const b of itemScan(item, `${BREAKOUTS_KEY}:${slot.escapeWith.join('\u0000')}`, (t) => findBreakouts(t, slot.escapeWith))) {
        if (seen.has(b.kind)) continue;
        seen.add(b.kind);
        const shown = b.kind === 'role-marker' ? markerText(item.text, b.index, b.text) : delimiterText(item.text, b.index, b.text);
        const effect =
          b.kind === 'closing-delimiter'
            ? 'which would close its envelope early'
            : b.kind === 'opening-delimiter'
              ? 'which would open a fake envelope'
              : b.kind === 'media-marker'
                ? 'a Markdown image that Prompty would turn into an image the provider fetches (a way to send data to that URL)'
                : 'a role marker that could pass for the start of a new message';
        out.push(
          finding('delimiter-breakout', fx.path, spanOf(ctx, item, shown, b.index), `Untrusted text of ${describe(slot, item)} contains "${shown}", ${effect}; it is escaped in the request (\\ inserted), but check where this text comes from.`, {
            related: configRelated(ctx, slot.name, slot.label ? 'label' : 'trust'),
          }),
        );
      }
      // A Markdown image in a metadata field is printed into the request too (`{{ doc.title }}`).
      if (!seen.has('media-marker')) {
        const field = [item.title, item.source, item.id, item.version].find((v) => typeof v === 'string' && findBreakouts(v).some((b) => b.kind === 'media-marker'));
        if (typeof field === 'string') {
          out.push(
            finding('delimiter-breakout', fx.path, item.textSpan, `Untrusted metadata of ${describe(slot, item)} contains "![", a Markdown image that Prompty would turn into an image the provider fetches (a way to send data to that URL); it is escaped in the request (\\ inserted), but check where this text comes from.`, {
              related: configRelated(ctx, slot.name, 'trust'),
            }),
          );
        }
      }
      // One finding per item, on its first phrase, quoting every phrase found.
      const actions = slot.kind !== 'history' && slot.kind !== 'user';
      const phrases = itemScan(item, `${PHRASES_KEY}:${actions}`, (t) => findInjectionPhrases(t, { actions }));
      if (phrases.length) {
        const first = phrases[0];
        const quoted = phrases.map((p) => `"${p.text}"`).join(' and ');
        out.push(
          finding('injection-phrase', fx.path, spanOf(ctx, item, first.text, first.index), `Untrusted text of ${describe(slot, item)} contains instruction-like text ${quoted} (heuristic). It reaches the model as data; keep permissions and tool checks outside the model.`, {
            related: configRelated(ctx, slot.name, 'trust'),
          }),
        );
      }
    }
    if (slot.kind === 'evidence' && !slot.isText && (!item.hasId || item.source === undefined)) {
      const missing = [!item.hasId ? 'id' : undefined, item.source === undefined ? 'source' : undefined].filter(Boolean).join(' and ');
      out.push(
        finding('citation-missing', fx.path, item.span, `Evidence item ${item.index + 1} of '${slot.name}'${item.hasId ? ` (${item.id})` : ''} has no ${missing}, so an answer cannot cite it${!item.hasId ? ` (it is given the generated id ${item.id})` : ''}.`, {
          related: configRelated(ctx, slot.name),
        }),
      );
    }
  }
  return out;
}

function delimiterText(text: string, index: number, seq: string): string {
  // Show the whole delimiter: `[/EVIDENCE]` rather than `[/EVIDENCE`.
  const close = seq.startsWith('[') ? ']' : seq.startsWith('<') ? '>' : '';
  if (close) {
    const end = text.indexOf(close, index + seq.length);
    if (end >= 0 && end - index <= seq.length + 40 && !/[\r\n]/.test(text.slice(index, end))) return text.slice(index, end + 1);
  }
  return seq;
}

function markerText(text: string, index: number, seq: string): string {
  if (seq.startsWith('<')) {
    const m = /^<[|\uFF5C][^|\uFF5C\s]{0,40}[|\uFF5C]>/.exec(text.slice(index));
    if (m) return m[0];
  }
  if (seq.startsWith('{{')) {
    const end = text.indexOf('}}', index);
    if (end >= 0 && end - index < 60) return text.slice(index, end + 2);
  }
  return seq;
}

export function listIds(items: ReadonlyArray<{ id: string; reason?: string }>, max = 5): string {
  const shown = items.slice(0, max).map((x) => (x.reason ? `${x.id} (${x.reason})` : x.id));
  const more = items.length > max ? ` and ${formatCount(items.length - max)} more` : '';
  return shown.join(', ') + more;
}

function formatCount(n: number): string {
  return fmt(n);
}

/** `lost-in-the-middle`: a top-3 item (by relevance when the slot has it, else by rank) in the middle third. */
export function lostInTheMiddle(ctx: FindingContext, slot: SlotState, ordered: readonly WorkItem[], ranked: readonly WorkItem[]): Finding[] {
  if (!ctx.fixture || slot.isText || slot.kind === 'history' || (slot.config?.order ?? 'rank') !== 'rank' || ordered.length < 5) return [];
  const byRelevance = ranked.some((i) => i.relevance !== undefined);
  const top = byRelevance ? [...ranked].sort((a, b) => (b.relevance ?? 0) - (a.relevance ?? 0) || a.index - b.index).slice(0, 3) : ranked.slice(0, 3);
  const n = ordered.length;
  const middle: string[] = [];
  for (const item of top) {
    const pos = ordered.indexOf(item);
    if (placementOf(pos, n) === 'middle') middle.push(`${item.id} (${byRelevance ? `relevance ${item.relevance ?? 0}, ` : ''}position ${pos + 1} of ${n})`);
  }
  if (!middle.length) return [];
  const loc = slotLocation(ctx, slot.name);
  return [
    finding('lost-in-the-middle', loc.path, loc.span, `With order: rank, ${byRelevance ? 'a top-3 item by relevance' : 'a top-3 item'} of '${slot.name}' lands in the middle third: ${middle.join(', ')}. Models often use the middle of a long context less; consider order: edges.`, {
      related: configRelated(ctx, slot.name, 'order', 'order of this slot'),
    }),
  ];
}
