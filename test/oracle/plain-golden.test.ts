/**
 * Golden suite of plain prompt files: every case of plainCases.ts is rendered by the real
 * libraries (plain_oracle.py: langchain-core's PromptTemplate.from_file / from_template and
 * load_prompt, jinja2's Environment and SandboxedEnvironment with each setting) and by the product
 * through the library: a folder with the case's files and a context config whose `messages`
 * compose them, `openWorkspace(dir).assemble(file, { slots })`.
 *
 * - Where the library renders, the request's messages must be the same, role and text to the
 *   character.
 * - Where the library raises (LangChain's refusals, KeyError, jinja2's UndefinedError, an unknown
 *   filter), the product must report it as a finding of the template.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { openWorkspace } from '../../src/lib';
import { plainCases, type OracleMessage, type PlainCase } from './plainCases';

const PYTHON = process.env.PYTHON ?? 'python3';
const PY_PACKAGES = [
  ['jinja2', 'jinja2==3.1.6'],
  ['langchain_core.prompts', 'langchain-core==1.6.5'],
] as const;

type Reply = { versions: Record<string, string>; results: Record<string, { ok: true; messages: Array<{ role: string; text: string }> } | { ok: false; error: string }> };

const cases = plainCases();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxlens-plain-'));
let reply: Reply;

/** The config's message for an oracle message (files are named relative to prompts/, where the config lies). */
function entry(m: OracleMessage): Record<string, unknown> {
  const file = m.file.replace(/^prompts\//, '') + (m.key !== undefined ? `#${m.key}` : '');
  const out: Record<string, unknown> = { role: m.role, file };
  if (m.via === 'langchain') {
    out.loader = 'langchain';
    if (m.format) out.format = m.format;
  } else if (m.via === 'jinja2') {
    out.format = 'jinja2';
    if (m.jinja) out.jinja = m.jinja;
  } else if (m.via === 'text') {
    out.format = 'text';
    if (m.replace) out.replace = m.replace;
  }
  if (m.strip) out.strip = m.strip;
  return out;
}

function writeCase(c: PlainCase): string {
  const dir = path.join(root, c.id.replace(/[^A-Za-z0-9_-]/g, '_'));
  for (const [rel, text] of Object.entries(c.files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  fs.writeFileSync(path.join(dir, 'prompts/request.context.yaml'), stringify({ version: 1, model: 'gpt-4o', messages: c.messages.map(entry) }));
  return dir;
}

beforeAll(() => {
  const missing = PY_PACKAGES.filter(([mod]) => spawnSync(PYTHON, ['-c', `import ${mod}`], { stdio: 'ignore' }).status !== 0);
  if (missing.length > 0) {
    throw new Error(`The plain-prompt oracle needs the Python packages ${missing.map(([, spec]) => spec).join(' and ')} (${PYTHON} cannot import ${missing.map(([mod]) => mod).join(', ')}). scripts/prereqs.mjs installs them.`);
  }
  const request = { cases: cases.map((c) => ({ id: c.id, dir: writeCase(c), messages: c.messages, values: c.values })) };
  const r = spawnSync(PYTHON, [path.join(__dirname, 'plain_oracle.py')], { input: JSON.stringify(request), encoding: 'utf8', maxBuffer: 1 << 26, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`plain_oracle.py failed (${r.status}): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-5).join('\n')}`);
  reply = JSON.parse(r.stdout) as Reply;
}, 300_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const ATTRIBUTION_LOST = /^The template compares, measures or transforms slot text/;
const REPORTED = new Set(['template-invalid', 'unknown-helper', 'file-reference', 'value-missing']);

describe('plain prompt files render as langchain-core and jinja2 render them', () => {
  it(`has cases of every kind (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThan(300);
    for (const kind of ['fstring/', 'jinja2/', 'mustache/', 'load_prompt/', 'key/', 'text/', 'compose/']) expect(cases.some((c) => c.id.startsWith(kind)), kind).toBe(true);
    // Both outcomes occur: the libraries render most cases and refuse some.
    const oks = Object.values(reply.results).filter((r) => r.ok).length;
    expect(oks).toBeGreaterThan(cases.length / 2);
    expect(oks).toBeLessThan(cases.length);
    // The Environment settings change what jinja2 renders: a loop's 16 settings give several texts.
    const loop = new Set(cases.filter((c) => /^jinja2\/loop\/\d+$/.test(c.id)).map((c) => JSON.stringify(reply.results[c.id])));
    expect(loop.size).toBeGreaterThanOrEqual(4);
  });

  it('gives every case the library renders the same messages, and reports every case it refuses', () => {
    const wrong: string[] = [];
    for (const c of cases) {
      const want = reply.results[c.id];
      const dir = path.join(root, c.id.replace(/[^A-Za-z0-9_-]/g, '_'));
      // Assembled from its last file when that is a prompt file (whose own problems are reported on it), else from system.md.
      const last = c.messages[c.messages.length - 1].file;
      const entry = /\.(md|txt|j2|jinja2?|mustache)$/.test(last) ? last : 'prompts/system.md';
      const out = openWorkspace(dir).assemble(entry, { slots: c.values });
      const got = out.messages.map((m) => ({ role: m.role, text: m.content }));
      if (want.ok) {
        // A render that transforms a value (a repr, a padded field) is counted as a whole: said, and exact.
        const problems = out.findings.filter((f) => REPORTED.has(f.rule) || (f.rule === 'unsupported-feature' && !ATTRIBUTION_LOST.test(f.message)));
        if (JSON.stringify(got) !== JSON.stringify(want.messages) || problems.length) {
          wrong.push(`${c.id}\n  got  ${JSON.stringify(got)}\n  want ${JSON.stringify(want.messages)}${problems.length ? `\n  findings ${problems.map((f) => `${f.rule}: ${f.message}`).join('; ')}` : ''}`);
        }
      } else if (!out.findings.some((f) => REPORTED.has(f.rule))) {
        wrong.push(`${c.id}\n  the library raises ${want.error}\n  got  ${JSON.stringify(got)} without a finding`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
