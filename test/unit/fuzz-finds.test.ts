/**
 * Regression tests for what the fuzz suite (test/fuzz) found: each case is the shrunk input class
 * of a find, checked at the module that was fixed. (Finds in other files' domains have their
 * tests beside those: hostile-yaml.test.ts, hostile-secrets.test.ts.)
 */
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import type { FileHost } from '../../src/core/host';
import { MAX_TEMPLATE_FINDINGS, parseTemplate } from '../../src/core/language';

const internal = (messages: string[]) => messages.filter((m) => /internal error/i.test(m));

describe('a long line of stray template tags', () => {
  // A 200,000-character line of `{` in a .prompty file: one finding per unterminated `{{`, spread
  // into one array, overflowed the call stack ("Internal error while parsing this template").
  it.each(['{', '{%', '{#'])('%s × 100,000 in a .prompty file: located findings, capped, no internal error', (unit) => {
    const text = `---\nname: x\n---\nsystem:\n${unit.repeat(100_000 / unit.length)}\n{{q}}${unit.repeat(100_000 / unit.length)}`;
    const doc = parseTemplate('/w/a.prompty', text);
    const messages = doc.findings.map((f) => f.message);
    expect(internal(messages)).toEqual([]);
    expect(doc.findings).toHaveLength(MAX_TEMPLATE_FINDINGS + 1);
    expect(messages[MAX_TEMPLATE_FINDINGS]).toMatch(/^[\d,]+ more problems in this template are not listed/);
    for (const f of doc.findings) expect(f.span.end).toBeLessThanOrEqual(text.length);
  });

  it('a template with few problems lists all of them', () => {
    const doc = parseTemplate('/w/a.prompty', `---\nname: x\n---\nsystem:\n${'{% endfor %}'.repeat(5)}`);
    expect(doc.findings.length).toBe(5);
  });
});

describe('a dotprompt body of 150,000 tags', () => {
  // Its node list was spread into push() and overflowed the call stack.
  it('ends with a located finding at the tag limit, without an internal error', () => {
    const doc = parseTemplate('/w/a.prompt', `---\nmodel: gpt-4o\n---\n{{role "user"}}${'{{x}}'.repeat(150_000)}`);
    expect(internal(doc.findings.map((f) => f.message))).toEqual([]);
    // Past the bounded number of tags the template is refused where the limit is hit, not parsed for minutes.
    const limit = doc.findings.find((f) => f.rule === 'template-invalid');
    expect(limit?.message).toMatch(/tags?/);
    expect(limit!.span.start).toBeGreaterThan(0);
  });
});

describe('a fixture with 150,000 findings', () => {
  // analyzeTemplate spread each file's findings into push(): 150,000 hidden characters threw a
  // RangeError out of the analysis (the CLI's check ended with an internal error).
  it('is analysed, its findings capped with one located summary', () => {
    const files: Record<string, string> = {
      '/ws/a.prompt': '---\nmodel: gpt-4o\n---\n{{role "user"}}\n{{q}}\n',
      '/ws/a.context.yaml': 'model: gpt-4o\nwindow: 8000\noutput: 500\nslots:\n  q: { kind: user, trust: untrusted }\nfixtures: [f/*.fixture.yaml]\n',
      '/ws/f/x.fixture.yaml': `slots:\n  q: "${'a\u200b'.repeat(150_000)}"\n`,
    };
    const host: FileHost = {
      roots: ['/ws'],
      readFile: (p) => files[p],
      size: (p) => files[p]?.length,
      glob: (dir, pattern) => Object.keys(files).filter((p) => p.startsWith(`${dir}/`) && picomatch(pattern)(p.slice(dir.length + 1))),
    };
    const a = analyzeTemplate(host, '/ws/a.prompt')!;
    const hidden = a.findings.filter((f) => f.rule === 'hidden-characters');
    // 100 located findings per text and one summary of the rest (150,000 of them took 58 MB of JSON).
    expect(hidden.length).toBeGreaterThan(100);
    expect(hidden.length).toBeLessThan(110);
    expect(hidden.some((f) => /more/.test(f.message))).toBe(true);
    expect(a.assembly?.ok).toBe(true);
  });
});
