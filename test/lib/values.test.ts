/**
 * fixtureFromValues types live values exactly as the fixture parser types the same values written
 * in a fixture file (JSON), and throws a FixtureValueError with the path of a bad value.
 */
import { describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/core/fixture';
import { FixtureValueError, fixtureFromValues, formatValuePath } from '../../src/core/fixture/values';
import type { FixtureDoc } from '../../src/core/types';

/** The slot values without spans, the part both builders must agree on. */
function shape(doc: FixtureDoc): unknown {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== 'span' && k !== 'textSpan' && (k !== 'fileRef' || x === undefined ? true : true)) out[k] = k === 'fileRef' ? { value: (x as { value: string }).value } : strip(x);
      return out;
    }
    return v;
  };
  return strip(doc.slots);
}

const CASES: Array<[string, Record<string, unknown>]> = [
  ['a string is text', { question: 'Does SDK 4.2 retry 429s?' }],
  ['{ text } alone is text', { policy: { text: 'Be brief.' } }],
  ['a file reference is text to read', { policy: { file: 'policy.md' } }],
  ['numbers and booleans are data; null is no value', { n: 3, show: false, none: null }],
  ['an object is data', { customer: { firstName: 'Ada', tier: 'gold', tags: ['a', 'b'] } }],
  ['a list of objects without text is data', { tools: [{ name: 'lookup', parameters: { type: 'object' } }, { name: 'refund' }] }],
  ['a list of numbers is data', { scores: [1, 2, 3] }],
  ['a list of strings is items', { notes: ['one', 'two', 'two'] }],
  ['an empty list is items', { evidence: [] }],
  [
    'items keep their typed fields and the rest as meta',
    {
      evidence: [
        { id: 'ev_0192', text: 'Retries are on by default.', title: 'Retry behavior', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '4.2', authority: 0.95, relevance: 0.9, published_at: '2026-06-10T00:00:00Z', expires_at: '2027-01-01', tenant: 'acme', uri: 'https://docs.example.com/sdk/retries', spans: [[820, 1160]] },
        { id: 7, content: 'Old behaviour.', version: 3.9, relevance: '0.4' },
        { file: 'docs/a.md', id: 'f1' },
        { text: { file: 'docs/b.md' } },
      ],
    },
  ],
  [
    'history turns take roles (model and function as the runtimes name them)',
    {
      history: [
        { role: 'user', text: 'hi', at: '2026-08-12T14:05' },
        { role: 'model', text: 'hello' },
        { role: 'Function', text: '{"ok":true}' },
      ],
    },
  ],
  ['a mixed list: scalars become text', { mixed: ['a', 5, true] }],
];

describe('fixtureFromValues types values as the fixture parser does', () => {
  for (const [name, values] of CASES) {
    it(name, () => {
      const parsed = parseFixture('/w/x.fixture.json', JSON.stringify({ slots: values }));
      expect(parsed.findings).toEqual([]);
      const built = fixtureFromValues('x', values);
      expect(shape(built)).toEqual(shape(parsed));
    });
  }

  it('records the values as canonical JSON text (the cache key covers them) and the context', () => {
    const a = fixtureFromValues('live', { b: 1, a: 'x' }, { context: { state: { step: 2 } } });
    const b = fixtureFromValues('live', { a: 'x', b: 1 }, { context: { state: { step: 2 } } });
    expect(a.text).toBe(b.text);
    expect(a.text).toBe('{"context":{"state":{"step":2}},"name":"live","slots":{"a":"x","b":1}}');
    expect(a.context).toEqual({ state: { step: 2 } });
    expect(a.path).toBe('values:live');
    expect(fixtureFromValues('live', { a: 'y' }).text).not.toBe(fixtureFromValues('live', { a: 'x' }).text);
  });

  it('text wins over content; content beside text is metadata', () => {
    const d = fixtureFromValues('x', { ev: [{ content: 'c', text: 't' }] });
    const v = d.slots.ev;
    expect(v.type).toBe('items');
    if (v.type === 'items') {
      expect(v.items[0].text).toBe('t');
      expect(v.items[0].meta).toEqual({ content: 'c' });
    }
  });
});

