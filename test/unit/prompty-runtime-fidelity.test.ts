/**
 * Behaviours of Prompty's runtimes the engine reproduces because the golden renderings
 * (test/oracle/prompty-golden, issue 17) showed them: how each runtime's loader reads the front
 * matter (key order, inputs entries, front matters that are not mappings) and what it refuses.
 */
import { describe, expect, it } from 'vitest';
import { promptyRuntimeInputs, renderPrompty } from '../../src/core/language/prompty/engine';

const V01 = (body: string, extra = '') => `---\nname: t\nmodel:\n  api: chat\n${extra}---\n${body}`;
const V2 = (body: string, extra = '') => `---\nname: t\nmodel:\n  id: gpt-4o\n${extra}---\n${body}`;
const texts = (r: ReturnType<typeof renderPrompty>) => r.messages.map((m) => [m.role, m.parts.map((p) => (p.type === 'text' ? p.text : `<${p.type}>`)).join('|')]);
const render = (source: string) => renderPrompty(source, promptyRuntimeInputs(source, undefined));

describe('mappings with integer-like keys', () => {
  it('keep the YAML order on both lines (a Python dict keeps insertion order)', () => {
    const body = 'user:\n{% for k in d.keys() %}{{ k }} {% endfor %}{{ d }}';
    expect(texts(render(V01(body, 'sample:\n  d:\n    b: 1\n    "10": 3\n    "9": 4\n')))).toEqual([['user', "b 10 9 {'b': 1, '10': 3, '9': 4}"]]);
    expect(texts(render(V2(body, 'inputs:\n  d:\n    kind: object\n    default:\n      b: 1\n      "10": 3\n      "9": 4\n')))).toEqual([['user', "b 10 9 {'b': 1, '10': 3, '9': 4}"]]);
  });
  it('keep the order through a merge key (`<<: *base`)', () => {
    const body = 'user:\n{{ d }}';
    expect(texts(render(V01(body, 'sample:\n  base: &b\n    "10": 1\n    a: 2\n  d:\n    <<: *b\n    "9": 3\n')))).toEqual([['user', "{'10': 1, 'a': 2, '9': 3}"]]);
  });
});

describe('a JSON sample file (`${file:sample.json}`)', () => {
  it("is read as Python's json reads it: keys in the file's order, floats where written with a fraction", () => {
    const source = V01('user:\n{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}', 'sample: ${file:sample.json}\n');
    const readFile = (p: string) => (p === 'sample.json' ? '{"d": {"b": 1.0, "10": 2, "9": 3.5, "a": 4}}' : undefined);
    expect(texts(renderPrompty(source, promptyRuntimeInputs(source, undefined, readFile, '0.1'), { line: '0.1', readFile }))).toEqual([['user', 'b=1.0 10=2 9=3.5 a=4']]);
  });
});

