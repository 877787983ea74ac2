/**
 * Differential suite of the Prompty engine: every case is rendered by Prompty's Python runtime
 * (test/oracle/prompty_oracle.py: jinja2's ImmutableSandboxedEnvironment + PromptyChatParser,
 * one python3 process for the whole batch) and by src/core/engine/prompty.ts. The rendered text,
 * roles, args, part types and texts (every whitespace character) must be equal. Cases the runtime
 * rejects must give a `template-invalid` issue and no messages. Cases the engine reports as
 * `unsupported-feature` are counted separately; each must match a deliberate reason below.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ItemList, ItemValue } from '../../src/core/assembly/attribution';
import { renderPrompty, type PromptyOptions } from '../../src/core/engine/prompty';
import type { EngineMessage, EngineResult } from '../../src/core/engine/types';
import { isStringable } from '../../src/core/engine/types';

const ORACLE = fileURLToPath(new URL('./prompty_oracle.py', import.meta.url));

interface Case {
  name: string;
  /** The whole .prompty file. */
  source: string;
  data: Record<string, unknown>;
  templates?: Record<string, string>;
  templateType?: PromptyOptions['templateType'];
  /** The engine must report unsupported-feature for this case (a deliberate limitation). */
  unsupported?: string;
  /** Not sent to the oracle (Python would run for hours). */
  noOracle?: boolean;
}

/** Reasons an unsupported-feature issue may give; anything else is a failure. */
const DELIBERATE_UNSUPPORTED: Record<string, string> = {
  'memory address': 'Python prints the address of functions, generators, item objects: not reproducible',
  'random': "'random' filter / lipsum: random output",
  'Mustache': 'chevron (template: mustache) is not installed here to serve as an oracle, so Mustache is not rendered',
  "'pprint'": 'pprint filter: pformat line breaking not reproduced',
  "'urlize'": 'urlize filter: not reproduced',
  '2^53': 'integer operations beyond 2^53 not reproduced (e.g. in data conversions)',
  'bits': 'integers of more than 200000 bits are not computed',
  'floating-point powers': 'C pow() and Math.pow may round differently',
  'non-ASCII characters': "non-ASCII names / digits in tags: Python's identifier and digit classes are not reproduced",
  'N{…}': 'named Unicode escapes need the Unicode name table',
  'special attribute': 'dunder attributes (__class__ …): sandbox internals',
  'autoescape true': 'HTML autoescaping blocks',
  'HTML entity': "html.unescape's entity table",
  "'sameas'": 'object identity of numbers and strings',
  'Markup': 'Markup (escaped string) methods that escape their arguments',
  'steps': 'work bound',
  'deeper than': 'nesting bounds (Python recursion and compiler limits)',
};

// ---------------------------------------------------------------------------
// Case helpers
// ---------------------------------------------------------------------------

const FM = '---\nname: case\nmodel:\n  api: chat\n---\n';
const item = (unit: string, fields: Record<string, unknown>): ItemValue => new ItemValue(unit, fields);
const items = (list: ItemValue[], sep: string): ItemList => ItemList.joined(list, sep);

function c(name: string, body: string, data: Record<string, unknown> = {}, extra: Partial<Case> = {}): Case {
  return { name, source: FM + body, data, ...extra };
}

const docs = items([item('<doc 1>alpha</doc>', { title: 'Alpha', score: 0.9, n: 1 }), item('<doc 2>beta</doc>', { title: 'Beta', score: 0.5, n: 2 })], '\n\n');

