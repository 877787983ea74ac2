/**
 * `ctxlens report --base REF` run as the built binary in temporary git repositories with real
 * commits: its token and cost figures against two `ctxlens assemble` runs (one at the base, one in
 * the working tree), renames, deletions and additions as git sees them, the gates' exit codes, the
 * errors for a missing base, a shallow clone and a folder outside any repository, the JSON against
 * schemas/report.schema.json, and the schema file against the zod schema it is generated from.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { ReportSchema, reportJsonSchema } from '../../src/core/report/schema';

const ROOT = resolve(__dirname, '../..');
const CLI = process.env.CTXLENS_CLI ?? resolve(ROOT, 'dist/cli.js');
const SCHEMA_FILE = resolve(ROOT, 'schemas/report.schema.json');

function ctxlens(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

/** A repository with `files` committed as its first commit. */
function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-report-'));
  git(dir, 'init', '-q', '-b', 'main');
  write(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  return dir;
}

function commit(dir: string, message = 'change'): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

const TEMPLATE = `---
model: gpt-4o
---
{{role "system"}}
{{policy}}
Answer from the evidence only.
{{role "user"}}
{{#each evidence}}{{this}}{{/each}}
<question>
{{question}}
</question>
`;

const config = (evidenceBudget: number, extra = '') => `version: 1
model: gpt-4o
window: 8000
output: 1200
margin: 800
requests_per_day: 10000
slots:
  policy: { kind: policy, trust: trusted, required: true, budget: 800 }
  evidence: { kind: evidence, trust: untrusted, budget: ${evidenceBudget}, label: EVIDENCE, pack: skip }
  question: { kind: user, trust: untrusted, required: true, budget: 400 }
${extra}fixtures: ['fixtures/*.fixture.yaml']
`;

const LONG = 'Retries back off exponentially with full jitter, start at two hundred milliseconds and stop after five attempts. '.repeat(8);
const fixture = (k: number) =>
  `slots:\n  policy: Be accurate and cite evidence ids.\n  question: How do retries work for client ${k}?\n  evidence:\n    - { id: ev_1, relevance: 0.9, text: "Retries honour Retry-After (client ${k})." }\n    - { id: ev_2, relevance: 0.5, text: "${LONG}" }\n`;

const BASE_FILES = {
  'a.prompt': TEMPLATE,
  'a.context.yaml': config(3000),
  'fixtures/f1.fixture.yaml': fixture(1),
  'fixtures/f2.fixture.yaml': fixture(2),
};

type Json = Record<string, any>;

/** `ctxlens assemble --format json` of one fixture: the trace with its cost and cacheable prefix. */
function assembled(dir: string, fx: string): Json {
  const r = ctxlens(['assemble', 'a.prompt', '--fixture', `fixtures/${fx}.fixture.yaml`, '--format', 'json'], dir);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).trace;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));

