/**
 * Fuzz properties of the whole analysis (issue 12), on generated workspaces in memory: a template,
 * its context config, a fixture and referenced files, mostly well-formed, with hostile text in
 * every value and occasional damage. The analysis never throws; every finding is located inside
 * its file; the same inputs give the same trace again (with every cache warm); the request's
 * token count is a recount of its messages with the reference tokenizer; untrusted text never
 * forges an envelope, a template wrapper or a message; planted secrets never appear in a finding
 * or the trace beyond the redacted prefix.
 */
import fc from 'fast-check';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { afterAll, describe, expect } from 'vitest';
import { analyzeFile, analyzeTemplate, checkFiles, classifyFile, type TemplateAnalysis } from '../../src/core/analyze';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { codePointCount } from '../../src/core/tokens';
import { buildWorkspace, leaksSecret, secret, textWithSecret, workspace, workspaceSpec, type PlantedSecret, type Workspace } from './arbitraries';
import { fuzz, noteKnown } from './harness';
import { MemoryHost, isCrash, findingProblems, findingTexts, forbiddenSequences, forgery, untrustedPieces } from './support';

const analyze = (ws: Workspace): TemplateAnalysis | undefined => analyzeTemplate(new MemoryHost([ws.root], ws.files), ws.template);

describe('analysis', () => {
  fuzz(
    'analysis/workspace',
    workspace(),
    (ws) => {
      const host = new MemoryHost([ws.root], ws.files);
      const a = analyzeTemplate(host, ws.template);
      expect(a, 'a template that exists is analysed').toBeDefined();
      const all = [...a!.findings];
      const check = checkFiles(host, Object.keys(ws.files));
      for (const list of check.values()) all.push(...list);
      for (const path of Object.keys(ws.files)) if (classifyFile(path)) all.push(...(analyzeFile(host, path)?.findings ?? []));
      const problems = findingProblems(all, ws.files);
      expect(problems, problems.join('\n')).toEqual([]);
      for (const f of all) expect(isCrash(f), `${f.rule}: a crash reported as a finding: ${f.message}`).toBe(false);
      const asm = a!.assembly!;
      for (const m of asm.messages) expect(m.parts.map((p) => p.text).join(''), 'a message is its parts').toBe(m.content);
      // Deterministic, caches and all: a second analysis of the same files is the same.
      const again = analyzeTemplate(new MemoryHost([ws.root], { ...ws.files }), ws.template)!;
      expect(JSON.stringify(again.assembly!.trace)).toBe(JSON.stringify(asm.trace));
      expect(JSON.stringify(again.findings)).toBe(JSON.stringify(a!.findings));
    },
    { minRuns: 60 },
  );

  const oracles = new Map<string, Tiktoken>();
  afterAll(() => {
    for (const o of oracles.values()) o.free();
  });
  const reference = (name: string): ((text: string) => number) | undefined => {
    if (name === 'chars4') return (t) => Math.floor((codePointCount(t) + 3) / 4);
    if (!['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'].includes(name)) return undefined;
    let o = oracles.get(name);
    if (!o) {
      o = get_encoding(name as 'o200k_base');
      oracles.set(name, o);
    }
    const enc = o;
    return (t) => enc.encode_ordinary(t).length;
  };

  fuzz(
    'analysis/token-recount',
    workspace({ mutations: false, models: ['gpt-4o', 'gpt-4', 'gpt-3.5-turbo', 'o3-mini', 'claude-3-5-sonnet-latest'], tokenizers: [undefined, undefined, 'o200k_base', 'cl100k_base', 'p50k_base', 'chars4'] }),
    (ws) => {
      const a = analyze(ws)!;
      const asm = a.assembly!;
      if (!asm.ok) return;
      const count = reference(asm.trace.tokenizer);
      if (!count) return;
      const config = a.config?.doc.config ?? a.zeroConfig?.config ?? ContextConfigSchema.parse({});
      const perMessage = config.overhead?.message ?? a.model?.messageOverhead ?? 0;
      const perRequest = config.overhead?.request ?? a.model?.requestOverhead ?? 0;
      const recount = perRequest + asm.messages.reduce((n, m) => n + perMessage + count(m.content), 0);
      // When the marks change what the runtime renders, the request is the unmarked render, counted as
      // sent (render.ts reports attribution-lost): in every case the count is the messages' own.
      expect(asm.trace.input_tokens, `${asm.trace.tokenizer}: ${asm.messages.length} messages`).toBe(recount);
    },
    { minRuns: 60 },
  );

  fuzz(
    'analysis/delimiters',
    workspace({ mutations: false, bindings: ['sibling', 'front-matter'] }),
    (ws) => {
      const a = analyze(ws)!;
      const asm = a.assembly!;
      if (!asm.ok || a.zeroConfig) return;
      const slots = a.config?.doc.config?.slots ?? {};
      const labels = new Map<string, { label: string; envelope: 'bracket' | 'xml' }>();
      for (const [name, s] of Object.entries(slots)) if (s?.label) labels.set(name, { label: s.label, envelope: s.envelope ?? 'bracket' });
      const delimiters = [...new Set([...[...labels.values()].map((l) => l.label), ...ws.wrappers, ...a.template.uses.flatMap((u) => (u.delimiter ? [u.delimiter] : []))])];
      const forbidden = forbiddenSequences(delimiters);
      for (const piece of untrustedPieces(asm.messages, labels)) {
        const bad = forgery(piece, asm.messages[piece.message].content, forbidden);
        // Known: Prompty turns ![alt](url) in untrusted text into an image part, which cuts its envelope (see the fuzz report).
        if (bad !== undefined && ws.spec.format === 'prompty' && asm.messages[piece.message].parts.some((p) => p.media) && fixtureTexts(a).some((t) => t.includes('!['))) {
          noteKnown('prompty-image-from-untrusted-text');
          continue;
        }
        // Known: a list of a slot the config does not declare reaches the engine as written, unescaped (see the fuzz report).
        if (bad !== undefined && piece.slot !== undefined && !(piece.slot in slots) && a.fixture?.slots[piece.slot]?.type === 'items') {
          noteKnown('undeclared-slot-list-not-neutralised');
          continue;
        }
        expect(bad, `untrusted text of ${piece.slot}${piece.itemId ? ` (${piece.itemId})` : ''} carries ${JSON.stringify(bad)} into message ${piece.message}: ${JSON.stringify(piece.text.slice(0, 300))}`).toBeUndefined();
      }
      // Every message starts with template text (the generator writes some after each role line),
      // unless it is a history turn: a message that starts with untrusted text was forged by it.
      const kindOf = (slot: string | undefined) => (slot === undefined ? undefined : slots[slot]?.kind);
      asm.messages.forEach((m, i) => {
        const first = m.parts.find((p) => p.text.trim() !== '' || p.media);
        if (!first || !first.untrusted || kindOf(first.slot) === 'history') return;
        expect.fail(`message ${i} (${m.role}) starts with untrusted text of ${first.slot}: ${JSON.stringify(first.text.slice(0, 200))}`);
      });
      // Text that reached the request with a delimiter or role marker was reported.
      const off = a.config?.doc.config?.rules?.['delimiter-breakout'] === 'off';
      if (!off && (asm.trace.neutralised ?? []).some((n) => !n.field)) expect(a.findings.map((f) => f.rule)).toContain('delimiter-breakout');
    },
    { minRuns: 60 },
  );

  /** Every text value of the active fixture (slot texts, item texts and fields). */
  function fixtureTexts(a: TemplateAnalysis): string[] {
    const out: string[] = [];
    for (const v of Object.values(a.fixture?.slots ?? {})) {
      if (v.type === 'text') out.push(v.text);
      else if (v.type === 'items') for (const it of v.items) out.push(it.text, ...[it.title, it.source, it.id].filter((x): x is string => typeof x === 'string'));
    }
    return out;
  }

  /** Trace fields that hold metadata as the fixture or config wrote it: ids, sources, claims, the model, the policy version. */
  const TRACE_ECHOES = /^(?:model|policy_version|(?:retained|omitted)\[\d+\]\.(?:id|source|merged\[\d+\])|citation_map(?:\.[^.]*)?(?:\.(?:source|sources\[\d+\]|summary_of\[\d+\]|resolves_to\[\d+\]\.(?:id|source)))?|citation_map key [\s\S]*|conflicts\[\d+\]\.(?:topic|items\[\d+\]|values\[\d+\]|kept|superseded|retained\[\d+\])|neutralised\[\d+\]\.id|coverage\[\d+\]\.covered_by\[\d+\]|history\[\d+\]\.[\s\S]*|slots\[\d+\]\.name)$/;

  /** Every string in a JSON value with its path (object keys as `… key <key>`). */
  function stringsOf(value: unknown, path = ''): Array<[string, string]> {
    if (typeof value === 'string') return [[path, value]];
    if (Array.isArray(value)) return value.flatMap((v, i) => stringsOf(v, `${path}[${i}]`));
    if (value && typeof value === 'object') {
      return Object.entries(value).flatMap(([k, v]) => [[`${path ? `${path} ` : ''}key ${k}`, k] as [string, string], ...stringsOf(v, path ? `${path}.${k}` : k)]).map(([p, v]) => [p.replace(/^citation_map key /, 'citation_map key '), v] as [string, string]);
    }
    return [];
  }

  /** Where a secret is planted: a slot value, an item field, the config, the template, or anywhere in a file's text. */
  const placement = fc.oneof(
    fc.record({ at: fc.constant('slot' as const), slot: fc.nat() }),
    fc.record({ at: fc.constant('item' as const), slot: fc.nat(), field: fc.constantFrom('text', 'title', 'source', 'id', 'version', 'claim') }),
    fc.record({ at: fc.constant('label' as const), slot: fc.nat() }),
    fc.record({ at: fc.constant('model' as const) }),
    fc.record({ at: fc.constant('fixture-name' as const) }),
    fc.record({ at: fc.constant('template-text' as const) }),
    fc.record({ at: fc.constant('file' as const), file: fc.constantFrom(0, 1, 2), offset: fc.nat() }),
  );

  fuzz(
    'analysis/secrets',
    fc.tuple(workspaceSpec({ mutations: false }), fc.array(fc.tuple(placement, textWithSecret), { minLength: 1, maxLength: 3 }), secret).map(([spec, plants, extra]) => {
      const s = structuredClone(spec);
      const planted: PlantedSecret[] = [extra];
      const fileInserts: Array<{ file: number; offset: number; text: string }> = [];
      for (const [p, { text, secret: sec }] of plants) {
        planted.push(sec);
        const slot = s.slots.length ? s.slots[((p as { slot?: number }).slot ?? 0) % s.slots.length] : undefined;
        switch (p.at) {
          case 'slot':
            if (slot) slot.value = { type: 'text', text };
            break;
          case 'item':
            if (slot) slot.value = { type: 'items', items: [{ id: 'ev_s', text: 'plain', source: 'docs/s', [p.field]: text }] };
            break;
          case 'label':
            if (slot) slot.label = text;
            break;
          case 'model':
            s.model = text;
            break;
          case 'fixture-name':
            s.fixtureName = text;
            break;
          case 'template-text':
            s.texts = [...s.texts, text];
            break;
          case 'file':
            fileInserts.push({ file: p.file, offset: p.offset, text });
            break;
        }
      }
      const ws = buildWorkspace(s);
      const order = [ws.template, ws.config, ws.fixture];
      for (const ins of fileInserts) {
        const path = order[ins.file];
        if (!path || ws.files[path] === undefined) continue;
        const t = ws.files[path];
        // At a line start, so an insertion never cuts another planted secret in two.
        const starts = [0, ...[...t.matchAll(/\n/g)].map((m) => m.index + 1)];
        const at = starts[ins.offset % starts.length];
        ws.files[path] = `${t.slice(0, at)} ${ins.text} ${t.slice(at)}`;
      }
      // The extra secret lives in a referenced file, which only the request may carry.
      ws.files[`${ws.root}/docs/policy.md`] = `Policy.\n${extra.text}\n`;
      return { ws, planted };
    }),
    ({ ws, planted }) => {
      const host = new MemoryHost([ws.root], ws.files);
      const a = analyzeTemplate(host, ws.template)!;
      const findings = [...a.findings, ...[...checkFiles(host, Object.keys(ws.files)).values()].flat()];
      const texts = findingTexts(findings);
      const sources = Object.values(ws.files);
      const idents = [...new Set(a.template.uses.map((u) => u.slot))];
      for (const s of planted) {
        // A secret another insertion cut in two is no longer one: nothing can redact it.
        if (!sources.some((f) => f.includes(s.text))) continue;
        for (const t of texts) {
          if (!leaksSecret(t, s, planted)) continue;
          // Known: the template's expressions split a secret into identifiers, which are slot names (see the fuzz report).
          if (idents.some((id) => id.length >= 5 && s.secret.includes(id) && t.includes(id))) {
            noteKnown('secret-piece-as-template-identifier');
            continue;
          }
          expect.fail(`a finding message carries the ${s.kind} ${JSON.stringify(s.secret)}: ${JSON.stringify(t)}`);
        }
        for (const [where, value] of a.assembly ? stringsOf(a.assembly.trace) : []) {
          if (!leaksSecret(value, s, planted)) continue;
          // Known: the trace records metadata as written (see the fuzz report in the CHANGELOG).
          if (TRACE_ECHOES.test(where)) {
            noteKnown('trace-echoes-metadata-verbatim');
            continue;
          }
          expect.fail(`the trace carries the ${s.kind} ${JSON.stringify(s.secret)} at ${where}: ${JSON.stringify(value.slice(0, 200))}`);
        }
      }
    },
    { minRuns: 60 },
  );
});
