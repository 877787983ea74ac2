/**
 * Stage 1, load: the slots of the request (every config slot, then slots the template uses
 * without defining them), each with its render state, settings and fixture value (`LoadedSlot`),
 * and the work items of one fixture value (stable ids, token counts), which the memoized
 * candidates stage reads (candidates.ts).
 */
import type { FixtureItem, FixtureValue, TemplateNode, Tokenizer } from '../../types';
import type { WorkItem } from '../item';
import type { SlotState } from '../render';
import { effectiveTrust } from '../../rules/templateRules';
import { fromFixtureItem } from '../item';
import { languageFor } from '../../language/registry';
import type { LoadedSlot, PipelineEnv } from './state';
export type { LoadedSlot } from './state';

/** Every slot of the request, in order: the config's, then the ones the template uses without defining them. */
export function loadSlots(env: PipelineEnv): LoadedSlot[] {
  const { template, config, fixture } = env;
  const usedSlots = new Set<string>(template.uses.map((u) => u.slot));
  for (const m of template.messages) collectHistory(m.nodes, usedSlots);
  // dotprompt gives every template the conversation (`data.messages`) and inserts it without a
  // `{{history}}` marker (insertHistory): the first history slot is used whether it is named or not.
  const dotpromptHistory = languageFor(template).placesHistory ? Object.entries(config.slots ?? {}).find(([, c]) => c?.kind === 'history')?.[0] : undefined;
  if (dotpromptHistory !== undefined) usedSlots.add(dotpromptHistory);
  const names = [...Object.keys(config.slots ?? {})];
  for (const s of usedSlots) if (!(s in (config.slots ?? {}))) names.push(s);

  // Untrusted text must not forge the envelope of any slot, nor close any wrapper the template writes.
  const escapeWith: string[] = [];
  const addDelimiter = (d: string | undefined) => {
    if (d && !escapeWith.some((e) => e.toLowerCase() === d.toLowerCase())) escapeWith.push(d);
  };
  for (const c of Object.values(config.slots ?? {})) addDelimiter(c?.label);
  for (const u of template.uses) addDelimiter(u.delimiter);

  return names.map((name, order): LoadedSlot => {
    const cfg = config.slots?.[name];
    const value = fixture?.slots[name];
    const state: SlotState = {
      name,
      config: cfg,
      kind: cfg?.kind ?? 'other',
      isText: value?.type === 'text',
      untrusted: effectiveTrust(cfg) === 'untrusted',
      label: cfg?.label,
      envelope: cfg?.envelope ?? 'bracket',
      escapeWith,
    };
    const isList = value?.type === 'items';
    return {
      state,
      order,
      cfg,
      used: usedSlots.has(name),
      required: cfg?.required ?? false,
      priority: cfg?.priority ?? 0,
      orderPolicy: cfg?.order ?? 'rank',
      policy: state.kind === 'history' ? cfg?.policy : undefined,
      overhead: isList || cfg?.label ? env.itemOverhead : 0,
      value,
    };
  });
}

/** Work items of one fixture value: stable ids (`<slot>_<n>`, `~k` on a clash), token counts. */
export function loadItems(name: string, value: FixtureValue, tokenizer: Tokenizer): { items: WorkItem[]; files: Array<[number, string]> } {
  const raw: FixtureItem[] =
    value.type === 'text'
      ? [{ index: 0, text: value.text, meta: {}, span: value.span, textSpan: value.span, ...(value.file !== undefined ? { file: value.file } : {}) }]
      : value.type === 'items'
        ? value.items
        : [];
  const ids = new Set<string>();
  const items: WorkItem[] = raw.map((it) => {
    const written = typeof it.id === 'string' && it.id !== '' ? it.id : typeof it.id === 'number' ? String(it.id) : undefined;
    let id = written ?? `${name}_${it.index + 1}`;
    for (let k = 2; ids.has(id); k++) id = `${written ?? `${name}_${it.index + 1}`}~${k}`;
    ids.add(id);
    const text = typeof it.text === 'string' ? it.text : '';
    return fromFixtureItem(name, it, text, id, written !== undefined, tokenizer.count(text));
  });
  // The fixture text already covers inline values and metadata; texts read from files are not in it.
  const files = items.filter((w) => w.file !== undefined).map((w): [number, string] => [w.index, w.text]);
  return { items, files };
}

function collectHistory(nodes: readonly TemplateNode[], out: Set<string>): void {
  for (const n of nodes) {
    if (n.type === 'history') out.add(n.slot);
    else if (n.type === 'each' || n.type === 'if') {
      collectHistory(n.body, out);
      if (n.inverse) collectHistory(n.inverse, out);
    }
  }
}
