/**
 * Fixtures (`*.fixture.yaml` / `*.fixture.json`): slot values as strings, `{ file }` references
 * and typed item lists with spans; malformed fixtures give fixture-invalid findings at the node;
 * file references resolve inside the workspace only, with a size limit, through the FileHost.
 */
import { describe, expect, it } from 'vitest';
import { parseFixture, resolveFixtureFiles } from '../../src/core/fixture';
import type { FileHost } from '../../src/core/host';
import type { FixtureDoc, FixtureItem, Span } from '../../src/core/types';
import { at } from './support/spans';

const found = (doc: FixtureDoc) => doc.findings.map((f) => [f.rule, doc.text.slice(f.span.start, f.span.end), f.message]);

/** An in-memory workspace that records every read, so tests can prove a file was never read. */
class MemoryHost implements FileHost {
  readonly reads: string[] = [];
  constructor(
    readonly roots: string[],
    private readonly files: Record<string, string>,
  ) {}
  readFile(path: string): string | undefined {
    this.reads.push(path);
    return this.files[path];
  }
  size(path: string): number | undefined {
    const t = this.files[path];
    return t === undefined ? undefined : new TextEncoder().encode(t).length;
  }
  glob(): string[] {
    return [];
  }
}

const RETRY = `template: ../support.prompt     # optional
slots:
  question: Does SDK 4.2 retry requests after a rate-limit response?
  policy: { file: ../policy/support-v3.md }
  history:
    - { role: user, text: "My POSTs fail with 429.", at: "2026-08-01T10:00:00Z" }
    - role: assistant
      text: |
        Which SDK version do you use?
      at: 2026-08-01T10:01:00Z
  evidence:
    - { id: ev_0192, source: sdk-docs/retries, source_type: official_documentation, version: "4.2", authority: 0.95, relevance: 0.91, text: "SDK 4.2 retries 429 responses." }
    - { id: ev_0031, version: 4.10, authority: "0.4", relevance: 1, published_at: 2024-01-05, tags: [old, docs], text: { file: ../docs/old.md } }
    - A bare string item.
`;

describe('parseFixture: YAML', () => {
  const doc = parseFixture('/w/fixtures/retry.fixture.yaml', RETRY);

  it('reads template, name and slot key spans', () => {
    expect(doc.findings).toEqual([]);
    expect(doc.name).toBe('retry');
    expect(doc.template).toEqual({ value: '../support.prompt', span: at(RETRY, '../support.prompt') });
    expect(Object.keys(doc.slots)).toEqual(['question', 'policy', 'history', 'evidence']);
    expect(doc.slotKeySpans.evidence).toEqual(at(RETRY, 'evidence'));
  });

  it('reads a string slot and an unresolved file reference', () => {
    expect(doc.slots.question).toEqual({ type: 'text', text: 'Does SDK 4.2 retry requests after a rate-limit response?', span: at(RETRY, 'Does SDK 4.2 retry requests after a rate-limit response?') });
    expect(doc.slots.policy).toEqual({ type: 'text', text: '', span: at(RETRY, '{ file: ../policy/support-v3.md }'), fileRef: { value: '../policy/support-v3.md', span: at(RETRY, '../policy/support-v3.md') } });
  });

  it('types history items; block scalars and timestamps stay strings', () => {
    const h = doc.slots.history;
    if (h.type !== 'items') throw new Error('items expected');
    expect(h.items.map((i) => [i.index, i.role, i.text, i.at])).toEqual([
      [0, 'user', 'My POSTs fail with 429.', '2026-08-01T10:00:00Z'],
      [1, 'assistant', 'Which SDK version do you use?\n', '2026-08-01T10:01:00Z'],
    ]);
    expect(RETRY.slice(h.items[0].span.start, h.items[0].span.end)).toBe('{ role: user, text: "My POSTs fail with 429.", at: "2026-08-01T10:00:00Z" }');
    expect(RETRY.slice(h.items[0].textSpan.start, h.items[0].textSpan.end)).toBe('"My POSTs fail with 429."');
  });

  it('types evidence items: numbers coerced, version as written, unknown keys in meta', () => {
    const e = doc.slots.evidence;
    if (e.type !== 'items') throw new Error('items expected');
    const [a, b, c] = e.items;
    expect(a).toMatchObject({ index: 0, id: 'ev_0192', source: 'sdk-docs/retries', source_type: 'official_documentation', version: '4.2', authority: 0.95, relevance: 0.91, text: 'SDK 4.2 retries 429 responses.', meta: {} });
    expect(b).toMatchObject({ index: 1, id: 'ev_0031', version: '4.10', authority: 0.4, relevance: 1, published_at: '2024-01-05', text: '', meta: { tags: ['old', 'docs'] } });
    expect(b.fileRef).toEqual({ value: '../docs/old.md', span: at(RETRY, '../docs/old.md') });
    expect(RETRY.slice(b.textSpan.start, b.textSpan.end)).toBe('{ file: ../docs/old.md }');
    expect(c).toEqual<FixtureItem>({ index: 2, text: 'A bare string item.', meta: {}, span: at(RETRY, 'A bare string item.'), textSpan: at(RETRY, 'A bare string item.') });
  });
});

