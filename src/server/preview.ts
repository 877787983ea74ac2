/**
 * Builds the answers of the custom requests that show a whole request: the preview snapshot
 * (src/protocol/preview.ts) and the assembled request in a CLI format with its trace. Both come
 * from a template analysis with an assembly; nothing here re-parses or re-counts, except what-if
 * budgets and comparisons, which src/server/variant.ts assembles on top of the snapshot.
 */
import type { TemplateAnalysis } from '../core/analyze';
import type { AssemblyResult } from '../core/types';
import type { AssembleFormat, AssembleResult, PreviewReply, PreviewVariant } from '../protocol/lsp';
import type { PreviewLocations, PreviewSnapshotBody } from '../protocol/preview';
import { summarizeFindings } from '../protocol/preview';
import { formatRequest } from '../core/export';
import { LineIndex } from '../core/text/lineIndex';
import { itemIds } from './items';
import { explainTrace } from './explain';
import { applyVariant } from './variant';
import type { VariantContext } from './variant';

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Line lookups over the texts the analysis read, each indexed once. */
function lineFinder(a: TemplateAnalysis, readFile: (p: string) => string | undefined): (path: string, offset: number) => number {
  const texts = new Map<string, string>();
  texts.set(a.path, a.template.text);
  if (a.config && !a.config.inline) texts.set(a.config.path, a.config.doc.text);
  if (a.fixture) texts.set(a.fixture.path, a.fixture.text);
  const indexes = new Map<string, LineIndex | null>();
  return (p, offset) => {
    let idx = indexes.get(p);
    if (idx === undefined) {
      const text = texts.get(p) ?? readFile(p);
      idx = text === undefined ? null : new LineIndex(text);
      indexes.set(p, idx);
    }
    return idx ? idx.positionAt(offset).line : 0;
  };
}

function locations(a: TemplateAnalysis, lineOf: (p: string, o: number) => number, asm: AssemblyResult | undefined = a.assembly): PreviewLocations {
  const out: PreviewLocations = { items: [], slots: [], messages: [] };
  const trace = asm?.trace;
  const inTrace = new Set<string>();
  for (const t of trace?.retained ?? []) inTrace.add(`${t.slot}\0${t.id}`);
  for (const o of trace?.omitted ?? []) inTrace.add(`${o.slot}\0${o.id}`);
  const fx = a.fixture;
  if (fx) {
    for (const [slot, value] of Object.entries(fx.slots)) {
      if (value.type === 'items') {
        for (const item of value.items) {
          const id = itemIds(slot, item).find((x) => inTrace.has(`${slot}\0${x}`));
          if (id) out.items.push({ slot, id, path: fx.path, line: lineOf(fx.path, item.span.start) });
        }
      } else {
        const id = `${slot}_1`;
        if (inTrace.has(`${slot}\0${id}`)) out.items.push({ slot, id, path: fx.path, line: lineOf(fx.path, value.span.start) });
      }
    }
  }
  const cfg = a.config;
  if (cfg) {
    const path = cfg.inline ? a.path : cfg.path;
    for (const name of Object.keys(cfg.doc.config?.slots ?? {})) {
      const key = cfg.doc.keySpan(['slots', name]);
      if (key && !cfg.inline) out.slots.push({ slot: name, path, line: lineOf(path, key.start) });
    }
  }
  // Rendered messages follow the template's messages in order; history turns rendered as messages
  // of their own have no marker of their own.
  const tm = a.template.messages;
  let k = 0;
  for (const m of asm?.messages ?? []) {
    let found: number | undefined;
    for (let j = k; j < tm.length; j++) {
      if (tm[j].role === m.role) {
        found = j;
        break;
      }
    }
    if (found === undefined) out.messages.push(null);
    else {
      out.messages.push({ path: a.path, line: lineOf(a.path, tm[found].markerSpan.start) });
      k = found + 1;
    }
  }
  return out;
}

export interface SnapshotInput {
  analysis: TemplateAnalysis;
  uri: string;
  version: number;
  models: string[];
  readFile(p: string): string | undefined;
  /** What-if budgets and a comparison to apply (src/server/variant.ts), with what they need. */
  variant?: { value: PreviewVariant; context: VariantContext };
}

export function previewReply(input: SnapshotInput): PreviewReply {
  const a = input.analysis;
  const asm = a.assembly;
  if (!a.config && (!asm || !a.fixture)) {
    return { empty: `${basename(a.path)} has no context config and no sample data: add \`sample:\` (Prompty) or \`input.default\` (dotprompt) to its front matter, a fixture that names it, or a context config (“Create context config”).` };
  }
  if (!asm || !a.fixture) {
    return {
      empty: a.fixtures.length
        ? `No fixture is selected for ${basename(a.path)}: run “Context Lens: Select Fixture”.`
        : `${basename(a.path)} has no fixture: add a *.fixture.yaml that names it (template:) or matches the config's fixtures globs.`,
    };
  }
  const lineOf = lineFinder(a, input.readFile);
  const models = [...input.models];
  if (a.model && !models.includes(a.model.name)) models.unshift(a.model.name);
  const snapshot: PreviewSnapshotBody = {
    templateUri: input.uri,
    documentVersion: input.version,
    template: { path: a.path, name: basename(a.path) },
    fixtures: a.fixtures.map((f) => ({ path: f.path, name: f.name })),
    selectedFixture: a.fixture?.path,
    models,
    selectedModel: a.model?.name,
    result: { ok: asm.ok, error: asm.error, budget: asm.budget, trace: asm.trace, messages: asm.messages },
    locations: locations(a, lineOf),
    findings: summarizeFindings(a.findings, lineOf),
    explain: explainTrace(asm.trace),
  };
  if (input.variant) {
    return {
      snapshot: applyVariant(snapshot, a, input.variant.value, { ...input.variant.context, textOf: input.readFile, locate: (r) => locations(a, lineOf, r) }),
    };
  }
  return { snapshot };
}

export function assembleReply(a: TemplateAnalysis, format: AssembleFormat): AssembleResult | null {
  const asm = a.assembly;
  if (!asm) return null;
  if (!asm.ok) {
    return {
      ok: false,
      error: asm.error,
      content: `Assembly failed: ${asm.error ?? 'required slots overflow the input budget'}\n\n${JSON.stringify(asm.trace, null, 2)}\n`,
      language: 'plaintext',
      trace: asm.trace,
      fixture: a.fixture?.path,
    };
  }
  return {
    ok: true,
    content: formatRequest(asm, format, a.model?.name),
    language: format === 'text' ? 'plaintext' : 'json',
    trace: asm.trace,
    fixture: a.fixture?.path,
  };
}
