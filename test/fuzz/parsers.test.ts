/**
 * Fuzz properties of the parsers and the engines (issue 12): configs, fixtures and templates of
 * both formats parse without throwing and every finding lies inside the text it points at, in
 * offsets and in LSP positions, whatever the line endings; the engines render or say why, at a
 * span inside their source, and never touch the prototypes of the values they are given.
 */
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { parseConfig } from '../../src/core/config/parse';
import { renderDotprompt } from '../../src/core/language/dotprompt/engine';
import { renderPrompty } from '../../src/core/language/prompty/engine';
import { parseFixture } from '../../src/core/fixture';
import { parseTemplate } from '../../src/core/language';
import { LineIndex } from '../../src/core/text/lineIndex';
import type { Finding } from '../../src/core/types';
import { LINE_BREAKS, aliasBomb, hugeLine, anchoredConfig, buildWorkspace, dataValue, fragment, hostileText, mutate, mutation, nestedYaml, workspaceSpec } from './arbitraries';
import { fuzz } from './harness';
import { findingProblems, isCrash, lspLines, positionProblem, spanProblem } from './support';

function expectLocated(findings: readonly Finding[], path: string, text: string): void {
  const problems = findingProblems(findings, { [path]: text });
  expect(problems, problems.join('\n')).toEqual([]);
  for (const f of findings) expect(isCrash(f), `${f.rule}: a crash reported as a finding: ${f.message}`).toBe(false);
}

/** A generated workspace's files of one kind, with more damage on top. */
const damaged = (pick: (ws: ReturnType<typeof buildWorkspace>) => string | undefined) =>
  fc.tuple(workspaceSpec(), fc.array(mutation, { maxLength: 4 })).map(([spec, ms]) => {
    const ws = buildWorkspace(spec);
    const path = pick(ws) ?? ws.template;
    return { path, text: ms.reduce(mutate, ws.files[path]) };
  });

const prototypesIntact = () => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(OBJECT_PROTO);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Array.prototype).length).toBe(ARRAY_PROTO);
};
const OBJECT_PROTO = Object.getOwnPropertyNames(Object.prototype).sort();
const ARRAY_PROTO = Object.getOwnPropertyNames(Array.prototype).length;