const handCases: Case[] = [
  // --- chat parser -----------------------------------------------------------------------------
  c('basic roles', 'system:\nYou are helpful.\n\nuser:\n{{ question }}\n', { question: 'What is 2+2?' }),
  c('no role: system first', 'Just text\nmore'),
  c('role case and spaces', '  SYSTEM :  \nsys\n # User:\nq\n#assistant:\na\nFunction :\nf\nTOOLS:\nt'),
  c('not boundaries', 'users:\nuser: hi\nuser:x\nsystem::\n#  # user:\nassistantx:'),
  c('empty messages', 'system:\n\nuser:\nassistant:\n\n\nuser:\n'),
  c('role args', 'user[name="bob", n=3, f=1.5, b=true, B=False]:\nhi\nassistant[ x = "a b" ,y=2 ]  :  \nyo'),
  c('role args odd', 'user[role="x", content="y", z=""]:\nhi\nuser[a=1.]:\nno\nuser[=1]:\nwho\nuser[ab]:\nnot'),
  c('role args two brackets', 'user[a="[x"]:\nhi'),
  c('role arg quotes', 'user[a="x"y"]:\nq\nuser[a="x", b=""]:\nr\nuser[a=x"]:\ns'),
  c('thread', 'system:\nsys\n![thread]\n  ![thread] extra\nafter thread\nuser:\nq'),
  c('images', 'user:\nLook ![cat](http://x/cat.png) and ![dog](data:image/png;base64,AAA "title") end\n![](local.png)'),
  c('image quirks', 'user:\n![a]()\n![b](u v w)\n![x]![x](u)\ntext ![c](http://a) ![c](http://a)'),
  c('image only', 'user:\n   ![a](http://x)   '),
  c('separators', 'system:\nline1\x85user:\nq\x0buser:\nr\x0cassistant:\ns\u2028user:\nt\u2029function:\nu\x1cx\x1dy\x1ez\r\nlast\rcr'),
  c('separators in data', '{{ text }}', { text: 'a\x85user:\x85q\u2028assistant:\u2028r\r\nuser:\r\nlast\x1f' }),
  c('trailing whitespace lines', 'user:\nhi   \n\t\n  '),
  c('unicode roles', 'ſystem:\nlong s\nASSİSTANT:\ndotted\nusER:\nq\nuſer:\nr\n\u00a0user\u3000:\u2003\nnbsp'),
  c('loop role lines', '{% for m in messages %}{{ m.role }}:\n{{ m.content }}\n{% endfor %}', {
    messages: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
      { role: 'user', content: 'bye\n\nsee you' },
    ],
  }),
  c('role line from value', '{{ r }}\ncontent', { r: 'assistant[x=1]:' }),
  c('role inside value is not split by jinja', 'system:\n{{ doc }}', { doc: 'text\nuser:\ninjected' }),
  c('role line forms', 'user [a=1]:\nx\nuser[a=1]x:\ny\n user[ a = "q" ]\t:\t\nz\nuser[a=1, b = 2.50 ,c="x y"]:\nv\nuser[a1b=TRUE]:\nu\nuser[n=007]:\nt\nuser[x=1.0, y=10.25]:\ns'),
  c('role line two brackets', 'user[a=1][b=2]:\nw'),
  // Python's backtracking regex takes 2^n steps on `user[aaaa…]:`; n stays small here (the engine is linear).
  c('role line long args', `user[${'a'.repeat(16)}]:\nx\nuser[${'a=1,'.repeat(30)}]:\ny\nuser[${'="'.repeat(12)}]:\nz\nuser[${'ab '.repeat(6)}=1]:\nw`),
  c('role line only role', 'user:'),
  c('role line with colon inside', 'user[a="x:y"]:\nq'),
  c('role line brackets inside quotes', 'user[a="]"]:\nq\nuser[a="x]y", b=1]:\nr'),
  c('thread variants', '![thread]x\nT\n ![thread]\nU\n!\u00a0[thread]\nV'),
  c('images many', 'user:\n![a](http://x/a.png)![b](http://x/b.png)\n\n![c]( http://x/c.png )  tail\n![d](http://e "t")'),
  c('images across lines', 'user:\n![a](http://x\n/b.png)\n![multi\nline](http://y)'),
  c('role after form feed in data', 'system:\n{{ a }}', { a: 'x\x0cuser:\x0cq\x1cassistant:\x1dr' }),
  // --- output of values -----------------------------------------------------------------------
  c('python reprs', '{{ none }} {{ t }} {{ f }} {{ 1.0 }} {{ 3 }} {{ [1, "a", none, true, 2.5] }} {{ {"a": 1, "b": [1, 2]} }} {{ (1,) }} {{ () }} {{ ("a", 2) }}', { t: true, f: false }),
  c('string reprs', `{{ ["it's", 'say "hi"', "both ' \\"", "tab\\t", "nl\\n", "\\\\", "é😀", "\\x00\\x7f", "\\u200b\\u00a0"] }}`),
  c('floats', '{{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 1.5e300 }} {{ -0.0 }} {{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 2.5e-10 }} {{ 123456789012345678.0 }} {{ x }} {{ y }}', { x: 2.5, y: 1e21 }),
  c('data values', '{{ a }}|{{ b }}|{{ c }}|{{ d }}|{{ e }}|{{ f }}', { a: 3, b: -0, c: 0.5, d: null, e: [[]], f: { 'k y': { z: [true] } } }),
  c('undefined prints empty', '[{{ missing }}][{{ missing|default("d") }}][{{ missing is defined }}][{{ missing|length }}][{{ missing|list }}]'),
  c('undefined attr raises', '{{ missing.attr }}'),
  c('undefined item raises', '{{ missing["k"] }}'),
  c('attr of defined missing is undefined', '[{{ d.nope }}][{{ d.nope is defined }}][{{ d["nope"] }}][{{ none_value.x }}][{{ 5.x }}]', { d: {}, none_value: null }),
  c('undefined arithmetic raises', '{{ missing + 1 }}'),
  c('undefined concat ok', '{{ missing ~ "x" ~ none }}'),
  c('dict method vs key', '{{ d.a }} {{ d["items"] }} {{ d.get("a") }} {{ d.get("zz", "dflt") }} {{ d.keys()|list }} {{ d.items() }} {{ d.values()|list }}', { d: { a: 1, items: 'ITEMS' } }),
  c('dict method printed', '{{ d.items }}', { d: { a: 1 } }, { unsupported: 'memory address' }),
  c('underscore keys', '{{ d._x }} {{ d["_x"] }} {{ d.__class__ is defined }}', { d: { _x: 5 } }, { unsupported: 'special attribute' }),
  c('underscore keys plain', '{{ d._x }} {{ d["_x"] }}', { d: { _x: 5 } }),
  c('unsafe method', '{{ lst.append(3) }}', { lst: [1] }),
  c('unsafe method printed empty', '[{{ lst.append }}][{{ lst.append is defined }}]', { lst: [1] }),
  // --- whitespace control, raw, comments --------------------------------------------------------
  c('whitespace control', 'a  \n  {{- x -}}  \n  b\n{%- if true -%}\n  c  \n{%- endif %}\n{#- comment -#}\n  d\n{{ x +}}\n{%+ if true +%}e{% endif %}', { x: 'X' }),
  c('trailing newline removed', 'line\n'),
  c('two trailing newlines', 'line\n\n'),
  c('crlf file', '---\r\nname: x\r\n---\r\nsystem:\r\nhi {{ a }}\r\n\r\nuser:\r\nq\r\n', { a: 1 }),
  c('cr only', 'x'.replace('x', ''), {}),
  c('raw', '{% raw %}{{ not }} {% if %}{% endraw %}|{%- raw -%}  x  {%- endraw -%}  |'),
  c('comments', 'a{# c #}b{#- c -#}  c  {# {{ x }} #}d'),
  c('unterminated comment', 'a{# c'),
  c('unterminated tag', 'a{{ x'),
  c('unknown tag', '{% foo %}'),
  c('unclosed if', '{% if x %}a'),
  c('syntax error', '{{ 1 + }}'),
  c('do tag is unknown', '{% do x %}'),
  // --- control flow -----------------------------------------------------------------------------
  c('if elif else', '{% for n in [0, 1, 2, 3] %}{% if n == 0 %}zero{% elif n == 1 %}one{% elif n is even %}even{% else %}odd{% endif %},{% endfor %}'),
  c('for else', '{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] %}{{ x }}{% else %}no{% endfor %}'),
  c('loop vars', '{% for x in "abc" %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.cycle("o", "e") }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.depth }};{% endfor %}'),
  c('loop changed', '{% for i in [1, 1, 2, 2, 1] %}{{ loop.changed(i) }}{% endfor %}'),
  c('loop filter', '{% for x in range(10) if x is odd %}{{ x }}{{ loop.length }}{{ loop.last }},{% endfor %}'),
  c('loop in filter is outer', '{% for a in [[1, 2], [3]] %}{% for b in a if loop.index > 1 %}{{ b }}{% endfor %}{% endfor %}|{% for a in [1] if loop is defined %}x{% endfor %}'),
  c('set scoping in loops', '{% set x = 1 %}{% for i in range(2) %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}'),
  c('set in if inside loop', '{% for i in range(3) %}{% if i == 0 %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}'),
  c('set in if at top', '{% if true %}{% set z = 3 %}{% endif %}{{ z }}'),
  c('namespace', '{% set ns = namespace(c=0, items=[]) %}{% for i in range(4) %}{% set ns.c = ns.c + i %}{% endfor %}{{ ns.c }} {{ ns }}'),
  c('namespace assign non ns', '{% set d = {} %}{% set d.x = 1 %}'),
  c('tuple unpack', '{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}{% for k, v in {"x": 1, "y": 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [(1, 2), [3, 4]] %}{{ a + b }}{% endfor %}'),
  c('unpack error', '{% for a, b in [1] %}{% endfor %}'),
  c('recursive loop', '{% for n in tree recursive %}<{{ n.name }}{% if n.children %}{{ loop(n.children) }}{% endif %}:{{ loop.depth }}>{% endfor %}', {
    tree: [{ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }, { name: 'd' }],
  }),
  c('loop assign error', '{% for x in [1] %}{% set loop = 1 %}{% endfor %}'),
  c('set block', '{% set x %}hi {{ 1 + 1 }}{% endset %}[{{ x }}]{% set y | upper | replace("B", "-") %}abc{% endset %}{{ y }}'),
  c('with', '{% with a = 1, b = 2 %}{% set x = 5 %}{{ a }}{{ b }}{{ x }}{% endwith %}[{{ x }}][{{ a }}]'),
  c('filter block', '{% filter upper %}hello {{ name }}{% endfilter %}|{% filter trim|title %}  a b  {% endfilter %}', { name: 'you' }),
  c('iterate dict and string', '{% for k in {"b": 1, "a": 2} %}{{ k }}{% endfor %}{% for ch in "h😀i" %}[{{ ch }}]{% endfor %}'),
  c('iterate none raises', '{% for x in none %}{% endfor %}'),
  c('iterate undefined', '{% for x in nothing %}x{% else %}none{% endfor %}'),
  // --- macros, call, include, import, extends ---------------------------------------------------
  c('macro', '{% macro greet(name, greeting="Hello") %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet("Ann") }} {{ greet("Bo", greeting="Hi") }} {{ greet }}'),
  c('macro varargs kwargs', '{% macro m(a, b=a) %}{{ a }}{{ b }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1) }} {{ m(1, 2, 3, x=4) }}'),
  c('macro errors', '{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}'),
  c('macro missing param', '{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}'),
  c('macro late binding', '{% macro m() %}{{ x }}{% endmacro %}{{ m() }}{% set x = 3 %}{{ m() }}'),
  c('call block', '{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap("b") %}inner {{ 1 }}{% endcall %}{% macro list(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) list([1, 2]) %}[{{ v }}]{% endcall %}'),
  c('include', '{% set z = 5 %}{% for i in [1] %}{% set w = 7 %}{% include "inc.txt" %}{% endfor %}|{{ z }}', { x: 'X' }, { templates: { 'inc.txt': '[{{ x }}-{{ w }}-{{ i }}-{{ z }}]{% set z = 9 %}\n' } }),
  c('include without context', '{% include "inc.txt" without context %}', { x: 'X' }, { templates: { 'inc.txt': '[{{ x }}{{ range(2)|list }}]' } }),
  c('include missing', '{% include "nope.txt" %}'),
  c('include ignore missing', 'a{% include "nope.txt" ignore missing %}b{% include ["nope", "inc.txt"] %}', {}, { templates: { 'inc.txt': 'I' } }),
  c('include with syntax error', 'a{% include "bad.txt" %}', {}, { templates: { 'bad.txt': '{{ x' } }),
  c('import', '{% import "m.txt" as mm %}{{ mm.hi(3) }} {{ mm.v }}|{% from "m.txt" import hi, v as w, nope %}{{ hi(1) }}{{ w }}[{{ nope }}]', {}, { templates: { 'm.txt': '{% macro hi(n) %}Hi {{ n }}{% endmacro %}{% set v = 5 %}BODY' } }),
  c('extends', '{% extends "base.txt" %}{% block b %}child {{ super() }}{% endblock %}ignored', { x: 'X' }, { templates: { 'base.txt': 'system:\nA{% block b %}base {{ x }}{% endblock %}C{% block c %}cc{% endblock %}\n' } }),
  c('extends two levels', '{% extends "mid.txt" %}{% block a %}[child{{ super() }}]{% endblock %}', {}, { templates: { 'mid.txt': '{% extends "base.txt" %}{% block a %}(mid{{ super() }}){% endblock %}', 'base.txt': '<{% block a %}base{% endblock %}>' } }),
  c('self block', '{% block t %}T{% endblock %}|{{ self.t() }}'),
  c('block defined twice', '{% block a %}{% endblock %}{% block a %}{% endblock %}'),
  // --- filters ----------------------------------------------------------------------------------
  c('string filters', '{{ s|upper }}|{{ s|lower }}|{{ s|title }}|{{ s|capitalize }}|{{ s|trim }}|{{ s|length }}|{{ s|count }}|{{ s|wordcount }}|{{ s|reverse }}|{{ s|center(30) }}|{{ "x"|center(4) }}|{{ s|trim("! ") }}', { s: '  hello wORLD-foo (bar) élan!  ' }),
  c('replace truncate', '{{ s|replace("o", "0") }}|{{ s|replace("o", "0", 1) }}|{{ s|truncate(9) }}|{{ s|truncate(9, true) }}|{{ s|truncate(12, false, "..", 0) }}|{{ "short"|truncate(3) }}', { s: 'foo boo zoo woo' }),
  c('truncate assertion', '{{ "abcdefghijkl"|truncate(2) }}'),
  c('default filter', '{{ none|default("n") }}|{{ ""|default("e") }}|{{ ""|default("e", true) }}|{{ 0|d("z", boolean=true) }}|{{ x|d }}'),
  c('join and map', '{{ xs|join }}|{{ xs|join(", ") }}|{{ ds|map(attribute="n")|join("-") }}|{{ ds|map(attribute="missing", default="?")|list }}|{{ ["a", "b"]|map("upper")|list }}', { xs: [1, 'b', null], ds: [{ n: 1 }, { n: 2 }] }),
  c('select reject', '{{ xs|select("odd")|list }}|{{ xs|reject("odd")|list }}|{{ xs|select|list }}|{{ ds|selectattr("ok")|map(attribute="n")|list }}|{{ ds|rejectattr("n", "equalto", 2)|list }}|{{ xs|select("greaterthan", 2)|list }}|{{ xs|select("in", [1, 4])|list }}', { xs: [0, 1, 2, 3, 4], ds: [{ n: 1, ok: true }, { n: 2, ok: false }] }),
  c('generator printed', '{{ [1, 2]|map("string") }}', {}, { unsupported: 'memory address' }),
  c('reverse printed', '{{ [3, 1, 2]|reverse }}', {}, { unsupported: 'memory address' }),
  c('sort unique', '{{ xs|sort }}|{{ xs|sort(reverse=true) }}|{{ ws|sort }}|{{ ws|sort(case_sensitive=true) }}|{{ ds|sort(attribute="n")|map(attribute="n")|list }}|{{ ws|unique|list }}|{{ xs|unique|list }}|{{ ds|sort(attribute="n,m")|list }}', { xs: [3, 1, 2, 1], ws: ['b', 'A', 'a', 'B'], ds: [{ n: 2, m: 1 }, { n: 1, m: 2 }] }),
  c('sort mixed raises', '{{ [1, "a"]|sort }}'),
  c('first last min max sum', '{{ xs|first }} {{ xs|last }} {{ xs|min }} {{ xs|max }} {{ xs|sum }} {{ ds|sum(attribute="n") }} {{ ds|max(attribute="n") }} {{ []|first }}|{{ ws|min }} {{ ws|max(case_sensitive=true) }} {{ [0.5, 1]|sum }} {{ xs|sum(start=10) }}', { xs: [3, 1, 2], ds: [{ n: 1 }, { n: 5 }], ws: ['b', 'A', 'c'] }),
  c('list items dictsort', '{{ "ab"|list }} {{ d|list }} {{ d|items|list }} {{ d|dictsort }} {{ d|dictsort(by="value", reverse=true) }} {{ d2|dictsort }} {{ d2|dictsort(true) }}', { d: { b: 2, a: 3, c: 1 }, d2: { b: 1, A: 2, a: 3 } }),
  c('round int float abs', '{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 0.125|round(2) }} {{ 1.55|round(1, "floor") }} {{ 1.51|round(1, "ceil") }} {{ 7|round }} {{ 1250|round(-2) }} {{ -3|abs }} {{ -2.5|abs }} {{ "42"|int }} {{ "42.7"|int }} {{ " 0x1F "|int(0, 16) }} {{ "0b11"|int(base=0) }} {{ "x"|int(7) }} {{ 3.9|int }} {{ "1_000"|int }} {{ "3.25"|float }} {{ "1e3"|float }} {{ "nan"|float }} {{ "-inf"|float }} {{ "x"|float }} {{ 2|float }} {{ none|int }} {{ true|int }}'),
  c('undefined int raises', '{{ missing|int }}'),
  c('folded inf raises', '{{ "inf"|float }}'),
  c('string int filter', '{{ 5|string ~ 1 }} {{ [1]|string }} {{ none|string }}'),
  c('tojson', '{{ d|tojson }} {{ d|tojson(indent=2) }} {{ "é<\'>&\\u2028"|tojson }} {{ [1.0, none, true, 1e100]|tojson }} {{ {}|tojson }} {{ []|tojson(2) }}', { d: { b: [1, 2], a: 'x"y', c: { z: null } } }),
  c('tojson undefined raises', '{{ missing|tojson }}'),
  c('tojson item raises', '{{ doc|tojson }}', { doc: item('U', { a: 1 }) }),
  c('escape safe', '{{ "<a href=\'x\'>&"|e }} {{ "<b>"|escape|escape }} {{ "<i>"|safe }} {{ "<i>"|forceescape }} {{ ("<a>"|e) ~ "<b>" }} {{ ("<a>"|e) + "<b>" }} {{ "<a>" + ("<b>"|e) }} {{ none|e }} {{ 5|e }}'),
  c('indent', '{{ s|indent }}|{{ s|indent(2, true) }}|{{ s|indent("> ", blank=true) }}|{{ "one"|indent(first=true) }}', { s: 'a\nb\n\nc\x85d' }),
  c('wordwrap', '{{ s|wordwrap(10) }}|{{ s|wordwrap(6, false) }}|{{ s|wordwrap(8, wrapstring="<br>") }}|{{ long|wordwrap(5) }}|{{ hy|wordwrap(7) }}|{{ hy|wordwrap(7, break_on_hyphens=false) }}', { s: 'The quick brown fox jumps over the lazy dog\nsecond line here', long: 'abcdefghijklmnop q', hy: 'well-known multi-part-words here' }),
  c('batch slice', '{{ xs|batch(2)|list }} {{ xs|batch(2, "x")|list }} {{ xs|slice(2)|list }} {{ xs|slice(3, 0)|list }} {{ []|batch(3)|list }}', { xs: [1, 2, 3, 4, 5] }),
  c('groupby', '{% for g in ps|groupby("city") %}{{ g.grouper }}:{{ g.list|map(attribute="name")|join(",") }};{% endfor %}{% for city, people in ps|groupby("city") %}{{ city }}={{ people|length }};{% endfor %}{{ ps|groupby("city")|first }}', { ps: [{ name: 'a', city: 'X' }, { name: 'b', city: 'y' }, { name: 'c', city: 'x' }] }),
  c('urlencode striptags filesize', '{{ "a b&c/é"|urlencode }} {{ {"q": "a b", "n": 1}|urlencode }} {{ "<p>Hi <b>there</b> &amp; &lt;you&gt;</p>\n<!-- c -->x"|striptags }} {{ 1|filesizeformat }} {{ 1234|filesizeformat }} {{ 123456789|filesizeformat(true) }} {{ 500|filesizeformat }}'),
  c('format filter', '{{ "%s is %d years, %.2f%%"|format("Ann", 30, 99.555) }} {{ "%(a)s-%(b)05.1f"|format(a="x", b=2.25) }} {{ "%r %5s|%-5s|%x %o %e %g %G"|format("q", "ab", "cd", 255, 8, 12345.678, 0.00001234, 1e20) }}'),
  c('format errors', '{{ "%d"|format("x") }}'),
  c('attr filter', '{{ d|attr("a") }} [{{ d|attr("items") is defined }}] {{ doc|attr("title") }}', { d: { a: 1 }, doc: item('U', { title: 'T' }) }),
  c('xmlattr', '<a{{ {"href": "x&y", "n": none, "c": 1}|xmlattr }}>'),
  c('random filter', '{{ [1, 2]|random }}', {}, { unsupported: 'random' }),
  c('pprint filter', '{{ [1, 2]|pprint }}', {}, { unsupported: "'pprint'" }),
  c('unknown filter', '{{ x|nosuchfilter }}'),
  c('unknown filter in if body', '{% if false %}{{ x|nosuchfilter }}{% endif %}ok'),
  c('unknown filter in if body runs', '{% if true %}{{ x|nosuchfilter }}{% endif %}ok'),
  c('unknown test', '{{ x is nosuchtest }}'),
  c('markup interplay', '{{ ("<a>"|e)|replace("a", "<") }}|{{ ["<x>"|e, "<y>"]|join(", ") }}|{{ ("<a>"|e) ~ "<" }}|{{ ("<b>"|e)|upper }}|{{ ("<b>"|e)|length }}|{{ ("<b>"|e) == "&lt;b&gt;" }}|{{ "x"|safe|e }}|{{ ("<"|e)|tojson }}|{{ ("<a>"|e)|trim }}|{{ ("<i>"|e)|string }}|{{ ("<i>"|e) is escaped }}|{{ ("<i>"|e)[1:] }}|{{ ("<i>"|e) * 2 }}|{{ ["<i>"|e] }}'),
  c('map select variants', '{{ ws|map("replace", "a", "@")|list }}|{{ [none, "x"]|map("default", "d")|list }}|{{ ds|selectattr("v", "defined")|list|length }}|{{ ds|selectattr("v", "none")|list|length }}|{{ ds|rejectattr("v")|map(attribute="k")|list }}|{{ ds|map(attribute="sub.0")|list }}|{{ ds|sort(attribute="sub.1")|map(attribute="k")|join }}|{{ ds|unique(attribute="k")|list|length }}|{{ ds|groupby("g", default="none")|map(attribute="grouper")|list }}|{{ ws|groupby("0")|list }}', { ws: ['alpha', 'Beta', 'abc'], ds: [{ k: 'a', v: 1, sub: [3, 2], g: 'x' }, { k: 'b', v: null, sub: [1, 9] }, { k: 'a', sub: [2, 1], g: 'X' }] }),
  c('generators are one pass', '{% set g = xs|map("string") %}{% for x in g %}{{ x }}{% endfor %}|{% for x in g %}{{ x }}{% endfor %}|{% set r = xs|reverse %}{{ r|list }}{{ r|list }}|{% for x in xs|select("odd") %}{{ loop.length }}{{ loop.revindex }}{{ loop.last }}{% endfor %}|{{ xs|map("string")|first }}', { xs: [1, 2, 3] }),
  c('dict views', '{{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|length }} {{ "a" in d.keys() }} {{ 1 in d.values() }} {{ ("a", 1) in d.items() }} {{ d.keys() }} {{ d.values() }} {{ d.items()|first }} {{ d.copy() }} {{ d.get("zz") }} {{ d.get("a", 5) }}', { d: { a: 1, b: 2 } }),
  c('string method windows', '{{ s.find("a", 2) }} {{ s.find("a", 2, 3) }} {{ s.rfind("a") }} {{ s.count("a", 1) }} {{ s.count("a", 1, -1) }} {{ s.startswith("b", 1) }} {{ s.startswith(("x", "ba"), 1) }} {{ s.endswith("a", 0, 2) }} {{ s.index("n") }} {{ s.split("a", 1) }} {{ s.rsplit("a", maxsplit=1) }} {{ s.split(maxsplit=0) }} {{ "a\nb\r\nc\x85d".splitlines(true) }} {{ "a\tb".expandtabs(4) }} {{ s.partition("n") }} {{ s.rpartition("n") }} {{ s.removeprefix("ba") }} {{ s.removesuffix("na") }} {{ "Hello World".istitle() }} {{ "x1".isalnum() }} {{ "²3".isdigit() }} {{ "½".isnumeric() }} {{ "٣".isdecimal() }} {{ "Ab1".isupper() }} {{ "  ".isspace() }} {{ "they\'re bill\'s"|title }} {{ "they\'re bill\'s".title() }}', { s: 'banana' }),
  c('str format specs', '{{ "{:{w}}|{0[1]}|{d.a}|{:>{w}.{p}f}".format("x", 2.5, w=6, p=2, d=d) }}|{{ "{:.2f} {:.2f} {:.0f} {:.0f} {:.0f} {:e} {:e} {:g} {:g} {:g} {:.3} {:.3} {:,.2f} {:+.1%} {:08.3f} {:>10} {:x<8} {:^9.2e} {:G} {:n} {:.10g} {:#x} {:_b} {:,d} {:=+8d} {:c}".format(0.125, 0.375, 0.5, 1.5, 2.5, 0.0, 123456.789, 0.00001, 123456789, 1e16, 1234.5, 0.5, 1234567.891, 0.1234, -3.14159, 2.5, "ab", 31415.9, 1e-10, 12, 1/3, 255, 10, 1234567, 42, 65) }}', { d: { a: 'A' } }),
  c('float reprs', '{{ 1e22 }} {{ 5e-324 }} {{ 1.7976931348623157e308 }} {{ 0.1 * 3 }} {{ 1 / 3 }} {{ 2 / 3 }} {{ 100.0 }} {{ 1e15 + 0.3 }} {{ 123456789.123456789 }} {{ -1.5e-7 }} {{ 9007199254740993.0 }} {{ 0.1 + 0.7 }} {{ [0.5, -0.0, 2e-5] }}'),
  c('float arithmetic', '{{ -7.5 // 2 }} {{ 7 // -2.0 }} {{ -0.0 // 1 }} {{ 5.5 % -2 }} {{ -5.5 % 2 }} {{ 0.0 % -1 }} {{ 1e308 * 10 }} {{ -1e308 * 10 }} {{ 2.0 ** 10 }} {{ 4 ** 0.5 }} {{ 10 % 3.5 }} {{ 1.0 // 0.1 }} {{ 1.0 % 0.1 }}'),
  c('round variants', '{{ 0.5|round }} {{ 1.5|round }} {{ -0.5|round }} {{ 2.675|round(2) }} {{ 1234.5678|round(-2) }} {{ 1234.5678|round(2, "floor") }} {{ -1.25|round(1) }} {{ 1e300|round(2) }} {{ 0.1|round(20) }} {{ 5|round(1, "ceil") }} {{ 15|round(-1) }} {{ 25|round(-1) }} {{ -25|round(-1) }} {{ true|round }}'),
  c('int float parsing', '{{ " -0x10 "|int(0, 16) }} {{ "0x10"|int(0, 0) }} {{ "010"|int(0, 0) }} {{ "0o17"|int(base=8) }} {{ "1_0"|int }} {{ "_10"|int }} {{ "10_"|int }} {{ " 12 "|int }} {{ "١٢"|int }} {{ "1e5"|int }} {{ "inf"|int }} {{ "nan"|int }} {{ "1.5e2"|float }} {{ ".5"|float }} {{ "5."|float }} {{ "1_000.5"|float }} {{ "Infinity"|float }} {{ "-nan"|float }} {{ "+1E-3"|float }} {{ "١٫٥"|float }} {{ "٣.٥"|float }} {{ " 7\u00a0"|float }} {{ ""|int }} {{ "z"|int(base=36) }}'),
  c('sort stability', '{{ ds|sort(attribute="k")|map(attribute="i")|join }} {{ ds|sort(attribute="k", reverse=true)|map(attribute="i")|join }} {{ ws|sort|join(",") }} {{ ws|sort(case_sensitive=true)|join(",") }} {{ ws|unique|join(",") }} {{ ws|unique(case_sensitive=true)|join(",") }} {{ ws|min }} {{ ws|max }} {{ [3, 1.5, true]|sort }} {{ [[2, 1], [1, 9], [1, 2]]|sort }} {{ [(2, "b"), (2, "a")]|sort }}', { ds: [{ k: 2, i: 'a' }, { k: 1, i: 'b' }, { k: 2, i: 'c' }, { k: 1, i: 'd' }], ws: ['b', 'B', 'a', 'A', 'b'] }),
  c('range and slices', '{{ range(10, 0, -3)|list }} {{ range(5)[::2] }} {{ range(5)[::-1]|list }} {{ range(0, 10, 3)[1:] }} {{ range(3) == range(0, 3) }} {{ 2 in range(0, 10, 2) }} {{ 3 in range(0, 10, 2) }} {{ range(4)|sum }} {{ range(4)|reverse|list }} {{ range(-3)|list }} {{ xs[-10:] }} {{ xs[5:1:-2] }} {{ xs[::-3] }} {{ "abcdef"[-2:] }} {{ "abcdef"[::2] }} {{ xs[1.5] is defined }}', { xs: [0, 1, 2, 3, 4, 5] }),
  c('tojson variants', '{{ (1, "a")|tojson }} {{ [("a"|e)]|tojson }} {{ docs|tojson }} {{ {1: "x", 2: "y"}|tojson }} {{ {"b": {"d": 1, "c": 2}}|tojson(indent=1) }} {{ [[], {}]|tojson(indent=2) }} {{ "\x00\x1f\x7f\u0080"|tojson }} {{ 1.0e16|tojson }} {{ none|tojson }}', { docs: items([], ', ') }),
  c('equality and membership', '{{ {"a": 1} == {"a": 1.0} }} {{ {"a": 1} in [{"a": 1}] }} {{ [1, [2]] == [1, [2]] }} {{ (1, 2) in [[1, 2]] }} {{ 1 in [true] }} {{ {1: "a"}[1.0] }} {{ {true: "t"}[1] }} {{ "1" in {1: 2} }} {{ none in [none] }} {{ [] == () }} {{ 0 == false }} {{ 0.0 == -0.0 }}'),
  c('loop length over generator', '{% for x in xs|map("upper") %}{{ loop.index }}/{{ loop.length }}{{ loop.nextitem }};{% endfor %}|{% for x in xs|select %}{{ loop.revindex0 }}{% endfor %}', { xs: ['a', 'b', '', 'c'] }),
  c('more filters', '{{ {"a\u00a0b": 1}|xmlattr }}|{{ [("a", 1), ["b c", "d&e"]]|urlencode }}|{{ "ab"|urlencode }}|{{ 5|urlencode }}|{{ -5|filesizeformat }}|{{ 1000|filesizeformat }}|{{ 1024|filesizeformat(true) }}|{{ 1e30|filesizeformat }}|{{ "2000"|filesizeformat }}|{{ [1, 2, 3]|batch(2.0)|list }}|{{ "abc"|first }}|{{ "abc"|last }}|{{ {"x": 1}|first }}|{{ {"x": 1, "y": 2}|last }}|{{ range(3)|last }}|{{ "a b"|wordcount }}|{{ "ab-cd ef_gh"|wordcount }}|{{ "  x  "|center(7) }}|{{ none|string|length }}|{{ [1]|sum(start=[0]) if false else 1 }}|{{ ["a", "b"]|sum(start="") if false else 2 }}'),
  c('sum strings raises', '{{ ["a", "b"]|sum(start="") }}'),
  c('xmlattr bad key', '{{ {"a b": 1}|xmlattr }}'),
  c('format map and more', '{{ "{a}-{b!r}".format_map(d) if false else "" }}{{ "{0!s:>4}|{0!r:<6}|".format("x") }}{{ "{:}".format(3) }}{{ "{!r}".format(1.0) }}{{ "{}".format(none) }}{{ "{:5}".format(true) }}{{ "{}".format(true) }}{{ "{:d}".format(true) }}{{ "{0}".format([1, "a"]) }}{{ "{0[0]}".format([1, "a"]) }}', { d: { a: 1, b: 'x' } }),
  c('format errors list spec', '{{ "{:5}".format([1]) }}'),
  // --- tests ------------------------------------------------------------------------------------
  c('tests', '{{ 3 is odd }}{{ 3 is even }}{{ 9 is divisibleby 3 }}{{ none is none }}{{ 1 is number }}{{ "a" is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 1 is iterable }}{{ "x" is sequence }}{{ d is sequence }}{{ 1 is eq 1 }}{{ 2 is equalto 2 }}{{ 1 is in [1] }}{{ true is true }}{{ 1 is true }}{{ false is false }}{{ "ab" is lower }}{{ "AB" is upper }}{{ 1.0 is float }}{{ 1 is integer }}{{ true is boolean }}{{ x is defined }}{{ x is undefined }}{{ 5 is gt 3 }}{{ 5 is lessthan 3 }}{{ "upper" is filter }}{{ "odd" is test }}{{ none is sameas none }}{{ doc is iterable }}{{ doc is mapping }}{{ doc is callable }}{{ range is callable }}{{ 5 is not odd }}', { d: {}, doc: item('U', {}) }),
  c('astral characters', '{{ s|length }} {{ s[1] }} {{ s[1:3] }} {{ s|reverse }} {{ s|center(9, ) }}|{{ s|truncate(4, true, "", 0) }}|{{ s.find("b") }} {{ s.center(8, "·") }} {{ s|wordwrap(2) }} {{ s|list }} {{ s.split("😀") }} {{ s|title }} {{ "ǆemo ßtraße"|capitalize }} {{ "ǆemo ßtraße"|title }} {{ "ǆx".title() }} {{ "İx"|lower }} {{ "ﬃ"|upper }}', { s: 'a😀b𝒳c' }),
  c('whitespace plus markers', 'a  \n{%+ if true %}x{% endif %}  \n{{- "y" }}  z\n  {%+ set q = 1 -%}\n  end {%- if true +%} \n k {#+ c +#} l {#- c -#} m'),
  c('variable end plus', '{{ "y" +}}'),
  // --- operators --------------------------------------------------------------------------------
  c('arithmetic', '{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 2 ** 10 }} {{ 2 ** -2 }} {{ 10 / 3 }} {{ 1 + 1.0 }} {{ true + 1 }} {{ "a" * 3 }} {{ [1] * 2 }} {{ 3 * "ab" }} {{ "a" + "b" }} {{ [1] + [2] }} {{ -(3) }} {{ +2.0 }}'),
  c('zero division', '{{ 1 / 0 }}'),
  c('type error add', '{{ "a" + 1 }}'),
  c('comparison and logic', '{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ "a" < "b" }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ "1" == 1 }} {{ none == none }} {{ 1 != 2 }} {{ 0 or "x" }} {{ "" and "y" }} {{ 1 and 2 }} {{ none or 0 }} {{ not 0 }} {{ "b" in "abc" }} {{ 2 not in [1] }} {{ "k" in {"k": 1} }} {{ (1, 2) == (1, 2) }} {{ [1] == (1,) }}'),
  c('compare mixed raises', '{{ 1 < "a" }}'),
  c('inline if', '{{ "y" if x else "n" }} {{ "y" if not x }}| {{ 1 if true else 2 if false else 3 }}', { x: 0 }),
  c('concat', '{{ 1 ~ 2 ~ none ~ [1] ~ 1.0 ~ missing }}'),
  c('string methods', '{{ s.upper() }}|{{ s.strip() }}|{{ s.split() }}|{{ s.split(",") }}|{{ s.split(None, 1) }}|{{ s.rsplit(" ", 1) }}|{{ s.startswith(" a") }}|{{ s.endswith(("x", "  ")) }}|{{ s.replace(" ", "_") }}|{{ s.find("b") }}|{{ s.count("a") }}|{{ s.title() }}|{{ "x".join(["1", "2"]) }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.zfill(12) }}|{{ "ab".ljust(4, "*") }}|{{ s.partition(",") }}|{{ s.splitlines() }}|{{ s.isspace() }}|{{ "Ab".swapcase() }}|{{ "abc".index("c") }}', { s: ' a,b  c, a  ' }),
  c('str format', '{{ "{} and {}".format("a", 1) }}|{{ "{0}{1}{0}".format("x", "y") }}|{{ "{n:>6.2f}|{n:,}|{n:e}|{i:05d}|{i:x}|{i:#b}|{s!r}|{s:^7}|{s:*<5}|{f:.3}|{f:g}|{b}|{b:>5}|{nn}".format(n=1234.5678, i=42, s="hi", f=0.000123456, b=true, nn=none) }}|{{ "{d[k]} {d.k}".format(d=d) }}|{{ "{:%}".format(0.25) }}', { d: { k: 'v' } }),
  c('str format error', '{{ "{} {0}".format(1, 2) }}'),
  c('percent format', '{{ "%s-%05.1f|%-4d|%x|%c|%%|%+d|% d|%.3s|%5.1e" % ("a", 3.14159, 7, 255, 65, 5, 5, "abcdef", 12345.6789) }} {{ "%s" % [1, 2] }} {{ "%(k)s" % {"k": "v"} }} {{ "x" % () }}'),
  c('percent errors', '{{ "%s %s" % (1,) }}'),
  c('percent with undefined', '[{{ "abc" % missing }}][{{ "%s" % missing }}][{{ "%s" % [1] }}][{{ "%(title)s" % doc }}]', { doc: item('U', { title: 'T' }) }),
  c('percent undefined key', '{{ "%(a)s" % missing }}'),
  c('undefined percent', '{{ 1 % missing }}'),
  c('subscripts and slices', '{{ xs[0] }} {{ xs[-1] }} {{ xs[1:] }} {{ xs[::-1] }} {{ xs[::2] }} {{ s[1:3] }} {{ s[-1] }} {{ xs.1 }} [{{ xs[10] }}] {{ d["a"]["b"] }} {{ d.a.b }} {{ range(10)[2:5] }} {{ range(5)[-1] }} {{ s[::-1] }}', { xs: [1, 2, 3, 4], s: 'h😀llo', d: { a: { b: 'deep' } } }),
  c('slice of int raises', '{% if (1)[1:] %}x{% endif %}'),
  c('slice of dict raises', '{{ d[1:] }}', { d: { a: 1 } }),
  c('slice of undefined raises', '{{ missing[1:] }}'),
  c('slice float bound raises', '{{ "abc"[1.5:] }}'),
  c('slice folded', '{{ "abc"[1:] }}|{{ [1, 2, 3][::-1] }}|{{ (1, 2)[5:] }}'),
  c('subscript tuple key', '[{{ xs[1, 2] }}][{{ d["a", "b"] }}]', { xs: [1, 2, 3], d: { a: 1 } }),
  c('range', '{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(3) }} {{ range(0) }} {{ range(2, 9, 2)|length }}'),
  c('range too big', '{{ range(200000)|length }}'),
  c('dict and lists literals', '{{ {"a": 1, "b": 2}|length }} {{ {1: "x", true: "y"} }} {{ [] }} {{ {} }} {{ [[], [[]]] }} {{ dict(a=1, b=[2]) }} {{ dict([("x", 1)]) }}'),
  c('cycler joiner', '{% set cy = cycler("a", "b") %}{{ cy.next() }}{{ cy.next() }}{{ cy.next() }}{{ cy.current }}{% set j = joiner("-") %}{% for i in range(3) %}{{ j() }}{{ i }}{% endfor %}'),
  c('call non callable', '{{ x() }}', { x: 5 }),
  c('call undefined', '{{ nope() }}'),
  c('star args', '{% macro m(a, b, c) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(*[1, 2], **{"c": 3}) }}'),
  // --- item objects (the assembly's values) ------------------------------------------------------
  c('item objects', 'system:\n{{ docs }}\n{% for d in docs %}[{{ d.title }}|{{ d["score"] }}|{{ d }}|{{ loop.index }}]{% endfor %}\n{{ docs|length }} {{ docs[0].n + docs[1].n }} {{ docs[0] ~ "!" }} {{ docs|map(attribute="title")|join(", ") }} {{ docs|selectattr("score", "gt", 0.6)|map(attribute="title")|list }} [{{ docs[0].missing }}] {{ docs[0] is defined }} {{ docs is iterable }}', { docs }),
  c('item in list repr', '{{ [docs[0]] }}', { docs }, { unsupported: 'memory address' }),
  c('item sorted', '{{ docs|sort(attribute="score")|map(attribute="title")|join }} {{ docs|map(attribute="n")|sum }}', { docs }),
  c('item attr error', '{{ docs[0].missing.x }}', { docs }),
  c('item as a value', 'user:\n{{ q }}\n{{ q.text }} {{ q|upper }} {{ q|length }}', { q: item('<q>Why?</q>', { text: 'Why?' }) }),
  // --- compile-time scoping (jinja2's idtracking) -----------------------------------------------
  c('scope: filter block before set', '{% filter upper %}{{ n }}{% endfilter %}{% set n = 5 %}{{ n }}', { n: 4 }),
  c('scope: loop before set', '{% for i in [1] %}[{{ n }}]{% endfor %}{% set n = 5 %}{{ n }}', { n: 4 }),
  c('scope: load before loop and set', '{{ n }}{% for i in [1] %}{{ n }}{% endfor %}{% set n = 5 %}', { n: 4 }),
  c('scope: macro before set', '{% macro m() %}[{{ n }}]{% endmacro %}{{ m() }}{% set n = 5 %}{{ m() }}', { n: 4 }),
  c('scope: with before set', '{% with %}[{{ n }}]{% endwith %}{% set n = 5 %}', { n: 4 }),
  c('scope: set in loop per iteration', '{% for i in [1, 2] %}{% if i == 2 %}{{ n }}{% endif %}{% set n = i %}{% endfor %}[{{ n }}]', { n: 4 }),
  c('scope: set in if not taken', '{% if false %}{% set n = 1 %}{% endif %}{{ n }}|{% for i in [1] %}{% if false %}{% set n = 1 %}{% endif %}{{ n }}{% endfor %}', { n: 4 }),
  c('scope: macro param shadowed in loop', '{% macro m(n) %}{% for i in [1] %}{{ n }}{% set n = 2 %}{{ n }}{% endfor %}{{ n }}{% endmacro %}{{ m(0) }}'),
  c('scope: macro in loop does not leak', '{% for i in [1, 2] %}{% macro show() %}{{ i }}{% endmacro %}{% set last = show %}{{ show() }}{% endfor %}{{ last is defined }}'),
  c('scope: include sees stores', '{% set y = 2 %}{% for i in [7] %}{% set x = 1 %}{% include "inc" %}{% endfor %}', {}, { templates: { inc: '[{{ x }}|{{ y }}|{{ i }}]' } }),
  c('scope: extends with child set', '{% extends "base" %}{% set x = 3 %}', {}, { templates: { base: '{% block a %}A{{ x }}{% endblock %}{% for i in [1] %}{% block s scoped %}S{{ i }}{% endblock %}{% for j in [2] %}{% block u %}U{{ j }}{% endblock %}{% endfor %}{% endfor %}' } }),
  c('scope: loop filter tuple nextitem', '{% for a, b in [[1, 2], [3, 4]] if a %}{{ loop.nextitem }}{{ loop.previtem }}{% endfor %}'),
  c('scope: set block filter with names', '{% set x | replace(a, "b") %}abc{% endset %}{{ x }}', { a: 'a' }),
  c('scope: set block filter const', '{% set x | replace("a", "b") %}abc{% endset %}{{ x }}'),
  c('scope: nested loops same name', '{% for x in [1, 2] %}{% for x in [x * 10] %}{{ x }}{% endfor %}{{ x }}{% endfor %}'),
  c('scope: loop var after loop', '{% for x in [1] %}{% endfor %}[{{ x }}]', { x: 'outer' }),
  c('scope: set after loop in loop', '{% for i in [1, 2] %}{% for j in [1] %}[{{ k }}]{% endfor %}{% set k = i %}{% endfor %}', { k: 'K' }),
  c('scope: import with context', '{% set v = 9 %}{% import "m" as mm with context %}{{ mm.show() }}|{% from "m" import show with context %}{{ show() }}', {}, { templates: { m: '{% macro show() %}v={{ v }}{% endmacro %}' } }),
  c('scope: import without context', '{% set v = 9 %}{% import "m" as mm %}[{{ mm.show() }}]', { v: 'data' }, { templates: { m: '{% macro show() %}v={{ v }}{% endmacro %}' } }),
  c('scope: exported names', '{% import "m" as mm %}{{ mm.a }}|{{ mm.b }}|{{ mm._c }}|{{ mm.d }}|{{ mm.sub }}', {}, { templates: { m: '{% set a = 1 %}{% for i in [1] %}{% set b = 2 %}{% endfor %}{% set _c = 3 %}{% set d %}D{% endset %}{% import "n" as sub %}', n: 'N' } }),
  c('scope: block sees context not loop', '{% for i in [1] %}{% block b %}[{{ i }}|{{ t }}]{% endblock %}{% endfor %}{% set t = 2 %}', { i: 'ctx', t: 'data' }),
  c('scope: scoped block', '{% for i in [1, 2] %}{% block b scoped %}[{{ i }}]{% endblock %}{% endfor %}'),
  c('scope: self', '{% block greet %}Hi{% endblock %}|{{ self.greet() }}|{{ self.nope is defined }}'),
  c('scope: super chain', '{% extends "b1" %}{% block x %}c{{ super() }}{% endblock %}', {}, { templates: { b1: '{% extends "b2" %}{% block x %}b{{ super() }}{% endblock %}', b2: '<{% block x %}a{% endblock %}>' } }),
  c('scope: super of base raises', '{% extends "b2" %}{% block x %}c{{ super() }}{% endblock %}', {}, { templates: { b2: '<{% block x %}a{{ super() }}{% endblock %}>' } }),
  c('scope: super printed', '{% extends "b2" %}{% block x %}{{ super }}{% endblock %}', {}, { templates: { b2: '<{% block x %}a{% endblock %}>' }, unsupported: 'memory address' }),
  c('scope: extends output rules', '{% extends "base" %}{% macro m() %}M{{ caller() }}{% endmacro %}{% call m() %}x{% endcall %}{% filter upper %}f{% endfilter %}{% for i in [1] %}{{ i }}{% endfor %}{% include "base" %}', {}, { templates: { base: '[{% block b %}B{% endblock %}]' } }),
  c('scope: conditional extends', '{% if true %}{% extends "base" %}{% endif %}after{% block b %}child{% endblock %}', {}, { templates: { base: '[{% block b %}B{% endblock %}]' } }),
  c('scope: extends twice', '{% extends "base" %}{% extends "base" %}', {}, { templates: { base: 'B' } }),
  c('scope: required block', '{% block r required %}{% endblock %}'),
  c('scope: required block overridden', '{% extends "base" %}{% block r %}R{% endblock %}', {}, { templates: { base: '<{% block r required %}{% endblock %}>' } }),
  c('scope: caller without default', '{% macro m(caller) %}{{ caller() }}{% endmacro %}'),
  c('scope: caller with default', '{% macro m(caller=none) %}[{{ caller }}]{% endmacro %}{{ m() }}'),
  c('scope: macro kwargs explicit', '{% macro m(kwargs) %}{{ kwargs }}{% endmacro %}{{ m(1) }}'),
  c('scope: set loop outside for', '{% set loop = 1 %}{{ loop }}'),
  c('scope: namespace in macro', '{% set ns = namespace(x=1) %}{% macro m() %}{{ ns.x }}{% endmacro %}{% set ns.x = 2 %}{{ m() }}'),
  c('scope: with values see outer', '{% set a = 1 %}{% with a = a + 1, b = a %}{{ a }}{{ b }}{% endwith %}{{ a }}'),
  c('scope: for else frame', '{% for x in [] %}{% else %}{% set y = 1 %}{{ y }}{{ x }}{% endfor %}[{{ y }}]', { x: 'X' }),
  c('scope: recursive loop vars', '{% for n in tree recursive %}{% set d = loop.depth %}{{ d }}{% if n.c %}({{ loop(n.c) }}){% endif %}{{ d }}{% endfor %}[{{ d }}]', { tree: [{ c: [{ c: [{}] }, {}] }] }),
  c('scope: recursive loop else', '{% for n in tree recursive %}<{{ loop(n.c) }}>{% else %}E{% endfor %}', { tree: [{ c: [] }, { c: [{ c: [] }] }] }),
  c('scope: folded nan in set', '{% set x = "nan"|float %}{{ x }}'),
  c('scope: folded inf in output', '{{ "inf"|float }} {{ ["nan"|float] }} {{ 1e999 }} {{ -1e999 }}'),
  c('scope: folded inf argument', '{{ ("inf"|float)|int }}'),
  c('scope: folded inf with name', '{{ x ~ ("inf"|float) }}', { x: 1 }),
  c('scope: duplicate kwarg', '{{ range(1, x=1, x=2) }}'),
  // --- limits, misc -----------------------------------------------------------------------------
  c('big ints', '{{ 2 ** 100 }} {{ 2 ** 64 - 1 }} {{ (2 ** 64) // 3 }} {{ (2 ** 64) % 7 }} {{ -(2 ** 70) // 3 }} {{ 2 ** 60 + 0.5 }} {{ (2 ** 70) / 3 }} {{ 10 ** 20 / 10 ** 18 }} {{ big }} {{ big + 1 }} {{ big * big }} {{ big > 1e16 }} {{ big == 2 ** 54 }} {{ [big]|tojson }} {{ "%d|%x|%5.1f" % (big, big, big) }} {{ "{:,}".format(big) }} {{ big|string|length }} {{ 1e16|int }} {{ 1e300|int|string|length }} {{ "123456789012345678901234567890"|int + 1 }} {{ big|abs }} {{ -big|abs }} {{ 12345678901234567890|round(-5) }} {{ big|float }} {{ {big: 1}[2 ** 54] }} {{ [1, 2, 3][:big] }} {{ big is integer }} {{ (2 ** 53 + 1) - 2 ** 53 }}', { big: 2 ** 54 }),
  c('int too long to print', '{{ 10 ** 5000 }}'),
  c('huge power', '{{ 2 ** 1000000 }}', {}, { unsupported: 'bits' }),
  c('repeat by big int', '{{ "a" * 2 ** 70 }}'),
  c('huge loop', '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', {}, { unsupported: 'steps', noOracle: true }),
  c('deep recursion', '{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}', {}, { unsupported: 'deeper than' }),
  c('deep parens', `{{ ${'('.repeat(40)}1${')'.repeat(40)} }}`, {}, { unsupported: 'deeper than' }),
  c('deep loops', `${'{% for i in [1] %}'.repeat(22)}x${'{% endfor %}'.repeat(22)}`, {}, { unsupported: 'deeper than' }),
  c('nested loops ok', `${'{% for i in [1, 2] %}'.repeat(8)}{{ loop.index }}${'{% endfor %}'.repeat(8)}`),
  c('long elif chain', `{% if n == 0 %}0${Array.from({ length: 45 }, (_, i) => `{% elif n == ${i + 1} %}${i + 1}`).join('')}{% endif %}`, { n: 44 }),
  c('long concat chain', `{{ ${Array.from({ length: 80 }, (_, i) => `"${i}"`).join(' ~ ')} }}`),
  c('urlize filter', '{{ "see http://x.y"|urlize }}', {}, { unsupported: "'urlize'" }),
  c('striptags entity', '{{ "<b>caf&eacute;</b>"|striptags }}', {}, { unsupported: 'HTML entity' }),
  c('sameas numbers', '{{ 1 is sameas 1 }}', {}, { unsupported: "'sameas'" }),
  c('non-ascii name', '{{ café }}', { café: 1 }, { unsupported: 'non-ASCII characters' }),
  c('autoescape true', '{% autoescape true %}{{ "<b>" }}{% endautoescape %}', {}, { unsupported: 'autoescape true' }),
  c('markup method with args', '{{ ("<b>"|e).replace("b", "<i>") }}', {}, { unsupported: 'Markup' }),
  c('pow float', '{{ 2 ** 0.5 }}', {}, { unsupported: 'floating-point powers' }),
  c('named escape', "{{ '\\N{BULLET}' }}", {}, { unsupported: 'N{…}' }),
  c('mustache', 'Hi {{name}}', { name: 'x' }, { templateType: 'mustache', unsupported: 'Mustache' }),
  c('lipsum', '{{ lipsum(1) }}', {}, { unsupported: 'random' }),
  c('autoescape false', '{% autoescape false %}{{ "<b>" }}{% endautoescape %}'),
  c('print tag', '{% print "a", 1 %}{% print x %}', { x: 'y' }),
  c('string escapes', "{{ 'a\\tb\\n\\x41\\u00e9\\U0001F600\\101\\q' }}|{{ \"it's\" }}|{{ 'x' 'y' }}"),
  c('bad escape', "{{ '\\x4' }}"),
  c('numbers literals', '{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1.5e3 }} {{ 1E-2 }} {{ 007 }}'),
  c('keyword names', '{{ true }} {{ True }} {{ none }} {{ None }} {{ FALSE }}'),
  c('no front matter', 'system:\nhello', {}, {}),
  c('front matter only', '', {}),
  c('front matter with dashes', 'x', {}, {}),
];
// whole-file variants
handCases.find((x) => x.name === 'no front matter')!.source = 'system:\nhello\n';
handCases.find((x) => x.name === 'front matter only')!.source = '---\nname: x\n---\n';
handCases.find((x) => x.name === 'front matter with dashes')!.source = '---\ndescription: a---b\n---\nuser:\nq {{ 1 }}\n';
handCases.find((x) => x.name === 'cr only')!.source = '---\rname: x\r---\rsystem:\rA\r\ruser:\rB\r';
handCases.find((x) => x.name === 'crlf file')!.source = '---\r\nname: x\r\n---\r\nsystem:\r\nhi {{ a }}\r\n\r\nuser:\r\nq\r\n';