function reportJson(dir: string, args: string[] = []): Json {
  const r = ctxlens(['report', '--base', 'HEAD~1', '--format', 'json', ...args], dir);
  expect(r.code, r.stderr).toBe(0);
  const j = JSON.parse(r.stdout);
  expect(validate(j), JSON.stringify(validate.errors)).toBe(true);
  return j;
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

describe('ctxlens report: figures', () => {
  it('gives the token and cost deltas of two assemble runs, the dropped item with the reason on each side, and leaves the tree alone', () => {
    const dir = repo(BASE_FILES);
    const before = { f1: assembled(dir, 'f1'), f2: assembled(dir, 'f2') };
    // The change: one more instruction line, and an evidence budget that no longer holds ev_2.
    write(dir, { 'a.prompt': TEMPLATE.replace('Answer from the evidence only.', 'Answer from the evidence only. Cite the ids of the evidence you use.'), 'a.context.yaml': config(60) });
    commit(dir);
    const after = { f1: assembled(dir, 'f1'), f2: assembled(dir, 'f2') };
    const status = git(dir, 'status', '--porcelain');
    // git status refreshes the index; the report must not (GIT_OPTIONAL_LOCKS=0, read-only commands).
    const index = statSync(join(dir, '.git/index')).mtimeMs;

    const j = reportJson(dir);
    expect(j.base.ref).toBe('HEAD~1');
    expect(j.base.commit).toBe(git(dir, 'rev-parse', 'HEAD~1').trim());
    const t = j.templates.find((x: Json) => x.path === 'a.prompt');
    expect(t.status).toBe('modified');
    for (const fx of ['f1', 'f2'] as const) {
      const q = t.requests.find((x: Json) => x.fixture === fx);
      const [a, b] = [before[fx], after[fx]];
      expect(q.status).toBe('changed');
      expect(q.input_tokens).toEqual({ base: a.input_tokens, head: b.input_tokens, delta: b.input_tokens - a.input_tokens });
      expect(q.base.cost).toBe(a.cost.input);
      expect(q.head.cost).toBe(b.cost.input);
      expect(q.cost.delta).toBeCloseTo(b.cost.input - a.cost.input, 10);
      expect(q.base.cost_per_day).toBe(a.cost.per_day.input);
      expect(q.head.cost_per_day).toBe(b.cost.per_day.input);
      expect(q.base.output_reserve).toBe(a.reserved_output);
      expect(q.base.cache_prefix_tokens).toBe(a.cache_prefix_tokens);
      expect(q.head.cache_prefix_tokens).toBe(b.cache_prefix_tokens);
      const ev = q.slots.find((s: Json) => s.slot === 'evidence');
      const omitted = b.omitted.find((o: Json) => o.id === 'ev_2');
      expect(omitted).toBeDefined();
      expect(ev.dropped).toEqual([{ id: 'ev_2', base: `kept #${a.retained.find((r: Json) => r.id === 'ev_2').position + 1}`, head: omitted.reason }]);
      expect(q.first_difference).toMatchObject({ message: 1, role_base: 'system', base: 'Answer from the evidence only.', head: 'Answer from the evidence only. Cite the ids of the evidence you use.' });
    }
    const sum = (side: typeof before) => side.f1.input_tokens + side.f2.input_tokens;
    expect(j.summary).toMatchObject({ requests: 2, requests_changed: 2, input_tokens: { base: sum(before), head: sum(after), delta: sum(after) - sum(before) }, new_errors: 0 });
    expect(j.summary.cost_per_day.delta).toBeCloseTo(after.f1.cost.per_day.input + after.f2.cost.per_day.input - before.f1.cost.per_day.input - before.f2.cost.per_day.input, 8);
    // Nothing in the working tree or the index moved.
    expect(statSync(join(dir, '.git/index')).mtimeMs).toBe(index);
    expect(git(dir, 'status', '--porcelain')).toBe(status);
    expect(git(dir, 'stash', 'list')).toBe('');
  });

  it('compares with uncommitted changes in the working tree, and reports an unchanged tree as unchanged', () => {
    const dir = repo(BASE_FILES);
    const same = ctxlens(['report', '--base', 'HEAD', '--format', 'json'], dir);
    expect(same.code).toBe(0);
    const j0 = JSON.parse(same.stdout);
    expect(j0.summary).toMatchObject({ requests: 2, requests_changed: 0, input_tokens: { delta: 0 } });
    expect(j0.templates[0].status).toBe('unchanged');
    write(dir, { 'fixtures/f2.fixture.yaml': fixture(2).replace('client 2?', 'client 2, with a longer question about retry budgets?') });
    const j = JSON.parse(ctxlens(['report', '--base', 'HEAD', '--format', 'json'], dir).stdout);
    const changed = j.templates[0].requests.filter((q: Json) => q.status === 'changed').map((q: Json) => q.fixture);
    expect(changed).toEqual(['f2']);
    expect(j.summary.input_tokens.delta).toBeGreaterThan(0);
  });
});

describe('ctxlens report: quoted text', () => {
  it('redacts a key the changed line holds and keeps terminal escapes out of the text report', () => {
    const dir = repo(BASE_FILES);
    const key = 'sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678';
    write(dir, { 'fixtures/f1.fixture.yaml': fixture(1).replace('How do retries work for client 1?', `"Use ${key} \\u001b[31mnow\\u202e"`) });
    commit(dir);
    const j = reportJson(dir);
    const q = j.templates[0].requests.find((x: Json) => x.fixture === 'f1');
    expect(q.first_difference.head).toContain('sk-pro…678');
    for (const format of ['json', 'markdown', 'text']) {
      const r = ctxlens(['report', '--base', 'HEAD~1', '--format', format], dir);
      expect(r.stdout).not.toContain(key);
      if (format !== 'json') {
        expect(r.stdout).not.toContain('\u001b');
        expect(r.stdout).not.toContain('\u202e');
        expect(r.stdout).toContain('sk-pro…678 \ufffd[31mnow\ufffd');
      }
    }
  });
});

describe('ctxlens report: added, removed and renamed templates', () => {
  it('reports git renames, deletions and additions as such', () => {
    const dir = repo({
      ...BASE_FILES,
      'b.prompt': TEMPLATE,
      'b.context.yaml': config(3000).replace("fixtures/*.fixture.yaml", "fixtures/f1.fixture.yaml"),
      'gone/d.prompt': '---\nmodel: gpt-4o\n---\nHello {{name}}\n',
    });
    git(dir, 'mv', 'b.prompt', 'c.prompt');
    git(dir, 'mv', 'b.context.yaml', 'c.context.yaml');
    git(dir, 'rm', '-q', 'gone/d.prompt');
    write(dir, { 'new/e.prompt': '---\nmodel: gpt-4o\n---\nGood morning {{name}}, here is the summary.\n' });
    commit(dir);
    const j = reportJson(dir);
    const by = (p: string) => j.templates.find((t: Json) => t.path === p);
    expect(by('c.prompt')).toMatchObject({ status: 'renamed', base_path: 'b.prompt' });
    expect(by('c.prompt').requests.every((q: Json) => q.status === 'unchanged')).toBe(true);
    expect(by('gone/d.prompt').status).toBe('removed');
    expect(by('gone/d.prompt').requests.every((q: Json) => q.status === 'removed' && q.head === undefined)).toBe(true);
    expect(by('new/e.prompt').status).toBe('added');
    // A template without fixtures or sample data is one request, assembled without values.
    expect(by('new/e.prompt').requests[0]).toMatchObject({ status: 'added', fixture: '(no fixture)' });
    expect(j.summary).toMatchObject({ templates_added: 1, templates_removed: 1, templates_renamed: 1 });
    expect(j.templates.some((t: Json) => t.path === 'b.prompt')).toBe(false);
    const text = ctxlens(['report', '--base', 'HEAD~1'], dir);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('b.prompt → c.prompt  [renamed]');
    expect(text.stdout).toContain('gone/d.prompt  [removed]');
    expect(text.stdout).toContain('new/e.prompt  [added]');
    const md = ctxlens(['report', '--base', 'HEAD~1', '--format', 'markdown'], dir);
    expect(md.stdout).toContain('renamed `b.prompt` → `c.prompt`');
    // A path limits the report to what lies under it.
    const only = JSON.parse(ctxlens(['report', '--base', 'HEAD~1', '--format', 'json', 'gone'], dir).stdout);
    expect(only.templates.map((t: Json) => t.path)).toEqual(['gone/d.prompt']);
  });
});

describe('ctxlens report: fixtures added and removed', () => {
  it('a template whose own files did not change still loses the request of a deleted fixture and gains an untracked one', () => {
    const dir = repo({ ...BASE_FILES, 'fixtures/f3.fixture.yaml': fixture(3) });
    git(dir, 'rm', '-q', 'fixtures/f3.fixture.yaml');
    commit(dir);
    write(dir, { 'fixtures/f4.fixture.yaml': fixture(4) });
    const j = reportJson(dir);
    const t = j.templates[0];
    expect(t.status).toBe('modified');
    expect(t.requests.map((q: Json) => [q.fixture, q.status])).toEqual([
      ['f1', 'unchanged'],
      ['f2', 'unchanged'],
      ['f3', 'removed'],
      ['f4', 'added'],
    ]);
  });
});

describe('ctxlens report: a large change', () => {
  it('keeps the Markdown under the comment limit: 40 sections, then a count of the rest', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 45; i++) {
      files[`p${i}/a.prompt`] = TEMPLATE;
      files[`p${i}/a.context.yaml`] = config(3000);
      files[`p${i}/fixtures/f.fixture.yaml`] = fixture(i);
    }
    const dir = repo(files);
    for (let i = 0; i < 45; i++) write(dir, { [`p${i}/a.prompt`]: TEMPLATE.replace('only.', 'only, always.') });
    const r = ctxlens(['report', '--base', 'HEAD', '--format', 'markdown', '--out', 'report.md'], dir);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(md.length).toBeLessThan(65_536);
    expect(md).toContain('| 45 of 45 |');
    expect(md.match(/<details><summary><code>p\d+\/a\.prompt<\/code> × /g)).toHaveLength(40);
    expect(md).toContain('And 5 more changed request(s): run `ctxlens report --base HEAD` for all of them.');
    const bad = ctxlens(['report', '--base', 'HEAD', '--out', 'no/such/folder/report.md'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("cannot write 'no/such/folder/report.md': ENOENT");
  });
});

describe('ctxlens report: gates', () => {
  /** A change that adds tokens to every request, and a template that gains an undefined slot. */
  function grown(): string {
    const dir = repo({ ...BASE_FILES, 'a.eval.yaml': 'template: a.prompt\ncases:\n  - { id: retry, fixture: f1, required_evidence: [ev_2], required_facts: ["full jitter"] }\n' });
    write(dir, { 'a.prompt': TEMPLATE.replace('Answer from the evidence only.', 'Answer from the evidence only, and say which passage you used for each claim.') });
    commit(dir);
    return dir;
  }

  it('--max-token-increase N and N%: exit 1 with the request and its growth, 0 within the limit', () => {
    const dir = grown();
    const j = reportJson(dir);
    const grow = j.templates[0].requests[0].input_tokens.delta;
    const base = j.templates[0].requests[0].input_tokens.base;
    expect(grow).toBeGreaterThan(0);
    const over = ctxlens(['report', '--base', 'HEAD~1', '--max-token-increase', String(grow - 1)], dir);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(`gate max-token-increase ${grow - 1} failed`);
    expect(over.stderr).toContain(`a.prompt × f1: +${grow} input tokens`);
    expect(ctxlens(['report', '--base', 'HEAD~1', '--max-token-increase', String(grow)], dir).code).toBe(0);
    const pct = (grow / base) * 100;
    expect(ctxlens(['report', '--base', 'HEAD~1', '--max-token-increase', `${Math.floor(pct * 10) / 10 - 0.1}%`], dir).code).toBe(1);
    expect(ctxlens(['report', '--base', 'HEAD~1', '--max-token-increase', `${Math.ceil(pct)}%`], dir).code).toBe(0);
    const bad = ctxlens(['report', '--base', 'HEAD~1', '--max-token-increase', 'lots'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-token-increase takes a number or a percentage');
  });

  it('--max-cost-increase: on the summed cost per day', () => {
    const dir = grown();
    const j = reportJson(dir);
    const perDay = j.summary.cost_per_day.delta;
    expect(perDay).toBeGreaterThan(0);
    const over = ctxlens(['report', '--base', 'HEAD~1', '--max-cost-increase', String(perDay / 2)], dir);
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/cost per day rises by \$/);
    expect(ctxlens(['report', '--base', 'HEAD~1', '--max-cost-increase', String(perDay * 2)], dir).code).toBe(0);
    expect(ctxlens(['report', '--base', 'HEAD~1', '--max-cost-increase', '1000%'], dir).code).toBe(0);
  });

  it('--fail-on new-errors: a new error finding fails, an unchanged error does not', () => {
    const dir = grown();
    expect(ctxlens(['report', '--base', 'HEAD~1', '--fail-on', 'new-errors'], dir).code).toBe(0);
    write(dir, { 'a.prompt': TEMPLATE.replace('</question>', '</question>\n{{tone}}') });
    const r = ctxlens(['report', '--base', 'HEAD~1', '--fail-on', 'new-errors', '--format', 'json'], dir);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.passed).toBe(false);
    expect(j.summary.new_errors).toBeGreaterThan(0);
    expect(j.templates[0].findings.new.some((f: Json) => f.rule === 'slot-undefined' && f.path === 'a.prompt' && f.line === 12)).toBe(true);
    expect(r.stderr).toContain('gate new-errors failed');
    expect(r.stderr).toContain('slot-undefined');
    // Once committed as the base, the same error is neither new nor fixed.
    commit(dir);
    const again = ctxlens(['report', '--base', 'HEAD', '--fail-on', 'new-errors', '--format', 'json'], dir);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).summary).toMatchObject({ new_findings: 0, fixed_findings: 0 });
  });

  it('--fail-on dropped-required: required evidence of an eval case that the change no longer keeps', () => {
    const dir = grown();
    expect(ctxlens(['report', '--base', 'HEAD~1', '--fail-on', 'dropped-required'], dir).code).toBe(0);
    write(dir, { 'a.context.yaml': config(60) });
    const r = ctxlens(['report', '--base', 'HEAD~1', '--fail-on', 'dropped-required,new-errors', '--format', 'json'], dir);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    const ev = j.templates[0].eval[0];
    expect(ev.file).toBe('a.eval.yaml');
    expect(ev.required_dropped).toEqual([{ case: 'retry', id: 'ev_2' }]);
    expect(ev.base).toMatchObject({ evidence_coverage: 1, selection_recall: 1 });
    expect(ev.head).toMatchObject({ evidence_coverage: 0, selection_recall: 0 });
    expect(j.gates.map((g: Json) => [g.gate, g.passed])).toEqual([
      ['dropped-required', false],
      ['new-errors', true],
    ]);
    expect(r.stderr).toContain('case retry no longer keeps its required evidence ev_2');
    // Without the gate the same report exits 0.
    expect(ctxlens(['report', '--base', 'HEAD~1'], dir).code).toBe(0);
  });
});

