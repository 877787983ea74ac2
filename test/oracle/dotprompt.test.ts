/**
 * Differential suite of the dotprompt engine: every case is rendered by npm `dotprompt` 1.1.2 (the
 * oracle, `new Dotprompt({ partials }).render(source, data, { input: { default } })`) and by
 * src/core/language/dotprompt/engine.ts; roles, part types, texts (every whitespace character) and purposes
 * must be equal. Cases the oracle rejects must give a `template-invalid` issue and no messages.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Dotprompt } from 'dotprompt';
import { matchFrontMatter, MAX_NESTING, renderDotprompt, splitMediaAndSection } from '../../src/core/language/dotprompt/engine';
import type { EngineMessage, EngineResult } from '../../src/core/language/engineTypes';
import { generateCases, handCases, Item, itemList, prng } from './dotpromptCases';
import type { DotpromptCase } from './dotpromptCases';

const GENERATED = generateCases(0x5eed_d07, 160);
const ALL: DotpromptCase[] = [...handCases, ...GENERATED];

type OracleResult = { ok: true; messages: EngineMessage[] } | { ok: false; error: string };

interface OraclePart {
  text?: string;
  media?: { url: string; contentType?: string };
  metadata?: { purpose?: string; pending?: boolean };
}

/** dotprompt's RenderedPrompt.messages in the engine vocabulary. */
function normalize(messages: Array<{ role: string; content: OraclePart[]; metadata?: { purpose?: unknown } }>): EngineMessage[] {
  return messages.map((m) => {
    const parts = m.content.map((p) => {
      if (p.media) return p.media.contentType !== undefined ? { type: 'media' as const, url: p.media.url, contentType: p.media.contentType } : { type: 'media' as const, url: p.media.url };
      if (p.metadata?.pending) return { type: 'section' as const, name: p.metadata.purpose as string };
      return { type: 'text' as const, text: p.text as string };
    });
    const out: EngineMessage = { role: m.role, parts };
    if (m.metadata?.purpose === 'history') out.purpose = 'history';
    return out;
  });
}

