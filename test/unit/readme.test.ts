/**
 * The documentation covers what the product has: docs/rules.md documents every rule (a section
 * with a bad and a good example), docs/editor.md every contributed command and setting, and the
 * README the two commands that set up and run everything and a link to every page of docs/ there is.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../src/core/rules/registry';

const root = resolve(__dirname, '../..');
const read = (p: string) => readFileSync(resolve(root, p), 'utf8');
const readme = read('README.md');
const rules = read('docs/rules.md');
const editor = read('docs/editor.md');
const pkg = JSON.parse(read('package.json'));

describe('docs/rules.md', () => {
  it.each(RULES.map((r) => r.id))('documents rule %s with a bad and a good example', (id) => {
    const start = rules.indexOf(`<a id="rule-${id}"></a>`);
    expect(start).toBeGreaterThan(0);
    const next = rules.indexOf('<a id="rule-', start + 10);
    const section = rules.slice(start, next < 0 ? undefined : next);
    expect(section).toContain(`### \`${id}\``);
    expect(section).toMatch(/bad/);
    expect(section).toMatch(/good/);
  });
});

describe('docs/editor.md', () => {
  it('lists every contributed command and setting', () => {
    const commands = pkg.contributes?.commands ?? [];
    const props = Object.keys(pkg.contributes?.configuration?.properties ?? {});
    expect(commands.length).toBeGreaterThan(0);
    expect(props.length).toBeGreaterThan(0);
    for (const c of commands) expect(editor).toContain(c.title.replace(/^Context Lens: /, ''));
    for (const key of props) expect(editor).toContain(`\`${key}\``);
  });
});

describe('README', () => {
  it('shows the two commands', () => {
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });

  it('stays a front page and links every page of docs/ and CONTRIBUTING.md', () => {
    expect(readme.split('\n').length).toBeLessThan(260);
    expect(readme).toContain('](CONTRIBUTING.md)');
    const unlinked = readdirSync(resolve(root, 'docs')).filter((f) => f.endsWith('.md') && !readme.includes(`](docs/${f}`));
    expect(unlinked).toEqual([]);
  });
});
