/**
 * dotprompt's history insertion when the template has no user message (its spec case "inserts
 * history after system prompt"): the engine against npm `dotprompt` 1.1.2, and the analysis, whose
 * configured history slot reaches dotprompt as `data.messages` although the template never names
 * it (dotprompt inserts the conversation into every template).
 */
import { describe, expect, it } from 'vitest';
import { Dotprompt } from 'dotprompt';
import { renderDotprompt } from '../../src/core/language/dotprompt/engine';
import { analyzeFile } from '../../src/core/analyze';
import { MemoryHost } from '../fuzz/support';

const HISTORY = [
  { role: 'user', content: [{ text: 'Hi there' }] },
  { role: 'model', content: [{ text: 'Hello! How can I help?' }] },
];

const CASES = [
  { name: 'inserts history after system prompt', source: '{{role "system"}}\nYou are a helpful assistant.' },
  { name: 'a system prompt with front matter', source: '---\nmodel: googleai/gemini-2.5-flash\n---\n{{role "system"}} Be brief.' },
  { name: 'a model turn last', source: '{{role "system"}} Be brief.\n{{role "model"}} Understood.' },
  { name: 'a user turn last goes after the history', source: '{{role "system"}} Be brief.\n{{role "user"}} And now?' },
];

describe('history with no {{history}} marker = npm dotprompt', () => {
  it.each(CASES)('$name', async ({ source }) => {
    const expected = await new Dotprompt().render(source, { input: {}, messages: HISTORY as never });
    const ours = renderDotprompt(source, { input: {}, messages: HISTORY });
    expect(ours.issues).toEqual([]);
    expect(ours.messages.map((m) => [m.role, m.parts.map((p) => (p.type === 'text' ? p.text : p.type)).join('')])).toEqual(
      expected.messages.map((m) => [m.role, m.content.map((p) => (p as { text?: string }).text ?? '').join('')]),
    );
  });
});

describe('a configured history slot the template never names', () => {
  const files = {
    '/w/chat.prompt': '---\nmodel: gpt-4o\n---\n{{role "system"}}\nYou are a helpful assistant.\n',
    '/w/chat.context.yaml': 'model: gpt-4o\noutput: 100\nslots:\n  history: { kind: history, trust: untrusted }\nfixtures: [chat.fixture.yaml]\n',
    '/w/chat.fixture.yaml': 'template: chat.prompt\nslots:\n  history:\n    - { role: user, text: Hi there }\n    - { role: assistant, text: "Hello! How can I help?" }\n',
  };

  it('is inserted after the system message, as dotprompt inserts data.messages, and counted', async () => {
    const a = analyzeFile(new MemoryHost(['/w'], files), '/w/chat.prompt');
    if (a?.kind !== 'template') throw new Error('not a template analysis');
    const got = a.assembly!.messages.map((m) => [m.role, m.content]);
    expect(got).toEqual([
      ['system', '\nYou are a helpful assistant.'],
      ['user', 'Hi there'],
      ['assistant', 'Hello! How can I help?'],
    ]);
    const expected = await new Dotprompt().render(files['/w/chat.prompt'], { input: {}, messages: HISTORY as never });
    expect(expected.messages.map((m) => m.role)).toEqual(['system', 'user', 'model']);
    expect(a.assembly!.trace.slots.find((s) => s.name === 'history')).toMatchObject({ kept: 2, total: 2 });
    expect(a.findings.map((f) => f.rule)).not.toContain('slot-unused');
  });
});