describe('a referenced JSON file the runtime cannot read', () => {
  const files = (json: string) => (p: string) => (p === 'sample.json' ? json : undefined);
  const v01 = 'sample: ${file:sample.json}\n';
  const v2 = 'inputs:\n  v:\n    kind: object\n    default: ${file:sample.json}\n';
  const run = (source: string, line: '0.1' | 'v2', readFile: (p: string) => string | undefined) => renderPrompty(source, promptyRuntimeInputs(source, undefined, readFile, line), { line, readFile });
  it('fails to load on both lines when it is not JSON (never an exception)', () => {
    for (const [source, line] of [[V01('user:\nx', v01), '0.1'], [V2('user:\nx', v2), 'v2']] as const) {
      const r = run(source, line, files('{bad'));
      expect(r.issues.map((i) => i.rule), line).toEqual(['template-invalid']);
      expect(r.issues[0].message, line).toContain('JSONDecodeError');
    }
  });
  it('is reported when it nests deeper than Python reads (no stack overflow)', () => {
    const deep = `{"v": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    for (const [source, line] of [[V01('user:\nx', v01), '0.1'], [V2('user:\nx', v2), 'v2']] as const) {
      const r = run(source, line, files(deep));
      expect(r.messages, line).toEqual([]);
      expect(r.issues.map((i) => i.rule), line).toEqual(['unsupported-feature']);
    }
  });
});

describe("0.1.x's inputs entries (PropertySettings of 0.1.50, then 0.1.24)", () => {
  const load = (inputs: string) => renderPrompty(V01('user:\n{{ q }}', inputs), { q: 'x' });
  it('refuse an entry without a type, an entry that is not a mapping, and a list of names', () => {
    for (const inputs of ['inputs:\n  q:\n    description: no type\n', 'inputs:\n  q: string\n', 'inputs:\n  - q\n', 'outputs:\n  a: string\n']) {
      const r = load(inputs);
      expect(r.messages, inputs).toEqual([]);
      expect(r.issues.map((i) => i.rule), inputs).toEqual(['template-invalid']);
      expect(r.issues[0].message, inputs).toMatch(/ValueError: Error in (inputs|outputs)/);
    }
  });
  it('load an unknown key through 0.1.24 (pydantic ignores it) unless 0.1.24 refuses the entry too', () => {
    expect(texts(load('inputs:\n  q:\n    type: string\n    sample: y\n'))).toEqual([['user', 'x']]);
    expect(texts(load('inputs:\n  q:\n    type: string\n    description: d\n    default: z\n'))).toEqual([['user', 'x']]);
    expect(load('inputs:\n  q:\n    type: text\n    sample: y\n').issues.map((i) => i.rule)).toEqual(['template-invalid']);
    expect(load('inputs:\n  q:\n    type: string\n    sample: y\n    default: null\n').issues.map((i) => i.rule)).toEqual(['template-invalid']);
  });
});

describe('a v2 front matter that is not a mapping', () => {
  it('fails to load (the loader writes the body into what YAML returned)', () => {
    for (const fm of ['[1, 2]', 'just a string', '42']) {
      const source = `---\n${fm}\n---\nuser:\n{{ q }}\n`;
      const r = renderPrompty(source, { q: 'x' }, { line: 'v2' });
      expect(r.messages, fm).toEqual([]);
      expect(r.issues.map((i) => i.rule), fm).toEqual(['template-invalid']);
      expect(r.issues[0].message, fm).toContain('TypeError');
      expect(r.issues[0].span.start).toBe(0);
      expect(r.issues[0].span.end).toBeLessThanOrEqual(source.length);
    }
  });
});

describe("PyYAML's collection tags", () => {
  const body = 'user:\n[{{ v }}] {{ [v] }} {{ v|length }}';
  it('!!python/tuple is a tuple on 0.1.x (FullLoader), its strings as loaded; v2 (safe_load) refuses it at the tag', () => {
    expect(texts(render(V01(body, 'sample:\n  v: !!python/tuple [1, " a "]\n')))).toEqual([['user', "[(1, ' a ')] [(1, ' a ')] 2"]]);
    const source = V2(body, 'inputs:\n  v:\n    kind: string\n    default: !!python/tuple [1, 2]\n');
    const r = render(source);
    expect(r.messages).toEqual([]);
    expect(r.issues.map((i) => i.rule)).toEqual(['template-invalid']);
    expect(r.issues[0].message).toContain('ConstructorError');
    expect(source.slice(r.issues[0].span.start, r.issues[0].span.end)).toBe('!!python/tuple [1, 2]');
  });
  it('!!omap is a list of (key, value) tuples on both lines', () => {
    expect(texts(render(V01(body, 'sample:\n  v: !!omap [b: 1, a: 2]\n')))).toEqual([['user', "[[('b', 1), ('a', 2)]] [[('b', 1), ('a', 2)]] 2"]]);
    expect(texts(render(V2(body, 'inputs:\n  v:\n    kind: object\n    default: !!omap [b: 1, a: 2]\n')))).toEqual([['user', "[[('b', 1), ('a', 2)]] [[('b', 1), ('a', 2)]] 2"]]);
  });
  it('!!pairs is a list of (key, value) tuples too', () => {
    expect(texts(render(V01(body, 'sample:\n  v: !!pairs [a: 1, a: 2]\n')))).toEqual([['user', "[[('a', 1), ('a', 2)]] [[('a', 1), ('a', 2)]] 2"]]);
  });
  it('a tag no loader constructs fails to load on both lines, at the tag', () => {
    for (const source of [V01(body, 'sample:\n  v: !custom x\n'), V2(body, 'inputs:\n  v:\n    kind: string\n    default: !custom x\n')]) {
      const r = render(source);
      expect(r.messages).toEqual([]);
      expect(r.issues[0].message).toContain('ConstructorError');
      expect(source.slice(r.issues[0].span.start, r.issues[0].span.end)).toBe('!custom x');
    }
  });
  it('another !!python/ tag is reported on 0.1.x (FullLoader makes a Python object of it) and fails to load on v2', () => {
    const source = V01(body, 'sample:\n  v: !!python/complex 1+2j\n');
    const issue = render(source).issues.find((i) => i.rule === 'unsupported-feature');
    expect(source.slice(issue!.span.start, issue!.span.end)).toBe('!!python/complex 1+2j');
    expect(render(V2(body, 'inputs:\n  v:\n    kind: string\n    default: !!python/str x\n')).issues[0].message).toContain('ConstructorError');
    expect(texts(render(V01(body, 'sample:\n  v: !!python/str x\n')))).toEqual([['user', "[x] ['x'] 1"]]);
  });
  it('a value nested deeper than the engine reads is reported, not silently None', () => {
    const deep = `sample:\n  v: ${'['.repeat(80)}1${']'.repeat(80)}\n`;
    const r = render(V01('user:\n{{ v|length }}', deep));
    expect(texts(r)).toEqual([['user', '1']]);
    expect(r.issues.map((i) => [i.rule, i.message.slice(0, 44)])).toEqual([['unsupported-feature', 'The front matter nests values deeper than 64']]);
    expect(r.exact).toBe(false);
  });
  it('!!set is reported at the tag (a Python set prints in hash order)', () => {
    const source = V01(body, 'sample:\n  v: !!set {a, b}\n');
    const r = render(source);
    const issue = r.issues.find((i) => i.rule === 'unsupported-feature');
    expect(issue).toBeDefined();
    expect(source.slice(issue!.span.start, issue!.span.end)).toBe('!!set {a, b}');
    expect(r.exact).toBe(false);
  });
});

describe('0.1.x renders without the sandbox (jinja2.Environment); v2 keeps it', () => {
  const both = (body: string, data: Record<string, unknown>) => [renderPrompty(V01(body), data), renderPrompty(V2(body), data)];
  it('list and dict methods mutate on 0.1.x and are refused by v2', () => {
    const body = 'user:\n{{ l.append(4) }}{{ l.pop(0) }}{{ l.insert(-10, 0) }}{{ l }} {{ d.update({"x": 1}, y=2) }}{{ d.setdefault("a", 9) }}{{ d.pop("b") }}{{ d }}';
    const [v01, v2] = both(body, { l: [1, 2, 3], d: { a: 1, b: 2 } });
    expect(texts(v01)).toEqual([['user', "None1None[0, 2, 3, 4] None12{'a': 1, 'x': 1, 'y': 2}"]]);
    expect(v2.messages).toEqual([]);
    expect(v2.issues[0].message).toContain('SecurityError');
  });
  it("raises Python's errors on 0.1.x", () => {
    for (const [body, error] of [
      ['{{ l.pop() }}', 'IndexError'],
      ['{{ l.remove(1) }}', 'ValueError'],
      ['{{ d.pop("z") }}', 'KeyError'],
      ['{{ d.popitem() }}', 'KeyError'],
    ]) {
      const r = renderPrompty(V01(`user:\n${body}`), { l: [], d: {} });
      expect(r.issues.map((i) => i.rule), body).toEqual(['template-invalid']);
      expect(r.issues[0].message, body).toContain(error);
    }
  });
  it('prints a mutating method as Python does (its address masked)', () => {
    expect(texts(renderPrompty(V01('user:\n{{ l.pop }}'), { l: [1] }))).toEqual([['user', '<built-in method pop of list object at 0xADDR>']]);
  });
  it('reports, at the call, a mutation of a list or dict the template has iterated (Python iterates it live)', () => {
    const source = V01('user:\n{% for x in l %}{{ l.append(x) }}{% endfor %}');
    const r = renderPrompty(source, { l: [1, 2] });
    const issue = r.issues.find((i) => i.rule === 'unsupported-feature');
    expect(issue).toBeDefined();
    expect(source.slice(issue!.span.start, issue!.span.end)).toContain('l.append');
  });
  it('range() has no MAX_RANGE on 0.1.x, up to a reported bound', () => {
    const [v01, v2] = both('user:\n{{ range(200000)|length }}', {});
    expect(texts(v01)).toEqual([['user', '200000']]);
    expect(v2.issues[0].message).toContain('OverflowError');
    const huge = renderPrompty(V01('user:\n{{ range(10**9)|length }}'), {});
    expect(huge.issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
  });
});

describe("promptflow's bare `sample: sample.json`", () => {
  const source = V01('user:\nHello {{ firstName }}.', 'sample: sample.json\n');
  const readFile = (p: string) => (p === 'sample.json' ? '{"firstName": "Jane"}' : undefined);
  it("fails as 0.1.x's prepare() does when the caller asks for Prompty 0.1.x", () => {
    const r = renderPrompty(source, promptyRuntimeInputs(source, undefined, readFile, '0.1'), { line: '0.1', readFile });
    expect(r.messages).toEqual([]);
    expect(r.issues.map((i) => i.rule)).toEqual(['template-invalid']);
    expect(r.issues[0].message).toContain("AttributeError: 'str");
  });
  it('is left to the caller (the analysis reads it as promptflow does) when the line comes from the front matter', () => {
    expect(texts(renderPrompty(source, { firstName: 'Jane' }, { readFile }))).toEqual([['user', 'Hello Jane.']]);
  });
});

describe("str.format: CPython's own on 0.1.x, Jinja2's SandboxedFormatter on v2", () => {
  const both = (body: string, data: Record<string, unknown>) => [renderPrompty(V01(body), data), renderPrompty(V2(body), data)];
  it('numbers a field by its first part on 0.1.x (`{.real}` is the next argument)', () => {
    const [v01, v2] = both('user:\n{{ "{.real}-{}".format(5, 6) }}', {});
    expect(texts(v01)).toEqual([['user', '5-6']]);
    expect(v2.issues[0].message).toContain('KeyError');
  });
  it('reads `.name` with getattr only on 0.1.x (a dict key is not an attribute there)', () => {
    const [v01, v2] = both('user:\n{{ "{0.x}".format(d) }}', { d: { x: 1 } });
    expect(v01.issues.map((i) => i.rule)).toEqual(['template-invalid']);
    expect(v01.issues[0].message).toContain('AttributeError');
    expect(texts(v2)).toEqual([['user', '1']]);
  });
});

describe("private attributes of Jinja2's own objects on 0.1.x", () => {
  it('are reported at the access (Python reads the object itself); v2 gives the sandbox\'s undefined', () => {
    const body = 'user:\nx{% for i in [1] %}{{ loop._length }}{% endfor %}';
    const source = V01(body);
    const r = renderPrompty(source, {});
    const issue = r.issues.find((i) => i.rule === 'unsupported-feature');
    expect(issue).toBeDefined();
    expect(source.slice(issue!.span.start, issue!.span.end)).toContain('_length');
    expect(texts(renderPrompty(V2(body), {}))).toEqual([['user', 'x']]);
  });
});