describe('parseFixture: JSON', () => {
  const JSON_TEXT = '{\n\t"name": "Rate limit",\n\t"slots": {\n\t\t"question": "Retry?",\n\t\t"evidence": [\n\t\t\t{"id": "ev_1", "version": "4.2", "authority": 0.9, "text": "Yes."},\n\t\t\t{"id": 7, "text": {"file": "../docs/a.md"}, "score": null}\n\t\t]\n\t}\n}\n';
  const doc = parseFixture('/w/fixtures/rate.fixture.json', JSON_TEXT);

  it('parses JSON (with tabs) keeping ranges', () => {
    expect(doc.findings).toEqual([]);
    expect(doc.name).toBe('Rate limit');
    expect(doc.slots.question).toEqual({ type: 'text', text: 'Retry?', span: at(JSON_TEXT, '"Retry?"') });
    const e = doc.slots.evidence;
    if (e.type !== 'items') throw new Error('items expected');
    expect(e.items[0]).toMatchObject({ id: 'ev_1', version: '4.2', authority: 0.9, text: 'Yes.' });
    expect(e.items[1]).toMatchObject({ id: '7', text: '', meta: { score: null }, fileRef: { value: '../docs/a.md', span: at(JSON_TEXT, '"../docs/a.md"') } });
    expect(doc.slotKeySpans.evidence).toEqual(at(JSON_TEXT, '"evidence"'));
  });

  it('reports a JSON syntax error at its position', () => {
    const bad = '{\n  "slots": {\n    "q": "x",\n  }\n  "extra": 1\n}\n';
    const d = parseFixture('/w/b.fixture.json', bad);
    expect(d.findings.length).toBeGreaterThan(0);
    expect(d.findings.every((f) => f.rule === 'fixture-invalid')).toBe(true);
    expect(d.findings[0].span.start).toBeGreaterThanOrEqual(bad.indexOf('}'));
  });
});

describe('parseFixture: problems at the node', () => {
  const cases: Array<{ name: string; text: string; findings: Array<[string, RegExp]>; check?: (d: FixtureDoc) => void }> = [
    {
      name: 'an item without text',
      text: 'slots:\n  evidence:\n    - { id: ev_1, source: docs }\n    - { id: ev_2, text: ok }\n',
      findings: [['{ id: ev_1, source: docs }', /Item 0 \(ev_1\) has no text/]],
      check: (d) => expect(d.slots.evidence.type === 'items' && d.slots.evidence.items.length).toBe(2),
    },
    {
      name: 'bad numbers and roles',
      text: 'slots:\n  history:\n    - { role: boss, text: hi, authority: high }\n',
      findings: [
        ['boss', /role should be one of system, developer, user, assistant, tool; got 'boss'/],
        ['high', /authority should be a number such as 0\.8; got 'high'/],
      ],
      check: (d) => {
        const h = d.slots.history;
        expect(h.type === 'items' && h.items[0].role).toBeUndefined();
        expect(h.type === 'items' && h.items[0].text).toBe('hi');
      },
    },
    {
      name: 'model role is the assistant; content is an alias of text',
      text: 'slots:\n  history:\n    - { role: model, content: earlier answer }\n',
      findings: [],
      check: (d) => expect(d.slots.history.type === 'items' && d.slots.history.items[0]).toMatchObject({ role: 'assistant', text: 'earlier answer' }),
    },
    {
      name: 'a mapping without file: or text: is a structured value, typed as written',
      text: 'slots:\n  policy: { path: a.md, n: 0, on: false }\n  question: fine\n  show: false\n  tags: [{ k: 1 }]\n',
      findings: [],
      check: (d) => {
        expect(Object.keys(d.slots)).toEqual(['policy', 'question', 'show', 'tags']);
        expect(d.slots.policy).toMatchObject({ type: 'data', value: { path: 'a.md', n: 0, on: false } });
        expect(d.slots.show).toMatchObject({ type: 'data', value: false });
        expect(d.slots.tags).toMatchObject({ type: 'data', value: [{ k: 1 }] });
      },
    },
    {
      name: 'a malformed file reference',
      text: 'slots:\n  policy: { file: 42, extra: 1 }\n',
      findings: [
        ['42', /file: expected a path relative to this fixture/],
        ['extra', /Unknown key 'extra' next to file:/],
      ],
    },
    {
      name: 'an empty slot is no value, but its key is known',
      text: 'slots:\n  question:\n  policy: text\n',
      findings: [],
      check: (d) => {
        expect(Object.keys(d.slots)).toEqual(['policy']);
        expect(d.slotKeySpans.question).toEqual(at(d.text, 'question'));
      },
    },
    {
      name: 'unknown top-level key with a suggestion, and a non-string template',
      text: 'slot:\n  q: x\ntemplate: [a]\n',
      findings: [
        ['', /no slots: mapping/],
        ['slot', /Unknown key 'slot' in a fixture: did you mean 'slots'\?/],
        ['[a]', /template: expected a string/],
      ],
    },
    {
      name: 'slots that are not a mapping',
      text: 'slots: [a, b]\n',
      findings: [['[a, b]', /slots: expected a mapping/]],
    },
    {
      name: 'a file that is not a mapping',
      text: '- just\n- a list\n',
      findings: [['- just\n- a list', /A fixture is a mapping with a slots: key/]],
    },
    {
      name: 'an empty file',
      text: '',
      findings: [['', /A fixture is a mapping with a slots: key/]],
    },
    {
      name: 'an item that is a list',
      text: 'slots:\n  e:\n    - [a, b]\n    - null\n',
      findings: [
        ['[a, b]', /Item 0: expected a string or a mapping/],
        ['null', /Item 1 is empty/],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseFixture('/w/f.fixture.yaml', c.text);
      const got = found(d);
      expect(got.map((g) => [g[0], g[1]])).toEqual(c.findings.map(([s]) => ['fixture-invalid', s]));
      c.findings.forEach(([, m], k) => expect(got[k][2]).toMatch(m));
      c.check?.(d);
    });
  }
});

