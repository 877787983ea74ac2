/**
 * Template front matters are read by the fast YAML reader when they are plain YAML: on every
 * template of the project it must build what parseYaml builds (the same nodes, values and
 * ranges, shifted by the same base), or leave the text to parseYaml.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitFrontMatter } from '../../src/core/language/frontMatter';
import { parseYaml, toJs } from '../../src/core/text/yaml';
import { readYamlFast } from '../../src/core/text/yamlFast';
import { difference } from './support/yamlNodes';


function templatesUnder(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e.startsWith('.')) continue;
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) templatesUnder(p, out);
    else if (/\.(prompt|prompty)$/i.test(e)) out.push(p);
  }
  return out;
}

describe('front matter through the fast YAML reader', () => {
  it("reads every plain front matter of the project's templates as parseYaml does", () => {
    let fast = 0;
    const problems: string[] = [];
    for (const file of [...templatesUnder('examples'), ...templatesUnder('test')]) {
      const text = readFileSync(file, 'utf8');
      const split = splitFrontMatter(text, file.endsWith('.prompty') ? 'prompty' : 'prompt');
      if (split.kind !== 'block') continue;
      const yaml = text.slice(split.yamlStart, split.yamlEnd);
      const a = readYamlFast(yaml, split.yamlStart);
      if (!a) continue;
      fast++;
      const b = parseYaml(yaml, split.yamlStart);
      if (b.doc.errors.length) problems.push(`${file}: read a text parseYaml reports (${b.doc.errors[0].message})`);
      const d = difference(a.doc.contents, b.doc.contents) ?? (JSON.stringify(toJs(a, a.doc.contents)) === JSON.stringify(toJs(b, b.doc.contents)) ? undefined : 'plain values differ');
      if (d) problems.push(`${file}: ${d}`);
      expect(a.base).toBe(b.base);
    }
    expect(problems).toEqual([]);
    // Several of them are plain (others use block scalars and go to parseYaml): the comparison covers some.
    expect(fast).toBeGreaterThan(5);
  });

  it('leaves a repeated key to parseYaml, whose error Prompty reports', () => {
    expect(readYamlFast('model: a\nmodel: b\n', 4)).toBeUndefined();
  });
});
