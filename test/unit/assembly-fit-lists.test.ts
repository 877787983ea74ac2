/**
 * The fit step counts each probe from the parts of its messages (render.ts renderTexts; countParts.ts
 * counts them part by part with a trie of glue counts). These tests hold that path to the real
 * thing: parts count exactly as their texts joined, and the request
 * count of an assembly equals the count of the messages it renders, wherever the list sits in its
 * message (first, last, alone, between text), labelled or not, and when one slot is used both bare
 * and inside a delimiter the template writes itself.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../src/core/assembly';
import { countJoined } from '../../src/core/assembly/countParts';
import type { ContextConfig } from '../../src/core/config/schema';
import { getTokenizer } from '../../src/core/tokens';
import type { FixtureDoc, TemplateDoc } from '../../src/core/types';
import { fromFixtureItem } from '../../src/core/assembly/item';
import type { SlotState } from '../../src/core/assembly/render';
import { Renderer } from '../../src/core/assembly/render';
import type { WorkItem } from '../../src/core/assembly/item';
import { config, fixture, t, template } from './support/assemblyBuilders';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const UNITS = [
  '[EVIDENCE ev_1]\nSource: kb/doc-1\nContent:\nThe client retries idempotent requests up to 3 times.\n[/EVIDENCE]',
  '<evidence id="ev_2">\nPassage 2: non-idempotent POST requests are retried only with a key.\n</evidence>',
  'short',
  '',
  '   ',
  "don't won't we'll — naïve café 東京 😀👍🏽",
  'x'.repeat(120),
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. '.repeat(4),
  '\n\n',
];

describe('countJoined over message parts', () => {
  for (const name of ['o200k_base', 'cl100k_base']) {
    it(`counts parts exactly as their texts joined (${name})`, () => {
      const tk = getTokenizer(name)!;
      const next = rng(name.length * 31337);
      const pick = () => UNITS[Math.floor(next() * UNITS.length)];
      for (let round = 0; round < 300; round++) {
        const pieces: string[] = [];
        const n = 1 + Math.floor(next() * 5);
        for (let i = 0; i < n; i++) {
          if (next() < 0.5) pieces.push(pick());
          else {
            // A slot's items with the separator between them, as the renderer gives them.
            const sep = next() < 0.8 ? '\n\n' : ' | ';
            Array.from({ length: Math.floor(next() * 6) }, pick).forEach((u, k) => pieces.push(...(k > 0 ? [sep, u] : [u])));
          }
        }
        const joined = pieces.join('');
        // Twice: the second count comes from the caches the first one filled.
        expect(countJoined(tk, pieces), JSON.stringify(pieces)).toBe(tk.count(joined));
        expect(countJoined(tk, pieces)).toBe(tk.count(joined));
      }
    });
  }
});

const tk = getTokenizer('o200k_base')!;
const OVERHEAD = { message: 3, request: 5, item: 2 };

/** The request count an assembly reports must be the count of what it renders. */
function checkCounts(tpl: TemplateDoc, cfg: ContextConfig, fx: FixtureDoc): { trimmed: number; kept: number } {
  const r = assemble({ template: tpl, config: cfg, fixture: fx, tokenizer: tk });
  expect(r.ok).toBe(true);
  const counted = OVERHEAD.request + r.messages.reduce((s, m) => s + OVERHEAD.message + tk.count(m.content), 0);
  expect(r.trace.input_tokens).toBe(counted);
  expect(r.messages.map((m) => m.parts.map((p) => p.text).join(''))).toEqual(r.messages.map((m) => m.content));
  return { trimmed: r.trace.omitted.filter((o) => o.reason === 'trimmed-for-request').length, kept: r.trace.retained.length };
}

const docs = Array.from({ length: 40 }, (_, i) => ({
  id: `ev_${i}`,
  source: `kb/doc-${i % 5}`,
  relevance: ((i * 37) % 100) / 100,
  text: i % 9 === 4 ? '   ' : `Passage ${i}: the client retries idempotent requests up to ${i % 7} times with backoff; release ${i % 13}.${i % 4 === 0 ? '\n' : ''}`,
}));

function cfgFor(window: number, evidence: Record<string, unknown>): ContextConfig {
  return config({ window, output: 100, margin: 0, overhead: OVERHEAD, slots: { evidence: { kind: 'evidence', budget: 100000, priority: 1, ...evidence }, q: { trust: 'trusted', required: true } } });
}

