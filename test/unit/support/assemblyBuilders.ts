/**
 * Hand-built TemplateDoc / FixtureDoc / ConfigDoc objects for the budget and assembly tests, so
 * those tests depend only on the shared types, not on the template, fixture and config parsers.
 */
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { ContextConfigSchema } from '../../../src/core/config/schema';
import type { ContextConfig } from '../../../src/core/config/schema';
import type { ConfigDoc, FixtureDoc, FixtureItem, FixtureValue, Role, SlotUse, Span, TemplateDoc, TemplateMessage, TemplateNode, Tokenizer } from '../../../src/core/types';

/** The 4-characters rule of seed 001: (code points + 3) // 4. */
export const chars4: Tokenizer = { name: 'chars4', exact: false, count: (t: string) => Math.floor(([...t].length + 3) / 4) };

/** A text of exactly n chars4 tokens (4n characters). */
export function textOfTokens(n: number, fill = 'abcd'): string {
  return fill.repeat(Math.ceil((4 * n) / fill.length)).slice(0, 4 * n);
}

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------

let pos = 1;
const span = (): Span => {
  const s = pos;
  pos += 10;
  return { start: s, end: s + 5 };
};

export const t = {
  text: (text: string): TemplateNode => ({ type: 'text', text, span: span() }),
  v: (...path: string[]): TemplateNode => ({ type: 'var', path, span: span(), raw: false }),
  each: (path: string | string[], body: TemplateNode[], alias?: string, inverse?: TemplateNode[]): TemplateNode => {
    const s = span();
    return { type: 'each', path: typeof path === 'string' ? [path] : path, alias, body, inverse, span: s, headSpan: s };
  },
  if: (path: string | string[], body: TemplateNode[], negate = false, inverse?: TemplateNode[]): TemplateNode => {
    const s = span();
    return { type: 'if', path: typeof path === 'string' ? [path] : path, negate, body, inverse, span: s, headSpan: s };
  },
  history: (slot = 'history'): TemplateNode => ({ type: 'history', slot, span: span() }),
  msg: (role: Role, ...nodes: TemplateNode[]): TemplateMessage => ({ role, markerSpan: span(), span: span(), nodes }),
};

/** Template nodes as Handlebars source (text with `{{` escaped). */
export function hbs(nodes: readonly TemplateNode[]): string {
  let out = '';
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        out += n.text.replace(/\{\{/g, '\\{{');
        break;
      case 'var':
        out += `{{${n.path.join('.')}}}`;
        break;
      case 'each':
        out += `{{#each ${n.path.join('.')}${n.alias ? ` as |${n.alias}|` : ''}}}${hbs(n.body)}${n.inverse ? `{{else}}${hbs(n.inverse)}` : ''}{{/each}}`;
        break;
      case 'if':
        out += `{{#${n.negate ? 'unless' : 'if'} ${n.path.join('.')}}}${hbs(n.body)}${n.inverse ? `{{else}}${hbs(n.inverse)}` : ''}{{/${n.negate ? 'unless' : 'if'}}}`;
        break;
      case 'history':
        out += '{{history}}';
        break;
    }
  }
  return out;
}

/** A template from messages; `uses` are derived from top-level references, `delimiters` mark enclosed uses. */
export function template(messages: TemplateMessage[], opts: { path?: string; delimiters?: Record<string, string> } = {}): TemplateDoc {
  const uses: SlotUse[] = [];
  const walk = (nodes: TemplateNode[], role: Role, aliases: string[], inEach: boolean) => {
    for (const n of nodes) {
      if (n.type === 'text') continue;
      if (n.type === 'history') {
        uses.push({ slot: n.slot, span: n.span, role, form: 'history' });
        continue;
      }
      const head = n.path[0];
      const isSlot = head !== undefined && !aliases.includes(head) && head !== 'this' && !head.startsWith('@') && head !== 'loop' && !(inEach && aliases.length === 0 && ['text', 'id', 'title', 'source', 'version'].includes(head));
      if (isSlot) uses.push({ slot: head, span: n.span, role, form: n.type, ...(opts.delimiters?.[head] ? { delimiter: opts.delimiters[head] } : {}) });
      if (n.type === 'each') {
        walk(n.body, role, n.alias ? [...aliases, n.alias] : aliases, true);
        if (n.inverse) walk(n.inverse, role, aliases, inEach);
      } else if (n.type === 'if') {
        walk(n.body, role, aliases, inEach);
        if (n.inverse) walk(n.inverse, role, aliases, inEach);
      }
    }
  };
  for (const m of messages) walk(m.nodes, m.role, [], false);
  return {
    path: opts.path ?? '/ws/support.prompt',
    format: 'prompt',
    // The engine renders the text: the nodes written back as dotprompt (Handlebars) source.
    text: messages.map((m) => `{{role "${m.role}"}}${hbs(m.nodes)}`).join(''),
    bodySpan: { start: 0, end: 1 },
    messages,
    uses,
    findings: [],
  };
}

