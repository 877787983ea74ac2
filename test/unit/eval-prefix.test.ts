/**
 * The stable, cacheable prefix (src/core/prefix.ts): the longest prefix every request of a
 * template shares, in tokens, and the template-level rule `cache-prefix-unstable`.
 */
import { describe, expect, it } from 'vitest';
import { cachePrefixFindings, commonPrefix, slotStability } from '../../src/core/prefix';
import { ContextConfigSchema } from '../../src/core/config/schema';
import { parseTemplate } from '../../src/core/language';
import { analyzeTemplate } from '../../src/core/analyze';
import { chars4 } from '../../src/core/tokens';
import type { FileHost } from '../../src/core/host';
import type { RenderedMessage, Role } from '../../src/core/types';

const msg = (role: Role, content: string): RenderedMessage => ({ role, content, parts: [{ text: content }] });

describe('commonPrefix', () => {
  const system = msg('system', 'You are the support assistant.\nFollow the policy.\n');

  it('counts the messages every request shares whole, with their per-message overhead, and the header of the next', () => {
    const a = [system, msg('user', 'Question one?')];
    const b = [system, msg('user', 'Another question entirely')];
    const p = commonPrefix([a, b], chars4, 3);
    expect(p.messages).toBe(1);
    expect(p.partial_chars).toBe(0);
    // The user message's role header is the same in both; its content shares no whole line.
    expect(p.tokens).toBe(3 + chars4.count(system.content) + 3);
  });

  it('counts the whole lines the first differing message shares, never part of a line', () => {
    const head = 'Evidence retrieved for this question:\n\n';
    const a = [system, msg('user', `${head}[EVIDENCE ev_1]\nRetries: 3\n`)];
    const b = [system, msg('user', `${head}[EVIDENCE ev_2]\nRetries: 5\n`)];
    const p = commonPrefix([a, b], chars4, 3);
    expect(p.messages).toBe(1);
    expect(p.partial_chars).toBe(head.length);
    expect(p.tokens).toBe(3 + chars4.count(system.content) + 3 + chars4.count(head));
  });

  it('stops at a message whose role differs, and shares nothing when the first message differs', () => {
    expect(commonPrefix([[system, msg('user', 'x')], [system, msg('assistant', 'x')]], chars4, 3).tokens).toBe(3 + chars4.count(system.content));
    expect(commonPrefix([[system, msg('user', 'x')], [system, msg('assistant', 'x')]], chars4, 3).messages).toBe(1);
    expect(commonPrefix([[msg('system', 'A policy')], [msg('system', 'B policy')]], chars4, 0)).toMatchObject({ tokens: 0, messages: 0 });
  });

  it('one request shares itself whole; no request shares nothing', () => {
    const r = [system, msg('user', 'q')];
    expect(commonPrefix([r], chars4, 3)).toMatchObject({ messages: 2, requests: 1, tokens: 6 + chars4.count(system.content) + chars4.count('q') });
    expect(commonPrefix([], chars4, 3)).toMatchObject({ tokens: 0, requests: 0 });
  });

  it('a request that is a prefix of another shares all its messages', () => {
    const short = [system];
    const long = [system, msg('user', 'more')];
    expect(commonPrefix([short, long], chars4, 3)).toMatchObject({ messages: 1 });
  });
});

const CONFIG = ContextConfigSchema.parse({
  slots: {
    policy: { kind: 'policy', trust: 'trusted' },
    tools: { kind: 'tool', trust: 'trusted' },
    tool_result: { kind: 'tool', trust: 'untrusted' },
    examples: { kind: 'examples' },
    history: { kind: 'history', trust: 'untrusted' },
    evidence: { kind: 'evidence', trust: 'untrusted', label: 'EVIDENCE' },
    notes: { kind: 'memory', trust: 'trusted' },
    question: { kind: 'user', trust: 'untrusted' },
  },
});

const template = (body: string) => parseTemplate('/ws/t.prompt', `---\nmodel: gpt-4o\n---\n${body}`);

