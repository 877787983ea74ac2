/**
 * Helpers and partials registered in code (dotprompt's `defineHelper` / `definePartial`, Genkit's
 * `ai.defineHelper` / `ai.definePartial`). The engine cannot run the application's code, so a
 * declared helper prints a placeholder. The oracle is npm `dotprompt` 1.1.2 with helpers and
 * partials registered that print exactly that placeholder: the messages must be equal, which shows
 * that the engine compiles, classifies and calls declared helpers as dotprompt does (a declared
 * helper without arguments is a helper call, not a variable; a block helper gets its body).
 */
import { describe, expect, it } from 'vitest';
import { Dotprompt } from 'dotprompt';
import { placeholderText, renderDotprompt } from '../../src/core/language/dotprompt/engine';
import type { EngineMessage } from '../../src/core/language/engineTypes';
import { parseConfig } from '../../src/core/config/parse';

interface Case {
  name: string;
  source: string;
  input?: Record<string, unknown>;
  helpers: string[];
  partials?: string[];
  /** Partials given with their source (read from files). */
  sources?: Record<string, string>;
}

const CASES: Case[] = [
  { name: 'a helper with an argument', source: 'Hello {{shout name}}!', input: { name: 'Ada' }, helpers: ['shout'] },
  { name: 'a declared helper without arguments is a call, not a variable', source: 'Today is {{today}}.', input: { today: 'the variable' }, helpers: ['today'] },
  { name: 'a hash argument', source: '{{formatDate when format="short"}}', input: { when: '2026-01-01' }, helpers: ['formatDate'] },
  { name: 'a sub-expression inside a dotprompt helper', source: '{{#if (isAdmin user)}}admin{{else}}guest{{/if}}', input: { user: 'u' }, helpers: ['isAdmin'] },
  { name: 'a block helper renders its body once', source: '{{#withUser id}}Name: {{name}}{{/withUser}}', input: { id: 1, name: 'Ada' }, helpers: ['withUser'] },
  {
    name: 'roles and history markers around helpers',
    source: '---\nmodel: googleai/gemini-2.5-flash\n---\n{{role "system"}}\nYou are {{persona}}.\n{{role "user"}}\n{{shout question}}',
    input: { persona: 'terse', question: 'why?' },
    helpers: ['shout'],
  },
  { name: 'a partial registered in code', source: 'Intro\n{{> disclaimer}}\nEnd', helpers: [], partials: ['disclaimer'] },
  { name: 'a helper inside a partial read from a file', source: '{{> card}} / {{shout x}}', input: { x: 'y' }, helpers: ['shout'], sources: { card: 'Card: {{shout x}}' } },
  { name: 'a helper inside each', source: '{{#each items}}- {{shout this}}\n{{/each}}', input: { items: ['a', 'b'] }, helpers: ['shout'] },
];

function normalize(messages: Array<{ role: string; content: Array<{ text?: string }>; metadata?: { purpose?: unknown } }>): EngineMessage[] {
  return messages.map((m) => ({ role: m.role, parts: m.content.map((p) => ({ type: 'text' as const, text: p.text as string })), ...(m.metadata?.purpose === 'history' ? { purpose: 'history' } : {}) }));
}

async function oracle(c: Case): Promise<EngineMessage[]> {
  const helpers: Record<string, (...args: unknown[]) => string> = {};
  for (const name of c.helpers) {
    helpers[name] = function (this: unknown, ...args: unknown[]): string {
      const options = args[args.length - 1] as { fn?: (ctx: unknown) => string };
      return placeholderText('helper', name) + (typeof options?.fn === 'function' ? options.fn(this) : '');
    };
  }
  const partials: Record<string, string> = { ...(c.sources ?? {}) };
  for (const name of c.partials ?? []) partials[name] = placeholderText('partial', name);
  const dp = new Dotprompt({ helpers, partials });
  try {
    const rendered = await dp.render(c.source, { input: c.input ?? {} });
    return normalize(rendered.messages as Parameters<typeof normalize>[0]);
  } finally {
    // dotprompt registers on the one global Handlebars instance: keep cases apart.
    const hb = (dp as unknown as { handlebars: { unregisterPartial(n: string): void; unregisterHelper(n: string): void } }).handlebars;
    for (const name of Object.keys(partials)) hb.unregisterPartial(name);
    for (const name of c.helpers) hb.unregisterHelper(name);
  }
}

describe('helpers and partials registered in code = npm dotprompt with those registered', () => {
  it.each(CASES)('$name', async (c) => {
    const ours = renderDotprompt(c.source, { input: c.input ?? {} }, { codeHelpers: c.helpers, codePartials: c.partials ?? [], partials: c.sources ?? {}, lenient: true });
    expect(ours.messages).toEqual(await oracle(c));
    expect(ours.estimate).toBe(true);
    // One located `code-registered` issue per declared name that rendered, nothing else.
    expect(ours.issues.every((i) => i.rule === 'code-registered')).toBe(true);
    const names = new Set([...c.helpers, ...(c.partials ?? [])]);
    expect(ours.issues.length).toBe(names.size);
    for (const i of ours.issues) {
      const [name] = /'([^']+)'/.exec(i.message)!.slice(1);
      expect(names.has(name)).toBe(true);
      // The span covers the call in the source.
      expect(c.source.slice(i.span.start, i.span.end)).toContain(name);
    }
  });
});

