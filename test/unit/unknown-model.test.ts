/**
 * A model name that no registry entry, model file or config lists is an `unknown-model` warning
 * that names the nearest known names, says which window the budget checks borrow (if any), and
 * offers quick fixes to pick a known name or to declare the model in the config.
 */
import { describe, expect, it } from 'vitest';
import { analyzeConfig, analyzeTemplate } from '../../src/core/analyze';
import { nearestModels, resolveModel } from '../../src/core/models';
import { MemoryHost } from '../fuzz/support';

const BODY = '{{role "user"}}\nHello {{name}}\n';

function unknownOf(files: Record<string, string>, path: string) {
  const a = analyzeTemplate(new MemoryHost(['/ws'], files), path);
  return a!.findings.filter((f) => f.rule === 'unknown-model');
}

describe('unknown-model', () => {
  it('a typo of a known family is a warning that names the borrowed window and the nearest names', () => {
    const text = `---\nmodel: gpt-9000-ultra\n---\n${BODY}`;
    const [f, ...rest] = unknownOf({ '/ws/a.prompt': text }, '/ws/a.prompt');
    expect(rest).toEqual([]);
    expect(f.severity).toBe('warning');
    const borrowed = resolveModel('gpt-9000-ultra')!;
    expect(borrowed.estimate).toBeDefined();
    expect(f.message).toContain(`${borrowed.window.toLocaleString('en-US')}-token window of ${borrowed.estimate!.like}`);
    const nearest = nearestModels('gpt-9000-ultra');
    expect(nearest.length).toBeGreaterThan(0);
    for (const n of nearest) expect(f.message).toContain(`'${n}'`);
    // The fixes put each nearest name in place of the written one, the first preferred.
    expect(f.fixes!.map((x) => x.title)).toEqual(nearest.map((n) => `Use model '${n}'`));
    expect(f.fixes![0].preferred).toBe(true);
    const edit = f.fixes![0].edits[0];
    expect(text.slice(edit.span.start, edit.span.end)).toBe('gpt-9000-ultra');
    expect(edit.newText).toBe(nearest[0]);
  });

  it('a misspelt model finds the model meant first', () => {
    expect(nearestModels('gpt-4o-mni')[0]).toBe('gpt-4o-mini');
  });

  it('a quoted name is replaced inside its quotes; a config without models: gets a declare fix', () => {
    const files = {
      '/ws/a.prompt': `---\nmodel: "gpt-4o-mni"\n---\n${BODY}`,
      '/ws/a.context.yaml': 'version: 1\nwindow: 8000\noutput: 500\nslots:\n  name: { kind: user, trust: untrusted }\n',
    };
    const [f] = unknownOf(files, '/ws/a.prompt');
    expect(f.severity).toBe('warning');
    expect(f.fixes![0].edits[0].newText).toBe('"gpt-4o-mini"');
    const declare = f.fixes!.find((x) => x.title.startsWith("Declare model 'gpt-4o-mni'"))!;
    expect(declare.edits[0].path).toBe('/ws/a.context.yaml');
    expect(declare.edits[0].newText).toBe('models:\n  "gpt-4o-mni": { window: 128000, tokenizer: o200k_base }\n');
  });

  it('a name of no family has no window of its own and says what it counts with', () => {
    const files = { '/ws/b.context.yaml': 'version: 1\nmodel: my-finetune\nwindow: 8000\noutput: 500\nslots: {}\n' };
    const a = analyzeConfig(new MemoryHost(['/ws'], files), '/ws/b.context.yaml')!;
    const f = a.findings.find((x) => x.rule === 'unknown-model')!;
    expect(f.severity).toBe('warning');
    expect(f.message).toContain("Unknown model 'my-finetune'");
    expect(f.message).toContain('o200k_base as an approximation');
    // Declared, it is known.
    const declared = { '/ws/b.context.yaml': files['/ws/b.context.yaml'] + 'models:\n  my-finetune: { window: 32000, tokenizer: o200k_base }\n' };
    const b = analyzeConfig(new MemoryHost(['/ws'], declared), '/ws/b.context.yaml')!;
    expect(b.findings.map((x) => x.rule)).not.toContain('unknown-model');
  });
});