async function oracle(c: DotpromptCase): Promise<OracleResult> {
  const dp = new Dotprompt({ partials: c.partials });
  try {
    const rendered = await dp.render(c.source, c.data as Parameters<Dotprompt['render']>[1], { input: { default: c.inputDefault } });
    return { ok: true, messages: normalize(rendered.messages as Parameters<typeof normalize>[0]) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    // dotprompt registers partials on the one global Handlebars instance; keep cases apart.
    const hb = (dp as unknown as { handlebars: { unregisterPartial(name: string): void } }).handlebars;
    for (const name of Object.keys(c.partials ?? {})) hb.unregisterPartial(name);
  }
}

const engine = (c: DotpromptCase): EngineResult => renderDotprompt(c.source, c.data, { partials: c.partials, inputDefault: c.inputDefault });

let errorSpy: ReturnType<typeof vi.spyOn>;
beforeAll(() => {
  // dotprompt logs YAML errors and Handlebars logs denied prototype access on console.error.
  errorSpy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterAll(() => errorSpy.mockRestore());

describe('dotprompt engine = npm dotprompt 1.1.2', () => {
  it('renders every case as dotprompt does', async () => {
    const differences: string[] = [];
    let bothFail = 0;
    let generatedFail = 0;
    for (const c of ALL) {
      const expected = await oracle(c);
      const actual = engine(c);
      const again = engine(c); // cached
      if (JSON.stringify(again) !== JSON.stringify(actual)) differences.push(`${c.name}: a cached render differs`);
      const label = `${c.name} ${JSON.stringify(c.source)}`;
      if (expected.ok) {
        if (c.error) differences.push(`${label}: the case expects dotprompt to fail, but it rendered`);
        if (actual.issues.length) differences.push(`${label}: unexpected issues ${JSON.stringify(actual.issues)}`);
        const want = JSON.stringify(expected.messages);
        const got = JSON.stringify(actual.messages);
        if (want !== got) differences.push(`${label}:\n  dotprompt ${want}\n  engine    ${got}`);
      } else {
        bothFail++;
        if (c.name.startsWith('generated')) generatedFail++;
        else if (!c.error) differences.push(`${label}: dotprompt failed unexpectedly: ${expected.error}`);
        const invalid = actual.issues.find((i) => i.rule === 'template-invalid');
        if (!invalid || actual.messages.length) differences.push(`${label}: dotprompt fails (${expected.error}) but the engine gives ${JSON.stringify(actual)}`);
        else if (invalid.span.start < 0 || invalid.span.end > c.source.length || invalid.span.start > invalid.span.end) differences.push(`${label}: span out of range ${JSON.stringify(invalid.span)}`);
      }
    }
    console.log(
      `dotprompt differential: ${ALL.length} cases (${handCases.length} hand-written, ${GENERATED.length} generated), ` +
        `${bothFail} where both fail (${generatedFail} generated), ${differences.length} differences`,
    );
    expect(differences).toEqual([]);
    expect(ALL.length).toBeGreaterThanOrEqual(170);
    expect(generatedFail).toBeLessThan(GENERATED.length / 4);
  });

  it('generates the same cases for the same seed', () => {
    expect(JSON.stringify(generateCases(7, 20))).toBe(JSON.stringify(generateCases(7, 20)));
  });
});

describe('linear-time ports of dotprompt regexes', () => {
  const FRONTMATTER_AND_BODY_REGEX = /^---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)([\s\S]*)$/;
  const MEDIA_AND_SECTION_MARKER_REGEX = /(<<<dotprompt:(?:media:url|section).*?)>>>/g;

  it('matchFrontMatter equals FRONTMATTER_AND_BODY_REGEX', () => {
    const rnd = prng(11);
    const atoms = ['---', '-', '\n', '\r', '\r\n', ' ', '\t', 'a', 'k: v', '\u2028', '\u00a0'];
    for (let i = 0; i < 4000; i++) {
      let s = rnd() < 0.8 ? '---' : '';
      for (let n = Math.floor(rnd() * 12); n > 0; n--) s += atoms[Math.floor(rnd() * atoms.length)];
      const m = s.match(FRONTMATTER_AND_BODY_REGEX);
      const ours = matchFrontMatter(s);
      const want = m ? { frontmatter: m[1], body: m[2] } : undefined;
      const got = ours ? { frontmatter: ours.frontmatter, body: ours.body } : undefined;
      expect(got, JSON.stringify(s)).toEqual(want);
      if (ours) {
        expect(s.slice(ours.bodyStart)).toBe(ours.body);
        expect(s.slice(ours.frontmatterStart, ours.frontmatterStart + ours.frontmatter.length)).toBe(ours.frontmatter);
      }
    }
  });

  it('is fast on a blank run after an unclosed opening fence', () => {
    const s = '---' + '\n'.repeat(200_000) + 'x';
    const t = performance.now();
    expect(matchFrontMatter(s)).toBeUndefined();
    expect(performance.now() - t).toBeLessThan(1000);
  });

  it('splitMediaAndSection equals the split by MEDIA_AND_SECTION_MARKER_REGEX', () => {
    const rnd = prng(12);
    const atoms = ['<<<dotprompt:media:url', '<<<dotprompt:section', '>>>', '>', ' ', 'x', '\n', '\u2028', '<<<', 'http://a/b.png', ' image/png'];
    for (let i = 0; i < 4000; i++) {
      let s = '';
      for (let n = Math.floor(rnd() * 10); n > 0; n--) s += atoms[Math.floor(rnd() * atoms.length)];
      expect(splitMediaAndSection(s), JSON.stringify(s)).toEqual(s.split(MEDIA_AND_SECTION_MARKER_REGEX));
    }
  });
});

describe('safety', () => {
  const both = async (source: string, input: Record<string, unknown> = {}): Promise<{ expected: OracleResult; actual: EngineResult }> => {
    const c: DotpromptCase = { name: source, source, data: { input } };
    return { expected: await oracle(c), actual: engine(c) };
  };

  it('refuses a constructor call like dotprompt (knownHelpersOnly)', async () => {
    const { expected, actual } = await both('{{constructor.constructor "return process"}}');
    expect(expected.ok).toBe(false);
    expect(actual.messages).toEqual([]);
    expect(actual.issues.map((i) => i.rule)).toEqual(['template-invalid']);
  });

  it('reaches no prototype members', async () => {
    for (const source of [
      '{{#with "a"}}[{{constructor}}]{{/with}}',
      '[{{lookup this "__proto__"}}][{{lookup this "constructor"}}][{{lookup (lookup this "constructor") "name"}}]',
      '{{#with (lookup this "constructor")}}[{{name}}][{{prototype}}]{{/with}}',
      '{{#each (lookup "abc" "constructor")}}x{{/each}}',
      '[{{s.constructor}}][{{s.__proto__}}][{{s.toString}}][{{s.valueOf}}]',
    ]) {
      const { expected, actual } = await both(source, { s: 'str' });
      expect(expected.ok, source).toBe(true);
      if (expected.ok) expect(actual.messages, source).toEqual(expected.messages);
      expect(actual.issues, source).toEqual([]);
      expect(actual.rendered, source).not.toMatch(/function|native code|Object|Function/);
    }
  });

  it('cannot run code through the classic Handlebars gadget', async () => {
    const g = globalThis as { __ctxlensPwned?: unknown };
    delete g.__ctxlensPwned;
    const source = [
      '{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}',
      '{{this.push (lookup string.sub "constructor")}}{{this.pop}}{{#with string.split as |codelist|}}{{this.pop}}',
      '{{this.push "globalThis.__ctxlensPwned = true"}}{{this.pop}}{{#each conslist}}{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}',
      '{{/with}}{{/with}}{{/with}}{{/with}}',
    ].join('');
    const { expected, actual } = await both(source);
    expect(g.__ctxlensPwned).toBeUndefined();
    expect(expected.ok).toBe(false);
    expect(actual.issues.map((i) => i.rule)).toEqual(['template-invalid']);
  });

  it('does not pollute prototypes from front matter keys and reports them', () => {
    const source = '---\n__proto__.polluted: yes\nconstructor.name: x\n---\nBody';
    const r = renderDotprompt(source, { input: {} });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(r.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'Body' }] }]);
    const unsupported = r.issues.filter((i) => i.rule === 'unsupported-feature');
    expect(unsupported.map((i) => source.slice(i.span.start, i.span.end))).toEqual(['__proto__.polluted', 'constructor.name']);
  });
});

