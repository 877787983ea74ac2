/**
 * Golden cases of plain prompt files, rendered by the real libraries (plain_oracle.py: langchain-core's
 * PromptTemplate and load_prompt, jinja2's Environment) and by the product through the library
 * (`openWorkspace(dir).assemble`). Each case is a folder with a `prompts/system.md` first message
 * and the files of its other messages, composed by a context config's `messages`.
 */

export interface OracleMessage {
  role: 'system' | 'user' | 'assistant';
  file: string;
  key?: string;
  via: 'langchain' | 'jinja2' | 'load_prompt' | 'text';
  format?: 'f-string' | 'jinja2' | 'mustache';
  jinja?: { trim_blocks?: boolean; lstrip_blocks?: boolean; keep_trailing_newline?: boolean; undefined?: 'default' | 'strict'; sandboxed?: boolean };
  replace?: Record<string, string>;
  strip?: 'file' | 'output';
}

export interface PlainCase {
  id: string;
  files: Record<string, string>;
  messages: OracleMessage[];
  values: Record<string, unknown>;
}

const SYSTEM = 'You are a careful assistant.\n';

function one(id: string, file: string, text: string, m: Omit<OracleMessage, 'file' | 'role'>, values: Record<string, unknown>, extra: Record<string, string> = {}): PlainCase {
  return {
    id,
    files: { 'prompts/system.md': SYSTEM, [file]: text, ...extra },
    messages: [
      { role: 'system', file: 'prompts/system.md', via: 'text' },
      { role: 'user', file, ...m },
    ],
    values,
  };
}

const V = {
  question: 'Does SDK 4.2 retry 429s?',
  name: 'Ada',
  count: 3,
  flag: true,
  none: null,
  ratio: 7,
  html: 'a < b & "c" > d',
  tags: ['alpha', 'beta'],
  user: { name: 'Ada', langs: ['en', 'fr'] },
  rows: [{ id: 1, title: 'One' }, { id: 2, title: 'Two' }],
  empty: '',
  zero: 0,
};

/** f-string templates: escapes, refusals, conversions, specs, missing values. */
const FSTRINGS: Array<[string, string]> = [
  ['plain', 'Answer: {question}\n'],
  ['two', 'Hello {name}, you asked {question}'],
  ['escapes', 'JSON: {{"q": "{question}"}} and }} {{ literal'],
  ['repeat', '{name} {name} {name}'],
  ['number', 'count={count} flag={flag} none={none}'],
  ['list', 'tags={tags}'],
  ['dict', 'user={user}'],
  ['conv-r', 'repr={name!r} str={name!s}'],
  ['conv-a', 'ascii={html!a}'],
  ['spec-width', '[{name:>10}] [{name:<8}] [{name:^9}] [{name:*^9}]'],
  ['spec-precision', '[{question:.5}]'],
  ['spec-int', '[{count:05}] [{count:>4}] [{count:+}]'],
  ['missing', 'Hello {nobody}'],
  ['attr', 'Name {user.name}'],
  ['index', 'First {tags[0]}'],
  ['digits', 'Pos {0}'],
  ['empty-field', 'Auto {}'],
  ['single-close', 'oops } here {name}'],
  ['single-open', 'oops { here'],
  ['unclosed', 'oops {name'],
  ['nested-spec', '{name:{count}}'],
  ['html', 'Raw {html}'],
  ['unicode', 'Grüße {name} — ✓ {question}'],
  ['crlf', 'Line one {name}\r\nLine two\r\n'],
  ['empty-value', '[{empty}] [{zero}]'],
  ['markdown', '# Task\n\n- Answer {question}\n- Cite sources\n\n```json\n{{"answer": "..."}}\n```\n'],
];

