/**
 * Rendering: walks the template's messages and fills slots with their kept, ordered items,
 * producing messages by role with parts that mark slot boundaries and untrusted data.
 *
 * - `{{slot}}`: a text slot's text; a list slot's items joined by blank lines; for a labelled slot,
 *   each item in its envelope.
 * - `{{#each slot}}` / `{% for x in slot %}`: the body once per kept item (`this`, `this.text`,
 *   `x.field`, `@index`, `loop.index`, bare item fields); in a labelled slot each iteration's output
 *   is wrapped in the item's envelope (unless the template writes that envelope itself).
 * - `{{#if slot}}`: the body when the value is non-empty (negated for unless), else the inverse.
 * - `{{history}}`: one message per kept history item, in its own role.
 *
 * Untrusted text (and its metadata) is escaped with escape.ts; trusted text is the application's
 * own and is inserted as written. Nothing is HTML-escaped: prompts are not HTML (dotprompt and
 * Prompty render without HTML escaping). Message content is trimmed, and messages left empty
 * (for example after their only slot was trimmed) are dropped, since chat APIs reject them.
 */
import type { SlotConfig } from '../config/schema';
import type { MessagePart, RenderedMessage, Role, SlotKind, SlotUse, TemplateDoc, TemplateNode } from '../types';
import type { WorkItem } from './item';
import type { Envelope, EnvelopeKind } from './envelope';
import type { CountPiece, ListPiece } from './countParts';
import { pieceText } from './countParts';
import { envelopeFor, sourcesOf } from './envelope';
import { escapeUntrusted } from './escape';

export interface SlotState {
  name: string;
  config?: SlotConfig;
  kind: SlotKind;
  /** The fixture value was one text (not a list). */
  isText: boolean;
  untrusted: boolean;
  /** The config label, when the slot wraps items in envelopes. */
  label?: string;
  envelope: EnvelopeKind;
  /** Delimiter names escaped in this slot's text: the label and any the template writes around a use. */
  escapeWith: string[];
}

/** Separator between items rendered by a bare `{{slot}}`. */
export const ITEM_SEPARATOR = '\n\n';

interface Frame {
  alias?: string;
  item?: WorkItem;
  value?: unknown;
  slot?: SlotState;
  index: number;
  count: number;
}

type Value =
  | { kind: 'slot'; slot: SlotState }
  | { kind: 'item'; item: WorkItem; slot: SlotState }
  | { kind: 'data'; value: unknown; slot?: SlotState; item?: WorkItem; untrusted: boolean };

const ITEM_FIELDS = new Set(['id', 'text', 'title', 'role', 'at', 'source', 'source_type', 'version', 'authority', 'relevance', 'published_at', 'expires_at', 'tenant', 'sources', 'score']);

/** A part, or (when counting only) a slot's items as one list piece with empty `text`. */
interface BufPart extends MessagePart {
  list?: ListPiece;
}

class PartBuffer {
  readonly parts: BufPart[] = [];
  push(text: string, slot?: string, itemId?: string, untrusted?: boolean): void {
    if (!text) return;
    const last = this.parts[this.parts.length - 1];
    if (last && !last.list && last.slot === slot && last.itemId === itemId && !!last.untrusted === !!untrusted) {
      last.text += text;
      return;
    }
    const p: MessagePart = { text };
    if (slot !== undefined) p.slot = slot;
    if (itemId !== undefined) p.itemId = itemId;
    if (untrusted) p.untrusted = true;
    this.parts.push(p);
  }
  append(parts: readonly MessagePart[]): void {
    for (const p of parts) this.push(p.text, p.slot, p.itemId, p.untrusted);
  }
  /** Counting only (Renderer.renderTexts): a slot's items without a part per item. */
  pushList(list: ListPiece, slot: string): void {
    if (list.units.length) this.parts.push({ text: '', slot, list });
  }
}

/** Removes leading and trailing whitespace across parts; drops parts left empty. */
export function trimParts(parts: MessagePart[]): MessagePart[] {
  // trimStart/trimEnd, not /\s+$/: a regex anchored at the end rescans every whitespace run.
  const out = parts.map((p) => ({ ...p }));
  while (out.length && !out[0].text.trimStart()) out.shift();
  if (out.length) out[0].text = out[0].text.trimStart();
  while (out.length && !out[out.length - 1].text.trimEnd()) out.pop();
  if (out.length) out[out.length - 1].text = out[out.length - 1].text.trimEnd();
  return out;
}

