/**
 * Ablations (seed 002, "Ablation testing"): remove or replace one component of the context
 * strategy at a time, holding the rest fixed, and measure what it was worth. Each ablation is a
 * transformation of the context config or of the fixture given to `assemble`; the assembly code
 * is never changed, so an ablation measures exactly the strategy a config can express.
 *
 * Built in, where the config and the cases give them something to remove:
 *
 * | id | what it removes or replaces | how |
 * |---|---|---|
 * | `slot:<name>` | one slot's content | the slot's value is removed from every case's fixture |
 * | `filter:<key>` | one hard filter (version, tenant, expired, source_types, exclude_source_types) | the key is removed from `filters` (`expired: false`) |
 * | `dedup` | deduplication | every item the baseline merged as `duplicate-of:` is made distinct for dedup only: a stated version gets a `.0` segment (matched by the same version filter and version score), an item without one gets its id as a last line |
 * | `scoring` | the selection score | retrieval order instead: the weights become relevance 1, all others 0, so items rank by their retrieval relevance (fixture order where none is given) |
 * | `labels` | envelopes and labels | `label` is removed from every slot: items render bare |
 * | `order` | the order policy | `edges` becomes `rank` and `rank` becomes `edges` in every list slot |
 *
 * Eval files add their own (`ablations:`): `drop` items, `replace` slot values (a summary of the
 * history instead of the raw turns), or patch the `config` (a what-if budget).
 */
import type { ContextConfig, SlotConfig } from '../config/schema';
import type { AssemblyResult, FixtureDoc, FixtureItem } from '../types';
import type { FileHost } from '../host';
import type { AblationSpec } from './schema';
import type { Subject } from './subject';
import { mapItems, patchConfig, withInlineSlots, withoutSlots } from './subject';

/** The inputs of one case run: what an ablation transforms. */
export interface CaseInput {
  caseId: string;
  fixture?: FixtureDoc;
  config: ContextConfig;
  /** The case's baseline result (dedup reads which items it merged). */
  baseline?: AssemblyResult;
}

export interface Ablation {
  id: string;
  description: string;
  /** The transformed inputs, or an error; undefined when the ablation changes nothing for this case. */
  apply(input: CaseInput): { fixture?: FixtureDoc; config: ContextConfig } | { error: string } | undefined;
}

const FILTER_KEYS = ['version', 'tenant', 'expired', 'source_types', 'exclude_source_types'] as const;

/** The retrieval order: relevance alone (ties, and items without relevance, in fixture order). */
export const RETRIEVAL_ORDER = { relevance: 1, authority: 0, version_match: 0, recency: 0, novelty: 0, contradiction_penalty: 0 };

function withSlots(config: ContextConfig, fn: (name: string, s: SlotConfig) => SlotConfig): ContextConfig {
  const slots: Record<string, SlotConfig> = {};
  for (const [name, s] of Object.entries(config.slots ?? {})) slots[name] = fn(name, s);
  return { ...config, slots };
}

/** Slots the template renders whose value some case gives. */
function slotsWithValues(subject: Subject, fixtures: ReadonlyArray<FixtureDoc | undefined>): string[] {
  const used = new Set(subject.template.uses.map((u) => u.slot));
  const names = new Set<string>();
  for (const f of fixtures) for (const n of Object.keys(f?.slots ?? {})) if (used.has(n) || subject.config.slots?.[n]?.kind === 'history') names.add(n);
  const order = [...Object.keys(subject.config.slots ?? {}), ...[...names].sort()];
  return [...new Set(order)].filter((n) => names.has(n));
}

