/**
 * dotprompt templates (`.prompt`): front matter, messages from role markers, blocks and history,
 * slot uses with exact spans, roles and delimiters, and located findings for broken input.
 * Every span is checked against the source text it must cover.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/core/language';
import { bodyTree, parseHandlebars, renderDotprompt } from '../../src/core/language/dotprompt/engine';
import type { Span, TemplateDoc, TemplateNode } from '../../src/core/types';
import { at, expectSpansInside, slice, usesOf, view } from './support/spans';






const SUPPORT = `---
model: googleai/gemini-1.5-pro
context: ./support.context.yaml
input:
  schema:
    question: string
    evidence?(array, retrieved passages): string
    'tools?': string
---
{{role "system"}}
You are a support agent.
{{policy}}
{{history}}
{{role "user"}}
<documents>
{{#each evidence as |d i|}}
[EVIDENCE {{d.id}}] {{d.text}} [/EVIDENCE] {{i}} {{@index}}
{{/each}}
</documents>
Question: {{question}}
`;

describe('dotprompt: front matter', () => {
  const doc = parseTemplate('/w/support.prompt', SUPPORT);

  it('reads model, context and inputs with spans into the template', () => {
    expect(doc.format).toBe('prompt');
    expect(doc.findings).toEqual([]);
    const fm = doc.frontMatter!;
    expect(fm.model).toEqual({ value: 'googleai/gemini-1.5-pro', span: at(SUPPORT, 'googleai/gemini-1.5-pro') });
    expect(fm.context).toEqual({ value: './support.context.yaml', span: at(SUPPORT, './support.context.yaml') });
    expect(Object.keys(fm.inputs)).toEqual(['question', 'evidence', 'tools']);
    expect(fm.inputs.question).toEqual(at(SUPPORT, 'question'));
    expect(fm.inputs.evidence).toEqual(at(SUPPORT, 'evidence'));
    expect(fm.inputs.tools).toEqual(at(SUPPORT, 'tools'));
    expect(slice(doc, fm.span)).toBe(SUPPORT.slice(0, SUPPORT.indexOf('---\n{{role') + 3));
    expect(doc.bodySpan).toEqual({ start: SUPPORT.indexOf('{{role'), end: SUPPORT.length });
    expect(fm.data.input).toEqual({ schema: { question: 'string', 'evidence?(array, retrieved passages)': 'string', 'tools?': 'string' } });
  });

  it('takes an inline context mapping as an object with the span of the mapping', () => {
    const text = '---\ncontext:\n  window: 8000\n  slots: { q: { kind: user } }\n---\n{{q}}\n';
    const d = parseTemplate('/w/inline.prompt', text);
    expect(d.frontMatter?.context?.value).toEqual({ window: 8000, slots: { q: { kind: 'user' } } });
    expect(slice(d, d.frontMatter!.context!.span)).toBe('window: 8000\n  slots: { q: { kind: user } }');
  });

  it('has no front matter when the file does not start with ---', () => {
    const d = parseTemplate('/w/plain.prompt', 'Hello {{name}}\n---\nnot front matter\n');
    expect(d.frontMatter).toBeUndefined();
    expect(d.bodySpan.start).toBe(0);
    expect(usesOf(d)).toEqual(['name/var/user/-@name']);
  });
});

describe('dotprompt: messages and nodes', () => {
  const doc = parseTemplate('/w/support.prompt', SUPPORT);

  it('splits messages at role markers and history', () => {
    expect(doc.messages.map((m) => [m.role, slice(doc, m.markerSpan)])).toEqual([
      ['system', '{{role "system"}}'],
      ['user', '{{role "user"}}'],
    ]);
    expect(view(doc.messages[0].nodes)).toEqual(['\nYou are a support agent.\n', '{policy}', '\n', '<history history>']);
    expect(slice(doc, doc.messages[0].span)).toBe('{{role "system"}}\nYou are a support agent.\n{{policy}}\n{{history}}');
    expect(doc.messages[1].span).toEqual({ start: SUPPORT.indexOf('{{role "user"}}'), end: SUPPORT.length });
  });

  it('builds each nodes with aliases, loop data and item paths', () => {
    const user = view(doc.messages[1].nodes);
    // The standalone `{{#each}}` / `{{/each}}` lines render nothing, as in Handlebars; the body's
    // trailing line break is not sent either (dotprompt renders the body trimmed).
    expect(user).toEqual([
      '\n<documents>\n',
      { each: 'evidence', alias: 'd', body: ['[EVIDENCE ', '{d.id}', '] ', '{d.text}', ' [/EVIDENCE] ', '{i}', ' ', '{@index}', '\n'] },
      '</documents>\nQuestion: ',
      '{question}',
    ]);
    const each = doc.messages[1].nodes[1];
    expect(each.type).toBe('each');
    if (each.type === 'each') {
      expect(slice(doc, each.headSpan)).toBe('{{#each evidence as |d i|}}');
      expect(slice(doc, each.span)).toMatch(/^\{\{#each evidence as \|d i\|\}\}[\s\S]*\{\{\/each\}\}$/);
    }
  });

  it('records slot uses with role, form, span and delimiter', () => {
    expect(usesOf(doc)).toEqual([
      'policy/var/system/-@policy',
      'history/history/system/-@{{history}}',
      'evidence/each/user/documents@evidence',
      'question/var/user/-@question',
    ]);
    expect(doc.uses[2].span).toEqual(at(SUPPORT, 'evidence', 1));
  });

  it('drops whitespace before the first marker and keeps text before it as an implicit user message', () => {
    const blank = parseTemplate('/w/a.prompt', '\n\n  {{role "system"}}Rules.{{role "user"}}{{q}}');
    expect(blank.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const implicit = parseTemplate('/w/b.prompt', 'Say hi to {{name}}.\n{{role "system"}}Be brief.');
    expect(implicit.messages.map((m) => [m.role, slice(implicit, m.markerSpan)])).toEqual([
      ['user', ''],
      ['system', '{{role "system"}}'],
    ]);
    expect(implicit.messages[0].markerSpan).toEqual({ start: 0, end: 0 });
    expect(usesOf(implicit)).toEqual(['name/var/user/-@name']);
  });

  it('reads role blocks as messages and continues with the previous role after them', () => {
    const text = '{{#role "system"}}Policy: {{policy}}{{/role}}\n{{#role "user"}}Q: {{q}}{{/role}}\nTrailing {{extra}}';
    const d = parseTemplate('/w/c.prompt', text);
    expect(d.messages.map((m) => [m.role, slice(d, m.markerSpan)])).toEqual([
      ['system', '{{#role "system"}}'],
      ['user', '{{#role "user"}}'],
      ['user', ''],
    ]);
    expect(slice(d, d.messages[0].span)).toBe('{{#role "system"}}Policy: {{policy}}{{/role}}');
    expect(usesOf(d)).toEqual(['policy/var/system/-@policy', 'q/var/user/-@q', 'extra/var/user/-@extra']);
  });

  it('maps model to assistant and continues as the model after {{history}}', () => {
    const d = parseTemplate('/w/h.prompt', '{{role "model"}}Earlier answer.{{history}}After history {{x}}');
    expect(d.messages.map((m) => m.role)).toEqual(['assistant', 'assistant']);
    expect(d.uses.map((u) => [u.slot, u.role])).toEqual([
      ['history', 'assistant'],
      ['x', 'assistant'],
    ]);
  });
});

describe('dotprompt: scopes inside blocks', () => {
  const cases: Array<{ name: string; text: string; uses: string[]; nodes?: unknown[] }> = [
    {
      name: 'this, this.x, @index, @key and bare names inside an unaliased each are not slots',
      text: '{{#each docs}}{{this}} {{this.title}} {{title}} {{@index}} {{@key}}{{/each}}',
      uses: ['docs/each/user/-@docs'],
      nodes: [{ each: 'docs', alias: undefined, body: ['{this}', ' ', '{this.title}', ' ', '{this.title}', ' ', '{@index}', ' ', '{@key}'] }],
    },
    {
      name: '../x refers to an outer slot, @root.x too',
      text: '{{#each docs as |d|}}{{../question}} {{@root.topic}} {{d}}{{/each}}',
      uses: ['docs/each/user/-@docs', 'question/var/user/-@../question', 'topic/var/user/-@@root.topic'],
    },
    {
      name: 'nested each with block params: inner alias, outer alias, and ../../ to the root',
      text: '{{#each groups as |g|}}{{#each g.items as |it|}}{{it.text}} {{g.name}} {{../../lang}}{{/each}}{{/each}}',
      uses: ['groups/each/user/-@groups', 'lang/var/user/-@../../lang'],
      nodes: [{ each: 'groups', alias: 'g', body: [{ each: 'g.items', alias: 'it', body: ['{it.text}', ' ', '{g.name}', ' ', '{lang}'] }] }],
    },
    {
      name: '../ from a nested unaliased loop points at the outer item',
      text: '{{#each a}}{{#each b}}{{../name}}{{/each}}{{/each}}',
      uses: ['a/each/user/-@a'],
      nodes: [{ each: 'a', alias: undefined, body: [{ each: 'this.b', alias: undefined, body: ['{...name}'] }] }],
    },
    {
      name: 'if / unless / else if chains, with and without else',
      text: '{{#if a}}A{{else if b}}B{{else}}C{{/if}}{{#unless c}}not c{{/unless}}',
      uses: ['a/if/user/-@a', 'b/if/user/-@b', 'c/if/user/-@c'],
      nodes: [
        { if: 'a', negate: false, body: ['A'], inverse: [{ if: 'b', negate: false, body: ['B'], inverse: ['C'] }] },
        { if: 'c', negate: true, body: ['not c'] },
      ],
    },
    {
      name: 'each with else',
      text: '{{#each items}}- {{this}}{{else}}(none){{/each}}',
      uses: ['items/each/user/-@items'],
      nodes: [{ each: 'items', alias: undefined, body: ['- ', '{this}'], inverse: ['(none)'] }],
    },
    {
      name: 'if inside each does not change the context',
      text: '{{#each docs as |d|}}{{#if d.ok}}{{d.text}}{{/if}}{{#if flag}}{{/if}}{{/each}}',
      uses: ['docs/each/user/-@docs'],
    },
    {
      name: 'raw, comments, helpers with path arguments',
      text: '{{{html}}} {{! a comment }}{{!-- long {{y}} --}} {{media url=photo}} {{json data}} {{section "notes"}} {{uppercase (lookup map key)}}',
      uses: ['html/var/user/-@html', 'photo/var/user/-@photo', 'data/var/user/-@data', 'map/var/user/-@map', 'key/var/user/-@key'],
      nodes: ['{html raw}', ' ', ' ', ' ', '{data raw}', ' ', ' '],
    },
    {
      name: 'mustache-style sections and inverted sections',
      text: '{{#items}}- {{name}}{{/items}}{{^items}}none{{/items}}',
      uses: ['items/each/user/-@items', 'items/if/user/-@items'],
      nodes: [
        { each: 'items', alias: undefined, body: ['- ', '{this.name}'] },
        { if: 'items', negate: true, body: ['none'] },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseTemplate('/w/t.prompt', c.text);
      expect(d.findings).toEqual([]);
      expect(usesOf(d)).toEqual(c.uses);
      if (c.nodes) expect(view(d.messages[0].nodes)).toEqual(c.nodes);
    });
  }
});

describe('dotprompt: delimiters', () => {
  const cases: Array<{ name: string; text: string; expected: Record<string, string | undefined> }> = [
    { name: 'XML-like tag pair', text: '<documents>\n{{docs}}\n</documents>', expected: { docs: 'documents' } },
    { name: 'tag with attributes', text: '<evidence id="x1">{{ev}}</evidence>', expected: { ev: 'evidence' } },
    { name: 'bracket label lines', text: '[EVIDENCE]\n{{ev}}\n[/EVIDENCE]', expected: { ev: 'EVIDENCE' } },
    { name: 'bracket label with id', text: '[DATA batch-1] {{rows}} [/DATA]', expected: { rows: 'DATA' } },
    { name: 'fenced block', text: 'Data:\n```json\n{{payload}}\n```\n', expected: { payload: '```' } },
    { name: 'triple quotes', text: 'Text: """{{body}}"""', expected: { body: '"""' } },
    { name: 'innermost wins', text: '<outer>[INNER]{{x}}[/INNER]</outer>', expected: { x: 'INNER' } },
    { name: 'bare', text: 'Question: {{q}}', expected: { q: undefined } },
    { name: 'unclosed tag is not a delimiter', text: '<documents>\n{{docs}}\n', expected: { docs: undefined } },
    { name: 'a closed pair before the use does not count', text: '<a>x</a> {{q}}', expected: { q: undefined } },
    { name: 'inside an attribute is not delimited', text: '<doc src="{{url}}">x</doc>', expected: { url: undefined } },
    {
      name: 'a delimiter in another message does not protect the use',
      text: '{{role "system"}}<data>\n{{role "user"}}{{q}}\n</data>',
      expected: { q: undefined },
    },
    {
      name: 'a loop whose body wraps every item is delimited',
      text: '{{#each docs as |d|}}<doc id="{{d.id}}">{{d.text}}</doc>{{/each}}',
      expected: { docs: 'doc' },
    },
    {
      name: 'a loop with one unwrapped item reference is not',
      text: '{{#each docs as |d|}}<doc>{{d.text}}</doc> {{d.summary}}{{/each}}',
      expected: { docs: undefined },
    },
    {
      name: 'a loop wrapped with bracket labels and an id in the label',
      text: '{{#each evidence}}[EVIDENCE {{id}}] {{text}} [/EVIDENCE]\n{{/each}}',
      expected: { evidence: 'EVIDENCE' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseTemplate('/w/t.prompt', c.text);
      expect(d.findings).toEqual([]);
      const got: Record<string, string | undefined> = {};
      for (const u of d.uses) got[u.slot] = u.delimiter;
      expect(got).toEqual(c.expected);
    });
  }
});

describe('dotprompt: malformed input gives located findings, never exceptions', () => {
  const cases: Array<{ name: string; text: string; findings: Array<[string, RegExp]>; uses?: string[] }> = [
    {
      name: 'unterminated {{#each',
      text: 'Intro {{q}}\n{{#each docs as |d|}}\n{{d.text}}\n',
      findings: [['{{#each docs as |d|}}', /never closed: add '\{\{\/each\}\}'/]],
      uses: ['q/var/user/-@q', 'docs/each/user/-@docs'],
    },
    {
      name: 'block closed by an outer closer',
      text: '{{#each docs}}{{#if ok}}x{{/each}} {{after}}',
      findings: [['{{#if ok}}', /not closed: add '\{\{\/if\}\}' before '\{\{\/each\}\}'/]],
      uses: ['docs/each/user/-@docs', 'after/var/user/-@after'],
    },
    {
      name: 'stray closer',
      text: 'Hello {{name}}{{/if}} and {{more}}',
      findings: [['{{/if}}', /closes a block that was never opened/]],
      uses: ['name/var/user/-@name', 'more/var/user/-@more'],
    },
    {
      name: 'unterminated mustache',
      text: 'Hello {{name\nNext {{other}}',
      findings: [['{{name', /Unterminated Handlebars tag/]],
      uses: ['other/var/user/-@other'],
    },
    {
      name: 'syntax error inside a tag',
      text: 'A {{helper arg=}} B {{b}}',
      findings: [['{{helper arg=}}', /Handlebars syntax error in '\{\{helper arg=\}\}': expected .* but found '\}\}'/]],
      uses: ['b/var/user/-@b'],
    },
    {
      name: 'each without a list and if without a condition',
      text: '{{#each}}x{{/each}}{{#if}}y{{/if}}',
      findings: [
        ['{{#each}}', /needs a value/],
        ['{{#if}}', /needs a condition/],
      ],
    },
    {
      name: 'unknown role and unquoted role',
      text: '{{role "boss"}}a{{role user}}b',
      findings: [
        ['"boss"', /Unknown role "boss"/],
        ['user', /expects a quoted role name/],
      ],
    },
    {
      name: 'bad YAML front matter (duplicate key)',
      text: '---\nmodel: gpt-4o\nmodel: gpt-4o-mini\n---\n{{q}}',
      findings: [['model', /Front matter YAML error: Map keys must be unique/]],
      uses: ['q/var/user/-@q'],
    },
    {
      name: 'tab-indented front matter',
      text: '---\ninput:\n\tschema: {}\n---\n{{q}}',
      findings: [['\t', /Tabs are not allowed as indentation/]],
      uses: ['q/var/user/-@q'],
    },
    {
      name: 'front matter that is not a mapping',
      text: '---\n- a\n- b\n---\n{{q}}',
      findings: [['- a\n- b', /must be a YAML mapping/]],
      uses: ['q/var/user/-@q'],
    },
    {
      name: 'unclosed front matter',
      text: '---\nmodel: x\n{{q}}',
      findings: [['---', /front matter is not closed/]],
      uses: ['q/var/user/-@q'],
    },
    {
      name: 'context of the wrong type',
      text: '---\ncontext: [a, b]\n---\n{{q}}',
      findings: [['[a, b]', /context: expected a relative path/]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseTemplate('/w/bad.prompt', c.text);
      expectSpansInside(d);
      expect(d.findings.map((f) => f.rule)).toEqual(c.findings.map(() => 'template-invalid'));
      c.findings.forEach(([source, message], k) => {
        expect(slice(d, d.findings[k].span)).toBe(source);
        expect(d.findings[k].message).toMatch(message);
        expect(d.findings[k].severity).toBe('error');
      });
      if (c.uses) expect(usesOf(d)).toEqual(c.uses);
    });
  }

  it('finds the YAML error position in the template text', () => {
    const text = '---\nmodel: gpt-4o\nconfig: { temperature: 0.2\n---\n{{q}}';
    const d = parseTemplate('/w/y.prompt', text);
    expect(d.findings).toHaveLength(1);
    expect(d.findings[0].span.start).toBeGreaterThan(text.indexOf('config'));
    expect(d.findings[0].span.end).toBeLessThanOrEqual(text.indexOf('\n---\n{{q}}') + 1);
  });

  it('survives every prefix and random corruption of a real template', () => {
    // Deterministic pseudo-random corruption: drop, duplicate or insert template characters.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = ['{{', '}}', '{{#each ', '{{/each}}', '{{else}}', '|', '"', '---\n', '{{!', '\r\n', '\t', '\uFEFF', '{{{', '}}}', '~', '../', '@'];
    for (let cut = 0; cut <= SUPPORT.length; cut += 11) expectSpansInside(parseTemplate('/w/p.prompt', SUPPORT.slice(0, cut)));
    for (let round = 0; round < 80; round++) {
      let t = SUPPORT;
      for (let k = 0; k < 3; k++) {
        const pos = rand(t.length);
        const op = rand(3);
        if (op === 0) t = t.slice(0, pos) + t.slice(pos + 1 + rand(8));
        else if (op === 1) t = t.slice(0, pos) + pieces[rand(pieces.length)] + t.slice(pos);
        else t = t.slice(0, pos) + t.slice(pos, pos + 10) + t.slice(pos);
      }
      const d = parseTemplate('/w/r.prompt', t);
      expectSpansInside(d);
      expect(d.findings.every((f) => !/Internal error/.test(f.message))).toBe(true);
    }
  });
});

describe('dotprompt: line endings, tabs, BOM, whitespace control', () => {
  it('keeps exact spans with CRLF line endings and a BOM', () => {
    const text = '\uFEFF---\r\nmodel: gpt-4o\r\n---\r\n{{role "system"}}\r\n\tRules:\t{{policy}}\r\n{{#each docs as |d|}}\r\n<doc>{{d.text}}</doc>\r\n{{/each}}\r\n{{role "user"}}\r\n{{question}}\r\n';
    const d = parseTemplate('/w/crlf.prompt', text);
    expect(d.findings).toEqual([]);
    expect(d.frontMatter?.model).toEqual({ value: 'gpt-4o', span: at(text, 'gpt-4o') });
    expect(d.frontMatter?.span.start).toBe(1);
    expect(usesOf(d)).toEqual(['policy/var/system/-@policy', 'docs/each/system/doc@docs', 'question/var/user/-@question']);
    expect(d.uses.map((u) => u.span)).toEqual([at(text, 'policy'), at(text, 'docs'), at(text, 'question')]);
    const each = d.messages[0].nodes.find((n) => n.type === 'each');
    expect(each && slice(d, each.span)).toBe('{{#each docs as |d|}}\r\n<doc>{{d.text}}</doc>\r\n{{/each}}');
  });

  it('handles a lone CR as a line break like the Handlebars lexer does', () => {
    const text = 'a\r{{x}}\r\r{{#if y}}\r{{z}}{{/if}}';
    const d = parseTemplate('/w/cr.prompt', text);
    expect(d.uses.map((u) => u.span)).toEqual([at(text, 'x'), at(text, 'y'), at(text, 'z')]);
  });

  it('keeps exact spans and text around U+2028 / U+2029 separators', () => {
    const text = 'a\n b\u2028c {{x}} {{y}}\u2029\nd {{#if q}}\u2028{{z}}{{/if}}';
    const d = parseTemplate('/w/ls.prompt', text);
    expect(d.uses.map((u) => u.span)).toEqual([at(text, 'x'), at(text, 'y'), at(text, 'q'), at(text, 'z')]);
    expect(view(d.messages[0].nodes)[0]).toBe('a\n b\u2028c ');
  });

  it('applies ~ whitespace control to text but keeps source spans', () => {
    const text = 'Hello   {{~name~}}   !';
    const d = parseTemplate('/w/ws.prompt', text);
    expect(view(d.messages[0].nodes)).toEqual(['Hello', '{name}', '!']);
    const first = d.messages[0].nodes[0];
    expect(slice(d, first.span)).toBe('Hello   ');
  });

  it('counts spans in UTF-16 code units across astral characters', () => {
    const text = '😀 Résumé 𝒳 {{name}} 中文 {{other}}';
    const d = parseTemplate('/w/u.prompt', text);
    expect(d.uses.map((u) => u.span)).toEqual([at(text, 'name'), at(text, 'other')]);
  });
});

describe('dotprompt: large and deep bodies', () => {
  /** Renders nodes to a compact string so a chunked parse can be compared with the source. */
  const flat = (nodes: readonly TemplateNode[] | undefined): string =>
    (nodes ?? [])
      .map((n) => {
        if (n.type === 'text') return n.text;
        if (n.type === 'var') return `<${n.path.join('.')}>`;
        if (n.type === 'if') return `(${n.path.join('.')}?${flat(n.body)})`;
        if (n.type === 'each') return `[${n.path.join('.')}*${flat(n.body)}]`;
        return '<history>';
      })
      .join('');

  for (const [name, sep] of [
    ['many lines', '\n'],
    ['one long line', ' '],
  ] as const) {
    it(`parses a body of 500 tags on ${name} in pieces with exact spans`, () => {
      const n = 100;
      const text = Array.from({ length: n }, (_, i) => `Line ${i}: {{v${i}}} {{#if c${i}}}[{{w${i}}}]{{/if}}`).join(sep);
      const d = parseTemplate('/w/big.prompt', text);
      expect(d.findings).toEqual([]);
      const expected = Array.from({ length: n }, (_, i) => [`v${i}/var`, `c${i}/if`, `w${i}/var`]).flat();
      expect(d.uses.map((u) => `${u.slot}/${u.form}`)).toEqual(expected);
      for (const u of d.uses) expect(slice(d, u.span)).toBe(u.slot);
      expect(flat(d.messages[0].nodes)).toBe(Array.from({ length: n }, (_, i) => `Line ${i}: <v${i}> (c${i}?[<w${i}>])`).join(sep));
    });
  }

  it('reads blocks nested deeper than 64 levels as plain tags, reported once', () => {
    const depth = 70;
    const text = Array.from({ length: depth }, (_, i) => `{{#if a${i}}}`).join('') + 'x' + '{{/if}}'.repeat(depth);
    const d = parseTemplate('/w/deep.prompt', text);
    expect(d.findings.map((f) => [f.rule, slice(d, f.span)])).toEqual([['template-invalid', '{{#if a64}}']]);
    expect(d.findings[0].message).toMatch(/nested more than 64 levels/);
    expect(d.uses).toHaveLength(depth);
    expect(d.uses.slice(0, 64).every((u) => u.form === 'if')).toBe(true);
    expect(d.uses.slice(64).map((u) => [u.slot, u.form])).toEqual(Array.from({ length: 6 }, (_, i) => [`a${64 + i}`, 'var']));
  });

  it('balances a large broken body before cutting it', () => {
    const lines = Array.from({ length: 120 }, (_, i) => `{{#each list${i}}}{{this}}{{/each}} {{q${i}}}`);
    lines[10] = '{{#each broken}}{{this}}';
    lines[50] = '{{/if}} stray';
    const text = lines.join('\n');
    const d = parseTemplate('/w/bigbad.prompt', text);
    expect(d.findings.map((f) => slice(d, f.span))).toEqual(['{{#each broken}}', '{{/if}}']);
    expect(d.uses.filter((u) => u.slot.startsWith('q')).length).toBe(118);
    for (const u of d.uses) expect(slice(d, u.span)).toBe(u.slot);
  });
});

