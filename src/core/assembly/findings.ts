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
import { findBreakouts } from './escape';
import { placementOf } from './order';

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

/** The span of `needle` inside the item's text in the fixture, when it is written there verbatim. */
function spanOf(ctx: FindingContext, item: WorkItem, needle: string): Span {
  const fx = ctx.fixture;
  if (!fx || item.file !== undefined || !needle) return item.textSpan;
  const region = fx.text.slice(item.textSpan.start, item.textSpan.end);
  const at = region.indexOf(needle);
  return at >= 0 ? { start: item.textSpan.start + at, end: item.textSpan.start + at + needle.length } : item.textSpan;
}

function describe(slot: SlotState, item: WorkItem): string {
  return slot.isText ? `slot '${slot.name}'` : `${slot.name} item ${item.id}`;
}

/**
 * Instruction-like phrases (a heuristic, reported apart from the structural rules). Each pattern
 * is anchored on words so that ordinary prose about instructions rarely matches.
 */
export const INJECTION_PATTERNS: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:of\s+the\s+)?(?:previous|prior|above|earlier|preceding|former|system|your)\s+(?:instructions?|rules|prompts?|directions|guidelines|messages)\b/i,
  /\bdisregard\s+(?:the\s+|your\s+)?system\s+prompt\b/i,
  /\byou\s+are\s+now\b/i,
  /\bnew\s+instructions?\s*:/i,
  /\bissue\s+(?:a\s+|the\s+)?(?:full\s+)?refund\b/i,
  /\breveal\s+(?:your\s+|the\s+)?(?:system\s+prompt|hidden\s+prompt|instructions|prompt)\b/i,
  /\bupload\s+(?:the\s+|all\s+)?(?:database|db|data|files)\b/i,
  /\b(?:print|show|repeat)\s+(?:your\s+|the\s+)?system\s+prompt\b/i,
  /\bact\s+as\s+(?:an?\s+|the\s+)?(?:admin(?:istrator)?|system|developer|root)\b/i,
  /\b(?:do\s+not|don't|never)\s+(?:tell|inform|warn)\s+the\s+user\b/i,
  /\bsystem\s+override\b/i,
  /\b(?:send|email|post|exfiltrate)\s+(?:the\s+|your\s+|all\s+)?(?:api\s+keys?|passwords?|credentials|secrets|tokens)\b/i,
];

/** All patterns in one expression: one scan rules out the (usual) clean text. */
const ANY_INJECTION = new RegExp(INJECTION_PATTERNS.map((p) => `(?:${p.source})`).join('|'), 'i');

export function findInjectionPhrases(text: string): Array<{ index: number; text: string }> {
  const out: Array<{ index: number; text: string }> = [];
  if (!ANY_INJECTION.test(text)) return out;
  for (const re of INJECTION_PATTERNS) {
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
      for (const b of findBreakouts(item.text, slot.escapeWith)) {
        if (seen.has(b.kind)) continue;
        seen.add(b.kind);
        const shown = b.kind === 'role-marker' ? markerText(item.text, b.index, b.text) : delimiterText(item.text, b.index, b.text);
        const effect =
          b.kind === 'closing-delimiter'
            ? 'which would close its envelope early'
            : b.kind === 'opening-delimiter'
              ? 'which would open a fake envelope'
              : 'a role marker that could pass for the start of a new message';
        out.push(
          finding('delimiter-breakout', fx.path, spanOf(ctx, item, shown), `Untrusted text of ${describe(slot, item)} contains "${shown}", ${effect}; it is escaped in the request (\\ inserted), but check where this text comes from.`, {
            related: configRelated(ctx, slot.name, slot.label ? 'label' : 'trust'),
          }),
        );
      }
      for (const p of findInjectionPhrases(item.text)) {
        out.push(
          finding('injection-phrase', fx.path, spanOf(ctx, item, p.text), `Untrusted text of ${describe(slot, item)} contains instruction-like text "${p.text}" (heuristic). It reaches the model as data; keep permissions and tool checks outside the model.`, {
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
