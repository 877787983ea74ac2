/**
 * Invariants of the source tree that the layer lint (eslint.config.mjs) does not express: no
 * module depends on itself through others (no import circles, type imports included), and only
 * the template layer reads a template's front matter.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(__dirname, '../../src');

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [`${base}.ts`, path.join(base, 'index.ts')]) if (existsSync(c)) return c;
  return undefined;
}

/** Every relative import and re-export of every source file, type-only ones included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of sources(SRC)) {
    const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
    graph.set(f, [...new Set(info.importedFiles.map((i) => resolveImport(f, i.fileName)).filter((x): x is string => !!x))]);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(path.relative(SRC, w));
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('architecture', () => {
  it('has no import circles (type imports included)', () => {
    expect(circles(importGraph())).toEqual([]);
  });

  it('one setup builds every assembly: only the project binding calls the pipeline', () => {
    const callers: string[] = [];
    for (const f of sources(SRC)) {
      const rel = path.relative(SRC, f);
      if (rel.startsWith('core/assembly/')) continue;
      const text = readFileSync(f, 'utf8');
      // A value import of `assemble` from the assembly barrel (type imports and re-exports aside).
      if (/^import\s+\{[^}]*\bassemble\b[^}]*\}\s+from\s+'[^']*\/assembly'/m.test(text)) callers.push(rel);
    }
    expect(callers).toEqual(['core/project/bind.ts']);
  });

  it('the assembly pipeline is in the graph, its state module is below every stage, and nothing below the stages imports one', () => {
    const graph = importGraph();
    const rel = (f: string) => path.relative(SRC, f);
    const modules = [...graph.keys()].map(rel);
    const stage = (f: string) => f.startsWith('core/assembly/stages/');
    // The circle check above sees the pipeline: the stages and the modules they call.
    expect(modules.filter(stage).length).toBeGreaterThanOrEqual(10);
    expect(modules).toContain('core/assembly/stages/state.ts');
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = rel(file);
      for (const to of deps.map(rel)) {
        if (!stage(to)) continue;
        // The state types import no stage; outside the stages only the pipeline's barrel composes them.
        if (from === 'core/assembly/stages/state.ts' || (!stage(from) && from !== 'core/assembly/index.ts')) wrong.push(`${from} -> ${to}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the registry is the only module that lists the formats: nothing else imports a format folder\'s language module', () => {
    const LANGUAGE = path.join(SRC, 'core/language');
    const registry = path.join(LANGUAGE, 'registry.ts');
    const wrong: string[] = [];
    const listed: string[] = [];
    for (const f of sources(SRC)) {
      const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
      for (const i of info.importedFiles) {
        const to = resolveImport(f, i.fileName);
        if (!to || !to.startsWith(LANGUAGE + path.sep)) continue;
        const rel = path.relative(LANGUAGE, to).split(path.sep).join('/');
        if (!/^[^/]+\/language\.ts$/.test(rel)) continue;
        if (f === registry) listed.push(rel);
        else wrong.push(`${path.relative(SRC, f)} -> ${rel}`);
      }
    }
    expect(wrong).toEqual([]);
    // Every format folder with a language module is registered.
    const folders = readdirSync(LANGUAGE, { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(path.join(LANGUAGE, d.name, 'language.ts'))).map((d) => `${d.name}/language.ts`);
    expect(listed.sort()).toEqual(folders.sort());
  });

  it('one parse per language: only src/core/language parses a template language or its front matter', () => {
    // What the rest of the code may take from it: the parsed document, the engines' renders,
    // partial lookup, the one front matter reader and the runtime's value types.
    const entries = new Set(['index.ts', 'registry.ts', 'language.ts', 'engineTypes.ts', 'partials.ts', 'frontMatter.ts', 'dotprompt/engine.ts', 'prompty/engine.ts', 'prompty/loader.ts', 'jinja/values.ts']);
    const LANGUAGE = path.join(SRC, 'core/language');
    const wrong: string[] = [];
    for (const f of sources(SRC)) {
      if (f.startsWith(LANGUAGE + path.sep)) continue;
      const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
      for (const i of info.importedFiles) {
        if (/^(handlebars|@handlebars\/parser|nunjucks|@huggingface\/jinja)(\/|$)/.test(i.fileName)) wrong.push(`${path.relative(SRC, f)} -> ${i.fileName}`);
        const to = resolveImport(f, i.fileName);
        if (to?.startsWith(LANGUAGE + path.sep) && !entries.has(path.relative(LANGUAGE, to).split(path.sep).join('/'))) wrong.push(`${path.relative(SRC, f)} -> ${path.relative(SRC, to)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('finds a circle when there is one (the check itself)', () => {
    const g = new Map([
      ['/a.ts', ['/b.ts']],
      ['/b.ts', ['/c.ts']],
      ['/c.ts', ['/a.ts']],
      ['/d.ts', ['/a.ts']],
    ]);
    expect(circles(g).map((c) => c.length)).toEqual([3]);
  });
});
