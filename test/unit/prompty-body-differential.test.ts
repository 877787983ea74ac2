/**
 * The `.prompty` body two ways, before the old scanner (src/core/language/prompty/scan.ts) goes:
 * the scanner, with the uses the document had (the scanner's tree merged with the engine's uses,
 * prompty/uses.ts), against the builders over the engines' own parses (prompty/jinjaBody.ts,
 * prompty/mustacheBody.ts). Compared on the examples, every case of the Prompty golden renderings,
 * generated workspaces and the fuzz suite's template inputs: messages (roles and marker spans),
 * uses (slot, form, span) and finding locations. Every disagreement is listed with its class.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFrontMatter } from '../../src/core/language/frontMatter';
import { parsePromptyBody as buildBody, promptyTemplateType } from '../../src/core/language/prompty/parse';
import { parsePromptyBody as scanBody } from '../../src/core/language/prompty/scan';
import { engineUses } from '../../src/core/language/prompty/uses';
import { promptyLineOf } from '../../src/core/language/prompty/engine';
import { parseJinja } from '../../src/core/language/jinja/parser';
import { normalizeTemplate } from '../../src/core/language/jinja/lexer';
import { buildWorkspace, fragment, mutation, mutate, workspace, workspaceSpec } from '../fuzz/arbitraries';

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
  /** The roles of the messages the runtime produced (golden cases that rendered). */
  roles?: string[];
}

function corpus(): Case[] {
  const cases: Case[] = walk(path.join(REPO, 'examples')).map((p) => ({ id: path.relative(REPO, p), text: readFileSync(p, 'utf8') }));
  for (const file of ['golden-v0_1.jsonl', 'golden-v2.jsonl']) {
    const lines = readFileSync(path.join(REPO, 'test/oracle/prompty-golden', file), 'utf8').split('\n').filter(Boolean);
    for (const line of lines) {
      const c = JSON.parse(line) as { id: string; files: Record<string, string>; status?: string; messages?: Array<{ role: string }> };
      cases.push({ id: `${file}:${c.id}`, text: c.files['case.prompty'], ...(c.status === 'ok' && c.messages ? { roles: c.messages.map((m) => m.role) } : {}) });
    }
  }
  for (const [k, ws] of fc.sample(workspace(), { numRuns: 150, seed: 20261201 }).entries()) {
    for (const [p, text] of Object.entries(ws.files)) if (p.endsWith('.prompty')) cases.push({ id: `generated-${k}:${p}`, text });
  }
  // The fuzz suite's template inputs (test/fuzz/parsers.test.ts): mutated workspaces and fragment soups.
  const mutated = fc.tuple(workspaceSpec().map((s) => ({ ...s, format: 'prompty' as const })), fc.array(mutation, { maxLength: 3 })).map(([s, ms]) => ms.reduce(mutate, buildWorkspace(s).files[`/ws/${s.name}.prompty`]));
  for (const [k, text] of fc.sample(mutated, { numRuns: 300, seed: 7 }).entries()) cases.push({ id: `fuzz-mutated-${k}`, text });
  const soup = fc.array(fragment, { maxLength: 30 }).map((a) => `---\nmodel: gpt-4o\n---\n${a.join('')}`);
  for (const [k, text] of fc.sample(soup, { numRuns: 300, seed: 11 }).entries()) cases.push({ id: `fuzz-fragments-${k}`, text });
  return cases;
}

const key = (s: { start: number; end: number }) => `${s.start}-${s.end}`;

interface Outcome {
  id: string;
  jinjaRefuses: boolean;
  mustache: boolean;
  messages?: string;
  /** For a golden case whose messages differ: whose roles are the runtime's (`engine`, `scanner`, `neither`). */
  runtimeSides?: 'engine' | 'scanner' | 'neither';
  uses?: string;
  findings?: string;
}

