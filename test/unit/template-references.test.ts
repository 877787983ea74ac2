/**
 * The partials and includes a template names come from the trees its engine renders
 * (language/references.ts): what Handlebars or Jinja reads as text (a comment, a raw block, an
 * escaped tag) names nothing, `ignore missing` is no finding, spans are the name's exact place in
 * the file, and a broken body ends in findings, never a throw.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/core/language';
import { readPartials, withoutHelperCalls } from '../../src/core/language/partials';
import { fileReferences, templateReferences } from '../../src/core/language/references';
import { renderDotprompt } from '../../src/core/language/dotprompt/engine';
import type { Span } from '../../src/core/types';
import { MemoryHost } from '../fuzz/support';

/** The span of the `nth` occurrence of `needle` in `text`. */
function spanOf(text: string, needle: string, nth = 0): Span {
  let at = -1;
  for (let k = 0; k <= nth; k++) at = text.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`${needle} not in the text`);
  return { start: at, end: at + needle.length };
}

function partialsOf(path: string, text: string, files: Record<string, string> = {}) {
  const template = parseTemplate(path, text);
  const host = new MemoryHost(['/w'], { [path]: text, ...files });
  return { template, ...readPartials(host, template) };
}

const FM = '---\nmodel: gpt-4o\n---\n';
const PROMPTY = '---\nname: t\n---\n';

describe('dotprompt: partial calls from Handlebars\' tree', () => {
  it('a call inside a comment, a raw block or an escaped tag is neither read nor reported', () => {
    const text = `${FM}{{!-- {{> a}} --}}\n{{! {{> b}}\n{{{{raw}}}}{{> c}}{{{{/raw}}}}\n\\{{> d}}\nend`;
    const files = { '/w/_a.prompt': 'A', '/w/_b.prompt': 'B', '/w/_c.prompt': 'C', '/w/_d.prompt': 'D' };
    const r = partialsOf('/w/t.prompt', text, files);
    expect(r.template.findings).toEqual([]);
    expect(templateReferences(r.template)).toEqual([]);
    expect(r.sources).toEqual({});
    expect(r.dependencies).toEqual([]);
    expect(r.findings).toEqual([]);
    // What is read as text is rendered as text, so nothing there needed a partial.
    expect(renderDotprompt(text, { input: {} }).issues).toEqual([]);
  });

  it('a call, a partial block and a quoted name: read, and reported at the exact name when missing', () => {
    const text = `${FM}{{> card}}\r\n{{#> layout}}fallback{{/layout}}\r\n{{> "my card" x=1}}\r\n{{> gone}}\n`;
    const r = partialsOf('/w/t.prompt', text, { '/w/_card.prompt': 'Card', '/w/partials/layout.prompt': 'L {{> @partial-block}}', '/w/my card.prompt': 'Mine' });
    expect(templateReferences(r.template)).toEqual([
      { names: ['card'], span: spanOf(text, 'card'), optional: false },
      { names: ['layout'], span: spanOf(text, 'layout'), optional: true },
      { names: ['my card'], span: spanOf(text, 'my card'), optional: false },
      { names: ['gone'], span: spanOf(text, 'gone'), optional: false },
    ]);
    expect(r.sources).toEqual({ card: 'Card', layout: 'L {{> @partial-block}}', 'my card': 'Mine' });
    expect(r.findings.map((f) => [f.rule, f.span])).toEqual([['unknown-partial', spanOf(text, 'gone')]]);
  });

  it('a partial block whose partial is missing renders its own content, as dotprompt does: no placeholder, no finding', () => {
    const text = `${FM}a {{#> missing}}fallback {{x}}{{/missing}} b`;
    const r = partialsOf('/w/t.prompt', text);
    expect(r.findings).toEqual([]);
    // The product renders leniently (placeholders for what code may register); the block still falls back.
    const out = renderDotprompt(text, { input: { x: 'X' } }, { lenient: true });
    expect(out.issues).toEqual([]);
    expect(out.messages.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''))).toEqual(['a fallback X b']);
    // A plain call of the same missing partial still gets its placeholder (and its finding).
    const both = renderDotprompt(`${FM}{{> missing}} {{#> missing}}fb{{/missing}}`, { input: {} }, { lenient: true });
    expect(both.messages[0].parts.map((p) => (p.type === 'text' ? p.text : '')).join('')).toContain('⟦');
  });

  it('spans stay exact after U+2028 on the line (the Handlebars lexer miscounts its columns)', () => {
    const text = `${FM}a\u2028b\u2029c {{> nope}}`;
    const r = partialsOf('/w/t.prompt', text);
    expect(r.findings.map((f) => [f.rule, f.span])).toEqual([['unknown-partial', spanOf(text, 'nope')]]);
  });

  it('an inline partial is the template\'s own, a dynamic partial is not followed, a name is read once', () => {
    const text = `${FM}{{#*inline "foot"}}Bye{{/inline}}{{> foot}} {{> (lookup . "pick")}} {{> card}} {{> card}}`;
    const r = partialsOf('/w/t.prompt', text, { '/w/_foot.prompt': 'never read', '/w/card.prompt': 'C' });
    expect(templateReferences(r.template).map((x) => x.names)).toEqual([['card'], ['card']]);
    expect(r.sources).toEqual({ card: 'C' });
    expect(r.findings).toEqual([]);
    expect(renderDotprompt(text, { input: { pick: 'card' } }, { partials: r.sources }).messages[0].parts).toEqual([{ type: 'text', text: 'Bye C C C' }]);
  });

  it("a partial's own calls are followed as Handlebars reads its file (comments skipped), and not reported", () => {
    const text = `${FM}{{> card}}`;
    const card = '{{!-- {{> secret}} --}}{{> inner}} {{> missing}}';
    const r = partialsOf('/w/t.prompt', text, { '/w/_card.prompt': card, '/w/_inner.prompt': 'I', '/w/_secret.prompt': 'S' });
    expect(r.sources).toEqual({ card, inner: 'I' });
    expect(r.findings).toEqual([]);
    expect(fileReferences(r.template, card)).toEqual([
      { names: ['inner'], span: spanOf(card, 'inner'), optional: false },
      { names: ['missing'], span: spanOf(card, 'missing'), optional: false },
    ]);
  });

  it('a body Handlebars refuses names nothing and does not throw; a broken partial file neither', () => {
    const text = `${FM}{{> card}} {{#if x}} {{> other`;
    const r = partialsOf('/w/t.prompt', text, { '/w/_card.prompt': 'C' });
    expect(r.template.findings.some((f) => f.rule === 'template-invalid')).toBe(true);
    expect(r.findings).toEqual([]);
    expect(r.sources).toEqual({});
    const ok = partialsOf('/w/u.prompt', `${FM}{{> card}}`, { '/w/_card.prompt': '{{#each}} {{> deeper' });
    expect(ok.sources).toEqual({ card: '{{#each}} {{> deeper' });
    expect(ok.findings).toEqual([]);
  });

  it('a body or partial over the bounds the renderer refuses is not parsed and names nothing', () => {
    const many = `${'{{x}}'.repeat(10_001)}{{> inner}}`;
    const over = partialsOf('/w/t.prompt', `${FM}${many}`, { '/w/_inner.prompt': 'I' });
    expect(over.template.findings.map((f) => f.rule)).toEqual(['template-invalid']);
    expect(over.sources).toEqual({});
    const inside = partialsOf('/w/u.prompt', `${FM}{{> card}}`, { '/w/_card.prompt': many, '/w/_inner.prompt': 'I' });
    expect(Object.keys(inside.sources)).toEqual(['card']);
  });
});

