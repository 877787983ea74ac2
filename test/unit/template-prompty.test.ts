/**
 * Prompty templates (`.prompty`): front matter (model configuration, inputs), role lines, Jinja2
 * and Mustache placeholders with exact spans, scoping, the history-loop idiom, delimiters, and
 * located findings for broken input.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/core/language';
import type { Span, TemplateDoc, TemplateNode } from '../../src/core/types';
import { at, expectSpansInside, slice, usesOf, view } from './support/spans';




const REFUND = `---
name: Refund support
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-4o
  parameters:
    max_tokens: 1200
inputs:
  policy:
    type: string
  evidence:
    type: array
  question:
    type: string
sample:
  question: Can I return the pole?
---
You are the refund assistant. {# internal note #}
{{ policy }}

# user:
<evidence>
{% for d in evidence %}
[EVIDENCE {{ d.id }}] {{ d.text | trim }} [/EVIDENCE]
{% endfor %}
</evidence>
{% if question %}Question: {{ question }}{% else %}No question.{% endif %}
`;

describe('prompty: front matter', () => {
  const doc = parseTemplate('/w/refund.prompty', REFUND);
  it('reads the model from model.configuration and the declared inputs', () => {
    expect(doc.format).toBe('prompty');
    expect(doc.findings).toEqual([]);
    expect(doc.frontMatter?.model).toEqual({ value: 'gpt-4o', span: at(REFUND, 'gpt-4o') });
    expect(doc.frontMatter?.inputs).toEqual({ policy: at(REFUND, 'policy'), evidence: at(REFUND, 'evidence'), question: at(REFUND, 'question') });
    expect(doc.frontMatter?.context).toBeUndefined();
  });

  it('prefers configuration.name, and reads a plain model string and an inputs list', () => {
    const text = '---\nmodel:\n  configuration:\n    name: gpt-4o-mini\n    azure_deployment: dep\n---\nx';
    expect(parseTemplate('/w/a.prompty', text).frontMatter?.model?.value).toBe('gpt-4o-mini');
    const plain = parseTemplate('/w/b.prompty', '---\nmodel: claude-sonnet-4-5\ninputs:\n  - name: q\n  - name: docs\n---\nuser:\n{{q}}');
    expect(plain.frontMatter?.model?.value).toBe('claude-sonnet-4-5');
    expect(Object.keys(plain.frontMatter!.inputs)).toEqual(['q', 'docs']);
    expect(slice(plain, plain.frontMatter!.inputs.docs)).toBe('docs');
  });
});

describe('prompty: messages', () => {
  const doc = parseTemplate('/w/refund.prompty', REFUND);
  it('starts with an implicit system message and splits at role lines', () => {
    expect(doc.messages.map((m) => [m.role, slice(doc, m.markerSpan)])).toEqual([
      ['system', ''],
      ['user', '# user:'],
    ]);
    expect(view(doc.messages[0].nodes)).toEqual(['You are the refund assistant. ', '\n', '{policy}', '\n\n']);
  });

  it('records uses with role, form, span and delimiter', () => {
    expect(usesOf(doc)).toEqual([
      'policy/var/system/-@policy',
      'evidence/each/user/evidence@evidence',
      'question/if/user/-@question',
      'question/var/user/-@question',
    ]);
    expect(doc.uses[1].span).toEqual(at(REFUND, 'evidence', 2));
  });

  it('builds for and if nodes with filters and else branches', () => {
    expect(view(doc.messages[1].nodes)).toEqual([
      '<evidence>\n',
      { each: 'evidence', alias: 'd', body: ['\n[EVIDENCE ', '{d.id}', '] ', '{d.text}', ' [/EVIDENCE]\n'] },
      '\n</evidence>\n',
      { if: 'question', negate: false, body: ['Question: ', '{question}'], inverse: ['No question.'] },
      // Prompty 0.1.x renders without the template's trailing newline (keep_trailing_newline off).
    ]);
    const each = doc.messages[1].nodes[1];
    if (each.type !== 'each') throw new Error('expected each');
    expect(slice(doc, each.headSpan)).toBe('{% for d in evidence %}');
    expect(slice(doc, each.span)).toBe('{% for d in evidence %}\n[EVIDENCE {{ d.id }}] {{ d.text | trim }} [/EVIDENCE]\n{% endfor %}');
  });

  it('accepts role lines as Prompty 0.1.x reads them: any case, with #, alone on their line; no developer or tool', () => {
    const text = 'SYSTEM:\nRules.\nuser: this is not a role line\nAssistant:  \nOk.\n  # function :\nF.\n  developer :\ntool:\n{{result}}';
    const d = parseTemplate('/w/r.prompty', text);
    expect(d.messages.map((m) => [m.role, slice(d, m.markerSpan)])).toEqual([
      ['system', 'SYSTEM:'],
      ['assistant', 'Assistant:'],
      ['tool', '# function :'],
    ]);
    expect(view(d.messages[0].nodes)).toEqual(['Rules.\nuser: this is not a role line\n']);
    // 0.1.x's parser knows no developer or tool role: those lines stay in the function message.
    expect(usesOf(d)).toEqual(['result/var/tool/-@result']);
  });

  it('accepts role lines as Prompty v2 reads them: developer and [attributes], no function', () => {
    const text = '---\nmodel:\n  id: gpt-5-mini\n---\nsystem:\nRules.\ndeveloper:\nDev.\nuser[name="ada"]:\n{{q}}\nfunction:\nnot a role';
    const d = parseTemplate('/w/r.prompty', text);
    expect(d.messages.map((m) => [m.role, slice(d, m.markerSpan)])).toEqual([
      ['system', 'system:'],
      ['developer', 'developer:'],
      ['user', 'user[name="ada"]:'],
    ]);
    expect(usesOf(d)).toEqual(['q/var/user/-@q']);
  });

  it('drops whitespace before the first role line', () => {
    const d = parseTemplate('/w/w.prompty', '---\nname: x\n---\n\n\nsystem:\nA\nuser:\n{{q}}');
    expect(d.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('turns the chat-history loop idiom into a history node', () => {
    const text = 'system:\nBe kind.\n\n{% for item in chat_history %}\n{{item.role}}:\n{{item.content}}\n{% endfor %}\n\nuser:\n{{question}}';
    const d = parseTemplate('/w/h.prompty', text);
    expect(usesOf(d)).toEqual(['chat_history/history/system/-@chat_history', 'question/var/user/-@question']);
    const hist = d.messages[0].nodes.find((n) => n.type === 'history');
    expect(hist && slice(d, hist.span)).toBe('{% for item in chat_history %}\n{{item.role}}:\n{{item.content}}\n{% endfor %}');
    expect(hist && hist.type === 'history' && hist.slot).toBe('chat_history');
  });

  it('keeps an inline transcript loop as a loop', () => {
    const text = 'user:\n<conversation>\n{% for t in history %}\n[{{ t.at }}] {{ t.role }}: {{ t.text }}\n{% endfor %}\n</conversation>';
    const d = parseTemplate('/w/t.prompty', text);
    expect(usesOf(d)).toEqual(['history/each/user/conversation@history']);
  });
});

describe('prompty: Jinja scoping and expressions', () => {
  const cases: Array<{ name: string; text: string; uses: string[]; nodes?: unknown[] }> = [
    {
      name: 'loop variables, loop.*, attributes, subscripts and filters are not slots',
      text: 'user:\n{% for d in docs | sort(attribute="score") %}{{ loop.index }} {{ d["title"] }} {{ d.text | truncate(20) }} {{ question }}{% endfor %}',
      uses: ['docs/each/user/-@docs', 'question/var/user/-@question'],
      nodes: [{ each: 'docs', alias: 'd', body: ['{loop.index}', ' ', '{d.title}', ' ', '{d.text}', ' ', '{question}'] }],
    },
    {
      name: 'tuple targets, method calls, loop conditions',
      text: 'user:\n{% for k, v in meta.items() if v %}{{ k }}={{ v }}{% endfor %}',
      uses: ['meta/each/user/-@meta'],
    },
    {
      name: 'set creates a local; tests, keyword args and literals are not slots; a called name is (jinja2 reads it from the context)',
      text: 'user:\n{% set limit = max_items | default(3) %}{{ limit }} {% if notes is defined and notes is not none %}{{ notes }}{% endif %} {{ "literal" }} {{ range(3) }} {{ fmt(value, width=4) }}',
      uses: ['max_items/var/user/-@max_items', 'notes/if/user/-@notes', 'notes/if/user/-@notes', 'notes/var/user/-@notes', 'fmt/var/user/-@fmt', 'value/var/user/-@value'],
    },
    {
      name: 'if / elif / else chain and not',
      text: 'user:\n{% if not a %}A{% elif b > 2 %}B{% else %}C{% endif %}',
      uses: ['a/if/user/-@a', 'b/if/user/-@b'],
      nodes: [{ if: 'a', negate: true, body: ['A'], inverse: [{ if: 'b', negate: false, body: ['B'], inverse: ['C'] }] }],
    },
    {
      name: 'nested loops see the outer alias',
      text: 'user:\n{% for g in groups %}{% for it in g.items %}{{ it }} {{ g.name }}{% endfor %}{% endfor %}',
      uses: ['groups/each/user/-@groups'],
      nodes: [{ each: 'groups', alias: 'g', body: [{ each: 'g.items', alias: 'it', body: ['{it}', ' ', '{g.name}'] }] }],
    },
    {
      name: 'comments and raw blocks hide placeholders',
      text: 'user:\n{# {{ hidden }} #}{% raw %}{{ literal }}{% endraw %}{{ shown }}',
      uses: ['shown/var/user/-@shown'],
      nodes: ['{{ literal }}', '{shown}'],
    },
    {
      name: 'whitespace control trims the text around the tag',
      text: 'user:\nA   {{- x -}}   B\n{%- if y -%}\n  C\n{%- endif %}',
      uses: ['x/var/user/-@x', 'y/if/user/-@y'],
      nodes: ['A', '{x}', 'B', { if: 'y', negate: false, body: ['C'] }],
    },
    {
      name: 'braces inside string literals neither open nor close a tag',
      text: 'user:\n{{ \'{{\' }}literal{{ "}}" }} {% set sep = "%}" %}{{ sep }} {{ value }}',
      uses: ['value/var/user/-@value'],
      nodes: ['{{', 'literal', '}}', ' ', '{sep}', ' ', '{value}'],
    },
    {
      name: 'for ... else',
      text: 'user:\n{% for d in docs %}{{ d }}{% else %}none{% endfor %}',
      uses: ['docs/each/user/-@docs'],
      nodes: [{ each: 'docs', alias: 'd', body: ['{d}'], inverse: ['none'] }],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseTemplate('/w/j.prompty', c.text);
      expect(d.findings).toEqual([]);
      expect(usesOf(d)).toEqual(c.uses);
      if (c.nodes) expect(view(d.messages[0].nodes)).toEqual(c.nodes);
    });
  }
});

describe('prompty: Mustache', () => {
  it('reads sections, inverted sections, raw and comments, removing standalone lines', () => {
    const text = '---\ntemplate: mustache\ninputs:\n  question: { type: string }\n---\nuser:\n{{! comment }}\n{{#evidence}}\n- {{title}}: {{{text}}} ({{question}})\n{{/evidence}}\n{{^evidence}}\nNo evidence.\n{{/evidence}}\n{{&raw}}';
    const d = parseTemplate('/w/m.prompty', text);
    expect(d.findings).toEqual([]);
    expect(usesOf(d)).toEqual(['evidence/each/user/-@evidence', 'question/var/user/-@question', 'evidence/if/user/-@evidence', 'raw/var/user/-@raw']);
    expect(view(d.messages[0].nodes)).toEqual([
      { each: 'evidence', alias: undefined, body: ['- ', '{this.title}', ': ', '{this.text raw}', ' (', '{question}', ')\n'] },
      { if: 'evidence', negate: true, body: ['No evidence.\n'] },
      '{raw raw}',
    ]);
  });

  it('gives a section wrapped in a tag its delimiter, and {{.}} is the item', () => {
    const text = '---\ntemplate: mustache\n---\nuser:\n{{#docs}}<doc>{{.}}</doc>{{/docs}}';
    const d = parseTemplate('/w/m2.prompty', text);
    expect(usesOf(d)).toEqual(['docs/each/user/doc@docs']);
  });
});

describe('prompty: malformed input gives located findings, never exceptions', () => {
  const cases: Array<{ name: string; text: string; findings: Array<[string, RegExp]>; uses?: string[] }> = [
    {
      name: 'unterminated for',
      text: 'user:\n{% for d in docs %}\n{{ d.text }}\n{{ q }}',
      findings: [['{% for d in docs %}', /never closed: add '\{% endfor %\}'/]],
      uses: ['docs/each/user/-@docs', 'q/var/user/-@q'],
    },
    {
      name: 'unterminated placeholder keeps going',
      text: 'user:\n{{ question \nNext {{ other }}',
      findings: [['{{ question ', /Unterminated placeholder '\{\{ question ': no closing '\}\}'/]],
      uses: ['other/var/user/-@other'],
    },
    {
      name: 'unterminated statement and comment',
      text: 'user:\n{% if x \n{{ y }} {# note',
      findings: [
        ['{% if x ', /Unterminated Jinja tag/],
        ['{# note', /Unterminated Jinja comment/],
      ],
      uses: ['y/var/user/-@y'],
    },
    {
      name: 'stray endif and mismatched closers',
      text: 'user:\n{% endif %}{% for d in docs %}{% if d.ok %}x{% endfor %}',
      findings: [
        ['{% endif %}', /closes a block that was never opened/],
        ['{% if d.ok %}', /not closed: add '\{% endif %\}' before '\{% endfor %\}'/],
      ],
      uses: ['docs/each/user/-@docs'],
    },
    {
      name: 'else and elif outside of blocks',
      text: 'user:\n{% else %}{% elif z %}',
      findings: [
        ['{% else %}', /outside of an '\{% if %\}' or '\{% for %\}' block/],
        ['{% elif z %}', /outside of an '\{% if %\}' block/],
      ],
    },
    {
      name: 'malformed for',
      text: 'user:\n{% for docs %}x{% endfor %}',
      findings: [['{% for docs %}', /should read '\{% for item in items %\}'/]],
    },
    {
      name: 'unclosed Mustache section',
      text: '---\ntemplate: mustache\n---\nuser:\n{{#docs}}{{title}}',
      findings: [['{{#docs}}', /never closed: add '\{\{\/docs\}\}'/]],
      uses: ['docs/each/user/-@docs'],
    },
    {
      name: 'unclosed raw block',
      text: 'user:\n{% raw %}{{ x }}',
      findings: [['{% raw %}', /never closed/]],
      uses: [],
    },
    {
      name: 'bad front matter',
      text: '---\nmodel:\n\tapi: chat\n---\nuser:\n{{ q }}',
      findings: [['\t', /Tabs are not allowed/]],
      uses: ['q/var/user/-@q'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = parseTemplate('/w/bad.prompty', c.text);
      expectSpansInside(d);
      expect(d.findings.map((f) => [slice(d, f.span), f.rule])).toEqual(c.findings.map(([s]) => [s, 'template-invalid']));
      c.findings.forEach(([, message], k) => expect(d.findings[k].message).toMatch(message));
      if (c.uses) expect(usesOf(d)).toEqual(c.uses);
    });
  }

  it('survives every prefix and random corruption', () => {
    let seed = 99;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = ['{{', '}}', '{%', '%}', '{#', '#}', '{% for x in y %}', '{% endif %}', '{{#a}}', '{{/b}}', '-', '\r\n', '\t', '\uFEFF', 'user:\n', '"', "'"];
    for (let cut = 0; cut <= REFUND.length; cut += 11) expectSpansInside(parseTemplate('/w/p.prompty', REFUND.slice(0, cut)));
    for (let round = 0; round < 80; round++) {
      let t = REFUND;
      for (let k = 0; k < 3; k++) {
        const pos = rand(t.length);
        const op = rand(3);
        if (op === 0) t = t.slice(0, pos) + t.slice(pos + 1 + rand(8));
        else if (op === 1) t = t.slice(0, pos) + pieces[rand(pieces.length)] + t.slice(pos);
        else t = t.slice(0, pos) + t.slice(pos, pos + 10) + t.slice(pos);
      }
      const d = parseTemplate('/w/r.prompty', t);
      expectSpansInside(d);
      expect(d.findings.every((f) => !/Internal error/.test(f.message))).toBe(true);
    }
  });
});

describe('prompty: line endings, BOM', () => {
  it('keeps exact spans with CRLF', () => {
    const text = '---\r\nmodel: gpt-4o\r\n---\r\nsystem:\r\nRules {{ policy }}\r\nuser:\r\n<q>\r\n{{ question }}\r\n</q>\r\n';
    const d = parseTemplate('/w/crlf.prompty', text);
    expect(d.findings).toEqual([]);
    expect(d.messages.map((m) => [m.role, slice(d, m.markerSpan)])).toEqual([
      ['system', 'system:'],
      ['user', 'user:'],
    ]);
    expect(usesOf(d)).toEqual(['policy/var/system/-@policy', 'question/var/user/q@question']);
    expect(d.uses.map((u) => u.span)).toEqual([at(text, 'policy'), at(text, 'question')]);
    expect(view(d.messages[1].nodes)).toEqual(['<q>\r\n', '{question}', '\r\n</q>\r\n']);
  });

  it('says that the runtime cannot load a file with a byte order mark (its front matter pattern does not skip it)', () => {
    // Both runtime lines fail on such a file (golden cases v1-v1fm-0053, v2-v2fm-0091).
    const text = '\uFEFF---\r\nmodel: gpt-4o\r\n---\r\nsystem:\r\nRules {{ policy }}\r\n';
    const d = parseTemplate('/w/bom.prompty', text);
    expect(d.frontMatter).toBeUndefined();
    expect(d.findings.map((f) => [f.rule, slice(d, f.span)])).toEqual([['template-invalid', '---']]);
    expect(d.findings[0].message).toMatch(/byte order mark/);
    // A .prompt file (dotprompt) reads it as before.
    expect(parseTemplate('/w/bom.prompt', '\uFEFF---\nmodel: x\n---\nhi').findings).toEqual([]);
  });

  it('finds the front matter where the runtime does: a closing fence glued to the body, +++, ----, a repeated key', () => {
    const glued = parseTemplate('/w/g.prompty', '---\nmodel:\n  api: chat\n---system:\nHi {{ name }}\n');
    expect(glued.findings).toEqual([]);
    expect(glued.messages.map((m) => m.role)).toEqual(['system']);
    expect(glued.uses.map((u) => u.slot)).toEqual(['name']);
    const plus = parseTemplate('/w/p.prompty', '+++\nmodel:\n  api: chat\n+++\nuser:\n{{ q }}\n');
    expect(plus.findings).toEqual([]);
    expect(plus.frontMatter?.data).toEqual({ model: { api: 'chat' } });
    const dashes = parseTemplate('/w/d.prompty', '---\nname: x\n----\nuser:\n{{ q }}\n');
    expect(dashes.findings).toEqual([]);
    expect(slice(dashes, dashes.bodySpan).startsWith('-')).toBe(true);
    const twice = parseTemplate('/w/t.prompty', '---\nname: a\nname: b\n---\nuser:\nhi\n');
    expect(twice.frontMatter?.data.name).toBe('b');
    expect(twice.findings.map((f) => [f.severity, slice(twice, f.span)])).toEqual([['warning', 'n']]);
    expect(twice.findings[0].message).toMatch(/keeps its last value/);
  });
});

describe('prompty: deep nesting', () => {
  it('reads blocks nested deeper than 64 levels inline, reported once, closers still matched', () => {
    const depth = 70;
    const text = 'user:\n' + Array.from({ length: depth }, (_, i) => `{% for d${i} in list${i} %}`).join('') + '{{ d69.x }} {{ q }}' + '{% endfor %}'.repeat(depth) + ' {{ after }}';
    const d = parseTemplate('/w/deep.prompty', text);
    expect(d.findings.map((f) => [f.rule, slice(d, f.span)])).toEqual([['template-invalid', '{% for d64 in list64 %}']]);
    expect(d.findings[0].message).toMatch(/nested more than 64 levels/);
    // Aliases of the inlined loops still are not slots.
    expect(d.uses.map((u) => u.slot)).toEqual([...Array.from({ length: depth }, (_, i) => `list${i}`), 'q', 'after']);
  });
});

describe('prompty: the drift of the old scanner, now the engine tree decides', () => {
  it('{{ context }} is a slot (Prompty evaluator samples read it); `missing` and globals are not keywords to it', () => {
    const d = parseTemplate('/w/e.prompty', 'system:\nJudge from the context.\nuser:\n{{ context }} {{ missing }} {{ cycler("a") }}');
    expect([...new Set(d.uses.map((u) => u.slot))].sort()).toEqual(['context', 'missing']);
  });

  it('{{if topic == "x"}} (a statement written in print braces) is no slot named after its text', () => {
    const d = parseTemplate('/w/i.prompty', 'user:\n{{if topic == "x"}}\n{{ q }}');
    expect(d.uses.map((u) => u.slot)).not.toContain('if topic == "x"');
    // Jinja2 refuses the tag (the engine reports it when it renders); the names stay names.
    expect(d.uses.every((u) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(u.slot))).toBe(true);
  });

  it('a `# system:` line starts a system message, as Prompty 0.1.x reads it', () => {
    const d = parseTemplate('/w/h.prompty', '# system:\nRules.\nuser:\n{{ q }}');
    expect(d.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });
});
