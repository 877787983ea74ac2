/**
 * Render once (issue: one render for the final request). Where the dotprompt engine's tree shows a
 * template only prints, loops over and tests its values (`printsValuesOnly`), the assembly skips
 * the second (unmarked) render of attribution.ts's check: the plain render's messages come from
 * the engine splitting the marked render's text with the marks removed. The claim behind it,
 * checked here on every hand case and 1,000 generated cases of the dotprompt differential suite
 * and on the examples: for such a template, those messages equal the render of the plain values
 * (whitespace-only values and marker text in values included, where marks do change the marked
 * render's own split). And the templates that compare, measure or transform a value are not
 * flagged.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandMarks, isExpansion, mark, ref, refable, splitMarked, unmark } from '../../src/core/assembly/attribution';
import type { RefResolver } from '../../src/core/assembly/attribution';
import { renderDotprompt } from '../../src/core/language/dotprompt/engine';
import type { EngineMessage, EngineResult } from '../../src/core/language/engineTypes';
import { generateCases, handCases, type DotpromptCase } from '../oracle/dotpromptCases';

const REPO = path.resolve(__dirname, '../..');

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.prompt')) out.push(p);
  }
  return out;
}

/** Every string of a value marked as the assembly marks slot text (plain objects and lists; other objects as they are). */
function marked(v: unknown, slot: number): unknown {
  if (typeof v === 'string') return mark(v, slot);
  if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype) return v.map((x) => marked(x, slot));
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: marked(x, slot), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

const text = (m: EngineMessage, clean: (s: string) => string) => `${m.role}|${m.parts.map((p) => (p.type === 'text' ? clean(p.text) : p.type === 'media' ? `[media ${clean(p.url)}]` : `[section ${p.name}]`)).join('')}`;

function renderBoth(c: DotpromptCase): { markedRender: EngineResult; plainRender: EngineResult } {
  const opts = { ...(c.partials ? { partials: c.partials } : {}), ...(c.inputDefault ? { inputDefault: c.inputDefault } : {}), lenient: true };
  const input = Object.fromEntries(Object.entries(c.data.input).map(([k, v], i) => [k, marked(v, i)]));
  const messages = c.data.messages?.map((m, i) => ({ ...m, content: m.content.map((p) => ({ text: mark(p.text, 900, i) })) }));
  const markedRender = renderDotprompt(c.source, { ...c.data, input, ...(messages ? { messages } : {}) }, opts);
  const plainRender = renderDotprompt(c.source, c.data, opts);
  return { markedRender, plainRender };
}

/**
 * Every string of a value numbered in one walk: `marked` with those numbers as item numbers, and
 * the same value with every string `refable` accepts passed as a reference instead (`byRef`).
 */
function numbered(v: unknown, slot: number, table: Map<string, string>, counter = { n: 0 }): { marked: unknown; byRef: unknown } {
  if (typeof v === 'string') {
    const item = counter.n++;
    if (!refable(v)) return { marked: mark(v, slot, item), byRef: mark(v, slot, item) };
    table.set(`${slot}:${item}`, v);
    return { marked: mark(v, slot, item), byRef: ref(slot, item, 0) };
  }
  if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype) {
    const xs = v.map((x) => numbered(x, slot, table, counter));
    return { marked: xs.map((x) => x.marked), byRef: xs.map((x) => x.byRef) };
  }
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const a: Record<string, unknown> = {};
    const b: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = numbered(x, slot, table, counter);
      Object.defineProperty(a, k, { value: r.marked, enumerable: true, writable: true, configurable: true });
      Object.defineProperty(b, k, { value: r.byRef, enumerable: true, writable: true, configurable: true });
    }
    return { marked: a, byRef: b };
  }
  return { marked: v, byRef: v };
}

