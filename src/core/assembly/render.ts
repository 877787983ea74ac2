/**
 * Rendering: the kept, ordered items of every slot become the values the template's own runtime
 * renders — the template's language (language/registry.ts): dotprompt for `.prompt`, Prompty for
 * `.prompty`, … — and the messages
 * that runtime would send come back cut into parts by slot and item (attribution.ts).
 *
 * Values, per slot:
 * - a text slot: its text (in its envelope when the slot has a label);
 * - a list slot: a list of item values; an item prints as its text (in its envelope when the slot has
 *   a label) and has its fields (`id`, `text`, `title`, `source`, `version`, …, and its own keys);
 *   the list prints as its items separated by a blank line;
 * - a history slot: the same list, and for dotprompt also the conversation (`data.messages`), which
 *   `{{history}}` places (or dotprompt inserts before the last user message);
 * - any other fixture value (objects, numbers, booleans, null, plain lists of a slot no config
 *   declares): the value as written.
 *
 * Untrusted text is neutralised (escape.ts) before it is given to the engine: the only changes are
 * the ones that stop it from forging an envelope, a wrapper tag or a role marker. Nothing is trimmed
 * and no message is dropped beyond what the runtime itself does: the messages are the runtime's.
 */
import type { SlotConfig } from '../config/schema';
import type { EngineMessage, EngineResult } from '../language/engineTypes';
import type { FixtureDoc, MessagePart, RenderedMessage, Role, SlotKind, Span, TemplateDoc } from '../types';
import type { WorkItem } from './item';
import type { Envelope, EnvelopeKind } from './envelope';
import type { Neutralised } from './escape';
import type { LanguageRenderInput, TemplateLanguage } from '../language/language';
import { languageFor } from '../language/registry';
import { ItemList, ItemValue, MARK_CHARS, expandMarks, isExpansion, mark, markedTexts, ref, refable, splitMarked } from './attribution';
import { append } from './append';
import { defineLazy } from '../lazy';
import type { RefResolver } from './attribution';
import { envelopeFor, sourcesOf } from './envelope';
import { neutralise } from './escape';
import { runtimeValueOf } from '../fixture/values';
import { PY_KEY_ORDER, isMarkedTuple, markTuple, orderedEntries, setKeyOrder } from '../language/jinja/values';

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
  /** Delimiter names escaped in this slot's text: every label and wrapper tag of the template. */
  escapeWith: string[];
}

/** Separator between items rendered by a bare `{{slot}}`. */
export const ITEM_SEPARATOR = '\n\n';

export interface RenderOptions {
  /** Partial (dotprompt) and include (Prompty) sources by name, read by the caller inside the workspace. */
  partials?: Record<string, string>;
  /** Front matter defaults applied under the fixture's values (dotprompt `input.default`, Prompty `inputs.*.default`). */
  defaults?: Record<string, unknown>;
  /** Neutralise untrusted values where they would change the request's structure (default true). */
  escape?: boolean;
  /**
   * Whether the slots' trust is declared (false without a context config): only then are parts of
   * untrusted slots marked as untrusted data in the views. Values are neutralised either way.
   */
  trustKnown?: boolean;
  /** dotprompt: helpers and partials (without a source) the application registers in code, rendered as placeholders. */
  codeHelpers?: readonly string[];
  codePartials?: readonly string[];
  /**
   * Reads a file beside the template (a path relative to its folder), inside the workspace only:
   * Prompty 0.1.x inlines local images into the request. The binding gives it; without it a local
   * image is reported, not inlined.
   */
  readFile?: (relativePath: string) => string | undefined;
  /** The loader the project runs the template with, and why (Prompty's loaders; the binding chooses it). */
  loader?: LanguageRenderInput['loader'];
  /** The template's project where its runtime loads one (BAML's `baml_src/`), read by the binding. */
  project?: { files: Record<string, string>; self: string };
}

/** An engine problem, located in the template file. */
export interface RenderIssue {
  rule: 'unsupported-feature' | 'template-invalid' | 'attribution-lost' | 'unknown-helper' | 'code-registered' | 'value-missing';
  message: string;
  span: Span;
}