describe('declared helpers: a bare {{name}} is a call, as the tree tells', () => {
  const registry = { helpers: ['today'], partials: [] };

  it('drops only the bare calls: not a dotted or scoped path, an argument or a block', () => {
    const text = `${FM}{{today}} {{{today}}} {{ today }} {{today.year}} {{#if today}}y{{/if}} {{fmt today}} {{this.today}} {{./today}}`;
    const template = parseTemplate('/w/t.prompt', text);
    expect(template.uses.filter((u) => u.slot === 'today')).toHaveLength(8);
    const kept = withoutHelperCalls(template, registry).uses.map((u) => [u.form, text.slice(u.span.start, u.span.end), u.span.start]);
    expect(kept).toEqual([
      ['var', 'today.year', spanOf(text, 'today.year').start],
      ['if', 'today', spanOf(text, 'today', 4).start],
      ['var', 'today', spanOf(text, 'today', 5).start],
      ['var', 'this.today', spanOf(text, 'this.today').start],
      ['var', './today', spanOf(text, './today').start],
    ]);
  });

  it('as Handlebars, a name ending in `this` is never a helper call (its scopedId test), and the render agrees', () => {
    const text = `${FM}{{getthis}} {{today}}`;
    const template = parseTemplate('/w/t.prompt', text);
    const kept = withoutHelperCalls(template, { helpers: ['getthis', 'today'], partials: [] }).uses.map((u) => u.slot);
    expect(kept).toEqual(['getthis']);
    const r = renderDotprompt(text, { input: { getthis: 'value' } }, { codeHelpers: ['getthis', 'today'] });
    expect(r.messages[0].parts).toEqual([{ type: 'text', text: 'value ⟦today⟧' }]);
  });

  it('a broken body drops every use named like a declared helper, and does not throw', () => {
    const text = `${FM}{{today.year}} {{#if x}}`;
    const template = parseTemplate('/w/t.prompt', text);
    expect(withoutHelperCalls(template, registry).uses.filter((u) => u.slot === 'today')).toEqual([]);
  });
});