describe('cache-prefix-unstable', () => {
  it('classifies slots: policy, trusted tools and examples are stable; history, evidence, user and tool results volatile', () => {
    expect(['policy', 'tools', 'examples', 'history', 'evidence', 'question', 'tool_result', 'notes', 'nope'].map((s) => slotStability(CONFIG, s))).toEqual(['stable', 'stable', 'stable', 'volatile', 'volatile', 'volatile', 'volatile', undefined, undefined]);
  });

  it('reports a volatile slot rendered before stable ones, once, at the volatile slot, naming the stable ones', () => {
    const t = template('{{role "system"}}\n{{history}}\n{{policy}}\nTools: {{tools}}\n{{role "user"}}\n{{evidence}}\n{{question}}\n');
    const f = cachePrefixFindings(t, CONFIG);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ rule: 'cache-prefix-unstable', severity: 'info', path: '/ws/t.prompt' });
    expect(t.text.slice(f[0].span.start, f[0].span.end)).toContain('history');
    expect(f[0].message).toMatch(/'history' \(history\) changes with every request but is rendered before 'policy' \(policy\), 'tools' \(tool\)/);
    expect(f[0].related?.map((r) => t.text.slice(r.span.start, r.span.end))).toEqual([expect.stringContaining('policy'), expect.stringContaining('tools')]);
  });

  it('is silent when the stable slots come first (the examples’ layout)', () => {
    const t = template('{{role "system"}}\n{{policy}}\n{{tools}}\n{{examples}}\n{{history}}\n{{role "user"}}\n{{evidence}}\n{{tool_result}}\n<question>{{question}}</question>\n');
    expect(cachePrefixFindings(t, CONFIG)).toEqual([]);
  });

  it('treats tool results as volatile and memory as neither', () => {
    expect(cachePrefixFindings(template('{{role "system"}}\n{{tool_result}}\n{{policy}}\n'), CONFIG)).toHaveLength(1);
    expect(cachePrefixFindings(template('{{role "system"}}\n{{notes}}\n{{policy}}\n'), CONFIG)).toEqual([]);
    // The user's question before the policy: volatile first.
    expect(cachePrefixFindings(template('{{question}}\n{{role "system"}}\n{{policy}}\n'), CONFIG)).toHaveLength(1);
  });

  it('is part of the template analysis (so the editor and ctxlens check report it)', () => {
    const files: Record<string, string> = {
      '/ws/t.prompt': '---\nmodel: gpt-4o\n---\n{{role "system"}}\n{{history}}\n{{policy}}\n{{role "user"}}\n{{question}}\n',
      '/ws/t.context.yaml': 'window: 8000\nslots:\n  policy: { kind: policy, trust: trusted }\n  history: { kind: history, trust: untrusted }\n  question: { kind: user, trust: untrusted }\n',
    };
    const host: FileHost = { roots: ['/ws'], readFile: (p) => files[p], size: (p) => files[p]?.length, glob: () => [] };
    const a = analyzeTemplate(host, '/ws/t.prompt')!;
    const f = a.findings.filter((x) => x.rule === 'cache-prefix-unstable');
    expect(f).toHaveLength(1);
    expect(f[0].related?.some((r) => r.path === '/ws/t.context.yaml')).toBe(true);
    // A config can turn it off like any rule.
    files['/ws/t.context.yaml'] += 'rules: { cache-prefix-unstable: off }\n';
    expect(analyzeTemplate(host, '/ws/t.prompt')!.findings.some((x) => x.rule === 'cache-prefix-unstable')).toBe(false);
  });
});

describe('templateCachePrefix', () => {
  it('measures the prefix across every fixture of a template (the sdk-qa example shares its system message)', async () => {
    const { resolve } = await import('node:path');
    const { DiskFileHost } = await import('../../src/node/fileHost');
    const { templateCachePrefix, runEvalFile } = await import('../../src/core/eval');
    const root = resolve(__dirname, '../..');
    const host = new DiskFileHost([root]);
    const p = templateCachePrefix(host, `${root}/examples/sdk-qa/sdk-qa.prompt`)!;
    expect(p).toMatchObject({ requests: 2, messages: 1 });
    // The eval set adds a case of its own, a third request with the same system message.
    const { result } = runEvalFile(host, `${root}/examples/sdk-qa/sdk-qa.eval.yaml`);
    expect(result!.cache_prefix_tokens).toBe(p.tokens);
    expect(templateCachePrefix(host, `${root}/examples/nope.prompt`)).toBeUndefined();
  });
});