const layouts: Array<[string, TemplateDoc]> = [
  ['list alone in its message', template([t.msg('system', t.text('Be brief.')), t.msg('user', t.v('evidence')), t.msg('user', t.v('q'))])],
  ['list first, then text', template([t.msg('user', t.v('evidence'), t.text('\n\nQuestion: '), t.v('q'))])],
  ['text, then list last', template([t.msg('user', t.v('q'), t.text('\nMaterial:\n'), t.v('evidence'), t.text('\n  '))])],
  ['list between texts', template([t.msg('user', t.text('Material:\n'), t.v('evidence'), t.text('\nQuestion: '), t.v('q'))])],
  ['bare and self-wrapped uses of one slot', template([t.msg('user', t.text('A:\n'), t.v('evidence'), t.text('\n[EVIDENCE]\n'), t.v('evidence'), t.text('\n[/EVIDENCE]\n'), t.v('q'))], { delimiters: { evidence: 'EVIDENCE' } })],
  ['a list inside if and each (not a list piece)', template([t.msg('user', t.if('evidence', [t.text('Docs:\n'), t.v('evidence')]), t.each('evidence', [t.text('- '), t.v('this', 'id'), t.text('\n')]), t.v('q'))])],
];

describe('fit counts from message parts equal the rendered request', () => {
  for (const [name, tpl] of layouts) {
    for (const [kind, evidence] of [
      ['labelled, untrusted, edges', { label: 'EVIDENCE', trust: 'untrusted', order: 'edges' }],
      ['xml envelope', { label: 'EVIDENCE', envelope: 'xml', trust: 'untrusted' }],
      ['unlabelled, trusted', { trust: 'trusted' }],
    ] as const) {
      it(`${name}, ${kind}: every window from untrimmed to heavily trimmed`, () => {
        const fx = fixture({ evidence: docs, q: 'Does SDK 4.2 retry after a 429?' });
        const full = assemble({ template: tpl, config: cfgFor(1_000_000, evidence), fixture: fx, tokenizer: tk }).trace.input_tokens;
        let sawTrim = false;
        for (const frac of [1, 0.9, 0.6, 0.35, 0.2]) {
          const window = Math.floor(full * frac) + 100;
          const { trimmed } = checkCounts(tpl, cfgFor(window, evidence), fx);
          if (trimmed > 0) sawTrim = true;
        }
        expect(sawTrim).toBe(true);
      });
    }
  }
});

describe('renderTexts spells out the same messages as render', () => {
  const span = { start: 0, end: 1 };
  const items: WorkItem[] = docs.map((d, i) => fromFixtureItem('evidence', { index: i, id: d.id, source: d.source, text: d.text, meta: {}, span, textSpan: span }, d.text, d.id, true, 1));
  // Line breaks at the end of a text are dropped inside an envelope; '\r\n' and '\n\n' make that visible in the text.
  items[1] = fromFixtureItem('evidence', { index: 1, id: 'crlf', text: 'ends with CRLF\r\n\n', meta: {}, span, textSpan: span }, 'ends with CRLF\r\n\n', 'crlf', true, 1);
  const slotStates = (label: boolean, untrusted: boolean): Map<string, SlotState> =>
    new Map([
      ['evidence', { name: 'evidence', kind: 'evidence', isText: false, untrusted, envelope: 'bracket', escapeWith: label ? ['EVIDENCE'] : [], ...(label ? { label: 'EVIDENCE' } : {}) }],
      ['q', { name: 'q', kind: 'other', isText: true, untrusted: false, envelope: 'bracket', escapeWith: [] }],
    ]);
  const q = fromFixtureItem('q', { index: 0, text: 'why?', meta: {}, span, textSpan: span }, 'why?', 'q_1', false, 1);
  for (const [name, tpl] of layouts) {
    for (const label of [true, false]) {
      it(`${name}, ${label ? 'labelled' : 'unlabelled'}`, () => {
        const r = new Renderer(tpl, slotStates(label, label), undefined);
        for (const kept of [items, items.slice(1, 2), items.slice(0, 7).reverse(), items.filter((_, i) => i % 3 !== 0), []]) {
          const map = new Map([['evidence', kept], ['q', [q]]]);
          const rendered = r.render(map).map((m) => m.content);
          const pieces = r.renderTexts(map);
          expect(pieces.map((m) => m.join(''))).toEqual(rendered);
          pieces.forEach((m, i) => expect(countJoined(tk, m)).toBe(tk.count(rendered[i])));
        }
      });
    }
  }
});