describe('dotprompt: one parse per body', () => {
  it('the scanner and the renderer read one tree, and rendering leaves it as parsed', () => {
    // A literal path is one Handlebars' compiler rewrites in place; the shared tree must not see it.
    const body = '{{role "system"}}\nHi {{"name"}} {{#if flag}}yes{{else}}no{{/if}}\n{{#each docs as |d|}}[{{d}}]{{/each}}';
    const text = `---\nmodel: openai/gpt-4o\n---\n\n${body}\n\n`;
    const doc = parseTemplate('/w/one.prompt', text);
    expect(doc.uses.map((u) => u.slot)).toEqual(['name', 'flag', 'docs']);
    const tree = bodyTree(body);
    const asParsed = JSON.stringify(parseHandlebars(body));
    expect(JSON.stringify(tree)).toBe(asParsed);
    const out = renderDotprompt(text, { input: { name: 'Ada', flag: true, docs: ['a', 'b'] } });
    expect(out.issues).toEqual([]);
    expect(out.messages.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''))).toEqual(['\nHi Ada yes\n[a][b]']);
    // The renderer took the tree the scanner had parsed (same object), and compiled a copy of it.
    expect(bodyTree(body)).toBe(tree);
    expect(JSON.stringify(tree)).toBe(asParsed);
  });

  it('a literal path is a lookup of its text, as Handlebars compiles it', () => {
    const doc = parseTemplate('/w/lit.prompt', '{{"name"}} {{#"flag"}}on{{/"flag"}} {{1}}');
    expect(doc.findings).toEqual([]);
    expect(doc.uses.map((u) => u.slot)).toEqual(['name', 'flag', '1']);
    const out = renderDotprompt(doc.text, { input: { name: 'Ada', flag: true, 1: 'one' } });
    expect(out.messages[0].parts).toEqual([{ type: 'text', text: 'Ada on one' }]);
  });
});
