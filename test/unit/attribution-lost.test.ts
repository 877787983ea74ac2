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