function compare(c: Case): Outcome {
  const p = '/w/case.prompty';
  const fm = parseFrontMatter(p, c.text, 'prompty');
  const data = fm.frontMatter?.data;
  const inputs = fm.frontMatter?.inputs ?? {};
  const line = promptyLineOf(data);
  const mustache = promptyTemplateType(data) === 'mustache';
  const old = scanBody(p, c.text, fm.bodyStart, inputs, line);
  const oldUses = mustache ? old.uses : (engineUses(c.text, fm.bodyStart, old.uses) ?? old.uses);
  const neu = buildBody(p, c.text, fm.bodyStart, inputs, data);
  const jinjaRefuses = !mustache && parseJinja(normalizeTemplate(c.text.slice(fm.bodyStart), line === 'v2')).error !== undefined;
  const out: Outcome = { id: c.id, jinjaRefuses, mustache };
  const msgs = (ms: typeof old.messages) => ms.map((m) => `${m.role}@${key(m.markerSpan)}`).join(' ');
  if (msgs(old.messages) !== msgs(neu.messages)) {
    out.messages = `scanner [${msgs(old.messages)}] engine [${msgs(neu.messages)}]`;
    if (c.roles) {
      // Prompty drops messages that render empty: compare the roles of messages with text.
      const roles = (ms: typeof old.messages) => ms.filter((m) => m.nodes.some((n) => n.type !== 'text' || n.text.trim() !== '')).map((m) => (m.role === 'tool' ? 'function' : m.role)).join(',');
      const want = c.roles.join(',');
      out.runtimeSides = roles(neu.messages) === want ? 'engine' : roles(old.messages) === want ? 'scanner' : 'neither';
    }
  }
  const uses = (us: typeof old.uses) =>
    us
      .map((u) => `${u.slot}/${u.form}@${key(u.span)}`)
      .sort()
      .join(' ');
  if (uses(oldUses) !== uses(neu.uses)) out.uses = `scanner [${uses(oldUses)}] engine [${uses(neu.uses)}]`;
  const finds = (fs: typeof old.findings) => {
    const all = fs.map((f) => key(f.span)).sort();
    return all.length > 8 ? `${all.slice(0, 8).join(' ')} … (${all.length})` : all.join(' ');
  };
  if (finds(old.findings) !== finds(neu.findings)) out.findings = `scanner [${finds(old.findings)}] engine [${finds(neu.findings)}]`;
  return out;
}

describe('prompty bodies: the old scanner vs the engines’ parses', () => {
  it('agree, or differ only where the template is one its runtime refuses', () => {
    const outcomes = corpus().map(compare);
    const count = (f: (o: Outcome) => boolean) => outcomes.filter(f).length;
    const differ = (o: Outcome) => !!(o.messages || o.uses || o.findings);
    const lines = outcomes.filter(differ).map((o) => `${o.id}${o.jinjaRefuses ? ' (jinja2 refuses)' : ''}${o.mustache ? ' (mustache)' : ''}${o.runtimeSides ? ` (runtime: ${o.runtimeSides})` : ''}\n  ${[o.messages && `messages: ${o.messages}`, o.uses && `uses: ${o.uses}`, o.findings && `findings: ${o.findings}`].filter(Boolean).join('\n  ')}`);
    console.log(
      [
        `prompty body differential: ${outcomes.length} templates (${count((o) => o.mustache)} Mustache, ${count((o) => o.jinjaRefuses)} that Jinja2 refuses)`,
        `agree on everything: ${count((o) => !differ(o))}`,
        `messages differ: ${count((o) => !!o.messages)} (${count((o) => !!o.messages && !o.jinjaRefuses)} on templates Jinja2 accepts; golden cases where the runtime's roles are the engine's ${count((o) => o.runtimeSides === 'engine')}, the scanner's ${count((o) => o.runtimeSides === 'scanner')}, neither's ${count((o) => o.runtimeSides === 'neither')})`,
        `uses differ: ${count((o) => !!o.uses)} (${count((o) => !!o.uses && !o.jinjaRefuses)} on templates Jinja2 accepts)`,
        `finding locations differ: ${count((o) => !!o.findings)} (${count((o) => !!o.findings && !o.jinjaRefuses)} on templates Jinja2 accepts)`,
        ...lines.slice(0, Number(process.env.DIFF_SHOW ?? 40)),
      ].join('\n'),
    );
    expect(outcomes.length).toBeGreaterThan(1000);
  });
});
