/** The README documents every rule (a section with a bad and a good example) and every contributed command and setting. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../src/core/rules/registry';

const root = resolve(__dirname, '../..');
const readme = readFileSync(resolve(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));

describe('README', () => {
  it.each(RULES.map((r) => r.id))('documents rule %s with a bad and a good example', (id) => {
    const start = readme.indexOf(`<a id="rule-${id}"></a>`);
    expect(start).toBeGreaterThan(0);
    const next = readme.indexOf('<a id="rule-', start + 10);
    const section = readme.slice(start, next < 0 ? undefined : next);
    expect(section).toContain(`### \`${id}\``);
    expect(section).toMatch(/bad/);
    expect(section).toMatch(/good/);
  });

  it('lists every contributed command and setting', () => {
    for (const c of pkg.contributes?.commands ?? []) expect(readme).toContain(c.title.replace(/^Context Lens: /, ''));
    const props = pkg.contributes?.configuration?.properties ?? {};
    for (const key of Object.keys(props)) expect(readme).toContain(`\`${key}\``);
  });

  it('shows the two commands', () => {
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });
});