export interface Rendered {
  messages: RenderedMessage[];
  issues: RenderIssue[];
  /** Neutralised sequences of untrusted text, by item. */
  neutralised: Array<{ slot: string; itemId?: string } & Neutralised>;
  /** Part of the request is a placeholder (a helper or partial registered in code): its counts are an estimate. */
  estimate?: true;
  /** The runtime line the request follows, in words (`Prompty 0.1.x`, `Prompty v2`); absent for dotprompt. */
  runtime?: string;
  /** The provider request the runtime built (BAML), without headers, its values as sent. */
  request?: { url: string; method: string; body: string };
}

/** An escaped text with what was changed in it, cached per item. */
interface Escaped {
  text: string;
  changes: Neutralised[];
}

const escapedTexts = new WeakMap<WorkItem, { key: string; value: Escaped }>();
/** The engine value of each item, marked and plain, by item and `valueSignature`. */
const itemValueCache = new WeakMap<WorkItem, { sig: string; marked?: ItemValue; markedSafe?: boolean; plain?: ItemValue; byRef?: RefValue; neutralised: Rendered['neutralised'] }>();

/** An item's engine value whose long texts are references (attribution.ts, `ref`), and the texts they stand for by field. */
interface RefValue {
  value: ItemValue;
  texts: readonly (string | undefined)[];
  /** Every string of the value prints as it is (`printsAsIs`). */
  safe: boolean;
}

/**
 * A value string whose marks cannot change how dotprompt splits a printing-only template's
 * render: empty, or not blank (marks are never blank, so a blank text would keep a piece that
 * dotprompt drops) and without `<` (no part of a `<<<dotprompt:…>>>` marker, inside the text or
 * across its edges).
 */
function printsAsIs(text: string): boolean {
  return text === '' || refable(text);
}

/** Reference fields: the item's unit (what it prints as) and its text. */
const UNIT_FIELD = 0;
const TEXT_FIELD = 1;
const itemEnvelopes = new WeakMap<WorkItem, { key: string; value: Envelope }>();

export class Renderer {
  /** Slot numbers for the marks: the states first, then other fixture values. */
  private readonly names: string[];
  private readonly states: ReadonlyMap<string, SlotState>;
  private readonly escape: boolean;
  private readonly trustKnown: boolean;
  private last: { key: ReadonlyMap<string, readonly WorkItem[]>; value: Rendered } | undefined;
  /**
   * The template only prints, loops over and tests its values (dotprompt's tree says so): the
   * marked render passes items' long texts as references, put back when the render is cut.
   */
  private readonly byRef: boolean;
  /** The texts the references of the current values stand for: slot number -> item number -> field. */
  private readonly refTexts = new Map<number, Map<number, readonly (string | undefined)[]>>();
  private readonly resolve: RefResolver = (slot, item, field) => this.refTexts.get(slot)?.get(item)?.[field];
  /** A marked text as the plain values render it: marks removed, references expanded. */
  private readonly plainText = (s: string): string => expandMarks(s, this.resolve);
  /** Whether `plain` is marked text `marked` as the plain values render it (`plainText`, without building it). */
  private readonly plainIs = (plain: string, marked: string): boolean => isExpansion(plain, marked, this.resolve);