/** The part texts `trimParts` would leave, without copying the parts. */
function trimTexts(parts: readonly MessagePart[]): string[] {
  let i = 0;
  let j = parts.length;
  while (i < j && !parts[i].text.trimStart()) i++;
  while (j > i && !parts[j - 1].text.trimEnd()) j--;
  if (i === j) return [];
  const out = new Array<string>(j - i);
  for (let k = i; k < j; k++) out[k - i] = parts[k].text;
  out[0] = out[0].trimStart();
  out[out.length - 1] = out[out.length - 1].trimEnd();
  return out;
}

/**
 * The pieces `trimTexts` would leave, with lists kept whole where trimming does not reach them.
 * When it does (a list first or last in the message), the lists are spelled out and trimmed as
 * texts: the same joined text either way.
 */
function trimPieces(parts: readonly BufPart[]): CountPiece[] {
  let i = 0;
  let j = parts.length;
  while (i < j && !parts[i].list && !parts[i].text.trimStart()) i++;
  while (j > i && !parts[j - 1].list && !parts[j - 1].text.trimEnd()) j--;
  if (i === j) return [];
  if (parts[i].list || parts[j - 1].list) return trimTexts(parts.map((p) => (p.list ? { text: pieceText(p.list) } : p)));
  const out = new Array<CountPiece>(j - i);
  for (let k = i; k < j; k++) out[k - i] = parts[k].list ?? parts[k].text;
  out[0] = (out[0] as string).trimStart();
  out[out.length - 1] = (out[out.length - 1] as string).trimEnd();
  return out;
}

/**
 * Escaped texts and envelopes by item, each with the settings it was made for. Items are not
 * changed once the stages have built them (index.ts, stageMemo), so these stay valid for as long
 * as the item lives.
 */
const escapedTexts = new WeakMap<WorkItem, { key: string; value: string }>();
const itemEnvelopes = new WeakMap<WorkItem, { key: string; value: Envelope }>();
/** An item's whole text in a bare `{{slot}}` (envelope, text, close), for counting; see unitOf. */
const itemUnits = new WeakMap<WorkItem, { key: string; value: string }>();

export class Renderer {
  /** This renderer's own lookups (one per item per probe), in front of the shared caches. */
  private readonly escaped = new Map<WorkItem, string>();
  private readonly envelopes = new Map<WorkItem, Envelope>();
  private readonly selfWrapped = new Set<string>();
  private readonly keys = new Map<SlotState, { escape: string; envelope: string }>();
  /** unitOf by item, wrapped and bare (one slot can be used both ways). */
  private readonly units = [new Map<WorkItem, string>(), new Map<WorkItem, string>()];
  /** Set while renderTexts walks: bare list slots become list pieces. */
  private counting = false;

  constructor(
    private readonly template: TemplateDoc,
    private readonly slots: ReadonlyMap<string, SlotState>,
  ) {
    // A use whose surrounding delimiter is the slot's own label: the template writes the envelope.
    for (const u of template.uses as SlotUse[]) {
      const s = slots.get(u.slot);
      if (s?.label && u.delimiter && u.delimiter.toLowerCase() === s.label.toLowerCase()) this.selfWrapped.add(`${u.slot}@${u.span.start}`);
    }
  }

  /** Renders with `kept` (slot -> ordered kept items). */
  render(kept: ReadonlyMap<string, readonly WorkItem[]>): RenderedMessage[] {
    const messages: RenderedMessage[] = [];
    this.walk(kept, (role, parts) => {
      const trimmed = trimParts(parts);
      if (!trimmed.length) return;
      messages.push({ role, content: trimmed.map((p) => p.text).join(''), parts: trimmed });
    });
    return messages;
  }

  /**
   * The texts of each message's parts, trimmed as `render` trims them, for counting only: the same
   * messages as `render` gives, without joining their content (the fit step renders once per probe
   * and needs only the counts; see countParts.ts).
   */
  renderTexts(kept: ReadonlyMap<string, readonly WorkItem[]>): CountPiece[][] {
    const messages: CountPiece[][] = [];
    this.counting = true;
    try {
      this.walk(kept, (_role, parts) => {
        const texts = trimPieces(parts);
        if (texts.length) messages.push(texts);
      });
    } finally {
      this.counting = false;
    }
    return messages;
  }