/** Jinja2 templates, each rendered with every combination of the Environment settings. */
const JINJAS: Array<[string, string]> = [
  ['loop', 'Tags:\n{% for t in tags %}\n  - {{ t }}\n{% endfor %}\nDone.\n'],
  ['if-block', 'Hi {{ name }}\n  {% if flag %}\n    Flag is on\n  {% endif %}\nBye\n'],
  ['rows', '{% for r in rows -%}\n{{ r.id }}: {{ r.title }}\n{% endfor %}'],
  ['comment', 'A\n  {# note #}\nB\n'],
  ['missing', 'Hello {{ nobody }}!\n'],
  ['missing-attr', 'Hello {{ nobody.name }}!\n'],
  ['missing-if', '{% if nobody %}yes{% else %}no{% endif %}\n'],
  ['default', 'Hello {{ nobody | default("you") }}!\n'],
  ['defined', '{% if nobody is defined %}d{% else %}u{% endif %}\n'],
  ['plus', 'A\n    {%+ if flag %}x{% endif %}\n  {% if flag +%}\ny\n{% endif %}\n'],
  ['raw', '  {% raw %}\n{{ not }}\n  {% endraw %}\nafter\n'],
  ['set', '{% set greeting = "Hi " ~ name %}\n{{ greeting }}\n'],
  ['filters', '{{ question | upper }} {{ tags | join(", ") }} {{ user.langs | length }}\n'],
  ['unknown-filter', '{{ question | shout }}\n'],
  ['html', '{{ html }}\n'],
  ['two-newlines', 'end\n\n'],
  ['crlf', 'a {{ name }}\r\n{% if flag %}\r\nb\r\n{% endif %}\r\n'],
];

/** LangChain Mustache templates. */
const MUSTACHES: Array<[string, string]> = [
  ['var', 'Hi {{name}}, {{question}}\n'],
  ['escape', 'Escaped {{html}} raw {{{html}}} amp {{& html}}\n'],
  ['section-list', '{{#tags}}\n- {{.}}\n{{/tags}}\n'],
  ['section-rows', '{{#rows}}{{id}}={{title}};{{/rows}}\n'],
  ['inverted', '{{^none}}no value{{/none}} {{^flag}}off{{/flag}}\n'],
  ['dotted', '{{user.name}} speaks {{user.langs.0}} and {{user.langs.1}}\n'],
  ['missing', 'Hello {{nobody}}!\n'],
  ['string-traverse', '{{name.length}}|{{question.0}}\n'],
  ['numbers', '{{count}} {{zero}} {{flag}} {{none}}\n'],
  ['section-object', '{{#user}}{{name}}{{/user}}\n'],
  ['comment', 'A {{! hidden }}B\n'],
  ['standalone', 'List:\n  {{#tags}}\n  * {{.}}\n  {{/tags}}\nEnd\n'],
  ['delims', '{{=<% %>=}}\n<% name %> {{name}}\n'],
];