  constructor(
    private readonly template: TemplateDoc,
    slots: ReadonlyMap<string, SlotState>,
    private readonly fixture: FixtureDoc | undefined,
    private readonly options: RenderOptions = {},
  ) {
    this.states = slots;
    this.escape = options.escape ?? true;
    this.trustKnown = options.trustKnown ?? true;
    this.names = [...slots.keys()];
    for (const name of Object.keys(fixture?.slots ?? {})) if (!slots.has(name)) this.names.push(name);
    // A labelled slot whose every printed use sits inside its own label's delimiter (the template
    // writes `[EVIDENCE] … [/EVIDENCE]` itself): its items are not wrapped a second time.
    for (const [name, st] of slots) {
      if (!st.label) continue;
      const printed = template.uses.filter((u) => u.slot === name && u.form !== 'if');
      if (printed.length && printed.every((u) => u.delimiter && u.delimiter.toLowerCase() === st.label!.toLowerCase())) this.selfWrapped.add(name);
    }
    // Text that holds the marks' own characters (the private use area) cannot be told from the
    // marks in a render: where any value does, every render is checked against a plain one.
    // (Values are walked, not serialised: a sample's integer beyond 2^53 is a bigint.)
    this.foreign = anyText(options.defaults, hasMarkChar) || anyText(fixture?.context, hasMarkChar) || (fixture !== undefined && holdsMarkChars(fixture));
    this.language = languageFor(template);
    this.byRef = !this.foreign && (this.language.printsValuesOnly?.(template, this.printOptions()) ?? false);
    // No marker can start in the text around the values (the template's own text, its defaults,
    // the data frame): the values alone decide whether marks change the split (`printsAsIs`).
    this.quiet = this.byRef && !template.text.includes('<<<') && !anyText(options.defaults, hasMarker) && !anyText(fixture?.context, hasMarker);
  }

  /**
   * The template only prints its values and no dotprompt marker can begin outside them: when
   * every value string prints as it is, the marked render splits as the plain one does.
   */
  private readonly quiet: boolean;
  /** Some value holds characters of the marks (see the constructor). */
  private readonly foreign: boolean;

  /** The template's language (language/registry.ts). */
  private readonly language: TemplateLanguage;

  /** What decides whether the template only prints its values. */
  private printOptions(): Parameters<NonNullable<TemplateLanguage['printsValuesOnly']>>[1] {
    const o = this.options;
    return {
      partials: o.partials ?? {},
      defaults: o.defaults ?? {},
      ...(o.codeHelpers?.length ? { codeHelpers: o.codeHelpers } : {}),
      ...(o.codePartials?.length ? { codePartials: o.codePartials } : {}),
    };
  }

  /** Slots whose envelopes the template writes itself. */
  private readonly selfWrapped = new Set<string>();

  /** Renders with `kept` (slot -> ordered kept items). */
  render(kept: ReadonlyMap<string, readonly WorkItem[]>): RenderedMessage[] {
    return this.full(kept).messages;
  }

  /**
   * The messages, the engine's issues and the neutralisations of one render. `probe`, a probe of
   * the same `kept` (fit step), saves the marked render: only the unmarked check is run again.
   */
  full(kept: ReadonlyMap<string, readonly WorkItem[]>, probe?: Probe): Rendered {
    if (this.last && this.last.key === kept) return this.last.value;
    const value = this.run(kept, probe !== undefined && probe.kept === kept ? probe : undefined);
    this.last = { key: kept, value };
    return value;
  }

  /** The part texts of each message, for counting (countParts.ts). */
  renderTexts(kept: ReadonlyMap<string, readonly WorkItem[]>): string[][] {
    return this.probe(kept).texts;
  }

  /**
   * The marked render of `kept` and its texts, for counting (countParts.ts). The texts are the
   * runs' texts (any cut of the same text counts the same); the render is cut into attributed
   * parts only if this probe becomes the request.
   */
  probe(kept: ReadonlyMap<string, readonly WorkItem[]>): Probe {
    const neutralised: Rendered['neutralised'] = [];
    const values = this.values(kept, true, neutralised);
    const first = this.engine(values);
    const runtime = this.runtimeField();
    const texts = first.messages.map((m) => {
      const out: string[] = [];
      for (const p of m.parts) if (p.type === 'text') append(out, markedTexts(p.text, this.resolve) ?? [this.plainText(p.text)]);
      return out;
    });
    const probe = { kept, texts } as Probe;
    defineLazy(probe, 'marked', () => this.decoded(first, neutralised, runtime, values.splitsAsPlain === true));
    return probe;
  }

  private marked(kept: ReadonlyMap<string, readonly WorkItem[]>): MarkedRender {
    const neutralised: Rendered['neutralised'] = [];
    const values = this.values(kept, true, neutralised);
    return this.decoded(this.engine(values), neutralised, this.runtimeField(), values.splitsAsPlain === true);
  }