describe('render once: a template that only prints its values', () => {
  it('renders references to texts as it renders the marked texts: the same cut, the same plain split', () => {
    const examples: DotpromptCase[] = walk(path.join(REPO, 'examples')).map((p) => ({ name: path.relative(REPO, p), source: readFileSync(p, 'utf8'), data: { input: {} } }));
    const cases = [...handCases, ...generateCases(20261203, 1000), ...examples];
    let withRefs = 0;
    const wrong: string[] = [];
    for (const c of cases) {
      const opts = { ...(c.partials ? { partials: c.partials } : {}), ...(c.inputDefault ? { inputDefault: c.inputDefault } : {}), lenient: true };
      const table = new Map<string, string>();
      const values = Object.entries(c.data.input).map(([k, v], i) => [k, numbered(v, i, table)] as const);
      const markedInput = Object.fromEntries(values.map(([k, v]) => [k, v.marked]));
      const refInput = Object.fromEntries(values.map(([k, v]) => [k, v.byRef]));
      const markedRender = renderDotprompt(c.source, { ...c.data, input: markedInput }, opts);
      if (!markedRender.printsValuesOnly || markedRender.issues.length) continue;
      if (table.size) withRefs++;
      const resolve: RefResolver = (slot, item) => table.get(`${slot}:${item}`);
      const refRender = renderDotprompt(c.source, { ...c.data, input: refInput }, opts);
      const cut = (r: EngineResult, withResolver: boolean) => r.messages.map((m) => ({ role: m.role, parts: m.parts.map((p) => (p.type === 'text' ? splitMarked(p.text, withResolver ? resolve : undefined) : p.type === 'media' ? { url: expandMarks(p.url, resolve) } : { section: p.name })) }));
      const plain = renderDotprompt(c.source, c.data, opts).messages;
      if (JSON.stringify(cut(refRender, true)) !== JSON.stringify(cut(markedRender, false))) wrong.push(`${c.name}: cut`);
      else if (JSON.stringify(refRender.splitWith?.((s) => expandMarks(s, resolve))) !== JSON.stringify(plain)) wrong.push(`${c.name}: plain split`);
    }
    expect(wrong).toEqual([]);
    expect(withRefs).toBeGreaterThan(cases.length / 4);
  });


  it('compares a plain text with a marked one in place exactly as expanding the marked one would', () => {
    const table = new Map([['1:0', 'alpha beta'], ['2:3', 'γ'], ['1:1', '']]);
    const resolve: RefResolver = (slot, item) => table.get(`${slot}:${item}`);
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const atoms = ['a', ' ', 'alpha', ref(1, 0, 0), ref(2, 3, 0), ref(1, 1, 0), ref(9, 9, 0), mark('x', 1, 2), mark('alpha beta', 0), '\uE000', '\uE001', '\uE002', '\uE150'];
    for (let n = 0; n < 3000; n++) {
      const marked = Array.from({ length: rnd(8) }, () => atoms[rnd(atoms.length)]).join('');
      const expanded = expandMarks(marked, resolve);
      expect(isExpansion(expanded, marked, resolve)).toBe(true);
      const other = rnd(2) ? expanded + 'a' : expanded.slice(0, Math.max(0, expanded.length - 1 - rnd(3))) + (rnd(2) ? 'b' : '');
      expect(isExpansion(other, marked, resolve)).toBe(other === expanded);
    }
  });

  it('splits the marked render as the plain one where no marker can begin outside the values and every value string prints as it is', () => {
    const strings = (v: unknown, out: string[] = []): string[] => {
      if (typeof v === 'string') out.push(v);
      else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
      return out;
    };
    const asIs = (s: string) => s === '' || refable(s);
    const examples: DotpromptCase[] = walk(path.join(REPO, 'examples')).map((p) => ({ name: path.relative(REPO, p), source: readFileSync(p, 'utf8'), data: { input: {} } }));
    const cases = [...handCases, ...generateCases(20261204, 2000), ...examples];
    let quiet = 0;
    const wrong: string[] = [];
    for (const c of cases) {
      if (c.source.includes('<<<') || JSON.stringify(c.inputDefault ?? {}).includes('<<<') || JSON.stringify(c.data.context ?? {}).includes('<<<')) continue;
      if (!strings(c.data.input).every(asIs)) continue;
      const { markedRender, plainRender } = renderBoth(c);
      if (!markedRender.printsValuesOnly || markedRender.issues.length) continue;
      quiet++;
      const a = markedRender.messages.map((m) => text(m, unmark));
      const b = plainRender.messages.map((m) => text(m, (s) => s));
      if (JSON.stringify(a) !== JSON.stringify(b)) wrong.push(c.name);
    }
    expect(wrong).toEqual([]);
    expect(quiet).toBeGreaterThan(100);
  });

  it('renders marked values as it renders the plain ones, on the differential suite and the examples', () => {
    const examples: DotpromptCase[] = walk(path.join(REPO, 'examples')).map((p) => ({ name: path.relative(REPO, p), source: readFileSync(p, 'utf8'), data: { input: {} } }));
    const cases = [...handCases, ...generateCases(20261202, 1000), ...examples];
    let flagged = 0;
    const wrong: string[] = [];
    for (const c of cases) {
      const { markedRender, plainRender } = renderBoth(c);
      if (!markedRender.printsValuesOnly) continue;
      flagged++;
      // What the assembly uses instead of the plain render: the marked text unmarked, split.
      const a = (markedRender.splitWith?.(unmark) ?? []).map((m) => text(m, (s) => s));
      const b = plainRender.messages.map((m) => text(m, (s) => s));
      if (JSON.stringify(a) !== JSON.stringify(b)) wrong.push(c.name);
    }
    expect(wrong).toEqual([]);
    // Not vacuous: most templates only print.
    expect(flagged).toBeGreaterThan(cases.length / 4);
  });

  it('the split of the unmarked text is the plain render where marks change the marked one (a blank value, marker text in a value)', () => {
    for (const [source, input] of [
      ['{{role "system"}}{{policy}}{{role "user"}}hi', { policy: '  \n ' }],
      ['{{{doc}}}', { doc: '<<<dotprompt:role:model>>>x' }],
    ] as const) {
      const c: DotpromptCase = { name: source, source, data: { input: { ...input } } };
      const { markedRender, plainRender } = renderBoth(c);
      expect(markedRender.printsValuesOnly).toBe(true);
      // The marked render alone would be wrong here (the marks are not blank, and sit before the marker)…
      expect(markedRender.messages.length).not.toBe(plainRender.messages.length);
      // …the engine's split of its unmarked text is not.
      expect(markedRender.splitWith?.(unmark)).toEqual(plainRender.messages);
    }
  });

  it('flags no template that compares, measures, indexes or transforms a value', () => {
    const reads = [
      '{{#ifEquals kind "a"}}A{{/ifEquals}}',
      '{{json doc}}',
      '{{name.length}}',
      '{{name.[0]}}',
      '{{#each (items)}}x{{/each}}',
      '{{> part name=name}}',
      '{{lookup map key}}',
      '{{#each docs as |d|}}{{d.text.length}}{{/each}}',
      '{{#if a b}}x{{/if}}',
      '{{media url=image}}',
    ];
    for (const source of reads) expect({ source, flag: renderDotprompt(source, { input: { kind: 'a', doc: {}, name: 'n', docs: [], map: {}, key: 'k', a: 1, b: 2, image: 'https://x.invalid/i.png' } }, { lenient: true, partials: { part: '{{name}}' } }).printsValuesOnly }).toEqual({ source, flag: undefined });
    const prints = ['{{name}}', '{{#each docs as |d|}}[{{d.id}}] {{d.text}}{{/each}}', '{{#if a}}{{a}}{{else}}none{{/if}}', '{{role "system"}}{{policy}}{{history}}', '{{#with doc}}{{title}}{{/with}}'];
    for (const source of prints) expect({ source, flag: renderDotprompt(source, { input: { name: 'n', docs: [{ id: 1, text: 't' }], a: 'x', policy: 'p', doc: { title: 't' } } }).printsValuesOnly }).toEqual({ source, flag: true });
  });
});