// ---------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------

export function config(input: Record<string, unknown>): ContextConfig {
  return ContextConfigSchema.parse(input);
}

/** A ConfigDoc from YAML text, with key/value spans from the `yaml` AST (what the real parser provides). */
export function configDoc(yamlText: string, path = '/ws/support.context.yaml'): ConfigDoc {
  const doc = parseDocument(yamlText);
  const config = ContextConfigSchema.parse(doc.toJS() ?? {});
  const find = (p: ReadonlyArray<string | number>): { key?: YamlNode; value?: YamlNode } | undefined => {
    let node: unknown = doc.contents;
    let key: YamlNode | undefined;
    for (const seg of p) {
      if (isMap(node)) {
        const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
        if (!pair) return undefined;
        key = pair.key as YamlNode;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
        key = undefined;
      } else return undefined;
    }
    return { key, value: node as YamlNode | undefined };
  };
  const toSpan = (n: YamlNode | undefined): Span | undefined => (n && n.range ? { start: n.range[0], end: n.range[1] } : undefined);
  return {
    path,
    text: yamlText,
    config,
    keySpan: (p) => toSpan(find(p)?.key),
    valueSpan: (p) => toSpan(find(p)?.value),
    findings: [],
  };
}

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

export type ItemSpec = Partial<Omit<FixtureItem, 'index' | 'span' | 'textSpan' | 'meta'>> & { text: string; meta?: Record<string, unknown> };

/**
 * A FixtureDoc whose text is the JSON of its slots, with real spans: each slot key, each item
 * node and each item's text value point into that JSON.
 */
export function fixture(slots: Record<string, string | ItemSpec[]>, opts: { path?: string; name?: string } = {}): FixtureDoc {
  let text = '{"slots":{';
  const values: Record<string, FixtureValue> = {};
  const keySpans: Record<string, Span> = {};
  Object.entries(slots).forEach(([name, value], si) => {
    if (si) text += ',';
    const keyStart = text.length;
    text += JSON.stringify(name);
    keySpans[name] = { start: keyStart, end: text.length };
    text += ':';
    if (typeof value === 'string') {
      const start = text.length;
      text += JSON.stringify(value);
      values[name] = { type: 'text', text: value, span: { start, end: text.length } };
      return;
    }
    const listStart = text.length;
    text += '[';
    const items: FixtureItem[] = value.map((spec, index) => {
      if (index) text += ',';
      const itemStart = text.length;
      text += '{';
      const { meta, ...fields } = spec;
      let textSpan: Span = { start: itemStart, end: itemStart };
      Object.entries({ ...fields, ...(meta ?? {}) }).forEach(([k, v], fi) => {
        if (fi) text += ',';
        text += `${JSON.stringify(k)}:`;
        const vs = text.length;
        text += JSON.stringify(v);
        if (k === 'text') textSpan = { start: vs + 1, end: text.length - 1 };
      });
      text += '}';
      return { index, ...fields, meta: meta ?? {}, span: { start: itemStart, end: text.length }, textSpan } as FixtureItem;
    });
    text += ']';
    values[name] = { type: 'items', items, span: { start: listStart, end: text.length } };
  });
  text += '}}';
  return {
    path: opts.path ?? '/ws/fixtures/retry.fixture.json',
    text,
    name: opts.name ?? 'retry',
    slots: values,
    slotKeySpans: keySpans,
    findings: [],
  };
}

// ---------------------------------------------------------------------------
// Work items for stage tests
// ---------------------------------------------------------------------------

import type { WorkItem } from '../../../src/core/assembly/item';
import { sha256 } from '../../../src/core/assembly/sha256';

export function workItem(index: number, fields: Partial<WorkItem> & { text?: string } = {}): WorkItem {
  const text = fields.text ?? `item ${index}`;
  return {
    slot: 'evidence',
    index,
    id: `ev_${index}`,
    hasId: true,
    tokens: chars4.count(text),
    sha256: sha256(text),
    meta: {},
    merged: [],
    mergedIds: [],
    span: { start: 0, end: 0 },
    textSpan: { start: 0, end: 0 },
    ...fields,
    text,
  };
}