  /** A marked render cut into attributed parts. */
  private decoded(first: EngineResult, neutralised: Rendered['neutralised'], runtime: { runtime?: string }, splitsAsPlain: boolean): MarkedRender {
    return { first, splitsAsPlain, rendered: { messages: first.messages.map((m) => this.decode(m)), issues: first.issues.map((i) => ({ ...i })), neutralised, ...(first.estimate ? { estimate: true } : {}), ...runtime } };
  }

  private run(kept: ReadonlyMap<string, readonly WorkItem[]>, probe: Probe | undefined): Rendered {
    const { first, rendered, splitsAsPlain } = probe ? probe.marked : this.marked(kept);
    const { messages, neutralised } = rendered;
    const issues = rendered.issues.map((i) => ({ ...i }));
    // No value can have changed the split (`EngineValues.splitsAsPlain`): the marked messages are the plain ones, unmarked.
    if (splitsAsPlain && first.splitWith && !first.issues.length) return { messages, issues, neutralised, ...(rendered.estimate ? { estimate: true as const } : {}), ...this.runtimeField() };
    // The check of attribution.ts: the marks must not have changed what the engine rendered. Where
    // the engine's tree shows the template only prints, loops over and tests its values, the plain
    // render is the marked text unmarked, split into messages by the engine (no second render).
    const plain = first.splitWith && !first.issues.length && !this.foreign ? { ...first, messages: first.splitWith(this.plainText) } : this.engine(this.values(kept, false, []));
    const same = plain.messages.length === first.messages.length && plain.messages.every((m, i) => sameMessage(m, first.messages[i], this.plainIs));
    const estimate = rendered.estimate || plain.estimate ? { estimate: true as const } : {};
    // The provider request a runtime built (BAML): the plain render's, values as sent.
    const request = plain.request ? { request: plain.request } : {};
    if (same) return { messages, issues, neutralised, ...estimate, ...this.runtimeField(), ...request };
    const span = this.template.bodySpan;
    // The plain render's own issues, and that attribution was lost (which makes the caller count
    // these messages as they are, not the marked probes).
    const plainIssues: RenderIssue[] = plain.issues.map((i) => ({ ...i }));
    plainIssues.push({
      rule: 'attribution-lost',
      message: 'The template compares, measures or transforms slot text (for example with ifEquals, length or tojson), so the request cannot be cut into slots; it is shown and counted as a whole, exactly as rendered.',
      span: { start: span.start, end: Math.min(span.end, span.start + 1) },
    });
    return { messages: plain.messages.map((m) => this.decode(m, true)), issues: plainIssues, neutralised, ...estimate, ...this.runtimeField(), ...request };
  }

  /** The render of the template's language (language/registry.ts) for the values. */
  private engine(v: EngineValues): EngineResult {
    const o = this.options;
    const r = this.language.render(this.template, {
      input: v.input,
      ...(v.messages ? { messages: v.messages } : {}),
      ...(this.fixture?.context ? { context: this.fixture.context } : {}),
      hasValues: this.fixture !== undefined,
      defaults: o.defaults ?? {},
      partials: o.partials ?? {},
      ...(o.codeHelpers?.length ? { codeHelpers: o.codeHelpers } : {}),
      ...(o.codePartials?.length ? { codePartials: o.codePartials } : {}),
      ...(o.readFile ? { readFile: o.readFile } : {}),
      ...(o.loader ? { loader: o.loader } : {}),
      ...(o.project ? { project: o.project, unmarked: this.plainText } : {}),
    });
    if (r.runtime !== undefined) this.runtime = r.runtime;
    return r;
  }

  /** The runtime of the last render, in words (`Prompty 0.1.x`), where the language names one. */
  private runtime: string | undefined;

  private runtimeField(): { runtime?: string } {
    return this.runtime ? { runtime: this.runtime } : {};
  }

