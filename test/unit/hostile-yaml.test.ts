/**
 * Hostile YAML and config text: nesting and size that used to overflow the parser's stack (and,
 * twice in one process, abort Node in the regexp compiler), exponential mapping-as-key
 * conversions, quadratic duplicate-key checks, user text that became a regular expression, and
 * ranges that ran past a CR line end. Each case must end in a located finding, quickly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { parseConfig, suggest } from '../../src/core/config/parse';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { parseFixture } from '../../src/core/fixture';
import { LineIndex } from '../../src/core/text/lineIndex';
import { MAX_YAML_DEPTH, MAX_YAML_ENTRIES, parseYaml, yamlFindings } from '../../src/core/text/yaml';
import type { Finding } from '../../src/core/types';

const messages = (fs: Finding[]) => fs.map((f) => f.message);
const slice = (text: string, f: Finding) => text.slice(f.span.start, f.span.end);

describe('nesting and size limits come before parsing', () => {
  it('10,000 unclosed [ in a config: one located finding, no stack overflow', () => {
    const text = '['.repeat(10_000);
    const doc = parseConfig('/w/a.context.yaml', text);
    const limit = doc.findings.filter((f) => f.message.includes(`nests deeper than ${MAX_YAML_DEPTH} levels`));
    expect(limit).toHaveLength(1);
    expect(limit[0]).toMatchObject({ rule: 'config-invalid', span: { start: MAX_YAML_DEPTH, end: MAX_YAML_DEPTH + 1 } });
    expect(messages(doc.findings).join('\n')).not.toMatch(/call stack/i);
  });

  it('10,000 { in a fixture: one located fixture-invalid finding', () => {
    const doc = parseFixture('/w/a.fixture.yaml', '{'.repeat(10_000));
    const limit = doc.findings.filter((f) => f.message.includes('nests deeper than'));
    expect(limit).toHaveLength(1);
    expect(limit[0].rule).toBe('fixture-invalid');
    expect(messages(doc.findings).join('\n')).not.toMatch(/call stack/i);
  });

  it('1,000-deep flow mappings (closed or not) stop at the 65th level', () => {
    for (const text of ['a: ' + '{a: '.repeat(1000) + '1' + '}'.repeat(1000), '{'.repeat(1000), 'a: ' + '{'.repeat(1000)]) {
      const doc = parseConfig('/w/a.context.yaml', text);
      const limit = doc.findings.find((f) => f.message.includes('nests deeper than'));
      expect(limit, text.slice(0, 20)).toBeDefined();
      expect(slice(text, limit!)).toBe('{');
    }
  });

  it('deep block nesting (indentation) is limited too', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`);
    const text = lines.join('\n') + ' 1\n';
    const doc = parseConfig('/w/a.context.yaml', text);
    const limit = doc.findings.find((f) => f.message.includes('nests deeper than'));
    expect(limit).toBeDefined();
    expect(slice(text, limit!)).toBe(`k${MAX_YAML_DEPTH}`);
  });

  it('nesting up to the limit still parses', () => {
    const depth = MAX_YAML_DEPTH - 1;
    const text = 'a: ' + '[' .repeat(depth) + '1' + ']'.repeat(depth);
    expect(parseYaml(text).doc.errors).toEqual([]);
  });

  it('a mapping with 35,000 keys: a finding at the first key over the limit', () => {
    const text = Array.from({ length: 35_000 }, (_, i) => `k${i}: 1`).join('\n');
    const doc = parseConfig('/w/a.context.yaml', text);
    const limit = doc.findings.filter((f) => f.message.includes(`more than ${MAX_YAML_ENTRIES.toLocaleString('en-US')} entries`));
    expect(limit).toHaveLength(1);
    expect(slice(text, limit[0])).toBe(`k${MAX_YAML_ENTRIES}`);
  });

  it('a fixture with 35,000 slots or items: the same finding', () => {
    const slots = 'slots:\n' + Array.from({ length: 35_000 }, (_, i) => `  s${i}: x`).join('\n');
    expect(parseFixture('/w/a.fixture.yaml', slots).findings.some((f) => f.message.includes('entries'))).toBe(true);
    const items = 'slots:\n  e:\n' + Array.from({ length: 35_000 }, () => '    - x').join('\n');
    expect(parseFixture('/w/b.fixture.yaml', items).findings.some((f) => f.message.includes('entries'))).toBe(true);
  });

  it('duplicate keys are still reported, once per repeated key, at the repeat', () => {
    const text = 'window: 1\noutput: 2\nwindow: 3\nslots: { a: {}, a: {} }\n';
    const src = parseYaml(text);
    const dup = yamlFindings('config-invalid', '/w/a.context.yaml', src).filter((f) => f.message.includes('unique'));
    expect(dup.map((f) => [f.span.start, slice(text, f)])).toEqual([
      [text.indexOf('window: 3'), 'window'],
      [text.lastIndexOf('a: {}'), 'a'],
    ]);
  });

  it('a mapping used as a key is refused instead of converted (that conversion is exponential)', () => {
    const text = '{'.repeat(40);
    const doc = parseConfig('/w/a.context.yaml', text);
    expect(doc.findings.some((f) => f.message.includes('a mapping or list cannot be a key'))).toBe(true);
    const keyed = parseConfig('/w/b.context.yaml', 'slots:\n  ? { a: 1 }\n  : { kind: policy }\n');
    expect(keyed.findings.find((f) => f.message.includes('cannot be a key'))).toMatchObject({ span: { start: 11, end: 19 } });
  });

  it('a run of the above in one process never aborts Node (child process)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-hostile-yaml-'));
    const entry = join(dir, 'entry.ts');
    const core = resolve(__dirname, '../../src/core');
    writeFileSync(
      entry,
      `import { parseConfig } from ${JSON.stringify(`${core}/config/parse.ts`)};
import { parseFixture } from ${JSON.stringify(`${core}/fixture/index.ts`)};
import { scanSecrets } from ${JSON.stringify(`${core}/text/scan.ts`)};
const config = '['.repeat(10000);
const fixture = '{'.repeat(10000);
let n = parseConfig('/w/a.context.yaml', config).findings.length + scanSecrets('/w/a.context.yaml', config).length;
n += parseFixture('/w/a.fixture.yaml', fixture).findings.length + scanSecrets('/w/a.fixture.yaml', fixture).length;
n += parseConfig('/w/b.context.yaml', '{'.repeat(1000)).findings.length;
process.stdout.write(String(n));
`,
    );
    const script = join(dir, 'entry.js');
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 15_000 });
    expect(r.signal).toBeNull();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(Number(r.stdout)).toBeGreaterThan(0);
  });
});

describe('user text never becomes an unbounded regular expression or an unbounded message', () => {
  it('a 100,000-character label is refused at the value', () => {
    const label = 'A'.repeat(100_000);
    const text = `slots:\n  e: { kind: evidence, label: ${label} }\n`;
    const doc = parseConfig('/w/a.context.yaml', text);
    const f = doc.findings.find((x) => x.rule === 'config-invalid');
    expect(f?.span).toEqual({ start: text.indexOf(label), end: text.indexOf(label) + label.length });
    expect(f?.message).toMatch(/^slots\.e\.label: a label is at most 64 characters/);
    expect(f!.message.length).toBeLessThan(200);
    expect(doc.config?.slots.e.label).toBeUndefined();
    expect(ContextConfigSchema.safeParse({ slots: { e: { label: 'A'.repeat(64) } } }).success).toBe(true);
  });

  it('an empty, blank or oversize fixture glob is refused where it is written', () => {
    const long = 'x'.repeat(600);
    const text = `fixtures: ["", "   ", "${long}", "fixtures/*.fixture.yaml"]\n`;
    const doc = parseConfig('/w/a.context.yaml', text);
    const got = doc.findings.filter((f) => f.rule === 'config-invalid').map((f) => [slice(text, f).slice(0, 8), f.message.split(';')[0]]);
    expect(got).toEqual([
      ['""', 'fixtures[0]: a fixture glob cannot be empty'],
      ['"   "', 'fixtures[1]: a fixture glob cannot be empty'],
      ['"xxxxxxx', 'fixtures[2]: a fixture glob is at most 512 characters'],
    ]);
    expect(doc.config?.fixtures).toEqual(['fixtures/*.fixture.yaml']);
  });

  it('unknown keys and rule ids of any length: short messages, bounded suggestions', () => {
    const key = 'k'.repeat(1000);
    const doc = parseConfig('/w/a.context.yaml', `${key}: 1\nrules:\n  ${key}: off\nslots:\n  ${key}:\n    kind: evidnce\n`);
    const unknown = doc.findings.filter((f) => f.rule === 'config-invalid');
    expect(unknown.length).toBeGreaterThanOrEqual(3);
    for (const f of unknown) expect(f.message.length).toBeLessThan(400);
    expect(suggest('x'.repeat(100_000), ['window', 'output'])).toBeUndefined();
    expect(suggest('windw', ['window', 'output'])).toBe('window');
  });
});

describe('ranges never include a CR line end', () => {
  it('LineIndex puts an offset inside CRLF at the end of the line', () => {
    const text = 'ab\r\ncd\re';
    const li = new LineIndex(text);
    expect(li.positionAt(2)).toEqual({ line: 0, character: 2 });
    expect(li.positionAt(3)).toEqual({ line: 0, character: 2 });
    expect(li.positionAt(4)).toEqual({ line: 1, character: 0 });
    expect(li.positionAt(6)).toEqual({ line: 1, character: 2 });
    expect(li.positionAt(7)).toEqual({ line: 2, character: 0 });
  });

  for (const [name, eol] of [
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`${name}: configs parse as they do with LF, and no finding covers a line end`, () => {
      const lf = 'window: 1000\nbogus: 1\noutput: abc\nx: [1, 2\n';
      const text = lf.replace(/\n/g, eol);
      const got = parseConfig('/w/a.context.yaml', text).findings;
      const want = parseConfig('/w/a.context.yaml', lf).findings;
      expect(messages(got)).toEqual(messages(want));
      const li = new LineIndex(text);
      const lines = text.split(/\r\n|\r/);
      for (const f of got) {
        expect(slice(text, f)).not.toMatch(/[\r\n]$/);
        const end = li.positionAt(f.span.end);
        expect(end.character).toBeLessThanOrEqual(lines[end.line].length);
      }
    });
  }

  it('an error at a CR line end is an empty range at the end of that line', () => {
    const text = 'window: 1000\r\nx: [1, 2\r\n';
    for (const f of yamlFindings('config-invalid', '/w/a', parseYaml(text))) {
      expect(text.slice(f.span.start, f.span.end)).not.toMatch(/[\r\n]/);
    }
  });
});

describe('a text with tens of thousands of YAML errors', () => {
  // Found by the fuzz suite (test/fuzz): a 300,000-character line of `{{x}}` in a fixture took 14 s
  // to parse, most of it capturing a stack trace for each of yaml's 60,000 error objects.
  it('parses without capturing a stack trace per error, and restores Error.stackTraceLimit', () => {
    const text = `slots:\n  q: ${'{{x}}'.repeat(2_000)}\n`;
    const before = Error.stackTraceLimit;
    const src = parseYaml(text);
    expect(Error.stackTraceLimit).toBe(before);
    expect(src.doc.errors.length).toBeGreaterThan(1_000);
    // No frames: the stack is the error's first line alone.
    expect(src.doc.errors[0].stack ?? '').not.toMatch(/\n\s+at /);
    // Findings are still capped and located.
    const findings = parseFixture('/w/a.fixture.yaml', text).findings;
    expect(findings.length).toBeLessThanOrEqual(101);
    for (const f of findings) expect(f.span.end).toBeLessThanOrEqual(text.length);
  });

  it('restores Error.stackTraceLimit when parsing throws', () => {
    const before = Error.stackTraceLimit;
    // A getter that throws on the text: the parse fails inside, the limit is restored in finally.
    const hostile = { includes: () => { throw new Error('boom'); } } as unknown as string;
    expect(() => parseYaml(hostile)).toThrow('boom');
    expect(Error.stackTraceLimit).toBe(before);
  });
});
