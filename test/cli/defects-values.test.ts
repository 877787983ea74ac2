/**
 * Values as the runtime sees them, through the built CLI (`node dist/cli.js`):
 * - a configured slot holding `{role, content}` messages exposes `content` (and every other key the
 *   fixture gives) to the template, and the trace counts what is printed;
 * - `${file:tags.json}` inside a Prompty `sample:` value is loaded as Prompty's loader loads it;
 * - promptflow's bare `sample: sample.json` is read, with a finding saying the file follows promptflow;
 * - a code-registered helper and partial declared in the config: one located info each, the request
 *   rendered with placeholders and marked an estimate; undeclared ones are one warning each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'ctxlens-values-'));

function ctxlens(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

interface Json {
  messages: Array<{ role: string; content: string }>;
  trace: { exact: boolean; input_tokens: number; slots: Array<{ name: string; used: number; kept: number }> };
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const PROMPTY_HEAD = '---\nname: t\nmodel:\n  api: chat\n  configuration:\n    type: openai\n    name: gpt-4o\n';

describe('a configured slot of {role, content} messages', () => {
  const dir = workspace('messages', {
    'chat.prompty': `${PROMPTY_HEAD}---\nsystem:\nYou are helpful.\n\nuser:\n{% for m in history %}[{{m.role}}] {{m.content}} ({{m.mood}}){% endfor %}\n`,
    'chat.context.yaml': 'model: gpt-4o\noutput: 100\nslots:\n  history: { kind: other, trust: untrusted, label: TURN }\nfixtures: [f.fixture.yaml]\n',
    'f.fixture.yaml': 'template: chat.prompty\nslots:\n  history:\n    - { role: user, content: "hello there", mood: happy }\n    - { role: assistant, content: "hi!", mood: calm }\n',
  });

  it('prints each message\'s content and its other keys, and the trace counts them', () => {
    const r = ctxlens(dir, ['assemble', 'chat.prompty', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Json;
    expect(out.messages.at(-1)!.content).toBe('[user] hello there (happy)[assistant] hi! (calm)');
    const slot = out.trace.slots.find((s) => s.name === 'history')!;
    expect(slot.kept).toBe(2);
    expect(slot.used).toBeGreaterThan(0);
  });
});

describe('${file:…} inside a Prompty sample value (zero-config)', () => {
  const dir = workspace('sample-file', {
    'tags.prompty': `${PROMPTY_HEAD}sample:\n  name: Ada\n  tags: \${file:tags.json}\n---\nsystem:\nTags: {% for t in tags %}<{{t}}>{% endfor %}\n\nuser:\nHi {{name}}\n`,
    // Prompty's loader normalises the file's strings too (they are stripped).
    'tags.json': '["  red ", "blue"]',
  });

  it('loads the file as Prompty does and renders its values', () => {
    const r = ctxlens(dir, ['assemble', 'tags.prompty', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Json;
    expect(out.messages[0]).toEqual({ role: 'system', content: 'Tags: <red><blue>' });
    expect(out.messages[1].content).toBe('Hi Ada');
  });

  it('a missing file is a located file-reference finding', () => {
    const missing = workspace('sample-missing', { 'tags.prompty': `${PROMPTY_HEAD}sample:\n  tags: \${file:nope.json}\n---\nuser:\n{{tags}}\n` });
    const r = ctxlens(missing, ['check', 'tags.prompty']);
    expect(r.stdout).toMatch(/tags\.prompty:\d+:\d+ error file-reference Sample file 'nope\.json' does not exist\./);
  });
});

describe("promptflow's bare sample: sample.json", () => {
  const dir = workspace('promptflow', {
    'flow.prompty': '---\nname: flow\nmodel:\n  api: chat\n  configuration:\n    type: azure_openai\n    azure_deployment: gpt-4o\nsample: sample.json\n---\nsystem:\nHello {{firstName}}.\n',
    'sample.json': '{"firstName": "Jane"}',
  });

  it('is read, and a finding says the file follows promptflow\'s loader', () => {
    const r = ctxlens(dir, ['check', 'flow.prompty', '--format', 'json']);
    const report = JSON.parse(r.stdout) as { files: Array<{ diagnostics: Array<{ rule: string; message: string; severity: string }> }> };
    const findings = report.files.flatMap((f) => f.diagnostics);
    const flow = findings.filter((f) => /promptflow/.test(f.message));
    expect(flow).toHaveLength(1);
    expect(flow[0]).toMatchObject({ severity: 'info' });
    expect(flow[0].message).toContain("promptflow's Prompty loader");
    expect(findings.some((f) => f.rule === 'file-reference' || f.rule === 'fixture-invalid')).toBe(false);
  });

  it('renders with the sample file\'s values', () => {
    const r = ctxlens(dir, ['assemble', 'flow.prompty', '--format', 'json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Json).messages).toEqual([{ role: 'system', content: 'Hello Jane.' }]);
  });
});

describe('helpers and partials registered in code', () => {
  const template = '---\nmodel: gpt-4o\n---\n{{role "system"}}\nYou are {{persona}}.\n{{> disclaimer}}\n{{role "user"}}\n{{shout question}}\n';
  it('undeclared: one warning each, worded for the author, and the rest rendered', () => {
    const dir = workspace('helpers-undeclared', { 'support.prompt': template });
    const r = ctxlens(dir, ['check', 'support.prompt']);
    expect(r.stdout).toMatch(/support\.prompt:8:1 warning unknown-helper 'shout' is not a dotprompt helper/);
    expect(r.stdout).toMatch(/support\.prompt:6:5 warning unknown-partial Partial 'disclaimer' is not a file beside support\.prompt/);
    expect(r.stdout).not.toMatch(/template-invalid|knownHelpersOnly|file-reference/);
    expect(r.stdout.match(/unknown-(helper|partial)/g)).toHaveLength(2);
  });

  it('declared in the config: no warning, a located info each, placeholders, exact: false', () => {
    const dir = workspace('helpers-declared', {
      'support.prompt': template,
      'support.context.yaml':
        'model: gpt-4o\noutput: 200\nhelpers: [shout]\npartials: [disclaimer]\nslots:\n  persona: { kind: policy, trust: trusted }\n  question: { kind: user, trust: untrusted }\nfixtures: [f.fixture.yaml]\n',
      'f.fixture.yaml': 'template: support.prompt\nslots:\n  persona: terse\n  question: why?\n',
    });
    const check = ctxlens(dir, ['check', 'support.prompt']);
    expect(check.stdout).not.toMatch(/unknown-helper|unknown-partial|template-invalid/);
    expect(check.stdout).toMatch(/support\.prompt:8:1 info code-registered Helper 'shout' is registered in the application's code/);
    expect(check.stdout).toMatch(/support\.prompt:6:1 info code-registered Partial 'disclaimer'/);
    const r = ctxlens(dir, ['assemble', 'support.prompt', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Json;
    expect(out.messages).toEqual([
      { role: 'system', content: '\nYou are terse.\n⟦> disclaimer⟧' },
      { role: 'user', content: '\n⟦shout⟧' },
    ]);
    expect(out.trace.exact).toBe(false);
  });

  it('a declared helper called without arguments is a helper call, not a slot', () => {
    const dir = workspace('helper-bare', {
      't.prompt': '---\nmodel: gpt-4o\n---\nToday is {{today}}. {{#if today}}(a value named today){{/if}}\n<q>{{q}}</q>\n',
      't.context.yaml': 'model: gpt-4o\noutput: 100\nhelpers: [today]\nslots:\n  q: { kind: user, trust: untrusted }\nfixtures: [f.fixture.yaml]\n',
      'f.fixture.yaml': 'template: t.prompt\nslots:\n  q: hi\n',
    });
    const check = ctxlens(dir, ['check', 't.prompt']);
    // `{{#if today}}` reads a value named today (an argument is never a helper call): that one is a slot use.
    expect(check.stdout.match(/slot-undefined/g)).toHaveLength(1);
    expect(check.stdout).toMatch(/t\.prompt:4:27 error slot-undefined Slot 'today'/);
    const out = JSON.parse(ctxlens(dir, ['assemble', 't.prompt', '--format', 'json']).stdout) as Json;
    expect(out.messages[0].content).toBe('Today is ⟦today⟧. \n<q>hi</q>');
  });

  it('a declared partial with a file is read from it and rendered exactly', () => {
    const dir = workspace('partial-file', {
      'support.prompt': template.replace('{{shout question}}', '{{question}}'),
      'support.context.yaml': 'model: gpt-4o\noutput: 200\npartials:\n  - { name: disclaimer, file: shared/disclaimer.hbs }\nslots:\n  persona: { kind: policy, trust: trusted }\n  question: { kind: user, trust: untrusted }\nfixtures: [f.fixture.yaml]\n',
      'shared/disclaimer.hbs': 'Answers are not legal advice.',
      'f.fixture.yaml': 'template: support.prompt\nslots:\n  persona: terse\n  question: why?\n',
    });
    const out = JSON.parse(ctxlens(dir, ['assemble', 'support.prompt', '--format', 'json']).stdout) as Json;
    expect(out.messages[0].content).toBe('\nYou are terse.\nAnswers are not legal advice.');
    expect(out.trace.exact).toBe(true);
    expect(ctxlens(dir, ['check', 'support.prompt']).stdout).not.toMatch(/code-registered|unknown-partial/);
  });
});
