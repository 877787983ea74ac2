/**
 * The slot uses of a `.prompty` body, two ways: the template scanner (src/core/language/prompty/scan.ts)
 * and the Jinja engine's own tree (language/jinja/meta.ts, jinja2's find_undeclared_variables). Run
 * on the examples, every Jinja case of the Prompty golden renderings and generated workspaces, it
 * lists every template where the two disagree on the set of slots; the engine's answer is the one
 * the renderer acts on.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/core/language';
import { parsePromptyBody } from '../../src/core/language/prompty/scan';
import { templateVariables } from '../../src/core/language/jinja/meta';
import { workspace } from '../fuzz/arbitraries';

const REPO = path.resolve(__dirname, '../..');

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.prompty')) out.push(p);
  }
  return out;
}

interface Case {
  id: string;
  text: string;
}

function corpus(): Case[] {
  const cases: Case[] = walk(path.join(REPO, 'examples')).map((p) => ({ id: path.relative(REPO, p), text: readFileSync(p, 'utf8') }));
  for (const file of ['golden-v0_1.jsonl', 'golden-v2.jsonl']) {
    const full = path.join(REPO, 'test/oracle/prompty-golden', file);
    let lines: string[] = [];
    try {
      lines = readFileSync(full, 'utf8').split('\n').filter(Boolean);
    } catch {
      continue;
    }
    for (const line of lines) {
      const c = JSON.parse(line) as { id: string; files: Record<string, string>; features?: string[] };
      if (c.features?.some((f) => f.startsWith('engine:') && f !== 'engine:jinja2')) continue;
      cases.push({ id: c.id, text: c.files['case.prompty'] });
    }
  }
  const generated = fc.sample(workspace(), { numRuns: 150, seed: 20261201 });
  for (const [k, ws] of generated.entries()) {
    for (const [p, text] of Object.entries(ws.files)) if (p.endsWith('.prompty')) cases.push({ id: `generated-${k}:${p}`, text });
  }
  return cases;
}

function compare(c: Case): { scanner: string[]; engine: string[]; doc: string[] } | undefined {
  const doc = parseTemplate('/w/case.prompty', c.text);
  // Mustache bodies have no Jinja tree.
  if (/^\s*template\s*:\s*mustache/m.test(c.text.slice(0, doc.bodySpan.start))) return undefined;
  let engine: string[];
  try {
    engine = templateVariables(c.text.slice(doc.bodySpan.start)).names;
  } catch {
    return undefined; // Jinja2 refuses the body: there is no tree to compare with.
  }
  const scanner = [...new Set(parsePromptyBody('/w/case.prompty', c.text, doc.bodySpan.start, doc.frontMatter?.inputs ?? {}).uses.map((u) => u.slot))];
  return { scanner: scanner.sort(), engine: [...engine].sort(), doc: [...new Set(doc.uses.map((u) => u.slot))].sort() };
}

describe('slot uses: template scanner vs the engine tree', () => {
  const cases = corpus();
  it('the template document uses exactly the slots the engine reads (scanner differences listed)', () => {
    let compared = 0;
    const differ: string[] = [];
    const wrong: string[] = [];
    for (const c of cases) {
      const r = compare(c);
      if (!r) continue;
      compared++;
      if (r.scanner.join(',') !== r.engine.join(',')) differ.push(`${c.id}: scanner [${r.scanner.join(', ')}] engine [${r.engine.join(', ')}]`);
      if (r.doc.join(',') !== r.engine.join(',')) wrong.push(`${c.id}: document [${r.doc.join(', ')}] engine [${r.engine.join(', ')}]`);
    }
    console.log(`prompty uses differential: ${compared} templates compared, the scanner differs from the engine on ${differ.length}\n${differ.slice(0, 20).join('\n')}`);
    expect(compared).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });
});