  /**
   * What writeValue writes for one item of a bare `{{slot}}` (without the separator), as one
   * string made once per item and settings: the same string object every probe, so its cuts and
   * count are looked up, not recomputed (countParts.ts).
   */
  private unitOf(item: WorkItem, slot: SlotState, wrap: boolean): string {
    const local = this.units[wrap ? 1 : 0];
    let value = local.get(item);
    if (value !== undefined) return value;
    const key = `${wrap ? this.keysOf(slot).envelope : this.keysOf(slot).escape}\u0000${wrap}\u0000${slot.untrusted}`;
    const hit = itemUnits.get(item);
    if (hit !== undefined && hit.key === key) value = hit.value;
    else {
      if (wrap) {
        const env = this.envelopeOf(item, slot);
        value = env.open + trimLineBreaks(this.textOf(item, slot)) + env.close;
      } else value = this.textOf(item, slot);
      itemUnits.set(item, { key, value });
    }
    local.set(item, value);
    return value;
  }

  private walk(kept: ReadonlyMap<string, readonly WorkItem[]>, emit: (role: Role, parts: MessagePart[]) => void): void {
    for (const msg of this.template.messages) {
      let buf = new PartBuffer();
      const flushHistory = (slotName: string) => {
        emit(msg.role, buf.parts);
        buf = new PartBuffer();
        const slot = this.slots.get(slotName);
        if (!slot) return;
        for (const item of kept.get(slotName) ?? []) {
          const b = new PartBuffer();
          b.push(this.textOf(item, slot), slot.name, item.id, slot.untrusted);
          emit(item.role ?? 'user', b.parts);
        }
      };
      this.nodes(msg.nodes, [], kept, buf, flushHistory, () => buf);
      emit(msg.role, buf.parts);
    }
  }

  /**
   * The item's text as inserted: escaped when the slot is untrusted. Cached across renders and
   * across assemblies (items are reused while their fixture is unchanged), by the delimiters escaped.
   */
  textOf(item: WorkItem, slot: SlotState): string {
    if (!slot.untrusted) return item.text;
    let value = this.escaped.get(item);
    if (value !== undefined) return value;
    const key = this.keysOf(slot).escape;
    const hit = escapedTexts.get(item);
    if (hit !== undefined && hit.key === key) value = hit.value;
    else {
      value = escapeUntrusted(item.text, slot.escapeWith);
      escapedTexts.set(item, { key, value });
    }
    this.escaped.set(item, value);
    return value;
  }

  /** Cache keys of a slot's settings, made once per renderer. */
  private keysOf(slot: SlotState): { escape: string; envelope: string } {
    let k = this.keys.get(slot);
    if (!k) {
      const escape = slot.escapeWith.join('\u0000');
      k = { escape, envelope: `${slot.envelope}\u0000${slot.label}\u0000${slot.untrusted ? escape : '\u0001'}` };
      this.keys.set(slot, k);
    }
    return k;
  }

  private envelopeOf(item: WorkItem, slot: SlotState): Envelope {
    let value = this.envelopes.get(item);
    if (value !== undefined) return value;
    const key = this.keysOf(slot).envelope;
    const hit = itemEnvelopes.get(item);
    if (hit !== undefined && hit.key === key) value = hit.value;
    else {
      value = envelopeFor(item, { kind: slot.envelope, label: slot.label!, escapeWith: slot.untrusted ? slot.escapeWith : undefined });
      itemEnvelopes.set(item, { key, value });
    }
    this.envelopes.set(item, value);
    return value;
  }

  private nodes(
    nodes: readonly TemplateNode[],
    frames: Frame[],
    kept: ReadonlyMap<string, readonly WorkItem[]>,
    out: PartBuffer,
    history: (slot: string) => void,
    current: () => PartBuffer,
  ): void {
    for (const node of nodes) {
      // `history` replaces the buffer; later nodes must write to the new one.
      const target = frames.length ? out : current();
      switch (node.type) {
        case 'text':
          target.push(node.text, frames[frames.length - 1]?.slot?.name, frames[frames.length - 1]?.item?.id);
          break;
        case 'var':
          this.writeValue(this.resolve(node.path, frames, kept), target, kept, node.span.start, frames);
          break;
        case 'if': {
          const v = this.resolve(node.path, frames, kept);
          const truthy = this.truthy(v, kept);
          const body = truthy !== node.negate ? node.body : node.inverse;
          if (body) this.nodes(body, frames, kept, target, history, current);
          break;
        }
        case 'each':
          this.each(node, frames, kept, target, history, current);
          break;
        case 'history':
          if (frames.length === 0) history(node.slot);
          break;
      }
    }
  }