  /**
   * A rendered message cut into parts. A plain render (`plain`: its values had no marks) is taken
   * as it is: any mark characters in it are the values' own text and are sent as written.
   */
  private decode(m: EngineMessage, plain = false): RenderedMessage {
    const parts: MessagePart[] = [];
    const unmarked = plain ? (s: string) => s : this.plainText;
    for (const p of m.parts) {
      if (p.type === 'text') {
        // Text the runtime writes itself as a part of its own (BAML's output format).
        if (p.slot !== undefined) {
          parts.push({ text: unmarked(p.text), slot: p.slot });
          continue;
        }
        const runs = plain ? undefined : splitMarked(p.text, this.resolve);
        if (!runs) {
          parts.push({ text: unmarked(p.text) });
          continue;
        }
        for (const r of runs) {
          const part: MessagePart = { text: r.text };
          const slotName = r.slot >= 0 ? this.names[r.slot] : undefined;
          if (slotName !== undefined) {
            part.slot = slotName;
            const state = this.states.get(slotName);
            if (r.item >= 0) {
              const id = this.ids.get(slotName)?.get(r.item);
              if (id !== undefined) part.itemId = id;
            }
            if (state?.untrusted && this.escape && this.trustKnown) part.untrusted = true;
          }
          const last = parts[parts.length - 1];
          if (last && !last.media && last.slot === part.slot && last.itemId === part.itemId && !!last.untrusted === !!part.untrusted) last.text += part.text;
          else parts.push(part);
        }
      } else if (p.type === 'media') {
        parts.push({ text: '', media: { url: unmarked(p.url), ...(p.contentType ? { contentType: unmarked(p.contentType) } : {}) } });
      } else {
        parts.push({ text: '', section: p.name });
      }
    }
    const role = roleOf(m.role);
    const out: RenderedMessage = { role, content: '', parts };
    // Joined when read: a fit probe only counts the parts (in its place among the keys, for JSON).
    defineLazy(out, 'content', () => parts.map((p) => p.text).join(''));
    if (role !== m.role) out.runtimeRole = m.role;
    return out;
  }

  /** Item ids by slot and fixture index (the number an item's marks carry), for decoding. */
  private readonly ids = new Map<string, Map<number, string>>();
  /** Everything an item's engine value depends on besides the item: its mark and its slot's settings. */
  private valueSignature(slotNo: number, state: SlotState): string {
    return [slotNo, state.name, state.kind, state.untrusted, this.escape, state.label ?? '\u0001', state.envelope, this.selfWrapped.has(state.name), ...state.escapeWith].join('\u0000');
  }