describe('bad values throw a FixtureValueError with their path', () => {
  const bad: Array<[string, Record<string, unknown>, Array<string | number>, RegExp]> = [
    ['undefined', { question: undefined }, ['question'], /undefined/],
    ['a function', { evidence: [{ text: 'x', meta: () => 1 }] }, ['evidence', 0, 'meta'], /function/],
    ['NaN', { n: Number.NaN }, ['n'], /finite/],
    ['a class instance', { when: new Date(0) }, ['when'], /plain object.*Date/],
    ['relevance that is not a number', { evidence: [{ text: 'a' }, { text: 'b', relevance: 'high' }] }, ['evidence', 1, 'relevance'], /number/],
    ['an unknown role', { history: [{ role: 'narrator', text: 'x' }] }, ['history', 0, 'role'], /one of system, developer, user, assistant, tool/],
    ['an item without text', { evidence: [{ text: 'a' }, { id: 'ev_2', title: 'no text' }] }, ['evidence', 1], /has no text/],
    ['a null item', { evidence: ['a', null] }, ['evidence', 1], /empty/],
    ['a list inside a list of items', { evidence: ['a', ['b']] }, ['evidence', 1], /got a list/],
    ['a version that is a list', { evidence: [{ text: 'a', version: ['4.2'] }] }, ['evidence', 0, 'version'], /single value/],
    ['text that is a list', { evidence: [{ text: ['a'] }] }, ['evidence', 0, 'text'], /string or \{ file: path \}/],
    ['a file reference with extra keys', { policy: { file: 'a.md', other: 1 } }, ['policy'], /remove 'other'/],
  ];
  for (const [name, values, path, message] of bad) {
    it(name, () => {
      let err: unknown;
      try {
        fixtureFromValues('x', values);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FixtureValueError);
      const e = err as FixtureValueError;
      expect(e.path).toEqual(path);
      expect(e.detail).toMatch(message);
      expect(e.message.startsWith(formatValuePath(path) + ': ')).toBe(true);
    });
  }

  it('refuses file references when told to', () => {
    expect(() => fixtureFromValues('x', { policy: { file: 'a.md' } }, { files: false })).toThrow(/^policy\.file: file references are not accepted/);
    expect(() => fixtureFromValues('x', { ev: [{ id: 'a', file: 'a.md' }] }, { files: false })).toThrow(/^ev\[0\]\.file: /);
    expect(() => fixtureFromValues('x', { ev: [{ text: { file: 'a.md' } }] }, { files: false })).toThrow(/^ev\[0\]\.text\.file: /);
  });

  it('refuses a cycle and a non-object', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    expect(() => fixtureFromValues('x', { o })).toThrow(/o\.self: the value contains itself/);
    expect(() => fixtureFromValues('x', [] as unknown as Record<string, unknown>)).toThrow(FixtureValueError);
  });

  it('keeps the values of slots no config declares as the template\'s data (undeclared)', () => {
    const undeclared = (slot: string) => slot !== 'evidence';
    // A list that cannot be items (a null entry, a thread turn whose content is a list of parts) is data there…
    const doc = fixtureFromValues('x', { items: [2.5, null], history: [{ role: 'user', content: [{ kind: 'text', value: 'part' }] }, { role: 'assistant', content: null }] }, { undeclared });
    expect(doc.slots.items).toMatchObject({ type: 'data', value: [2.5, null] });
    expect(doc.slots.history).toMatchObject({ type: 'data', value: [{ role: 'user', content: [{ kind: 'text', value: 'part' }] }, { role: 'assistant', content: null }] });
    // …a declared slot still refuses it, and a file reference stays refused everywhere.
    expect(() => fixtureFromValues('x', { evidence: ['a', null] }, { undeclared })).toThrow(/^evidence\[1\]: an item is empty/);
    expect(() => fixtureFromValues('x', { notes: [{ id: 'a', file: 'a.md' }, null] }, { undeclared, files: false })).toThrow(/^notes\[0\]\.file: file references are not accepted/);
    // A list that can be items is items, declared or not.
    expect(fixtureFromValues('x', { notes: ['a', 'b'] }, { undeclared }).slots.notes?.type).toBe('items');
  });

  it('takes null as a value of an undeclared slot only when told to (Prompty prints None)', () => {
    const undeclared = (slot: string) => slot !== 'question';
    expect(fixtureFromValues('x', { v: null }, { undeclared }).slots.v).toBeUndefined();
    expect(fixtureFromValues('x', { v: null }, { undeclared, nullIsValue: true }).slots.v).toMatchObject({ type: 'data', value: null });
    expect(fixtureFromValues('x', { question: null }, { undeclared, nullIsValue: true }).slots.question).toBeUndefined();
  });

  it('formats paths as a reader would write them', () => {
    expect(formatValuePath(['evidence', 2, 'relevance'])).toBe('evidence[2].relevance');
    expect(formatValuePath(['odd key', 0])).toBe('["odd key"][0]');
    expect(formatValuePath([])).toBe('(values)');
  });
});