describe('ctxlens report: the pre-commit hook', () => {
  it('ctxlens-report runs its entry without file names and prints the text report against HEAD', () => {
    const hooks = parse(readFileSync(resolve(ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as Array<{ id: string; entry: string; pass_filenames?: boolean; files: string }>;
    const hook = hooks.find((h) => h.id === 'ctxlens-report')!;
    expect(hook.pass_filenames).toBe(false);
    expect(new RegExp(hook.files).test('fixtures/f1.fixture.yaml')).toBe(true);
    const [bin, ...args] = hook.entry.split(' ');
    expect(bin).toBe('ctxlens');
    const dir = repo(BASE_FILES);
    write(dir, { 'a.context.yaml': config(60) });
    git(dir, 'add', 'a.context.yaml');
    const r = ctxlens(args, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ctxlens report: HEAD \([0-9a-f]{7}\) -> working tree\n2 of 2 request\(s\) changed/);
    expect(r.stdout).toContain('ev_2 dropped (base: kept #');
  });
});

describe('ctxlens report: errors', () => {
  it('a base that does not exist: exit 2, saying so', () => {
    const dir = repo(BASE_FILES);
    const r = ctxlens(['report', '--base', 'no-such-branch'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown base revision 'no-such-branch'");
    expect(r.stdout).toBe('');
  });

  it('a shallow clone without the base: exit 2, with how to fetch it', () => {
    const dir = repo(BASE_FILES);
    write(dir, { 'a.context.yaml': config(100) });
    commit(dir);
    const clone = mkdtempSync(join(tmpdir(), 'ctxlens-report-shallow-'));
    rmSync(clone, { recursive: true });
    git(tmpdir(), 'clone', '-q', '--depth', '1', `file://${dir}`, clone);
    const base = git(dir, 'rev-parse', 'HEAD~1').trim();
    const r = ctxlens(['report', '--base', base], clone);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('shallow clone');
    expect(r.stderr).toContain('fetch-depth: 0');
  });

  it('outside a repository, or without --base: exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-report-nogit-'));
    write(dir, BASE_FILES);
    const r = ctxlens(['report', '--base', 'HEAD'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a git repository');
    const repoDir = repo(BASE_FILES);
    const u = ctxlens(['report'], repoDir);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('report needs --base REF');
    expect(ctxlens(['report', '--base', 'HEAD', 'missing-folder'], repoDir).code).toBe(2);
    expect(ctxlens(['report', '--base', 'HEAD', '--fail-on', 'everything'], repoDir).code).toBe(2);
  });
});

describe('schemas/report.schema.json', () => {
  it('equals the JSON Schema generated from the zod schema', () => {
    const generated = JSON.stringify(reportJsonSchema(), null, 2) + '\n';
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(SCHEMA_FILE, generated);
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(generated);
  });

  it('refuses a report of another version or with a missing summary', () => {
    expect(validate({ version: 2 })).toBe(false);
    expect(ReportSchema.safeParse({ version: 1, base: { ref: 'x', commit: 'y' }, head: { ref: 'working tree' }, templates: [], gates: [], passed: true }).success).toBe(false);
  });
});
