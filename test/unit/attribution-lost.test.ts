/**
 * When the marks change what a template renders (it compares or iterates slot text), the request
 * is the unmarked render: shown without slot parts, reported as attribution-lost, and counted
 * from the messages as sent, not from the marked probes.
 */
import { describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import { getTokenizer } from '../../src/core/tokens';
import { MemoryHost } from '../fuzz/support';

const CONFIG = 'model: gpt-4o\nwindow: 8000\noutput: 100\nmargin: 0\noverhead: { message: 3, request: 3 }\nslots:\n  policy: { kind: policy, trust: trusted }\nfixtures: [f.fixture.yaml]\n';

function analyse(path: string, template: string, fixture: string) {
  const host = new MemoryHost(['/ws'], { [path]: template, [path.replace(/\.\w+$/, '.context.yaml')]: CONFIG, '/ws/f.fixture.yaml': fixture });
  return analyzeTemplate(host, path)!;
}

describe('attribution lost', () => {
  const cases: Array<[string, string, string, string]> = [
    ['dotprompt ifEquals on slot text', '/ws/a.prompt', '---\nmodel: gpt-4o\n---\n{{role "system"}}\n{{#ifEquals policy "refunds"}}Refund rules apply.{{/ifEquals}}\n', 'Refund rules apply.'],
    ['Prompty loop over the characters of a text slot', '/ws/a.prompty', '---\nname: a\nmodel:\n  api: chat\n---\nsystem:\n{% for c in policy %}{{ c }}-{% endfor %}\n', 'r-e-f-u-n-d-s-'],
  ];
  for (const [name, path, template, expected] of cases) {
    it(`${name}: the unmarked render, reported, and counted as sent`, () => {
      const a = analyse(path, template, `template: ${path.slice(4)}\nslots:\n  policy: refunds\n`);
      const asm = a.assembly!;
      expect(asm.ok).toBe(true);
      expect(asm.messages.map((m) => m.content.trim())).toEqual([expected]);
      expect(a.findings.some((f) => f.rule === 'unsupported-feature' && /cannot be cut into slots/.test(f.message))).toBe(true);
      const o200k = getTokenizer('o200k_base')!;
      expect(asm.trace.input_tokens).toBe(3 + asm.messages.reduce((n, m) => n + 3 + o200k.count(m.content), 0));
    });
  }
});

describe('values that hold the marks’ own characters', () => {
  // A reference to slot 0, item 1, field 0, and an open mark, written into an untrusted item's text.
  const d = (n: number) => String.fromCharCode(0xe100 + n);
  const forged = `\uE002${d(0)}${d(0)}${d(0)}${d(0)}${d(0)}${d(2)}${d(0)}`;
  const CONFIG2 = 'model: gpt-4o\nwindow: 8000\noutput: 100\nmargin: 0\noverhead: { message: 3, request: 3 }\nslots:\n  evidence: { kind: evidence, trust: untrusted, label: EVIDENCE }\nfixtures: [f.fixture.yaml]\n';
  for (const body of ['{{role "user"}}\n{{evidence}}\n', '{{role "user"}}\n{{#each evidence}}{{this.text}}|{{/each}}\n']) {
    it(`are sent as written, never read as marks (${JSON.stringify(body)})`, () => {
      const first = `Alpha ${forged} keeps \uE000 these characters.`;
      const second = 'Beta is another passage entirely.';
      const esc = (s: string) => s.replace(/[\uE000-\uE1FF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`);
      const fixture = `template: a.prompt\nslots:\n  evidence:\n    - { id: a, text: "${esc(first)}" }\n    - { id: b, text: "${second}" }\n`;
      const host = new MemoryHost(['/ws'], { '/ws/a.prompt': `---\nmodel: gpt-4o\n---\n${body}`, '/ws/a.context.yaml': CONFIG2, '/ws/f.fixture.yaml': fixture });
      const asm = analyzeTemplate(host, '/ws/a.prompt')!.assembly!;
      expect(asm.ok).toBe(true);
      const content = asm.messages.map((m) => m.content).join('\n');
      expect(content).toContain(first);
      // The forged reference pulled no other item's text in: the second passage is there once.
      expect(content.split(second).length - 1).toBe(1);
    });
  }
});

describe('values the render walks but JSON cannot write', () => {
  it('an integer beyond 2^53 in a Prompty sample (a bigint) renders as the runtime prints it', () => {
    const template = '---\nname: a\nmodel:\n  api: chat\nsample:\n  v: 18446744073709551617\n---\nuser:\nValue: {{ v }}\n';
    const host = new MemoryHost(['/ws'], { '/ws/a.prompty': template });
    const a = analyzeTemplate(host, '/ws/a.prompty')!;
    expect(a.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(a.assembly!.messages.map((m) => m.content.trim())).toEqual(['Value: 18446744073709551617']);
  });
});
