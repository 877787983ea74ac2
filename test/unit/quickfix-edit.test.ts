import { describe, expect, it } from 'vitest';
import { parseConfig, parseInlineConfig } from '../../src/core/config/parse';
import { setSlotField } from '../../src/server/yamlEdit';

const apply = (text: string, e: { span: { start: number; end: number }; newText: string } | undefined) => (e ? text.slice(0, e.span.start) + e.newText + text.slice(e.span.end) : undefined);

describe('quick-fix slot field edits (setSlotField)', () => {
  const cases: Array<[string, string, string]> = [
    ['flow mapping', 'slots:\n  evidence: { kind: evidence, budget: 300 }\n', 'slots:\n  evidence: { kind: evidence, budget: 300, trust: untrusted }\n'],
    ['flow mapping with a trailing comma', 'slots:\n  evidence: { kind: evidence, budget: 300, }\n', 'slots:\n  evidence: { kind: evidence, budget: 300, trust: untrusted, }\n'],
    ['multi-line flow mapping with a comment before the brace', 'slots:\n  evidence: {\n    kind: evidence, # retrieved\n  }\n', 'slots:\n  evidence: {\n    kind: evidence, trust: untrusted, # retrieved\n  }\n'],
    ['block mapping with a comment', 'slots:\n  evidence:\n    kind: evidence # retrieved passages\n    budget: 300\n', 'slots:\n  evidence:\n    kind: evidence # retrieved passages\n    budget: 300\n    trust: untrusted\n'],
    ['existing value replaced', 'slots:\n  evidence: { kind: evidence, trust: trusted }\n', 'slots:\n  evidence: { kind: evidence, trust: untrusted }\n'],
    ['CRLF block mapping', 'slots:\r\n  evidence:\r\n    kind: evidence\r\n', 'slots:\r\n  evidence:\r\n    kind: evidence\r\n    trust: untrusted\r\n'],
  ];
  for (const [name, before, after] of cases) {
    it(name, () => {
      const doc = parseConfig('/ws/a.context.yaml', before);
      const out = apply(before, setSlotField(doc, 'evidence', 'trust', 'untrusted'));
      expect(out).toBe(after);
      expect(parseConfig('/ws/a.context.yaml', out!).config?.slots?.evidence?.trust).toBe('untrusted');
    });
  }

  it('edits a config written inline in a template front matter', () => {
    const text = '---\ncontext:\n  slots:\n    evidence: { kind: evidence }\n---\n{{evidence}}\n';
    const doc = parseInlineConfig('/ws/a.prompt', text);
    expect(apply(text, setSlotField(doc, 'evidence', 'label', 'EVIDENCE'))).toBe('---\ncontext:\n  slots:\n    evidence: { kind: evidence, label: EVIDENCE }\n---\n{{evidence}}\n');
  });

  it('offers no edit where it cannot be made safely (an alias, a YAML error)', () => {
    const alias = 'base: &b { kind: evidence }\nslots:\n  evidence: *b\n';
    expect(setSlotField(parseConfig('/ws/a.context.yaml', alias), 'evidence', 'trust', 'untrusted')).toBeUndefined();
    const broken = 'slots:\n  evidence: { kind: evidence\n';
    expect(setSlotField(parseConfig('/ws/a.context.yaml', broken), 'evidence', 'trust', 'untrusted')).toBeUndefined();
  });
});