// ---------------------------------------------------------------------------
// Generated cases
// ---------------------------------------------------------------------------

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generateCases(seed: number, count: number): Case[] {
  const rnd = prng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const chance = (p: number): boolean => rnd() < p;
  const int = (a: number, b: number): number => a + Math.floor(rnd() * (b - a + 1));

  const WORDS = ['alpha', 'Beta', 'gamma delta', '', ' ', 'x', 'Ünïcödé', '😀 emoji', 'tab\there', "it's", 'say "hi"', 'user:', 'assistant:', '  System :  ', '# user:', 'tools[a=1]:', 'user[name="n", k=2]:', '![thread]', '![img](http://i/x.png)', 'line1\nline2', 'crlf\r\nend', 'nel\x85user:\x85q', 'vt\x0bff\x0c', 'ls\u2028ps\u2029', 'trail  ', '\tlead', 'a-b_c', 'MiXeD CaSe', '42', '3.5', 'ſystem:', 'user:\n\nassistant:'];
  const ROLE_LINES = ['system:', 'user:', 'assistant:', 'USER:', '  user :  ', '# assistant:', '#system:', 'function:', 'tools:', 'user[name="bob", n=3]:', 'assistant[ k = 1.5 ]:', 'user[x="a b", b=true]:', '![thread]', 'users:', 'user: not a boundary', 'System ::', 'ASSISTANT :\t'];
  const SEPS = ['\n', '\n', '\n', '\n', '\r\n', '\x85', '\u2028', '\x0b', '\x0c', '\n\n', ' '];

  const genValue = (depth: number): unknown => {
    const r = rnd();
    if (depth > 2 || r < 0.35) return pick(WORDS);
    if (r < 0.5) return pick([0, 1, 2, -3, 7, 10, 0.5, 2.25, 1e16, 1e-5, 3.0, -0.5, 100]);
    if (r < 0.55) return pick([true, false, null]);
    if (r < 0.75) return Array.from({ length: int(0, 4) }, () => genValue(depth + 1));
    if (r < 0.9) {
      const o: Record<string, unknown> = {};
      for (const k of ['name', 'role', 'content', 'n', 'tags'].slice(0, int(1, 5))) o[k] = k === 'role' ? pick(['user', 'assistant', 'system', 'bot']) : k === 'n' ? int(0, 9) : k === 'tags' ? [pick(WORDS), pick(WORDS)] : genValue(depth + 1);
      return o;
    }
    return item(pick(['<doc>' + pick(WORDS) + '</doc>', 'plain unit', 'u\nser:']), { title: pick(WORDS), n: int(0, 5), score: pick([0.1, 0.7, 1]) });
  };

  const genData = (): Record<string, unknown> => {
    const msgs = Array.from({ length: int(0, 4) }, () => ({ role: pick(['user', 'assistant', 'system', 'tool', 'User']), content: pick(WORDS) }));
    const docsG = items(
      Array.from({ length: int(0, 3) }, (_, i) => item(`<doc ${i}>${pick(WORDS)}</doc>`, { title: pick(WORDS), n: i, score: pick([0.2, 0.9]) })),
      pick(['\n\n', '\n', ' | ']),
    );
    return { name: pick(WORDS), q: pick(WORDS), n: int(-2, 12), f: pick([0.5, 2.75, 1e16, 3]), flag: pick([true, false, null]), xs: Array.from({ length: int(0, 5) }, () => int(0, 9)), ws: Array.from({ length: int(0, 4) }, () => pick(WORDS)), d: { a: int(0, 3), b: pick(WORDS), items: pick(WORDS) }, msgs, docs: docsG, v: genValue(0) };
  };

  const STR_EXPR = ['name', 'q', '"lit"', "'it''s'", 'ws[0]', 'd.b', 'v', '(name ~ q)', 'name|upper', 'q|trim', 'd["b"]'];
  const NUM_EXPR = ['n', 'f', 'xs|length', 'd.a', '3', '2.5', '(n + 1)', 'xs|sum', '(n * 2)', 'n // 3', 'n % 4', '-n', 'xs|first', 'docs|length'];
  const LIST_EXPR = ['xs', 'ws', 'msgs', 'docs', 'xs|sort', 'ws|reverse|list', 'xs|unique|list', 'd|list', 'range(n if n > 0 else 1)|list', '"ab"|list', 'xs|select("odd")|list', 'msgs|map(attribute="role")|list', 'd.items()|list', '[1, "two", none]'];

  const genExpr = (depth: number): string => {
    const r = rnd();
    if (depth > 2 || r < 0.25) return pick([...STR_EXPR, ...NUM_EXPR]);
    if (r < 0.35) return pick(LIST_EXPR);
    if (r < 0.55) {
      const f = pick(['upper', 'lower', 'title', 'capitalize', 'trim', 'length', 'string', 'wordcount', 'reverse', 'first', 'last', 'list', 'join(", ")', 'default("dflt")', 'default("x", true)', 'replace("a", "@")', 'truncate(8)', 'center(12)', 'indent(2)', 'tojson', 'e', 'int', 'float', 'round(1)', 'abs', 'sort', 'unique|list', 'count', 'striptags', 'urlencode', 'wordwrap(6)', 'batch(2)|list', 'slice(2)|list', 'sum', 'min', 'max', 'dictsort', 'items|list', 'select("string")|list', 'map("string")|join']);
      const STRING_FILTERS = ['upper', 'lower', 'title', 'capitalize', 'trim', 'wordcount', 'replace("a", "@")', 'truncate(8)', 'center(12)', 'indent(2)', 'striptags', 'urlencode', 'wordwrap(6)', 'length', 'reverse', 'list', 'e', 'int', 'float'];
      const NUMBER_FILTERS = ['round(1)', 'abs', 'int', 'float', 'string', 'default("x", true)', 'tojson', 'filesizeformat'];
      const kind = rnd();
      if (kind < 0.35) return `${pick(STR_EXPR)}|${pick(STRING_FILTERS)}`;
      if (kind < 0.55) return `${pick(NUM_EXPR)}|${pick(NUMBER_FILTERS)}`;
      if (kind < 0.85) return `${pick(LIST_EXPR)}|${pick(['length', 'first', 'last', 'list', 'join(", ")', 'sort', 'unique|list', 'count', 'batch(2)|list', 'slice(2)|list', 'select("string")|list', 'map("string")|join', 'reverse|list', 'tojson', 'min', 'max', 'sum'])}`;
      return `${pick([...STR_EXPR, ...NUM_EXPR, ...LIST_EXPR])}|${f}`;
    }
    if (r < 0.65) return `${genExpr(depth + 1)} ${pick(['~', '+', '-', '*', '==', '!=', '<', 'and', 'or', 'in', '//', '%'])} ${genExpr(depth + 1)}`;
    if (r < 0.72) return `(${genExpr(depth + 1)} if ${genCond(depth + 1)} else ${genExpr(depth + 1)})`;
    if (r < 0.8) return `(${pick(STR_EXPR)}).${pick(['upper()', 'strip()', 'split()', 'startswith("a")', 'replace(" ", "_")', 'title()', 'count("a")', 'find("e")', 'format(1, 2)', 'splitlines()', 'isdigit()', 'lstrip("- ")', 'rsplit(" ", 1)', 'endswith(":")', 'center(9, "*")', 'ljust(6, ".")', 'zfill(5)'])}`;
    if (r < 0.86) return `${pick(['d', 'msgs[0]', 'docs[0]', 'v'])}.${pick(['a', 'b', 'role', 'content', 'title', 'n', 'items', 'get("a")', 'keys()|list', 'missing'])}`;
    if (r < 0.92) return `"${pick(['%s', '%d', '%5.2f', '%-6s|', '%r'])}" % ${pick(['n', 'f', 'name', '(n, name)', 'xs'])}`;
    return `(${pick(LIST_EXPR)})[${pick(['0', '-1', '1:', '::2', ':2', 'n'])}]`;
  };

  const genCond = (depth: number): string => {
    const r = rnd();
    if (depth > 2 || r < 0.4) return pick(['flag', 'n > 3', 'xs', 'name', 'q == "x"', 'n is odd', 'v is string', 'v is defined', 'missing is defined', 'not flag', 'd.a', 'xs|length > 2', '"a" in name', 'msgs', 'docs', 'f >= 2', 'n is divisibleby 3', 'v is mapping', 'v is iterable', 'name is lower', 'loop is defined']);
    return `${genCond(depth + 1)} ${pick(['and', 'or'])} ${pick(['not ', ''])}${genCond(depth + 1)}`;
  };

  const ws = (): [string, string] => [pick(['', '', '', '-']), pick(['', '', '', '-', '+'])];
  const out = (): string => {
    const [a, b] = ws();
    return `{{${a} ${genExpr(0)} ${b === '+' ? '' : b}}}`;
  };

  const v1 = (): string => pick(['n', 'name', 'q', 's', 't']);
  /** Segments around jinja2's compile-time scoping, includes, call blocks and recursive loops. */
  const SCOPED: (() => string)[] = [
    () => `{% for x in xs %}[{{ ${v1()} }}]{% set ${v1()} = x %}{% endfor %}{% set ${v1()} = 1 %}{{ n }}`,
    () => `{% filter ${pick(['upper', 'trim'])} %}{{ ${v1()} }}{% endfilter %}{% set ${v1()} = "S" %}`,
    () => `{% macro show() %}<{{ ${v1()} }}>{% endmacro %}{{ show() }}{% set ${v1()} = 2 %}{{ show() }}`,
    () => `{% with a = ${v1()} %}{{ a }}{% set ${v1()} = 3 %}{{ ${v1()} }}{% endwith %}{{ ${v1()} }}`,
    () => `{% if flag %}{% set ${v1()} = "F" %}{% endif %}{% for x in [1] %}{{ ${v1()} }}{% endfor %}`,
    () => `{% for m in msgs %}{% include "part.txt" %}{% endfor %}`,
    () => `{% set s = ${genExpr(1)} %}{% include "part.txt" %}`,
    () => `{% macro box(title) %}[{{ title }}:{{ caller(1) }}]{% endmacro %}{% call(k) box(${genExpr(1)}) %}{{ k }}{{ ${v1()} }}{% endcall %}`,
    () => `{% for node in tree recursive %}{{ node.name }}{% if node.kids %}({{ loop(node.kids) }}){% endif %}{% endfor %}`,
    () => `{% for k, val in d.items() %}{{ k }}={{ val }};{% endfor %}`,
    () => `{% for m in msgs if m.role != "system" %}{{ m.role }}[n={{ loop.index }}]:${pick(SEPS)}{{ m.content }}${pick(SEPS)}{% endfor %}`,
    () => `{% for m in msgs %}{{ m.role }}: {{ m.content }}${pick(SEPS)}{% endfor %}`,
    () => `${pick(['{%+ if flag %}', '{%- if flag +%}', '{% if flag -%}'])}  ${pick(ROLE_LINES)}  ${pick(['{%+ endif %}', '{%- endif -%}', '{% endif +%}'])}`,
    () => `{% set ns = namespace(items=[]) %}{% for x in ws %}{% set ns.items = ns.items + [x|upper] %}{% endfor %}{{ ns.items|join("|") }}`,
    () => `{% import "lib.txt" as lib %}{{ lib.fmt(${genExpr(1)}) }}{% from "lib.txt" import fmt %}{{ fmt(name) }}`,
  ];
  const TEMPLATES = {
    'part.txt': '{{ m.role if m is defined else "-" }}: {{ s }}|{{ n }}\n',
    'lib.txt': '{% macro fmt(v) %}<{{ v }}|{{ name }}>{% endmacro %}',
  };
  const genTree = (depth: number): unknown[] => Array.from({ length: int(0, depth > 1 ? 0 : 2) }, () => ({ name: pick(WORDS), kids: genTree(depth + 1) }));

  const genBody = (depth: number): string => {
    const parts: string[] = [];
    const n = int(1, depth === 0 ? 7 : 3);
    for (let i = 0; i < n; i++) {
      const r = rnd();
      const sep = pick(SEPS);
      if (chance(0.18)) {
        parts.push(pick(SCOPED)() + sep);
        continue;
      }
      if (r < 0.2) parts.push(pick(ROLE_LINES) + sep);
      else if (r < 0.35) parts.push(pick(['Some text. ', 'Answer: ', '  indented ', 'Q: ', '', '![pic](http://p/q.png) ', 'a ![x](u "t") b', '  ']) + out() + sep);
      else if (r < 0.45) parts.push(out());
      else if (r < 0.57 && depth < 2) {
        const [a, b] = ws();
        const loopOut = pick(['{{ loop.index }}. ', '{{ loop.index0 }}', '{% if loop.first %}first {% endif %}', '{% if not loop.last %},{% endif %}', '', '{{ loop.length - loop.index }}', "{{ loop.cycle('a', 'b') }}"]);
        if (chance(0.4)) parts.push(`{%${a} for m in msgs ${b}%}{{ m.role }}:${pick(SEPS)}{{ m.content }}${pick(SEPS)}${loopOut}{%${a} endfor ${b}%}`);
        else parts.push(`{%${a} for x in ${pick(LIST_EXPR)}${chance(0.2) ? ' if x' : ''} ${b}%}${loopOut}${chance(0.5) ? '{{ x }}' : ''}${genBody(depth + 1)}${chance(0.2) ? '{% else %}none' : ''}{%${a} endfor ${b}%}${sep}`);
      } else if (r < 0.7 && depth < 2) {
        const [a, b] = ws();
        let s = `{%${a} if ${genCond(0)} ${b}%}${genBody(depth + 1)}`;
        if (chance(0.3)) s += `{% elif ${genCond(0)} %}${genBody(depth + 1)}`;
        if (chance(0.5)) s += `{%${a} else ${b}%}${genBody(depth + 1)}`;
        parts.push(s + `{%${a} endif ${b}%}` + sep);
      } else if (r < 0.77) parts.push(`{% set ${pick(['t', 'name', 'n', 'acc'])} = ${genExpr(1)} %}${chance(0.5) ? '{{ t }}{{ acc }}' : ''}`);
      else if (r < 0.81) parts.push(`{% set ns = namespace(c=0) %}{% for x in xs %}{% set ns.c = ns.c + x %}{% endfor %}{{ ns.c }}${sep}`);
      else if (r < 0.85) parts.push(`{% macro mk(a, b="B") %}[{{ a }}|{{ b }}{{ caller() if caller is defined else "" }}]{% endmacro %}{{ mk(${genExpr(1)}) }}${chance(0.5) ? '{% call mk(1) %}C{% endcall %}' : ''}${sep}`);
      else if (r < 0.88) parts.push(`{# comment ${pick(WORDS).replace(/#/g, '')} #}${pick(['', '\n'])}`);
      else if (r < 0.9) parts.push(`{% raw %}{{ raw }} ${pick(ROLE_LINES)}{% endraw %}${sep}`);
      else if (r < 0.93) parts.push(`{% filter ${pick(['upper', 'trim', 'title', 'indent(2)', 'replace("\\n", " ")'])} %}${genBody(depth + 1)}{% endfilter %}${sep}`);
      else if (r < 0.96) parts.push(`{% for d in docs %}{{ d }}${pick(SEPS)}{{ d.title }} {{ d.n }}${pick(SEPS)}{% endfor %}`);
      else if (r < 0.97) parts.push(pick(['{{ docs }}', '{{ d|tojson }}', '{{ v|tojson }}', '{{ msgs|tojson }}', '{{ xs|join(",") }}', '{{ d }}']) + sep);
      else parts.push(pick(SCOPED)() + sep);
    }
    return parts.join('');
  };

  const out2: Case[] = [];
  for (let i = 0; i < count; i++) {
    const body = genBody(0) + pick(['', '\n', '\n\n', '\r\n', '  ']);
    const crlf = chance(0.1);
    const src = FM + body;
    out2.push({ name: `gen ${i}`, source: crlf ? src.replace(/\n/g, '\r\n') : src, data: { ...genData(), tree: genTree(0) }, templates: TEMPLATES });
  }
  return out2;
}