describe('helpers nobody declared', () => {
  it('without lenient, fail as dotprompt fails (unknown helper)', async () => {
    const r = renderDotprompt('Hello {{shout name}}', { input: { name: 'x' } });
    expect(r.messages).toEqual([]);
    expect(r.issues.map((i) => i.rule)).toEqual(['template-invalid']);
    await expect(new Dotprompt().render('Hello {{shout name}}', { input: { name: 'x' } })).rejects.toThrow(/unknown helper shout/);
  });

  it('lenient: one unknown-helper issue per name, at its first call, and the rest rendered', () => {
    const source = 'A {{shout a}} B {{shout b}} C {{#ifAdmin}}x{{/ifAdmin}} {{whisper (shout c)}} {{name}}';
    const r = renderDotprompt(source, { input: { a: 1, b: 2, c: 3, name: 'Ada' } }, { lenient: true });
    const unknown = r.issues.filter((i) => i.rule === 'unknown-helper');
    // `{{#ifAdmin}}` without arguments is a section over a missing value (no helper), as in Handlebars.
    expect(unknown.map((i) => source.slice(i.span.start, i.span.end))).toEqual(['{{shout a}}', '{{whisper (shout c)}}']);
    expect(unknown[0].message).toMatch(/^'shout' is not a dotprompt helper/);
    expect(unknown[0].message).toContain('helpers:');
    expect(r.messages[0].parts).toEqual([{ type: 'text', text: 'A ⟦shout⟧ B ⟦shout⟧ C  ⟦whisper⟧ Ada' }]);
    expect(r.estimate).toBe(true);
  });

  it('lenient: a partial neither given nor declared prints a placeholder and leaves the report to the caller', () => {
    const r = renderDotprompt('x {{> footer}} y', { input: {} }, { lenient: true });
    expect(r.issues).toEqual([]);
    expect(r.messages[0].parts).toEqual([{ type: 'text', text: `x ${placeholderText('partial', 'footer')} y` }]);
    expect(r.estimate).toBe(true);
  });

  it('a call on a block parameter is not a helper; a longer path with arguments is', () => {
    const ok = renderDotprompt('{{#each xs as |x|}}{{x}}{{/each}}', { input: { xs: ['a'] } }, { lenient: true });
    expect(ok.issues).toEqual([]);
    expect(ok.estimate).toBeUndefined();
    const longer = renderDotprompt('{{util.fmt x}}', { input: { x: 1 } }, { lenient: true });
    expect(longer.issues.map((i) => i.rule)).toEqual(['unknown-helper']);
  });

  it('an undeclared helper inside a partial is reported at the partial call', () => {
    const source = 'a {{> card}}';
    const r = renderDotprompt(source, { input: {} }, { lenient: true, partials: { card: 'b {{fmt 1}}' } });
    expect(r.issues.map((i) => [i.rule, source.slice(i.span.start, i.span.end)])).toEqual([['unknown-helper', '{{> card}}']]);
    expect(r.issues[0].message).toMatch(/^in partial "card": 'fmt'/);
    expect(r.messages[0].parts).toEqual([{ type: 'text', text: 'a b ⟦fmt⟧' }]);
  });

  it('declaring a name dotprompt defines keeps dotprompt\'s own helper', () => {
    const r = renderDotprompt('{{json x}}', { input: { x: [1] } }, { codeHelpers: ['json'], lenient: true });
    expect(r.messages[0].parts).toEqual([{ type: 'text', text: '[1]' }]);
    expect(r.estimate).toBeUndefined();
  });
});

describe('declarations in the context config', () => {
  it('parse into the config, and mistakes in them are located config-invalid findings that name the keys', () => {
    const ok = parseConfig('/w/a.context.yaml', 'helpers:\n  - formatDate\n  - { name: currency, description: cents }\npartials: [signature, { name: policy, file: partials/policy.hbs }]\n');
    expect(ok.findings).toEqual([]);
    expect(ok.config?.helpers).toEqual(['formatDate', { name: 'currency', description: 'cents' }]);
    expect(ok.config?.partials).toEqual(['signature', { name: 'policy', file: 'partials/policy.hbs' }]);
    const text = 'helpers: ["a b", { name: ok, file: x }]\n';
    const bad = parseConfig('/w/b.context.yaml', text);
    expect(bad.findings.map((f) => [f.rule, text.slice(f.span.start, f.span.end), f.message])).toEqual([
      ['config-invalid', '"a b"', "helpers[0]: a helper name is one word, such as formatDate; got 'a b'."],
      ['config-invalid', 'file', "Unknown key 'file' in helpers[1]; expected one of name, description"],
    ]);
  });
});

describe('a declared helper met only inside a partial', () => {
  it('is located at the template\'s call of that partial', async () => {
    const source = 'Intro\n{{> card}}\nEnd';
    const r = renderDotprompt(source, { input: { x: 1 } }, { codeHelpers: ['shout'], partials: { card: 'Card: {{shout x}}' }, lenient: true });
    expect(r.issues.map((i) => [i.rule, source.slice(i.span.start, i.span.end)])).toEqual([['code-registered', '{{> card}}']]);
    expect(r.messages).toEqual(await oracle({ name: 'in a partial', source, input: { x: 1 }, helpers: ['shout'], sources: { card: 'Card: {{shout x}}' } }));
  });
});