describe('resolveFixtureFiles', () => {
  const FIX = `slots:
  policy: { file: ../policy/support-v3.md }
  secret: { file: ../../etc/passwd }
  abs: { file: /etc/passwd }
  missing: { file: ../policy/nope.md }
  big: { file: big.txt }
  evidence:
    - { id: a, text: { file: ../docs/a.md } }
    - { id: b, file: ..\\docs\\b.md }
    - { id: c, text: { file: ../docs/a.md } }
`;
  const files = {
    '/ws/policy/support-v3.md': '\uFEFFBe helpful.\n',
    '/ws/docs/a.md': 'Doc A',
    '/ws/docs/b.md': 'Doc B',
    '/ws/fixtures/big.txt': 'x'.repeat(2000),
    '/etc/passwd': 'root:x:0:0',
  };

  it('reads references inside the workspace and reports the rest at the reference, never reading them', () => {
    const host = new MemoryHost(['/ws'], files);
    const doc = parseFixture('/ws/fixtures/r.fixture.yaml', FIX);
    expect(doc.findings).toEqual([]);
    const { doc: out, dependencies } = resolveFixtureFiles(doc, host, { maxBytes: 1000 });

    expect(out.slots.policy).toMatchObject({ type: 'text', text: 'Be helpful.\n', file: '/ws/policy/support-v3.md' });
    const ev = out.slots.evidence;
    if (ev.type !== 'items') throw new Error('items expected');
    expect(ev.items.map((i) => [i.text, i.file])).toEqual([
      ['Doc A', '/ws/docs/a.md'],
      ['Doc B', '/ws/docs/b.md'],
      ['Doc A', '/ws/docs/a.md'],
    ]);

    expect(found(out)).toEqual([
      ['file-reference', '../../etc/passwd', "File reference '../../etc/passwd': '../../etc/passwd' resolves to /etc/passwd, outside the workspace."],
      ['file-reference', '/etc/passwd', "File reference '/etc/passwd': '/etc/passwd' is an absolute path; write it relative to r.fixture.yaml so it stays inside the workspace."],
      ['file-reference', '../policy/nope.md', "File reference '../policy/nope.md': /ws/policy/nope.md does not exist."],
      ['file-reference', 'big.txt', "File reference 'big.txt' is 2,000 bytes, over the 1,000-byte limit; it is not read."],
    ]);
    for (const f of out.findings) expect(f.severity).toBe('error');
    expect(out.slots.secret).toMatchObject({ text: '' });
    expect((out.slots.secret as { file?: string }).file).toBeUndefined();

    // Escaping, absolute, missing and oversized files are never read; a file used twice is read once.
    expect(host.reads.sort()).toEqual(['/ws/docs/a.md', '/ws/docs/b.md', '/ws/policy/support-v3.md']);
    expect(dependencies).toEqual(['/ws/policy/support-v3.md', '/ws/policy/nope.md', '/ws/fixtures/big.txt', '/ws/docs/a.md', '/ws/docs/b.md']);

    // The input document is left as it was.
    expect(doc.slots.policy).toMatchObject({ text: '' });
    expect(doc.findings).toEqual([]);
  });

  it('uses a 5 MB limit by default and accepts any workspace root', () => {
    const host = new MemoryHost(['/other', '/ws'], { '/ws/docs/a.md': 'A'.repeat(6 * 1024 * 1024), '/other/x.md': 'X' });
    const doc = parseFixture('/ws/f.fixture.yaml', 'slots:\n  a: { file: docs/a.md }\n  b: { file: ../other/x.md }\n');
    const out = resolveFixtureFiles(doc, host).doc;
    expect(found(out).map((f) => f[2])).toEqual(["File reference 'docs/a.md' is 6,291,456 bytes, over the 5,242,880-byte limit; it is not read."]);
    expect(out.slots.b).toMatchObject({ text: 'X', file: '/other/x.md' });
  });
});