describe('parsers', () => {
  fuzz(
    'parsers/config-yaml',
    fc.oneof({ arbitrary: damaged((ws) => ws.config).map((x) => x.text), weight: 5 }, { arbitrary: hostileText, weight: 2 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 300 }), weight: 1 }, { arbitrary: hugeLine.map((l) => `slots:\n  q: { kind: user, label: ${l} }\n# ${l}\n`), weight: 1 }),
    (text) => {
      const doc = parseConfig('/ws/a.context.yaml', text);
      expectLocated(doc.findings, '/ws/a.context.yaml', text);
      // Spans handed out for keys and values lie inside the text too.
      for (const p of [['model'], ['window'], ['slots'], ['fixtures']] as const) {
        for (const s of [doc.keySpan([...p]), doc.valueSpan([...p])]) if (s) expect(spanProblem(s, text)).toBeUndefined();
      }
    },
    { minRuns: 200 },
  );

  fuzz(
    'parsers/fixture',
    fc.oneof({ arbitrary: damaged((ws) => ws.fixture), weight: 5 }, { arbitrary: hostileText.map((text) => ({ path: '/ws/f/a.fixture.yaml', text })), weight: 2 }, { arbitrary: hugeLine.map((l) => ({ path: '/ws/f/a.fixture.yaml', text: `slots:\n  q: ${l}\n  ${l}: x\n` })), weight: 1 }, { arbitrary: hostileText.map((text) => ({ path: '/ws/f/a.fixture.json', text: `{"slots": {"q": ${JSON.stringify(text)}}, ${text}` })), weight: 1 }),
    ({ path, text }) => {
      const doc = parseFixture(path, text);
      expectLocated(doc.findings, path, text);
      for (const v of Object.values(doc.slots)) {
        expect(spanProblem(v.span, text)).toBeUndefined();
        if (v.type === 'items') for (const it of v.items) for (const s of [it.span, it.textSpan]) expect(spanProblem(s, text), JSON.stringify(it)).toBeUndefined();
      }
      for (const s of Object.values(doc.slotKeySpans)) expect(spanProblem(s, text)).toBeUndefined();
    },
    { minRuns: 200 },
  );

  fuzz(
    'parsers/yaml-nesting-aliases',
    fc.tuple(fc.oneof(nestedYaml, aliasBomb, anchoredConfig), fc.constantFrom('config', 'fixture'), fc.array(mutation, { maxLength: 2 })).map(([t, kind, ms]) => ({ kind, text: ms.reduce(mutate, t) })),
    ({ kind, text }) => {
      const path = kind === 'config' ? '/ws/a.context.yaml' : '/ws/a.fixture.yaml';
      const findings = kind === 'config' ? parseConfig(path, text).findings : parseFixture(path, text).findings;
      expectLocated(findings, path, text);
    },
    { minRuns: 100 },
  );

  fuzz(
    'parsers/line-endings',
    fc.tuple(workspaceSpec({ mutations: false }), fc.constantFrom(...LINE_BREAKS), fc.nat(), fc.array(fc.nat(), { maxLength: 8 })).map(([spec, eol, which, offsets]) => {
      const ws = buildWorkspace(spec);
      const paths = [ws.template, ws.config, ws.fixture].filter((p): p is string => p !== undefined && ws.files[p] !== undefined);
      const path = paths[which % paths.length];
      return { path, text: ws.files[path].replace(/\n/g, eol), offsets };
    }),
    ({ path, text, offsets }) => {
      const findings = path.endsWith('.context.yaml') ? parseConfig(path, text).findings : /\.fixture\./.test(path) ? parseFixture(path, text).findings : parseTemplate(path, text).findings;
      expectLocated(findings, path, text);
      // Any offset, not only the ones findings use: LineIndex agrees with the LSP text document.
      const index = new LineIndex(text);
      const doc = TextDocument.create('file:///x', 'plaintext', 0, text);
      const lines = lspLines(text);
      for (const o of [...offsets.map((n) => n % (text.length + 1)), text.length, 0]) expect(positionProblem(text, o, index, doc, lines)).toBeUndefined();
    },
    { minRuns: 100 },
  );

  for (const format of ['prompt', 'prompty'] as const) {
    fuzz(
      `parsers/template-${format === 'prompt' ? 'dotprompt' : 'prompty'}`,
      fc.oneof(
        { arbitrary: fc.tuple(workspaceSpec().map((s) => ({ ...s, format })), fc.array(mutation, { maxLength: 3 })).map(([s, ms]) => ms.reduce(mutate, buildWorkspace(s).files[`/ws/${s.name}.${format}`])), weight: 5 },
        { arbitrary: fc.array(fragment, { maxLength: 30 }).map((a) => `---\nmodel: gpt-4o\n---\n${a.join('')}`), weight: 2 },
        { arbitrary: hostileText, weight: 1 },
        { arbitrary: hugeLine.map((l) => `---\nmodel: gpt-4o\n---\n${l}\n{{q}}${l}`), weight: 1 },
      ),
      (text) => {
        const path = `/ws/a.${format}`;
        const doc = parseTemplate(path, text);
        expectLocated(doc.findings, path, text);
        for (const u of doc.uses) expect(spanProblem(u.span, text), `use of ${u.slot}`).toBeUndefined();
        for (const m of doc.messages) expect(spanProblem(m.span, text)).toBeUndefined();
      },
      { minRuns: 150 },
    );
  }
});

describe('engines', () => {
  const data = fc.dictionary(fc.constantFrom('question', 'evidence', 'history', 'x', 'b', 'p', '__proto__', 'constructor', 'toString'), dataValue, { maxKeys: 5 });
  const source = (format: 'prompt' | 'prompty') =>
    fc.oneof(
      { arbitrary: workspaceSpec().map((s) => buildWorkspace({ ...s, format, rawText: true }).files[`/ws/${s.name}.${format}`]), weight: 3 },
      { arbitrary: fc.array(fragment, { maxLength: 30 }).map((a) => (format === 'prompt' ? `---\nmodel: x\n---\n${a.join('')}` : `---\nname: x\n---\nsystem:\n${a.join('')}`)), weight: 2 },
    );

  fuzz(
    'engine/dotprompt-render',
    fc.record({ source: source('prompt'), input: data, context: fc.dictionary(fc.constantFrom('state', 'auth', 'metadata', '__proto__'), dataValue, { maxKeys: 2 }), partial: hostileText }),
    ({ source, input, context, partial }) => {
      const r = renderDotprompt(source, { input: input as Record<string, unknown>, context: context as Record<string, unknown> }, { partials: { p: partial, _tone: partial } });
      for (const i of r.issues) {
        expect(spanProblem(i.span, source), i.message).toBeUndefined();
        expect(isCrash(i), i.message).toBe(false);
      }
      for (const m of r.messages) expect(typeof m.role).toBe('string');
      prototypesIntact();
    },
    { minRuns: 150 },
  );

  fuzz(
    'engine/prompty-render',
    fc.record({ source: source('prompty'), input: data, include: hostileText, mustache: fc.boolean() }),
    ({ source, input, include, mustache }) => {
      const r = renderPrompty(source, input as Record<string, unknown>, { templates: { 'x.prompty': include, x: include }, ...(mustache ? { templateType: 'mustache' as const } : {}) });
      for (const i of r.issues) {
        expect(spanProblem(i.span, source), i.message).toBeUndefined();
        expect(isCrash(i), i.message).toBe(false);
      }
      prototypesIntact();
    },
    { minRuns: 150 },
  );
});