/** PROMPTY_SEED / PROMPTY_CASES explore other generated suites (the default is the committed one). */
const GENERATED = generateCases(Number(process.env.PROMPTY_SEED ?? 0x9e3779b9), Number(process.env.PROMPTY_CASES ?? 320));
const ALL: Case[] = [...handCases, ...GENERATED];

// ---------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------

/** The inputs as JSON for the oracle; item objects become {"__str__", "fields"} / {"__str__", "items"}. */
function encode(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const list = v.map(encode);
    return isStringable(v) ? { __str__: v.toString(), items: list } : list;
  }
  const fields: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) fields[k] = encode(x);
  return isStringable(v) ? { __str__: v.toString(), fields } : fields;
}

interface OracleMessage {
  role: string;
  args: Record<string, unknown>;
  content: string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>;
}
type OracleResult = { ok: true; rendered: string; messages: OracleMessage[] } | { ok: false; stage: string; error: string; rendered?: string };

function runOracle(cases: Case[]): { version: string; results: OracleResult[] } {
  const probe = spawnSync('python3', ['-c', 'import jinja2; print(jinja2.__version__)'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(`The Prompty oracle needs python3 with jinja2 (npm test installs it through scripts/prereqs.mjs): ${probe.error?.message ?? probe.stderr}`);
  }
  const input = JSON.stringify(cases.map((x) => (x.noOracle ? { source: FM, data: {} } : { source: x.source, data: encode(x.data), templates: x.templates ?? {} })));
  const r = spawnSync('python3', [ORACLE], { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`prompty_oracle.py failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { jinja2: string; results: OracleResult[] };
  return { version: out.jinja2, results: out.results };
}

function oracleMessages(ms: OracleMessage[]): EngineMessage[] {
  return ms.map((m) => {
    const parts =
      typeof m.content === 'string'
        ? [{ type: 'text' as const, text: m.content }]
        : m.content.map((p) => (p.type === 'text' ? { type: 'text' as const, text: p.text } : { type: 'media' as const, url: p.image_url.url }));
    const args: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(m.args)) args[k] = v !== null && typeof v === 'object' && 'float' in v ? (v as { float: number }).float : v;
    const out: EngineMessage = { role: m.role, parts };
    if (Object.keys(args).length) out.args = args as EngineMessage['args'];
    return out;
  });
}

/** Messages with args sorted by key (JS objects order integer-like keys first). */
function canonical(ms: EngineMessage[]): string {
  return JSON.stringify(ms.map((m) => ({ role: m.role, parts: m.parts, args: m.args ? Object.entries(m.args).sort(([a], [b]) => (a < b ? -1 : 1)) : [] })));
}

const engine = (x: Case): EngineResult => renderPrompty(x.source, x.data, { templates: x.templates, templateType: x.templateType });

describe('Prompty engine issues', () => {
  it('locates issues in the source', () => {
    const at = (source: string, needle: string): { start: number; end: number } => ({ start: source.indexOf(needle), end: source.indexOf(needle) + needle.length });
    const cases: [string, string][] = [
      [FM + 'system:\n{{ missing.attr }}\n', 'missing.attr'],
      ['---\r\nname: x\r\n---\r\nsystem:\r\n\r\n{{ 1 + "a" }}\r\n', '1 + "a"'],
      [FM + 'a {{ x|nosuch }}', 'nosuch'],
      [FM + '{% for x in [1] %}{{ x.y.z }}{% endfor %}', 'x.y.z'],
      [FM + '{{ [1, 2]|map("string") }}', '[1, 2]|map("string")'],
    ];
    for (const [source, needle] of cases) {
      const r = renderPrompty(source, {});
      expect(r.messages).toEqual([]);
      expect(r.issues.length).toBe(1);
      expect(r.issues[0].span).toEqual(at(source, needle));
    }
    const inc = renderPrompty(FM + 'x\n{% include "p" %}', {}, { templates: { p: '{{ 1 / 0 }}' } });
    expect(inc.issues[0].rule).toBe('template-invalid');
    expect(inc.issues[0].span).toEqual(at(FM + 'x\n{% include "p" %}', '{% include "p" %}'));
  });

  it('never throws and bounds the work', () => {
    const big = FM + 'x'.repeat(1_000_001);
    expect(renderPrompty(big, {}).issues[0].rule).toBe('unsupported-feature');
    const loop = renderPrompty(FM + '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', {});
    expect(loop.issues[0].message).toMatch(/steps/);
    const out = renderPrompty(FM + '{% for i in range(30000) %}{{ s }}{% endfor %}', { s: 'x'.repeat(1000) });
    expect(out.issues[0].message).toMatch(/characters/);
    const deep: Record<string, unknown> = {};
    let cur = deep;
    for (let i = 0; i < 5000; i++) cur = cur.a = {} as Record<string, unknown>;
    expect(renderPrompty(FM + '{{ d }}', { d: deep }).issues[0].rule).toBe('unsupported-feature');
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    expect(renderPrompty(FM + '{{ c.self.self.n }}', { c: cyclic }).rendered).toBe('1');
    expect(renderPrompty(FM + '{{ c }}', { c: cyclic }).issues[0].rule).toBe('unsupported-feature');
    const nested = FM + '{% if true %}'.repeat(5000) + '{% endif %}'.repeat(5000);
    expect(renderPrompty(nested, {}).issues[0].rule).toBe('unsupported-feature');
    const parens = FM + '{{ ' + '('.repeat(100000) + ' }}';
    expect(renderPrompty(parens, {}).issues.length).toBe(1);
  });
});

describe('Prompty engine = Prompty runtime (jinja2 + PromptyChatParser)', () => {
  it('renders every case as Prompty does', () => {
    const { version, results } = runOracle(ALL);
    const differences: string[] = [];
    const unsupported: string[] = [];
    let rejected = 0;
    ALL.forEach((x, i) => {
      const want = results[i];
      const got = engine(x);
      const label = `${x.name} ${JSON.stringify(x.source.slice(FM.length > x.source.length ? 0 : 0, 400))}`;
      const unsup = got.issues.find((s) => s.rule === 'unsupported-feature');
      if (unsup) {
        const reason = Object.keys(DELIBERATE_UNSUPPORTED).find((k) => unsup.message.includes(k));
        if (!reason) differences.push(`${label}: unsupported-feature for no deliberate reason: ${unsup.message}`);
        else if (x.unsupported && x.unsupported !== reason) differences.push(`${label}: expected unsupported '${x.unsupported}', got: ${unsup.message}`);
        unsupported.push(`${x.name}: ${unsup.message}`);
        if (unsup.span.start < 0 || unsup.span.end > x.source.length || unsup.span.start > unsup.span.end) differences.push(`${label}: bad span ${JSON.stringify(unsup.span)}`);
        if (got.messages.length) differences.push(`${label}: messages with an unsupported-feature issue`);
        return;
      }
      if (x.unsupported) differences.push(`${label}: expected an unsupported-feature issue (${x.unsupported}), got ${JSON.stringify(got.issues)}`);
      if (!want.ok) {
        rejected++;
        const invalid = got.issues.find((s) => s.rule === 'template-invalid');
        if (!invalid || got.messages.length) differences.push(`${label}: Prompty fails (${want.error}) but the engine gave ${JSON.stringify(got).slice(0, 600)}`);
        else if (invalid.span.start < 0 || invalid.span.end > x.source.length || invalid.span.start > invalid.span.end) differences.push(`${label}: bad span ${JSON.stringify(invalid.span)}`);
        return;
      }
      if (got.issues.length) {
        differences.push(`${label}: Prompty renders ${JSON.stringify(want.rendered).slice(0, 300)} but the engine reports ${JSON.stringify(got.issues)}`);
        return;
      }
      if (got.rendered !== want.rendered) {
        differences.push(`${label}: rendered text differs\n  prompty ${JSON.stringify(want.rendered)}\n  engine  ${JSON.stringify(got.rendered)}`);
        return;
      }
      const a = canonical(oracleMessages(want.messages));
      const b = canonical(got.messages);
      if (a !== b) differences.push(`${label}: messages differ\n  prompty ${a}\n  engine  ${b}`);
    });
    const summary = `prompty oracle (jinja2 ${version}): ${ALL.length} cases (${handCases.length} hand-written, ${GENERATED.length} generated), ${differences.length} differences, ${rejected} rejected by both, ${unsupported.length} unsupported-feature`;
    console.log(summary);
    if (unsupported.length) console.log('unsupported-feature cases:\n  ' + unsupported.join('\n  '));
    if (differences.length) console.log(differences.slice(0, 40).join('\n\n'));
    expect(ALL.length).toBeGreaterThanOrEqual(170);
    expect(differences).toEqual([]);
    expect(unsupported.length).toBeLessThan(ALL.length * 0.12);
  }, 180_000);
});
