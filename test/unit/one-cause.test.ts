/**
 * One cause, one finding: a Handlebars syntax error in a block opener is one error at the opener,
 * not also at its valid `{{else}}` and closer, and not a second time as the renderer's refusal.
 */
import { describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import { parseTemplate } from '../../src/core/language';
import { MemoryHost } from '../fuzz/support';

const errorsOf = (text: string) => {
  const a = analyzeTemplate(new MemoryHost(['/ws'], { '/ws/a.prompt': text }), '/ws/a.prompt')!;
  return a.findings.filter((f) => f.severity === 'error').map((f) => ({ rule: f.rule, at: text.slice(f.span.start, f.span.end) }));
};

describe('one cause, one finding', () => {
  it('a block opener Handlebars cannot read is one error, at the opener', () => {
    const text = '---\nmodel: gpt-4o\n---\n{{role "user"}}\n{{#if age >= 18}}\nAdult {{name}}\n{{else}}\nMinor\n{{/if}}\nBye\n';
    expect(errorsOf(text)).toEqual([{ rule: 'template-invalid', at: '{{#if age >= 18}}' }]);
    // The editor still reads the rest of the body: the slot inside the broken block is a use.
    expect(parseTemplate('/ws/a.prompt', text).uses.map((u) => u.slot)).toContain('name');
  });

  it('nested blocks inside the broken one keep their own structure', () => {
    const text = '{{#each docs as |d| x}}\n{{#if d.ok}}{{d.text}}{{else}}none{{/if}}\n{{/each}}\n';
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].at).toBe('{{#each docs as |d| x}}');
  });

  it('an error elsewhere in a block leaves the block intact and is still one error', () => {
    const text = '{{#if ok}}\n{{else}}\nMinor {{> bad x=}}\n{{/if}}\n';
    expect(errorsOf(text)).toEqual([{ rule: 'template-invalid', at: '{{> bad x=}}' }]);
  });
});
