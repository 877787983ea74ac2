/**
 * docs/rules.md is generated (scripts/rules-doc.mjs, `npm run docs`) from the rule registry and the
 * reader's text beside it (src/core/rules/rule-docs.md). These tests fail when the page is out of
 * date with either source, when a rule has no text or the text names a rule that does not exist,
 * and they run the script itself, which bundles the registry on its own.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RULES } from '../../src/core/rules/registry';
import { PAGE, ROOT, SOURCE, parseRuleDocs, renderRulesDoc } from '../../scripts/rules-doc.mjs';

const source = readFileSync(join(ROOT, SOURCE), 'utf8');
const page = readFileSync(join(ROOT, PAGE), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'ctxlens-rulesdoc-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function script(...args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/rules-doc.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('docs/rules.md', () => {
  it('is the page the registry and rule-docs.md give (run `npm run docs` after changing either)', () => {
    expect(page).toBe(renderRulesDoc(RULES, source));
  });

  it('has text for exactly the rules of the registry, each with an example', () => {
    const { bodies } = parseRuleDocs(source);
    expect([...bodies.keys()].sort()).toEqual(RULES.map((r) => r.id).sort());
    for (const [id, body] of bodies) expect(body, id).toMatch(/```[a-z]*\n[\s\S]*?\n```/);
  });

  it('lists every rule with its default severity and an anchor the diagnostics link to', () => {
    for (const r of RULES) {
      expect(page).toContain(`| [\`${r.id}\`](#rule-${r.id}) | ${r.severity} | ${r.category} |`);
      expect(page.split(`<a id="rule-${r.id}"></a>\n### \`${r.id}\``)).toHaveLength(2);
    }
  });

  it('refuses a rule without text and text for a rule the registry lacks', () => {
    const first = RULES[0]!.id;
    const without = source.replace(`## \`${first}\``, '## `no-such-rule`');
    expect(() => renderRulesDoc(RULES, without)).toThrow(`no section for ${first}`);
    expect(() => renderRulesDoc(RULES.slice(1), source)).toThrow(`sections for rules the registry does not have: ${first}`);
    expect(() => renderRulesDoc([{ ...RULES[0]!, category: 'elsewhere' }], source.replace(/## `(?!config-invalid`)[\s\S]*/, ''))).toThrow('no heading for the categories elsewhere');
  });

  it('the script finds the page up to date, and a changed page out of date', () => {
    expect(script('--check')).toMatchObject({ code: 0 });
    const stale = join(tmp, 'rules.md');
    writeFileSync(stale, page.replace('### `slot-unused`', '### `slot-unused` (edited by hand)'));
    const r = script('--check', '--page', stale);
    expect(r.code).toBe(1);
    expect(r.out).toContain('out of date');
    expect(script('--page', stale)).toMatchObject({ code: 0 });
    expect(readFileSync(stale, 'utf8')).toBe(page);
  });
});
