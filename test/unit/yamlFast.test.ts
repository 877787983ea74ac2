/**
 * The fast YAML reader (src/core/text/yamlFast.ts) against the reference, `parseYaml`: wherever
 * it reads a text, it gives the same nodes (class, range, value, written source, scalar type,
 * format, flow style) and the same plain values, and fixtures read either way are the same
 * document; wherever it cannot be sure (or the text has a problem to report) it reads nothing,
 * so the reference parse and its located diagnostics decide.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readYamlFast } from '../../src/core/text/yamlFast';
import { MAX_YAML_ENTRIES, parseYaml, toJs } from '../../src/core/text/yaml';
import { fixtureOf, parseFixture } from '../../src/core/fixture';
import type { FixtureDoc, FixtureValue } from '../../src/core/types';
import { difference } from './support/yamlNodes';

const REPO = path.resolve(__dirname, '..', '..');


/**
 * Undefined when the fast reader leaves the text to the reference or reads it exactly as the
 * reference does; otherwise what differs.
 */
function disagreement(text: string): string | undefined {
  const fast = readYamlFast(text);
  if (!fast) return undefined;
  const full = parseYaml(text);
  if (full.doc.errors.length) return `read a text the reference reports: ${full.doc.errors[0].message}`;
  const d = difference(fast.doc.contents, full.doc.contents);
  if (d) return d;
  // The fast reader's values are read without yaml's toJS (YamlSource.plain): the same values, own properties and prototypes.
  if (!isDeepStrictEqual(toJs(fast, fast.doc.contents), toJs(full, full.doc.contents))) return 'plain values differ';
  return undefined;
}

function yamlFilesUnder(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e.startsWith('.')) continue;
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) yamlFilesUnder(p, out);
    else if (/\.ya?ml$/i.test(e)) out.push(p);
  }
  return out;
}

/** A fixture of evidence items as the benches write them (block and flow styles). */
function evidenceFixture(items: number, flow: boolean): string {
  const lines = ['template: ../bench.prompt', 'slots:', '  policy: Refunds above $500 need a supervisor.', '  question: "Does SDK 4.2 retry after a 429?"', '  evidence:'];
  for (let i = 0; i < items; i++) {
    const text = `Passage ${i}: the client retries idempotent requests up to ${i % 7} times, honours Retry-After (release ${i % 13}).`;
    if (flow) lines.push(`    - { id: ev_${i}, source: kb/doc-${i % 300}, relevance: 0.${(i * 37) % 100}, text: "${text}" }`);
    else lines.push(`    - id: ev_${i}`, `      source: kb/doc-${i % 500}`, `      relevance: ${((i * 37) % 100) / 100}`, `      text: "${text}"`);
  }
  return lines.join('\n') + '\n';
}

