/**
 * Plain prompt files beyond the golden suite: which files are prompts, prompts kept as keys of
 * TOML files, a config's mistakes in `messages:` as located findings, and bad input of every
 * format parsed and rendered without a throw.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/lib';
import { claimOf, parseTemplate, languageFor } from '../../src/core/language';
import { readTomlKey } from '../../src/core/language/plain/toml';
import { formatFString, parseFString } from '../../src/core/language/plain/fstring';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-plain-unit-'));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

describe('which files are plain prompts', () => {
  it('Markdown and text under prompts/, Jinja2 and Mustache anywhere; never a README; agent files stay the agents format', () => {
    const id = (p: string) => claimOf(p)?.language.id;
    expect(id('/w/prompts/system.md')).toBe('plain');
    expect(id('/w/app/prompts/sub/user.txt')).toBe('plain');
    expect(id('/w/templates/answer.j2')).toBe('plain');
    expect(id('/w/x.jinja2')).toBe('plain');
    expect(id('/w/x.mustache')).toBe('plain');
    expect(id('/w/prompts/README.md')).toBeUndefined();
    expect(id('/w/docs/guide.md')).toBeUndefined();
    expect(id('/w/notes.txt')).toBeUndefined();
    expect(id('/w/.github/prompts/review.prompt.md')).not.toBe('plain');
  });
});

describe('prompts kept in TOML', () => {
  const toml = [
    'title = "tools"',
    '[search]',
    'prompt = "Search for {query}.\\nBe brief."',
    "literal = 'C:\\\\path {x}'",
    '[tools."deep.name"]',
    'prompt = """',
    'Line one {a}',
    'Line two \\',
    '   joined"""',
    "raw = '''",
    "keep \\n as is'''",
    'number = 3',
  ].join('\n');
  it('reads basic, literal and multi-line strings at a key path, with quoted keys', () => {
    expect(readTomlKey(toml, 'search.prompt')).toMatchObject({ text: 'Search for {query}.\nBe brief.' });
    expect(readTomlKey(toml, 'search.literal')).toMatchObject({ text: 'C:\\\\path {x}' });
    expect(readTomlKey(toml, 'tools."deep.name".prompt')).toMatchObject({ text: 'Line one {a}\nLine two joined' });
    expect(readTomlKey(toml, 'tools."deep.name".raw')).toMatchObject({ text: 'keep \\n as is' });
    const at = readTomlKey(toml, 'search.prompt') as { span: { start: number; end: number } };
    expect(toml.slice(at.span.start, at.span.end)).toBe('Search for {query}.\\nBe brief.');
  });
  it('says why a key cannot be read', () => {
    expect(readTomlKey(toml, 'search.missing')).toEqual({ error: 'no such key' });
    expect(readTomlKey(toml, 'tools."deep.name".number')).toEqual({ error: 'the value is not a string' });
    expect(readTomlKey(toml, 'number')).toEqual({ error: 'no such key' });
    expect(readTomlKey('[a]\nthis is not toml\n', 'a.b')).toHaveProperty('error');
  });
  it('composes a request from a TOML key', () => {
    const dir = workspace({
      'prompts/system.md': 'System.\n',
      'tools.toml': toml,
      'request.context.yaml': 'model: gpt-4o\nloader: langchain\nmessages:\n  - { role: system, file: prompts/system.md, format: text }\n  - { role: user, file: "tools.toml#search.prompt" }\nslots:\n  query: { kind: user, trust: untrusted, label: QUERY }\n',
    });
    const out = openWorkspace(dir).assemble('prompts/system.md', { slots: { query: 'retries' } });
    expect(out.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(out.messages[1].content).toMatch(/^Search for \[QUERY query_1\][\s\S]*retries[\s\S]*\[\/QUERY\]\.\nBe brief\.$/);
  });
});

describe("a config's mistakes in messages", () => {
  const base = 'model: gpt-4o\nmessages:\n  - { role: system, file: prompts/system.md }\n';
  const findings = (extra: string, files: Record<string, string> = {}) => {
    const dir = workspace({ 'prompts/system.md': 'Hello.\n', 'request.context.yaml': base + extra, ...files });
    return openWorkspace(dir)
      .check()
      .files.flatMap((file) => file.findings.map((f) => `${f.rule} ${path.basename(file.path)}: ${f.message}`));
  };
  it('a missing file, a missing key, a file and a text at once, a few-shot prompt: located findings, the rest still assembled', () => {
    const got = findings(
      [
        '  - { role: user, file: prompts/nope.md }',
        '  - { role: user, file: "set.yaml#a.b" }',
        '  - { role: user, file: prompts/system.md, text: both }',
        '  - { role: user, file: fewshot.yaml }',
        '  - { role: user, file: ../outside.md }',
        '',
      ].join('\n'),
      { 'set.yaml': 'a: { c: 1 }\n', 'fewshot.yaml': '_type: few_shot\nexamples: []\n' },
    );
    expect(got.some((f) => /^file-reference request\.context\.yaml: Message 2: 'prompts\/nope\.md' does not exist/.test(f)), got.join('\n')).toBe(true);
    expect(got.some((f) => /^file-reference request\.context\.yaml: Message 3: set\.yaml#a\.b: no such key/.test(f))).toBe(true);
    expect(got.some((f) => /^config-invalid request\.context\.yaml: Message 4 needs exactly one of file: or text:/.test(f))).toBe(true);
    expect(got.some((f) => /^template-invalid request\.context\.yaml: Message 5: fewshot\.yaml .*few_shot/.test(f))).toBe(true);
    expect(got.some((f) => /^file-reference request\.context\.yaml: Message 6: .*outside the workspace/.test(f))).toBe(true);
  });
});

describe('bad input never throws', () => {
  const alphabet = ['{', '}', '{{', '}}', '{%', '%}', '{#', '#}', '{{#', '{{/', '{{^', '!', ':', '.', '[', ']', 'a', 'b', ' ', '\n', '\r\n', '-', '+', '|', 'for', 'if', 'end', '"', "'", '\u200b'];
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const texts = Array.from({ length: 400 }, () => Array.from({ length: 1 + rand(40) }, () => alphabet[rand(alphabet.length)]).join(''));
  it('parses and renders 400 random texts as every plain format, with and without values', () => {
    for (const file of ['/w/prompts/a.md', '/w/a.j2', '/w/a.mustache', '/w/prompts/a.txt']) {
      for (const text of texts) {
        const doc = parseTemplate(file, text);
        expect(doc.format).toBe('plain');
        for (const hasValues of [false, true]) {
          const r = languageFor(doc).render(doc, { input: { a: 'x', b: [1, 2] }, hasValues, defaults: {}, partials: {} });
          expect(Array.isArray(r.messages)).toBe(true);
        }
      }
    }
    for (const text of texts) {
      const p = parseFString(text);
      try {
        formatFString(p, { a: 'x', b: 'y' }, true);
      } catch (e) {
        expect((e as { span?: unknown }).span).toBeDefined();
      }
    }
  });
});