describe('issues and spans', () => {
  const at = (source: string, r: EngineResult): string[] => r.issues.map((i) => `${i.rule} ${source.slice(i.span.start, i.span.end)}`);

  it('locates compile errors, runtime errors and parse errors in the whole source', () => {
    let s = '---\nmodel: x\n---\n\nline\n  {{foo bar}} y';
    expect(at(s, renderDotprompt(s, { input: {} }))).toEqual(['template-invalid {{foo bar}}']);
    s = '---\r\nmodel: x\r\n---\r\nline\r\nnext {{#each}}x{{/each}}';
    expect(at(s, renderDotprompt(s, { input: {} }))).toEqual(['template-invalid {{#each}}x{{/each}}']);
    s = '---\nmodel: x\n---\nab\ncd {{ } }}';
    expect(at(s, renderDotprompt(s, { input: {} }))).toEqual(['template-invalid }']);
    s = 'a {{> missing}} b';
    expect(at(s, renderDotprompt(s, { input: {} }))).toEqual(['template-invalid {{> missing}}']);
    s = 'x\n{{> bad}}';
    const r = renderDotprompt(s, { input: {} }, { partials: { bad: '{{#if}}{{/if}}' } });
    expect(at(s, r)).toEqual(['template-invalid {{> bad}}']);
    expect(r.issues[0].message).toContain('in partial "bad"');
    s = '{{#if a}}{{/unless}}';
    expect(at(s, renderDotprompt(s, { input: {} }))).toEqual(['template-invalid if']);
  });

  it('reports @metadata.prompt as unsupported and still renders', () => {
    const s = '---\nmodel: googleai/x\n---\nmodel={{@metadata.prompt.model}} {{#with @_parent}}x{{/with}}';
    const r = renderDotprompt(s, { input: {} });
    expect(r.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'model=googleai/x x' }] }]);
    expect(at(s, r)).toEqual(['unsupported-feature @metadata.prompt.model', 'unsupported-feature @_parent']);
    // a context that defines `metadata` shadows dotprompt's
    expect(renderDotprompt(s, { input: {}, context: { metadata: { prompt: { model: 'm' } } } }).issues).toEqual([]);
  });

  it('bounds nesting before compiling', () => {
    const deep = '{{#if a}}'.repeat(MAX_NESTING + 1) + 'x' + '{{/if}}'.repeat(MAX_NESTING + 1);
    const r = renderDotprompt(deep, { input: { a: 1 } });
    expect(r.messages).toEqual([]);
    expect(r.issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
    const ok = '{{#if a}}'.repeat(MAX_NESTING) + 'x' + '{{/if}}'.repeat(MAX_NESTING);
    expect(renderDotprompt(ok, { input: { a: 1 } }).messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'x' }] }]);
    const subexpr = '{{json ' + '(lookup '.repeat(MAX_NESTING + 1) + 'this "a"' + ')'.repeat(MAX_NESTING + 1) + '}}';
    expect(renderDotprompt(subexpr, { input: {} }).issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
    const chain = '{{#if a}}a' + '{{else if b}}b'.repeat(200) + '{{/if}}';
    expect(renderDotprompt(chain, { input: { b: 1 } }).messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'b' }] }]);
  });

  it('bounds source size, partial recursion and loop work', () => {
    const big = 'x'.repeat((1 << 20) + 1);
    expect(renderDotprompt(big, { input: {} }).issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
    const loop = renderDotprompt('{{> p}}', { input: {} }, { partials: { p: 'a{{> p}}' } });
    expect(loop.issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
    const xs = Array.from({ length: 200 }, (_, i) => i);
    const t = performance.now();
    const heavy = renderDotprompt('{{#each xs}}{{#each ../xs}}{{#each ../../xs}}{{#each ../../../xs}}.{{/each}}{{/each}}{{/each}}{{/each}}', { input: { xs } });
    expect(heavy.issues.map((i) => i.rule)).toEqual(['unsupported-feature']);
    expect(performance.now() - t).toBeLessThan(3000);
  });

  it('prints values whose class overrides toString as Handlebars does', () => {
    const items = itemList(new Item('a', 'one'), new Item('b', 'two'));
    const r = renderDotprompt('{{items}}|{{#each items}}{{this}};{{/each}}|{{#if items}}yes{{/if}}{{#if empty}}no{{/if}}', { input: { items, empty: itemList() } });
    expect(r.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: '<items 2>|[a] one;[b] two;|yes' }] }]);
  });
});