export function plainCases(): PlainCase[] {
  const out: PlainCase[] = [];
  for (const [name, text] of FSTRINGS) out.push(one(`fstring/${name}`, 'prompts/user.md', text, { via: 'langchain', format: 'f-string' }, V));
  for (const [name, text] of JINJAS) {
    for (let bits = 0; bits < 16; bits++) {
      const jinja = {
        trim_blocks: (bits & 1) !== 0,
        lstrip_blocks: (bits & 2) !== 0,
        keep_trailing_newline: (bits & 4) !== 0,
        undefined: (bits & 8) !== 0 ? ('strict' as const) : ('default' as const),
      };
      out.push(one(`jinja2/${name}/${bits}`, 'prompts/user.j2', text, { via: 'jinja2', jinja }, V));
    }
    out.push(one(`jinja2/${name}/sandboxed`, 'prompts/user.j2', text, { via: 'jinja2', jinja: { sandboxed: true } }, V));
    out.push(one(`jinja2/${name}/langchain`, 'prompts/user.j2', text, { via: 'langchain', format: 'jinja2' }, V));
  }
  for (const [name, text] of MUSTACHES) out.push(one(`mustache/${name}`, 'prompts/user.mustache', text, { via: 'langchain', format: 'mustache' }, V));

  // LangChain serialized prompts, read as load_prompt reads them.
  out.push(one('load_prompt/prompt-yaml', 'prompts/qa.yaml', '_type: prompt\ninput_variables: [question]\ntemplate: "Q: {question}\\nA:"\n', { via: 'load_prompt' }, V));
  out.push(one('load_prompt/prompt-json', 'prompts/qa.json', JSON.stringify({ _type: 'prompt', input_variables: ['name'], template: 'Hello {name}, {{literal}}' }), { via: 'load_prompt' }, V));
  out.push(one('load_prompt/mustache', 'prompts/qa.yaml', "_type: prompt\ntemplate_format: mustache\ninput_variables: [html]\ntemplate: 'Say {{html}}'\n", { via: 'load_prompt' }, V));
  out.push(one('load_prompt/template-path', 'prompts/qa.yaml', '_type: prompt\ninput_variables: [question]\ntemplate_path: prompts/qa_template.txt\n', { via: 'load_prompt' }, V, { 'prompts/qa_template.txt': 'From a file: {question}\n' }));
  out.push(one('load_prompt/chat', 'prompts/chat.yaml', "_type: chat\ninput_variables: [question]\nmessages:\n  - prompt:\n      template: 'Chat about {question}'\n", { via: 'load_prompt' }, V));
  out.push(one('load_prompt/jinja2-refused', 'prompts/qa.yaml', "_type: prompt\ntemplate_format: jinja2\ninput_variables: [name]\ntemplate: 'Hi {{ name }}'\n", { via: 'load_prompt' }, V));
  out.push(one('load_prompt/partial', 'prompts/qa.yaml', "_type: prompt\ninput_variables: [question]\npartial_variables: { tone: formal }\ntemplate: '{tone}: {question}'\n", { via: 'load_prompt' }, V));

  // Prompts kept as keys of a YAML file, and plain text with named replacements and strips.
  out.push(one('key/yaml-fstring', 'prompts/set.yaml', 'agent:\n  system: |\n    You help {name}.\n    Question: {question}\n', { via: 'langchain', format: 'f-string', key: 'agent.system' }, V));
  out.push(one('key/yaml-jinja', 'prompts/set.yaml', 'agents:\n  - name: a\n    prompt: "Hi {{ name }}\\n{% for t in tags %}{{ t }} {% endfor %}"\n', { via: 'jinja2', key: 'agents.0.prompt', jinja: { trim_blocks: true } }, V));
  out.push(one('text/replace', 'prompts/user.txt', 'Question: {question}\nUser: {{NAME}}\nLeft: {other}\n', { via: 'text', replace: { '{question}': 'question', '{{NAME}}': 'name' } }, V));
  out.push(one('text/strip', 'prompts/user.txt', '\n\n  Padded text {x}  \n\n', { via: 'text', strip: 'file' }, V));
  out.push(one('jinja2/strip-output', 'prompts/user.j2', '\n  {{ name }}  \n\n', { via: 'jinja2', strip: 'output' }, V));

  // A request of four files in order.
  out.push({
    id: 'compose/four',
    files: {
      'prompts/system.md': SYSTEM,
      'prompts/rules.j2': 'Rules for {{ name }}:\n{% for t in tags %}\n- {{ t }}\n{% endfor %}\n',
      'prompts/example.mustache': 'Example: {{html}}\n',
      'prompts/user.md': 'Question: {question}\n',
    },
    messages: [
      { role: 'system', file: 'prompts/system.md', via: 'text' },
      { role: 'system', file: 'prompts/rules.j2', via: 'jinja2', jinja: { trim_blocks: true, lstrip_blocks: true } },
      { role: 'assistant', file: 'prompts/example.mustache', via: 'langchain', format: 'mustache' },
      { role: 'user', file: 'prompts/user.md', via: 'langchain', format: 'f-string' },
    ],
    values: V,
  });
  return out;
}