  private each(
    node: Extract<TemplateNode, { type: 'each' }>,
    frames: Frame[],
    kept: ReadonlyMap<string, readonly WorkItem[]>,
    out: PartBuffer,
    history: (slot: string) => void,
    current: () => PartBuffer,
  ): void {
    const v = this.resolve(node.path, frames, kept);
    let iterations: Frame[] = [];
    if (v?.kind === 'slot') {
      const items = kept.get(v.slot.name) ?? [];
      iterations = items.map((item, index) => ({ alias: node.alias, item, slot: v.slot, index, count: items.length }));
    } else if (v?.kind === 'item') {
      iterations = [{ alias: node.alias, item: v.item, slot: v.slot, index: 0, count: 1 }];
    } else if (v?.kind === 'data' && Array.isArray(v.value)) {
      const arr = v.value as unknown[];
      iterations = arr.map((value, index) => ({ alias: node.alias, value, slot: v.slot, item: undefined, index, count: arr.length }));
    }
    if (!iterations.length) {
      if (node.inverse) this.nodes(node.inverse, frames, kept, out, history, current);
      return;
    }
    const slot = v?.kind === 'slot' || v?.kind === 'item' ? v.slot : undefined;
    const wrap = !!slot?.label && !this.selfWrapped.has(`${slot.name}@${node.span.start}`);
    for (const frame of iterations) {
      const inner = new PartBuffer();
      this.nodes(node.body, [...frames, frame], kept, inner, history, current);
      if (wrap && frame.item && slot) {
        const body = inner.parts.map((p) => p.text).join('');
        const lead = body.slice(0, body.length - body.trimStart().length);
        const trail = body.length > lead.length ? body.slice(body.trimEnd().length) : '';
        const env = this.envelopeOf(frame.item, slot);
        out.push(lead, slot.name);
        out.push(env.open, slot.name, frame.item.id);
        out.append(trimParts(inner.parts));
        out.push(env.close, slot.name, frame.item.id);
        out.push(trail, slot.name);
      } else {
        out.append(inner.parts);
      }
    }
  }

  /** Resolves a path against the loop frames, then the slots. */
  private resolve(path: readonly string[], frames: Frame[], kept: ReadonlyMap<string, readonly WorkItem[]>): Value | undefined {
    let p = [...path];
    let depth = frames.length;
    while (p[0] === '..') {
      p = p.slice(1);
      depth = Math.max(0, depth - 1);
    }
    const visible = frames.slice(0, depth);
    const top = visible[visible.length - 1];
    if (!p.length) return top ? frameValue(top) : undefined;
    const head = p[0];
    // Loop metadata: Handlebars @index/@first/@last, Jinja loop.index/index0/first/last/length.
    if (head.startsWith('@') && top) return { kind: 'data', value: loopVar(head.slice(1), top), untrusted: false };
    if (head === 'loop' && top?.alias !== undefined && p.length === 2) {
      const v = jinjaLoop(p[1], top);
      if (v !== undefined) return { kind: 'data', value: v, untrusted: false };
    }
    if (head === 'this' || head === '.') return top ? fieldOf(frameValue(top), p.slice(1)) : undefined;
    for (let i = visible.length - 1; i >= 0; i--) if (visible[i].alias === head) return fieldOf(frameValue(visible[i]), p.slice(1));
    // A bare name inside `{{#each}}` (no alias) is a field of the current item when it names one.
    if (top && top.alias === undefined && top.item && (ITEM_FIELDS.has(head) || head in top.item.meta)) return fieldOf(frameValue(top), p);
    const slot = this.slots.get(head);
    if (slot) {
      if (p.length === 1) return { kind: 'slot', slot };
      const items = kept.get(slot.name) ?? [];
      if (p[1] === 'length' && p.length === 2) return { kind: 'data', value: items.length, untrusted: false };
      if (slot.isText && items[0]) return fieldOf({ kind: 'item', item: items[0], slot }, p.slice(1));
      return undefined;
    }
    return undefined;
  }