/** The built-in ablations that apply to this subject and these cases, in a fixed order. */
export function builtinAblations(subject: Subject, inputs: readonly CaseInput[]): Ablation[] {
  const config = subject.config;
  const out: Ablation[] = [];
  for (const slot of slotsWithValues(subject, inputs.map((i) => i.fixture))) {
    out.push({
      id: `slot:${slot}`,
      description: `without the ${slot} slot (${config.slots?.[slot]?.kind ?? 'undeclared'})`,
      apply: (i) => (i.fixture && slot in i.fixture.slots ? { fixture: withoutSlots(i.fixture, [slot], `ablation slot:${slot}`), config: i.config } : undefined),
    });
  }
  const filters = config.filters;
  for (const key of FILTER_KEYS) {
    if (!filters) break;
    const active = key === 'expired' ? filters.expired !== false && filters.now !== undefined : filters[key] !== undefined;
    if (!active) continue;
    out.push({
      id: `filter:${key}`,
      description: `without the ${key} filter${key === 'version' || key === 'tenant' ? ` (${filters[key]})` : ''}`,
      apply: (i) => {
        if (!i.config.filters) return undefined;
        const f = { ...i.config.filters } as Record<string, unknown>;
        if (key === 'expired') f.expired = false;
        else delete f[key];
        return { fixture: i.fixture, config: { ...i.config, filters: f as ContextConfig['filters'] } };
      },
    });
  }
  if (inputs.some((i) => i.baseline?.trace.omitted.some((o) => o.reason.startsWith('duplicate-of:')))) {
    out.push({
      id: 'dedup',
      description: 'without deduplication (merged copies kept as items of their own)',
      apply: (i) => {
        const dups = new Set((i.baseline?.trace.omitted ?? []).filter((o) => o.reason.startsWith('duplicate-of:')).map((o) => `${o.slot}\u0000${o.id}`));
        if (!i.fixture || !dups.size) return undefined;
        return { fixture: mapItems(i.fixture, 'ablation dedup', (item, slot) => (dups.has(`${slot}\u0000${itemId(item, slot)}`) ? distinct(item, slot) : item)), config: i.config };
      },
    });
  }
  out.push({
    id: 'scoring',
    description: 'retrieval order (relevance only) instead of the selection score',
    apply: (i) => ({ fixture: i.fixture, config: { ...i.config, scoring: { ...RETRIEVAL_ORDER } } }),
  });
  if (Object.values(config.slots ?? {}).some((s) => s.label !== undefined)) {
    out.push({
      id: 'labels',
      description: 'without envelopes: labels removed, items rendered bare',
      apply: (i) => ({ fixture: i.fixture, config: withSlots(i.config, (_n, s) => (s.label === undefined ? s : withoutKey(s, 'label'))) }),
    });
  }
  const orderSlots = Object.entries(config.slots ?? {}).filter(([, s]) => s.kind !== 'history' && (s.order === 'edges' || (s.order === 'rank' && (s.label !== undefined || s.kind === 'evidence'))));
  if (orderSlots.length) {
    const names = orderSlots.map(([n, s]) => `${n} ${s.order}->${s.order === 'edges' ? 'rank' : 'edges'}`).join(', ');
    out.push({
      id: 'order',
      description: `the other order policy (${names})`,
      apply: (i) => ({ fixture: i.fixture, config: withSlots(i.config, (n, s) => (orderSlots.some(([m]) => m === n) ? { ...s, order: s.order === 'edges' ? 'rank' : 'edges' } : s)) }),
    });
  }
  return out;
}

function withoutKey<T extends object, K extends keyof T>(o: T, key: K): T {
  const copy = { ...o };
  delete copy[key];
  return copy;
}

/** The id the assembly gives an item (its written id, else `<slot>_<n>`). */
export function itemId(item: FixtureItem, slot: string): string {
  return typeof item.id === 'string' && item.id !== '' ? item.id : typeof item.id === 'number' ? String(item.id) : `${slot}_${item.index + 1}`;
}

/** The item, changed only as far as dedup can tell it from its copies. */
function distinct(item: FixtureItem, slot: string): FixtureItem {
  if (item.version !== undefined) return { ...item, version: `${item.version}.0` };
  return { ...item, text: `${item.text}\n(${itemId(item, slot)})` };
}

/** The ablations an eval file defines. */
export function fileAblations(host: FileHost, evalPath: string, specs: readonly AblationSpec[]): Ablation[] {
  return specs.map((spec) => ({
    id: spec.id,
    description: spec.description ?? [spec.drop ? `drop ${spec.drop.join(', ')}` : '', spec.replace ? `replace ${Object.keys(spec.replace).join(', ')}` : '', spec.config ? 'config patch' : ''].filter(Boolean).join('; '),
    apply: (i) => {
      let fixture = i.fixture;
      let config = i.config;
      if (spec.config) {
        const p = patchConfig(config, spec.config);
        if (!p.config) return { error: `ablation ${spec.id}: ${p.error}` };
        config = p.config;
      }
      if (spec.replace) {
        const r = withInlineSlots(host, fixture, evalPath, `ablation ${spec.id}`, spec.replace);
        if (!r.fixture) return { error: r.error ?? `ablation ${spec.id}: replacement failed` };
        fixture = r.fixture;
      }
      if (spec.drop && fixture) {
        const drop = new Set(spec.drop);
        const texts = Object.entries(fixture.slots).filter(([n, v]) => v.type !== 'items' && drop.has(`${n}_1`)).map(([n]) => n);
        fixture = mapItems(fixture, `ablation ${spec.id}`, (item, slot) => (drop.has(itemId(item, slot)) ? undefined : item));
        if (texts.length) fixture = withoutSlots(fixture, texts, `ablation ${spec.id}`);
      }
      return { fixture, config };
    },
  }));
}
