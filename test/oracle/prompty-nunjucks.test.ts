/**
 * Prompty's TypeScript runtime renders a `.prompty` body with npm `nunjucks`
 * (`nunjucks.renderString(content, data)`, whose default environment autoescapes). Context Lens
 * never runs nunjucks on a workspace's template (nunjucks compiles a template to JavaScript: a
 * template can reach `range.constructor("return process")()`), so the engine renders such a file
 * with its Jinja2 interpreter, the values escaped as nunjucks escapes them, and says that the
 * counts are an estimate. This suite holds that rendering to the real nunjucks on generated
 * templates made only of the constructs the engine claims to print as nunjucks does (text,
 * strings, integers, loops, conditions, `set`, whitespace control, common filters): every one
 * must be identical, character for character. The templates are ours and safe.
 */
import nunjucks from 'nunjucks';
import { describe, expect, it } from 'vitest';
import { renderPrompty } from '../../src/core/language/prompty/engine';

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['Ada', 'hello world', "it's <b>bold</b> & \"quoted\"", '', '  padded  ', 'Straße', 'line one\nline two', 'x'];
const pick = <T>(r: () => number, a: readonly T[]): T => a[Math.floor(r() * a.length)];

interface Case {
  body: string;
  data: Record<string, unknown>;
}

function makeCase(seed: number): Case {
  const r = rng(seed);
  const data: Record<string, unknown> = { name: pick(r, WORDS), items: [pick(r, WORDS), pick(r, WORDS), pick(r, WORDS)].slice(0, 1 + Math.floor(r() * 3)), n: Math.floor(r() * 20) - 5, flag: pick(r, WORDS) };
  const pieces = [
    () => 'Hello {{ name }}.',
    () => '{{ name | upper }}',
    () => '{{ name | lower }}',
    () => '{{ name | length }}',
    () => '{{ items | join(", ") }}',
    () => '{{ items | length }}',
    () => '{{ items | first }}',
    () => '{{ items | last }}',
    () => '{{ missing | default("none") }}',
    () => '{{ name | trim }}',
    () => '{{ n + 2 }}',
    () => '{{ n * 3 }}',
    () => '{% if n > 3 %}big{% elif n > 0 %}small{% else %}neg{% endif %}',
    () => '{% if flag %}F:{{ flag }}{% endif %}',
    () => '{% for i in items %}- {{ i }}\n{% endfor %}',
    () => '{% for i in items %}{{ loop.index }}:{{ i }}{% if not loop.last %}, {% endif %}{% endfor %}',
    () => '{%- for i in items -%} [{{ i }}] {%- endfor -%}',
    () => '{% set greeting = "Hi " ~ name %}{{ greeting }}',
    () => '{# a comment #}plain text',
    () => '{{ "literal" }}',
    () => '{% raw %}{{ not rendered }}{% endraw %}',
  ];
  const n = 1 + Math.floor(r() * 5);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push((pick(r, ['system:\n', 'user:\n', '', '']) as string) + pick(r, pieces)());
  return { body: lines.join(r() < 0.5 ? '\n' : '\n\n'), data };
}

function promptyFile(body: string): string {
  return `---\nname: nunjucks\nmodel:\n  api: chat\ntemplate: nunjucks\n---\n${body}\n`;
}

describe("Prompty's TypeScript runtime (nunjucks) against the real nunjucks", () => {
  // nunjucks.renderString's own environment: configure()'s defaults (autoescape on).
  const env = new nunjucks.Environment(null, { autoescape: true });
  const cases = Array.from({ length: 400 }, (_, i) => makeCase(i + 1));

  it('renders every generated template as nunjucks does', () => {
    const wrong: string[] = [];
    for (const c of cases) {
      // What the TypeScript runtime renders: the body after the front matter (its parser reads the role lines after).
      const want = env.renderString(`${c.body}\n`, c.data);
      const r = renderPrompty(promptyFile(c.body), c.data, { loader: 'typescript' });
      if (r.rendered !== want) wrong.push(`${JSON.stringify(c.body)}\n  got  ${JSON.stringify(r.rendered)}\n  want ${JSON.stringify(want)}`);
    }
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it('never reports a Python runtime error for a nunjucks template, and says once that it is an estimate', () => {
    const r = renderPrompty(promptyFile('system:\nHello {{ name }}'), { name: 'Ada' }, { loader: 'typescript' });
    expect(r.issues.filter((i) => i.rule === 'template-invalid')).toEqual([]);
    expect(r.issues.filter((i) => i.rule === 'unsupported-feature')).toHaveLength(1);
    expect(r.estimate).toBe(true);
    expect(r.messages).toEqual([{ role: 'system', parts: [{ type: 'text', text: 'Hello Ada' }] }]);
  });

  it('does not run what a template asks nunjucks to compile', () => {
    const r = renderPrompty(promptyFile('{{ range.constructor("return process")() }}'), {}, { loader: 'typescript' });
    expect(r.rendered).not.toMatch(/process|\[object/);
  });
});