  private values(kept: ReadonlyMap<string, readonly WorkItem[]>, marks: boolean, neutralised: Rendered['neutralised']): EngineValues {
    const input: Record<string, unknown> = {};
    let messages: EngineValues['messages'];
    let splitsAsPlain = marks && this.quiet;
    this.names.forEach((name, slotNo) => {
      const mk = (text: string, item = -1) => (marks && !MARK_CHARS.test(text) ? mark(text, slotNo, item) : text);
      const m = (text: string, item = -1) => {
        if (splitsAsPlain && !printsAsIs(text)) splitsAsPlain = false;
        return mk(text, item);
      };
      const state = this.states.get(name);
      const fixtureValue = this.fixture?.slots[name];
      if (!state) {
        if (fixtureValue) input[name] = plainValue(fixtureValue, m);
        return;
      }
      // No value: left out, so the front matter defaults (and Prompty's hoisted sample) show through.
      if (!fixtureValue) return;
      if (fixtureValue.type === 'data') {
        const esc = (s: string) => m(this.escapeText(s, state, undefined, neutralised, true));
        // The value as the runtime loaded it where one is kept (a Prompty sample's floats, tuples, key order).
        const runtime = runtimeValueOf(fixtureValue);
        input[name] = runtime !== undefined ? markDeep(runtime, esc, true) : markDeep(fixtureValue.value, esc);
        return;
      }
      const items = kept.get(name) ?? [];
      let ids = this.ids.get(name);
      if (!ids) this.ids.set(name, (ids = new Map()));
      for (const it of items) ids.set(it.index, it.id);
      if (!state.config && fixtureValue?.type === 'items' && fixtureValue.raw && state.kind !== 'history') {
        // A list no config declares is the template's plain data, as the runtime would get it, its
        // strings neutralised as any untrusted value's (a role marker or a media pattern in one must
        // not change the request's structure).
        const esc = (s: string) => m(this.escapeText(s, state, undefined, neutralised, true));
        const runtime = runtimeValueOf(fixtureValue);
        input[name] = runtime !== undefined ? markDeep(runtime, esc, true) : markDeep(fixtureValue.raw, esc);
        return;
      }
      const byRef = marks && this.byRef && state.kind !== 'history';
      let refs: Map<number, readonly (string | undefined)[]> | undefined;
      if (byRef) {
        refs = this.refTexts.get(slotNo);
        if (!refs) this.refTexts.set(slotNo, (refs = new Map()));
      }
      if (state.isText) {
        const item = items[0];
        const unit = item ? this.unit(item, state, neutralised) : '';
        if (item && refs && refable(unit)) {
          refs.set(item.index, [unit]);
          input[name] = ref(slotNo, item.index, UNIT_FIELD);
        } else input[name] = item ? m(unit, item.index) : '';
        return;
      }
      const sig = this.valueSignature(slotNo, state);
      const values = items.map((item) => {
        // Items do not change once built (index.ts, stageMemo): their values are made once per
        // item and slot settings, and outlive this renderer (the next keystroke's reuses them).
        let cached = itemValueCache.get(item);
        if (!cached || cached.sig !== sig) itemValueCache.set(item, (cached = { sig, neutralised: [] }));
        if (refs) {
          if (cached.byRef) {
            neutralised.push(...cached.neutralised);
            refs.set(item.index, cached.byRef.texts);
            if (!cached.byRef.safe) splitsAsPlain = false;
            return cached.byRef.value;
          }
        } else {
          const hit = marks ? cached.marked : cached.plain;
          if (hit) {
            neutralised.push(...cached.neutralised);
            if (marks && !cached.markedSafe) splitsAsPlain = false;
            return hit;
          }
        }
        const own: Rendered['neutralised'] = [];
        let v: ItemValue;
        // Whether every string of this item's value prints as it is (kept with the value).
        let safe = true;
        const mi = (t: string, i?: number) => {
          if (!printsAsIs(t)) safe = false;
          return mk(t, i);
        };
        if (refs) {
          const texts: Array<string | undefined> = [];
          v = this.itemValue(item, state, mi, own, { slotNo, texts });
          cached.byRef = { value: v, texts, safe };
          refs.set(item.index, texts);
        } else {
          v = this.itemValue(item, state, marks ? mi : (t: string) => t, own);
          if (marks) {
            cached.marked = v;
            cached.markedSafe = safe;
          } else cached.plain = v;
        }
        if (!safe) splitsAsPlain = false;
        cached.neutralised = own;
        neutralised.push(...own);
        return v;
      });
      // A separator only ever stands between two items' units, so it is never all of a piece.
      input[name] = ItemList.joined(values, mk(ITEM_SEPARATOR));
      if (state.kind === 'history' && this.language.placesHistory && !messages) {
        // The conversation's messages are given to dotprompt as messages, not split from the text.
        messages = items.map((item) => ({ role: dotpromptRole(item.role ?? 'user'), content: [{ text: mk(this.escaped(item, state, []).text, item.index) }] }));
      }
    });
    return { input, ...(messages ? { messages } : {}), splitsAsPlain };
  }