  private truthy(v: Value | undefined, kept: ReadonlyMap<string, readonly WorkItem[]>): boolean {
    if (!v) return false;
    if (v.kind === 'slot') {
      const items = kept.get(v.slot.name) ?? [];
      return v.slot.isText ? items.length > 0 && items[0].text !== '' : items.length > 0;
    }
    if (v.kind === 'item') return v.item.text !== '';
    const x = v.value;
    if (Array.isArray(x)) return x.length > 0;
    return x !== undefined && x !== null && x !== false && x !== '' && x !== 0;
  }

  private writeValue(v: Value | undefined, out: PartBuffer, kept: ReadonlyMap<string, readonly WorkItem[]>, at: number, frames: Frame[]): void {
    if (!v) return;
    if (v.kind === 'data') {
      const text = stringify(v.value);
      const slot = v.slot;
      const s = v.untrusted && slot ? escapeUntrusted(text, slot.escapeWith) : text;
      out.push(s, slot?.name ?? frames[frames.length - 1]?.slot?.name, v.item?.id ?? frames[frames.length - 1]?.item?.id, v.untrusted || undefined);
      return;
    }
    if (v.kind === 'item') {
      out.push(this.textOf(v.item, v.slot), v.slot.name, v.item.id, v.slot.untrusted || undefined);
      return;
    }
    const slot = v.slot;
    const items = kept.get(slot.name) ?? [];
    const wrap = !!slot.label && !this.selfWrapped.has(`${slot.name}@${at}`);
    if (this.counting && frames.length === 0) {
      // The same text as the pushes below; one piece instead of up to four parts per item.
      const units = new Array<string>(items.length);
      for (let i = 0; i < items.length; i++) units[i] = this.unitOf(items[i], slot, wrap);
      out.pushList({ units, sep: ITEM_SEPARATOR }, slot.name);
      return;
    }
    items.forEach((item, i) => {
      if (i > 0) out.push(ITEM_SEPARATOR, slot.name);
      if (wrap) {
        const env = this.envelopeOf(item, slot);
        out.push(env.open, slot.name, item.id);
        // A block scalar's final line break would leave a blank line before the closing delimiter.
        out.push(trimLineBreaks(this.textOf(item, slot)), slot.name, item.id, slot.untrusted || undefined);
        out.push(env.close, slot.name, item.id);
      } else {
        out.push(this.textOf(item, slot), slot.name, item.id, slot.untrusted || undefined);
      }
    });
  }
}

function trimLineBreaks(s: string): string {
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 10 || s.charCodeAt(end - 1) === 13)) end--;
  return end === s.length ? s : s.slice(0, end);
}

function frameValue(f: Frame): Value {
  if (f.item && f.slot) return { kind: 'item', item: f.item, slot: f.slot };
  return { kind: 'data', value: f.value, slot: f.slot, untrusted: f.slot?.untrusted ?? true };
}

function fieldOf(base: Value, rest: readonly string[]): Value | undefined {
  if (!rest.length) return base;
  if (base.kind === 'item') {
    const item = base.item;
    const key = rest[0];
    if (key === 'text' && rest.length === 1) return base;
    let value: unknown;
    if (key === 'sources') value = sourcesOf(item);
    else if (ITEM_FIELDS.has(key)) value = (item as unknown as Record<string, unknown>)[key];
    else value = item.meta[key];
    for (const k of rest.slice(1)) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[k] : undefined;
    // Ids and scores are the pipeline's own; everything else comes from the fixture.
    const own = key === 'id' ? !item.hasId : key === 'score';
    return { kind: 'data', value, slot: base.slot, item, untrusted: !own && base.slot.untrusted };
  }
  if (base.kind === 'data') {
    let value = base.value;
    for (const k of rest) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[k] : undefined;
    return { ...base, value };
  }
  return undefined;
}

function loopVar(name: string, f: Frame): unknown {
  switch (name) {
    case 'index':
      return f.index;
    case 'first':
      return f.index === 0;
    case 'last':
      return f.index === f.count - 1;
    case 'number':
      return f.index + 1;
    default:
      return undefined;
  }
}

function jinjaLoop(name: string, f: Frame): unknown {
  switch (name) {
    case 'index':
      return f.index + 1;
    case 'index0':
      return f.index;
    case 'first':
      return f.index === 0;
    case 'last':
      return f.index === f.count - 1;
    case 'length':
      return f.count;
    default:
      return undefined;
  }
}

function stringify(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(stringify).join(', ');
  return JSON.stringify(v);
}
