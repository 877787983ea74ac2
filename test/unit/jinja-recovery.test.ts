/**
 * One parse of a Jinja body for the editor and the renderer (jinja/parser.ts parseJinja): a
 * template jinja2 accepts is parsed once and both read the same tree; one it refuses keeps the
 * strict parse's first error for rendering (what jinja2 reports) while the recovering parse gives
 * the editor a tree and every problem, located. Also the role lines and engines the body builders
 * read as Prompty's runtimes do.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/core/language';
import { compileTemplate } from '../../src/core/language/jinja/interpreter';
import { normalizeTemplate, tokenize } from '../../src/core/language/jinja/lexer';
import { Parser, parseJinja } from '../../src/core/language/jinja/parser';
import { renderPrompty } from '../../src/core/language/prompty/engine';
import { slice, usesOf } from './support/spans';

/** What the strict parse throws for a body, as jinja2's first error. */
function strictError(text: string): { message: string; span?: { start: number; end: number } } | undefined {
  try {
    new Parser(tokenize(text)).parse();
    return undefined;
  } catch (e) {
    return { message: (e as Error).message, span: (e as { span?: { start: number; end: number } }).span };
  }
}

describe('one parse per text', () => {
  it('the renderer compiles the tree the analysis reads', () => {
    const body = 'user:\n{% for d in docs %}{{ d.text }}{% endfor %}';
    const parsed = parseJinja(normalizeTemplate(body));
    expect(parsed.error).toBeUndefined();
    expect(parseJinja(normalizeTemplate(body))).toBe(parsed);
    expect(compileTemplate('\u0000a-name', body).body).toBe(parsed.body);
  });

  const broken = [
    'user:\n{{ question \nNext {{ other }}',
    'user:\n{% endif %}{% for d in docs %}{% if d.ok %}x{% endfor %}',
    'user:\n{% for docs %}x{% endfor %}\n{{ a + }}',
    'user:\n{% raw %}{{ x }}',
    'user:\n{# note\n{{ y }}',
    'user:\n{{ (a }} text {{ b }}',
    'user:\n{% for d in docs %}{{ d }}',
  ];
  it.each(broken)('a broken body keeps the strict error for rendering: %j', (body) => {
    const parsed = parseJinja(normalizeTemplate(body));
    const strict = strictError(normalizeTemplate(body));
    expect(strict).toBeDefined();
    expect(parsed.error?.message).toBe(strict!.message);
    expect((parsed.error as { span?: unknown }).span).toEqual(strict!.span);
    // The recovering parse read on: it has a tree and located problems.
    expect(parsed.lexIssues.length + parsed.issues.length).toBeGreaterThan(0);
    expect(() => compileTemplate('\u0000b', body)).toThrow(strict!.message);
  });

  it('rendering refuses a broken body with jinja2’s first error, at its place', () => {
    const source = '---\nname: x\nmodel:\n  api: chat\n---\nuser:\n{{ a + }} and {% endif %}';
    const r = renderPrompty(source, {});
    expect(r.issues[0]?.message).toMatch(/^Jinja2 refuses this template: TemplateSyntaxError: /);
    expect(r.issues[0]?.message).toContain(strictError(normalizeTemplate('user:\n{{ a + }} and {% endif %}'))!.message);
    expect(source.slice(r.issues[0].span.start, r.issues[0].span.end)).toBe('}}');
  });

  it('the editor gets every problem of a broken body, and the uses after them', () => {
    const text = '---\nname: x\n---\nuser:\n{{ a + }} {% endif %} {% for x in %}{{ x }}{% endfor %} {{ b.c }}';
    const d = parseTemplate('/w/b.prompty', text);
    expect(d.findings.map((f) => slice(d, f.span))).toEqual(['}}', '{% endif %}', '{% for x in %}']);
    expect(d.findings[1].message).toMatch(/closes a block that was never opened/);
    expect(usesOf(d)).toEqual(['b/var/user/-@b.c']);
  });

  it('a loop whose head cannot be lexed keeps its target: its alias is no slot', () => {
    const d = parseTemplate('/w/c.prompty', '---\nname: x\n---\nuser:\n{% for d in docs $ %}{{ d.text }}{% endfor %}');
    expect(d.uses.map((u) => u.slot)).not.toContain('d');
    expect(d.findings.map((f) => [slice(d, f.span), f.message])).toEqual([['$', 'Jinja2 cannot read this tag: unexpected char "$".']]);
  });
});

describe('role lines as the runtime reads the rendered text', () => {
  it('0.1.x: a role line at the very end has no newline after it and is text', () => {
    const d = parseTemplate('/w/r.prompty', '---\nname: x\n---\nsystem:\nhi\nuser:\n');
    expect(d.messages.map((m) => m.role)).toEqual(['system']);
  });

  it('v2: a role line at the end is a line of its own', () => {
    const d = parseTemplate('/w/r.prompty', '---\nmodel:\n  id: gpt-4o\n---\nsystem:\nhi\nuser:');
    expect(d.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('whitespace control decides: a block that renders a newline first keeps the role line, one that trims it does not', () => {
    const kept = parseTemplate('/w/k.prompty', '---\nname: x\n---\nsystem:\nS\nuser:\n{%- if a %}\nHello\n{%- endif %}\n');
    expect(kept.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const joined = parseTemplate('/w/j.prompty', '---\nname: x\n---\nsystem:\nS\nuser:\n\t{%- if true -%}\n  trimmed\n{%- endif %}\nassistant:\nOK.\n');
    expect(joined.messages.map((m) => m.role)).toEqual(['system', 'assistant']);
  });

  it('a comment after the colon leaves the role line alone on its line once rendered', () => {
    const d = parseTemplate('/w/c.prompty', '---\nname: x\n---\nsystem:\nS\nuser:{# c #}\ntext\n');
    expect(d.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });
});

describe('the engine a body is parsed with', () => {
  it('v2 `template: {format: {kind: mustache}}` is a Mustache body, as the renderer reads it', () => {
    const d = parseTemplate('/w/m.prompty', '---\nmodel: gpt-4o\ntemplate:\n  format:\n    kind: mustache\n  parser: prompty\n---\nsystem:\n{{#h}}\n{{role}}:\n{{content}}\n{{/h}}\n');
    expect(d.findings).toEqual([]);
    expect(usesOf(d)).toEqual(['h/history/system/-@h']);
  });

  it('Mustache: a stray closer is skipped, an outer closer closes the sections inside, each located', () => {
    const text = '---\ntemplate: mustache\n---\nuser:\n{{/x}}{{#a}}{{#b}}{{t}}{{/a}}{{q}}';
    const d = parseTemplate('/w/m.prompty', text);
    expect(d.findings.map((f) => [slice(d, f.span), f.message])).toEqual([
      ['{{/x}}', "'{{/x}}' closes a block that was never opened."],
      ['{{#b}}', "'{{#b}}' is not closed: add '{{/b}}' before '{{/a}}'."],
    ]);
    expect(usesOf(d)).toEqual(['a/each/user/-@a', 'q/var/user/-@q']);
  });

  it('Mustache: {{missing}} and {{none}} are variables, and a changed delimiter is followed', () => {
    const d = parseTemplate('/w/m.prompty', '---\ntemplate: mustache\n---\nuser:\n{{missing}} {{none}} {{=<% %>=}}<% name %> {{literal}}');
    expect(d.uses.map((u) => u.slot)).toEqual(['missing', 'none', 'name']);
  });
});