  /** An item as the engine sees it: prints as its unit, with its fields. */
  private itemValue(item: WorkItem, state: SlotState, m: (text: string, item?: number) => string, neutralised: Rendered['neutralised'], byRef?: { slotNo: number; texts: Array<string | undefined> }): ItemValue {
    const i = item.index;
    const esc = (s: string | undefined) => (s === undefined ? undefined : m(this.escapeText(s, state, item, neutralised, true), i));
    // With references, a long text goes in as a reference to it (the template only prints it).
    const long = (s: string, field: number): string => {
      if (!byRef || !refable(s)) return m(s, i);
      byRef.texts[field] = s;
      return ref(byRef.slotNo, i, field);
    };
    const text = long(this.escaped(item, state, neutralised).text, TEXT_FIELD);
    const fields: Record<string, unknown> = {
      // The id is the fixture's text like any field (a generated id is ours): neutralised the same way.
      id: item.hasId ? esc(item.id) : item.id,
      text,
      ...(state.kind === 'history' ? { role: item.role ?? 'user', content: text } : {}),
      // A `{role, content}` list: the text is also where the fixture wrote it (`{{ m.content }}`).
      ...(item.textKey === 'content' && state.kind !== 'history' ? { content: text } : {}),
      title: esc(item.title),
      source: esc(item.source),
      source_type: esc(item.source_type),
      version: esc(item.version),
      authority: item.authority,
      relevance: item.relevance,
      published_at: esc(item.published_at),
      expires_at: esc(item.expires_at),
      at: esc(item.at),
      tenant: esc(item.tenant),
      ...(state.kind !== 'history' && item.role ? { role: item.role } : {}),
    };
    if (item.merged.length) fields.sources = sourcesOf(item).map((s) => esc(s));
    for (const [k, v] of Object.entries(item.meta)) if (!(k in fields)) fields[k] = markDeep(v, (s) => m(this.escapeText(s, state, item, neutralised, true), i));
    // The unit's neutralisations are the text's, already listed above.
    return new ItemValue(long(this.unit(item, state, []), UNIT_FIELD), fields);
  }

  /** What an item prints as: its escaped text, in its envelope when the slot has a label. */
  private unit(item: WorkItem, slot: SlotState, neutralised: Rendered['neutralised']): string {
    const text = this.escaped(item, slot, neutralised).text;
    if (!slot.label || this.selfWrapped.has(slot.name)) return text;
    const env = this.envelopeOf(item, slot);
    return env.open + trimLineBreaks(text) + env.close;
  }

  private escaped(item: WorkItem, slot: SlotState, neutralised: Rendered['neutralised']): Escaped {
    if (!slot.untrusted || !this.escape) return { text: item.text, changes: [] };
    const key = slot.escapeWith.join('\u0000');
    const hit = escapedTexts.get(item);
    let value: Escaped;
    if (hit !== undefined && hit.key === key) value = hit.value;
    else {
      value = neutralise(item.text, slot.escapeWith);
      escapedTexts.set(item, { key, value });
    }
    for (const c of value.changes) neutralised.push({ slot: slot.name, itemId: item.id, ...c });
    return value;
  }

  private escapeText(s: string, slot: SlotState, item: WorkItem | undefined, neutralised: Rendered['neutralised'], inline: boolean): string {
    if (!slot.untrusted || !this.escape) return s;
    const r = neutralise(s, slot.escapeWith, { inline });
    for (const c of r.changes) neutralised.push({ slot: slot.name, ...(item ? { itemId: item.id } : {}), ...c, field: true });
    return r.text;
  }

  private envelopeOf(item: WorkItem, slot: SlotState): Envelope {
    const key = `${slot.envelope}\u0000${slot.label}\u0000${slot.untrusted && this.escape ? slot.escapeWith.join('\u0000') : '\u0001'}`;
    const hit = itemEnvelopes.get(item);
    if (hit !== undefined && hit.key === key) return hit.value;
    const value = envelopeFor(item, { kind: slot.envelope, label: slot.label!, escapeWith: slot.untrusted && this.escape ? slot.escapeWith : undefined });
    itemEnvelopes.set(item, { key, value });
    return value;
  }
}

/** A marked render: the engine's own result and its decoded messages. */
interface MarkedRender {
  first: EngineResult;
  rendered: Rendered;
  /** See `EngineValues.splitsAsPlain`. */
  splitsAsPlain: boolean;
}

/** One fit probe: the kept items it rendered, the marked render and its part texts. */
export interface Probe {
  readonly kept: ReadonlyMap<string, readonly WorkItem[]>;
  readonly marked: MarkedRender;
  readonly texts: string[][];
}

interface EngineValues {
  input: Record<string, unknown>;
  messages?: Array<{ role: string; content: Array<{ text: string }> }>;
  /**
   * Marked values of a quiet printing-only template whose every string prints as it is: the
   * engine splits their render as it splits the plain one (no attribution check needed).
   */
  splitsAsPlain?: boolean;
}