describe('Prompty: includes from the Jinja tree', () => {
  it('an include inside a comment or a raw block is neither read nor reported', () => {
    const text = `${PROMPTY}system:\n{# {% include "a.prompty" %} #}\n{% raw %}{% include "b.prompty" %}{% endraw %}\nHi`;
    const r = partialsOf('/w/t.prompty', text, { '/w/a.prompty': 'A', '/w/b.prompty': 'B' });
    expect(templateReferences(r.template)).toEqual([]);
    expect(r.sources).toEqual({});
    expect(r.findings).toEqual([]);
  });

  it('`ignore missing` is no finding; a missing include is reported at its name, exactly, across \\r\\n', () => {
    const text = `${PROMPTY.replace(/\n/g, '\r\n')}system:\r\n{% include 'nope.prompty' ignore missing %}\r\n\r\n{% include "gone.prompty" %}\r\n`;
    const r = partialsOf('/w/t.prompty', text);
    expect(templateReferences(r.template)).toEqual([
      { names: ['nope.prompty'], span: spanOf(text, 'nope.prompty'), optional: true },
      { names: ['gone.prompty'], span: spanOf(text, 'gone.prompty'), optional: false },
    ]);
    expect(r.findings.map((f) => [f.rule, f.span])).toEqual([['file-reference', spanOf(text, 'gone.prompty')]]);
  });

  it('include, import, from and extends with constant names are followed; a name that is not constant is not', () => {
    const text = `${PROMPTY}system:\n{% extends "base.prompty" %}{% import 'm.prompty' as m %}{% from "f.prompty" import x %}{% include name %}{% include "a" ~ "b" %}{% include ("in" if x else "out") %}`;
    const r = partialsOf('/w/t.prompty', text, { '/w/base.prompty': 'B', '/w/m.prompty': 'M', '/w/f.prompty': 'F' });
    expect(templateReferences(r.template).map((x) => x.names)).toEqual([['base.prompty'], ['m.prompty'], ['f.prompty']]);
    expect(r.sources).toEqual({ 'base.prompty': 'B', 'm.prompty': 'M', 'f.prompty': 'F' });
    expect(r.findings).toEqual([]);
  });

  it('a list of names: the first found is read; none found is one finding at the list', () => {
    const text = `${PROMPTY}system:\n{% include ['missing.prompty', 'b.prompty', 'c.prompty'] %}\n{% include ["x.prompty", "y.prompty"] %}`;
    const r = partialsOf('/w/t.prompty', text, { '/w/b.prompty': 'B', '/w/c.prompty': 'C' });
    expect(r.sources).toEqual({ 'b.prompty': 'B' });
    expect(r.findings.map((f) => [f.rule, f.span])).toEqual([['file-reference', spanOf(text, '["x.prompty", "y.prompty"]')]]);
    expect(r.findings[0].message).toMatch(/None of the included templates 'x\.prompty', 'y\.prompty' is found; looked for x\.prompty, y\.prompty beside t\.prompty\./);
  });

  it("an included file's includes are followed (its comments skipped) and not reported", () => {
    const inc = '{# {% include "secret.prompty" %} #}{% include "inner.prompty" %}{% include "missing.prompty" %}';
    const r = partialsOf('/w/t.prompty', `${PROMPTY}system:\n{% include "inc.prompty" %}`, { '/w/inc.prompty': inc, '/w/inner.prompty': 'I', '/w/secret.prompty': 'S' });
    expect(r.sources).toEqual({ 'inc.prompty': inc, 'inner.prompty': 'I' });
    expect(r.findings).toEqual([]);
  });

  it('a broken body is read from the recovering tree, without a throw', () => {
    const text = `${PROMPTY}system:\n{% if x %}{% include "a.prompty" %}{{ y`;
    const r = partialsOf('/w/t.prompty', text, { '/w/a.prompty': 'A' });
    expect(r.template.findings.some((f) => f.rule === 'template-invalid')).toBe(true);
    expect(r.sources).toEqual({ 'a.prompty': 'A' });
  });

  it('a missing name is quoted with its secrets redacted', () => {
    const key = `sk-proj-${'a'.repeat(37)}1aa`;
    const text = `${PROMPTY}system:\n{% include "${key}.prompty" %}{% include ["${key}", "../${key}"] %}`;
    const r = partialsOf('/w/t.prompty', text);
    expect(r.findings.map((f) => f.rule)).toEqual(['file-reference', 'file-reference']);
    for (const f of r.findings) expect(f.message).not.toContain(key.slice(8));
  });

  it('a Mustache body has no Jinja includes', () => {
    const text = `---\nname: t\ntemplate: mustache\n---\nsystem:\n{% include "gone.prompty" %}`;
    const r = partialsOf('/w/t.prompty', text);
    expect(templateReferences(r.template)).toEqual([]);
    expect(r.findings).toEqual([]);
  });
});