describe('fast YAML reader', () => {
  it('reads the project’s YAML files as the reference does, or leaves them to it', () => {
    const files = [...yamlFilesUnder(path.join(REPO, 'examples')), ...yamlFilesUnder(path.join(REPO, 'test'))];
    expect(files.length).toBeGreaterThan(10);
    let read = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(disagreement(text), f).toBeUndefined();
      if (readYamlFast(text)) read++;
    }
    // Most of them are in the subset (the fixtures with block scalars are not).
    expect(read).toBeGreaterThan(files.length / 3);
  });

  it('reads the benches’ evidence fixtures, node for node', () => {
    for (const flow of [false, true]) {
      const text = evidenceFixture(300, flow);
      expect(readYamlFast(text)).toBeDefined();
      expect(disagreement(text)).toBeUndefined();
    }
  });

  it('gives the same fixture document as the reference parse', () => {
    const texts: Array<[string, string]> = [
      ['/w/fixtures/flow.fixture.yaml', evidenceFixture(50, true)],
      ['/w/fixtures/block.fixture.yaml', evidenceFixture(50, false)],
      ...yamlFilesUnder(path.join(REPO, 'examples'))
        .filter((f) => /\.fixture\.ya?ml$/.test(f))
        .map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
    ];
    for (const [p, text] of texts) expect(parseFixture(p, text), p).toEqual(fixtureOf(p, text, parseYaml(text)));
  });

  it('keeps scalars as yaml types them: numbers, booleans, nulls, written forms', () => {
    const text = [
      'a: 4.10',
      'b: 0x1F',
      'c: 0o17',
      'd: 1e3',
      'e: .nan',
      'f: -.inf',
      'g: ~',
      'h: True',
      'i: 2026-08-30',
      "j: 'it''s'",
      'k: "tab\\tand \\u00e9 and \\"q\\""',
      'l: http://example.com/a#b',
      'm: [1, two, "3", { x: null }]',
      '7: seven',
      'null: nothing',
      '__proto__: { polluted: true }',
      'toString: not inherited',
      'constructor: [1]',
      'n: a, b # comment',
      'o: "café ☕ \ud83d\ude00" # emoji',
      'p: naïve 😀',
      '',
    ].join('\n');
    expect(readYamlFast(text)).toBeDefined();
    expect(disagreement(text)).toBeUndefined();
  });

  it('reads long quoted runs and collections that end together as the reference does', () => {
    let deep = '';
    for (let i = 0; i < 30; i++) deep += `${'  '.repeat(i)}k${i}:\n`;
    deep += `${'  '.repeat(30)}v: 1\n${'\n'.repeat(500)}z: 1\n`;
    const texts = [deep, `a: '${"''".repeat(5000)}'\nb: "${'\\n'.repeat(5000)}"\n`];
    for (const text of texts) {
      expect(readYamlFast(text)).toBeDefined();
      expect(disagreement(text)).toBeUndefined();
    }
  });

  it('leaves to the reference what it is not sure of', () => {
    const unsure = [
      'a: |\n  block\n',
      'a: >-\n  folded\n',
      'a: "two\n  lines"\n',
      'a: plain\n  continued\n',
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      '---\na: 1\n',
      'a: 1\n---\nb: 2\n',
      '%YAML 1.2\n---\na: 1\n',
      'a:\tb\n',
      'a: 1\r\nb: 2\r\n',
      'a: "\\x41"\n',
      'a: 1\na: 2\n',
      '? a\n: 1\n',
      'a:\n',
      'a: b: c\n',
      'a: { b: 1, }\n',
      'a: [1, 2\n',
      '  a: 1\n',
      '{ "a": 1 }\n',
      'a: 1\n# trailing comment\n',
      'a:\n  b: 1\n# dedented comment before a deeper entry\n  c: 2\n',
      'a: 1\n b: 2\n',
      '\uFEFFa: 1\n',
      'a: "lone \ud800 surrogate"\n',
      'a: x\u2028y\n',
      '',
    ];
    for (const text of unsure) expect(readYamlFast(text), JSON.stringify(text)).toBeUndefined();
  });

  it('leaves texts near the limits to the reference, which reports them at their place', () => {
    const wide = 'slots:\n  evidence:\n' + Array.from({ length: MAX_YAML_ENTRIES + 1 }, (_, i) => `    - t${i}\n`).join('');
    expect(readYamlFast(wide)).toBeUndefined();
    const doc = parseFixture('/w/wide.fixture.yaml', wide);
    const limit = doc.findings.find((f) => f.rule === 'fixture-invalid' && /entries/.test(f.message));
    expect(limit?.span.start).toBeGreaterThan(0);
    let deep = 'slots:\n';
    for (let i = 0; i < 70; i++) deep += `${'  '.repeat(i + 1)}k${i}:\n`;
    deep += `${'  '.repeat(71)}v: 1\n`;
    expect(readYamlFast(deep)).toBeUndefined();
    expect(parseFixture('/w/deep.fixture.yaml', deep).findings.some((f) => /nests deeper/.test(f.message))).toBe(true);
  });

  it('gives item texts that do not keep the parser’s buffers alive, from either reader', () => {
    // V8 keeps a slice of 13 characters or more as a view into its parent; the readers copy, so a
    // cache that keeps an item's text keeps that text only. Measured with full collections.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const text = evidenceFixture(6000, false);
    const held = (read: () => FixtureDoc): number => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const texts = (read().slots.evidence as Extract<FixtureValue, { type: 'items' }>).items.map((i) => i.text);
      gc();
      const after = process.memoryUsage().heapUsed;
      expect(texts).toHaveLength(6000);
      return after - before;
    };
    // The item texts themselves are about 0.7 MB; the reference's token buffers were over 20 MB.
    expect(held(() => parseFixture('/w/f.fixture.yaml', text))).toBeLessThan(4 * 1024 * 1024);
    expect(held(() => fixtureOf('/w/f.fixture.yaml', text, parseYaml(text)))).toBeLessThan(4 * 1024 * 1024);
  });

  // Generated documents in and around the subset, some with one character changed: wherever the
  // fast reader reads one, the reference reads it without errors and to the same nodes.
  const plain = fc.constantFrom(
    'hello', 'a b c', '4.10', '42', '-7', '0x1F', '1e3', '.5', 'true', 'False', 'null', '~', '.nan', '2026-08-30', 'http://x.y/z', 'a:b', 'a#b', 'x, y', 'x]', "it's",
    '-x', '?x', ':x', 'a: b', 'a #c', '- x', '%x', '@x', '*a', '&a', '!t', '|', '>', '[x', '{x', 'é ü', '12:30', '0o17', '+1', '1_000',
  );
  const quoted = fc.constantFrom('"q"', '"a\\nb"', '"t\\tu"', '"\\u00e9"', '"\\x41"', '"a \\" b"', "'s'", "'it''s'", "''", '""', '"# not a comment"', '"a: b"');
  const scalar = fc.oneof(plain, quoted);
  const key = fc.oneof(fc.constantFrom('id', 'text', 'source', 'name', 'a b', '1', 'true', 'null', 'k-1', '$schema', 'x.y'), quoted);
  type Collection = { kind: 'map' | 'seq' | 'flowmap' | 'flowseq'; entries: Array<[string, Tree]> };
  type Tree = { kind: 'scalar'; text: string } | Collection;
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar.map((text): Tree => ({ kind: 'scalar', text })),
      fc.record({ kind: fc.constantFrom('map' as const, 'seq' as const, 'flowmap' as const, 'flowseq' as const), entries: fc.array(fc.tuple(key, tie('node')), { minLength: 1, maxLength: 4 }) }),
    ),
  })).node;
  const style = fc.record({ comment: fc.boolean(), blank: fc.boolean(), trailing: fc.boolean(), seqAtKey: fc.boolean(), spaces: fc.constantFrom(' ', '  ') });
  type Style = { comment: boolean; blank: boolean; trailing: boolean; seqAtKey: boolean; spaces: string };

  function flow(t: Tree, s: Style): string {
    if (t.kind === 'scalar') return t.text;
    if (t.kind === 'map' || t.kind === 'flowmap') return `{${s.spaces}${t.entries.map(([k, v]) => `${k}: ${flow(v, s)}`).join(`,${s.spaces}`)}${s.spaces}}`;
    return `[${t.entries.map(([, v]) => flow(v, s)).join(', ')}]`;
  }
  function block(t: Collection, indent: number, s: Style): string[] {
    const pad = ' '.repeat(indent);
    const lines: string[] = [];
    t.entries.forEach(([k, v], i) => {
      if (s.blank && i > 0) lines.push('');
      if (s.comment && i === 1) lines.push(`${pad}# note ${k}`);
      const end = s.trailing && i === 0 ? '  # trailing' : '';
      const head = t.kind === 'seq' ? `${pad}-` : `${pad}${k}:`;
      if (v.kind === 'scalar' || v.kind === 'flowmap' || v.kind === 'flowseq') lines.push(`${head} ${flow(v, s)}${end}`);
      else if (t.kind === 'seq' && v.kind === 'map') {
        const inner = block(v, indent + 2, s);
        lines.push(`${pad}- ${inner[0].slice(indent + 2)}`, ...inner.slice(1));
      } else {
        lines.push(head);
        lines.push(...block(v, v.kind === 'seq' && s.seqAtKey && t.kind === 'map' ? indent : indent + 2, s));
      }
    });
    return lines;
  }
  const doc = fc.tuple(fc.array(fc.tuple(key, tree), { minLength: 1, maxLength: 4 }), style).map(([entries, s]) => block({ kind: 'map', entries }, 0, s).join('\n') + '\n');

  it('agrees with the reference on generated documents', () => {
    let read = 0;
    fc.assert(
      fc.property(doc, (text) => {
        expect(disagreement(text), text).toBeUndefined();
        if (readYamlFast(text)) read++;
      }),
      { numRuns: 1500 },
    );
    // The generator stays mostly inside the subset, so the comparison is not vacuous.
    expect(read).toBeGreaterThan(300);
  });

  it('agrees with the reference on generated documents with one character changed', () => {
    let read = 0;
    const edit = fc.tuple(doc, fc.nat(), fc.constantFrom('', ' ', '\n', ':', '-', '#', '"', "'", '{', '}', '[', ']', ',', '\\', '\t', 'x', '  '), fc.boolean());
    fc.assert(
      fc.property(edit, ([text, at, insert, replace]) => {
        const p = at % (text.length + 1);
        const changed = text.slice(0, p) + insert + text.slice(replace ? p + 1 : p);
        expect(disagreement(changed), changed).toBeUndefined();
        if (readYamlFast(changed)) read++;
      }),
      { numRuns: 3000 },
    );
    expect(read).toBeGreaterThan(300);
  });
});