/** Whether plain message `a` is marked message `b` as the plain values render it (`is(plain, marked)`). */
function sameMessage(a: EngineMessage, b: EngineMessage, is: (plain: string, marked: string) => boolean): boolean {
  if (a.role !== b.role || a.parts.length !== b.parts.length) return false;
  return a.parts.every((p, i) => {
    const q = b.parts[i];
    if (p.type !== q.type) return false;
    if (p.type === 'text') return is(p.text, (q as { text: string }).text);
    if (p.type === 'media') return is(p.url, (q as { url: string }).url) && is(p.contentType ?? '', (q as { contentType?: string }).contentType ?? '');
    return p.name === (q as { name: string }).name;
  });
}

/** The runtime's role name as a chat role: dotprompt's `model`, Prompty's `function`. */
export function roleOf(role: string): Role {
  switch (role.toLowerCase()) {
    case 'system':
      return 'system';
    case 'developer':
      return 'developer';
    case 'model':
    case 'assistant':
      return 'assistant';
    case 'tool':
    case 'function':
      return 'tool';
    default:
      return 'user';
  }
}

function dotpromptRole(role: Role): string {
  return role === 'assistant' ? 'model' : role;
}

/** A fixture value as plain data (a slot no config declares), strings marked. */
function plainValue(v: NonNullable<FixtureDoc['slots'][string]>, m: (s: string) => string): unknown {
  if (v.type === 'text') return m(v.text);
  if (v.type === 'data') return markDeep(v.value, m);
  if (v.raw) return markDeep(v.raw, m);
  return v.items.map((i) => m(i.text));
}

/**
 * A copy of a value with every string passed through `f`. Tuples and a mapping's recorded key
 * order are kept (a runtime's loaded values carry them); with `runtime`, objects of the runtime's
 * own types (a Python float, a timestamp's text) are kept as they are, where a plain copy would
 * print them differently. Depth-bounded.
 */
export function markDeep(v: unknown, f: (s: string) => string, runtime = false, depth = 0): unknown {
  if (typeof v === 'string') return f(v);
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = v.map((x) => markDeep(x, f, runtime, depth + 1));
    return isMarkedTuple(v) ? markTuple(out) : out;
  }
  const proto = Object.getPrototypeOf(v);
  if (runtime && proto !== Object.prototype && proto !== null) return v;
  const entries = orderedEntries(v);
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries) Object.defineProperty(out, k, { value: markDeep(x, f, runtime, depth + 1), enumerable: true, writable: true, configurable: true });
  return PY_KEY_ORDER in v ? setKeyOrder(out, entries.map((e) => e[0])) : out;
}

/** Whether any string of a fixture's values holds a character of the marks (memoized per document). */
const markCharsIn = new WeakMap<FixtureDoc, boolean>();
function holdsMarkChars(fixture: FixtureDoc): boolean {
  let hit = markCharsIn.get(fixture);
  if (hit === undefined) {
    hit = anyText(fixture.slots, hasMarkChar);
    markCharsIn.set(fixture, hit);
  }
  return hit;
}

const hasMarkChar = (s: string): boolean => MARK_CHARS.test(s);
const hasMarker = (s: string): boolean => s.includes('<<<');

/**
 * Whether some string in value `v` (a key or a string value, at any depth, each object once)
 * passes `test`. Values of every kind are walked as they are: bigints, dates and other non-JSON
 * values hold no text the render could read as marks. An explicit stack: no depth overflows it.
 */
function anyText(v: unknown, test: (s: string) => boolean): boolean {
  const seen = new Set<object>();
  const todo: unknown[] = [v];
  while (todo.length) {
    const x = todo.pop();
    if (typeof x === 'string') {
      if (test(x)) return true;
      continue;
    }
    if (x === null || typeof x !== 'object' || seen.has(x)) continue;
    seen.add(x);
    for (const k of Object.keys(x)) {
      if (test(k)) return true;
      todo.push((x as Record<string, unknown>)[k]);
    }
  }
  return false;
}

function trimLineBreaks(s: string): string {
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 10 || s.charCodeAt(end - 1) === 13)) end--;
  return end === s.length ? s : s.slice(0, end);
}
