/**
 * The Action's `report: true` step (action.yml, step `report`) run with bash as a runner runs it,
 * against a local HTTP stand-in of the GitHub REST API: the first run creates the pull request's
 * report comment, the second updates that comment (never a second one), a comment that only quotes
 * the report is left alone, the report lands in $GITHUB_STEP_SUMMARY, a failed gate fails the step
 * after the comment is posted, and the token is sent as a bearer token and never printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'ghs_standInToken0123456789';

interface Comment {
  id: number;
  body: string;
  user: { login: string; type: string };
}

/** The part of the GitHub API the step uses: list, create and update issue comments of one repository. */
class GitHubStandIn {
  comments: Comment[] = [];
  requests: Array<{ method: string; url: string; auth?: string }> = [];
  private server!: Server;
  private nextId = 100;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((ok) => this.server.close(() => ok()));
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    this.requests.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { message: 'Bad credentials' });
    const url = new URL(req.url ?? '/', this.url);
    let m = /^\/repos\/acme\/prompts\/issues\/7\/comments$/.exec(url.pathname);
    if (m && req.method === 'GET') {
      const per = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      return send(200, this.comments.slice((page - 1) * per, page * per));
    }
    if (m && req.method === 'POST') {
      const c: Comment = { id: this.nextId++, body: JSON.parse(raw).body, user: { login: 'github-actions[bot]', type: 'Bot' } };
      this.comments.push(c);
      return send(201, c);
    }
    m = /^\/repos\/acme\/prompts\/issues\/comments\/(\d+)$/.exec(url.pathname);
    if (m && req.method === 'PATCH') {
      const c = this.comments.find((x) => x.id === Number(m![1]));
      if (!c) return send(404, { message: 'Not Found' });
      c.body = JSON.parse(raw).body;
      return send(200, c);
    }
    send(404, { message: 'Not Found' });
  }
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

const template = (extra: string) => `---\nmodel: gpt-4o\n---\n{{role "system"}}\nAnswer briefly.${extra}\n{{role "user"}}\n{{question}}\n`;
const CONFIG = 'model: gpt-4o\nrequests_per_day: 5000\nslots:\n  question: { kind: user, trust: untrusted, required: true, budget: 200 }\nfixtures: [fixtures/*.fixture.yaml]\n';

/** The `report` step of action.yml: its env names and script. */
function reportStep(): { env: Record<string, string>; run: string } {
  const action = parse(readFileSync(resolve(ROOT, 'action.yml'), 'utf8')) as { runs: { steps: Array<{ id?: string; env: Record<string, string>; run: string }> }; inputs: Record<string, unknown> };
  const step = action.runs.steps.find((s) => s.id === 'report');
  if (!step) throw new Error('action.yml has no step with id report');
  expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(['report', 'base', 'report-args', 'comment', 'github-token']));
  return step;
}

/**
 * A child process run to its end without blocking this process: the API stand-in answers from
 * this process's event loop, which a spawnSync would stop.
 */
function exec(cmd: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', fail);
    child.on('close', (status) => {
      clearTimeout(timer);
      ok({ status, stdout, stderr });
    });
  });
}

/** Runs the step as a runner would (bash -e -o pipefail on the script), with the step's env filled in. */
async function runStep(workspace: string, api: string, inputs: { base: string; args?: string; comment?: string; token?: string }) {
  const step = reportStep();
  const runner = mkdtempSync(join(tmpdir(), 'ctxlens-runner-'));
  const files = { output: join(runner, 'output'), summary: join(runner, 'summary.md') };
  writeFileSync(files.output, '');
  writeFileSync(files.summary, '');
  const values: Record<string, string> = {
    CTXLENS_CLI: '',
    CTXLENS_PATHS: '.',
    CTXLENS_REPORT_ARGS: inputs.args ?? '',
    CTXLENS_BASE: inputs.base,
    CTXLENS_COMMENT: inputs.comment ?? 'true',
    CTXLENS_PR: '7',
    CTXLENS_ACTION_PATH: ROOT,
    GITHUB_TOKEN: inputs.token ?? TOKEN,
  };
  // Every variable the step declares is given a value here, so the test follows the step's env.
  expect(Object.keys(step.env).sort()).toEqual(Object.keys(values).sort());
  const script = join(runner, 'step.sh');
  writeFileSync(script, step.run);
  const r = await exec('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
    cwd: workspace,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? runner, ...values, GITHUB_API_URL: api, GITHUB_REPOSITORY: 'acme/prompts', GITHUB_OUTPUT: files.output, GITHUB_STEP_SUMMARY: files.summary, RUNNER_TEMP: runner },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, output: readFileSync(files.output, 'utf8'), summary: readFileSync(files.summary, 'utf8') };
}

const api = new GitHubStandIn();

beforeAll(async () => {
  if (!existsSync(resolve(ROOT, 'dist/cli.js'))) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
  await api.start();
});

afterAll(() => api.stop());

describe('action.yml report step', () => {
  it('creates the comment, then updates it (one comment), writes the job summary, and fails on a failed gate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-action-'));
    git(dir, 'init', '-q', '-b', 'main');
    write(dir, { 'q.prompt': template(''), 'q.context.yaml': CONFIG, 'fixtures/q.fixture.yaml': 'slots:\n  question: How do I reset my password?\n' });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    // A reviewer's comment that quotes an earlier report is not the report's comment.
    api.comments.push({ id: 1, body: '> <!-- ctxlens-report -->\n> quoted', user: { login: 'reviewer', type: 'User' } });

    write(dir, { 'q.prompt': template(' Cite the article you used.') });
    git(dir, 'commit', '-q', '-am', 'longer system prompt');
    const first = await runStep(dir, api.url, { base });
    expect(first.stderr).not.toContain(TOKEN);
    expect(first.stdout).not.toContain(TOKEN);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created comment 100 on #7/);
    expect(api.comments.map((c) => c.id)).toEqual([1, 100]);
    const body1 = api.comments[1].body;
    expect(body1.startsWith('<!-- ctxlens-report -->\n')).toBe(true);
    expect(body1).toContain('| 1 of 1 |');
    expect(first.summary).toBe(readFileSync(first.output.match(/report-file=(.*)/)![1], 'utf8'));
    expect(first.summary).toContain('Context Lens: what this change does to every request');
    expect(first.output).toContain('exit-code=0');

    // Another push: the same comment is updated, with the new figures.
    write(dir, { 'q.prompt': template(' Cite the article you used, and link to it.') });
    git(dir, 'commit', '-q', '-am', 'even longer');
    const second = await runStep(dir, api.url, { base, args: '--max-token-increase 1' });
    expect(second.code).toBe(1);
    expect(second.stdout).toMatch(/updated comment 100 on #7/);
    expect(second.stderr).toContain('gate max-token-increase 1 failed');
    expect(api.comments.map((c) => c.id)).toEqual([1, 100]);
    expect(api.comments[1].body).not.toBe(body1);
    expect(api.comments[1].body).toContain('✘ **failed**');
    expect(api.comments[0].body).toBe('> <!-- ctxlens-report -->\n> quoted');
    expect(second.output).toContain('exit-code=1');
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(api.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(api.requests.every((r) => r.auth === `Bearer ${TOKEN}`)).toBe(true);

    // A token the API refuses (a fork's read-only token) leaves the report in the summary and warns.
    const refused = await runStep(dir, api.url, { base, token: 'read-only-token' });
    expect(refused.code).toBe(0);
    expect(refused.stdout).toContain('::warning::the report comment could not be posted');
    expect(refused.summary).toContain('ctxlens-report');
    expect(refused.stdout + refused.stderr).not.toContain('read-only-token');
    expect(api.comments.map((c) => c.id)).toEqual([1, 100]);

    // comment: false writes the summary only.
    const before = api.requests.length;
    const quiet = await runStep(dir, api.url, { base, comment: 'false' });
    expect(quiet.code).toBe(0);
    expect(quiet.summary).toContain('ctxlens-report');
    expect(api.requests.length).toBe(before);
  });

  it('a base the clone cannot read stops the step with exit 2 and posts nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-action-'));
    git(dir, 'init', '-q', '-b', 'main');
    write(dir, { 'q.prompt': template(''), 'q.context.yaml': CONFIG });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    const before = api.requests.length;
    const r = await runStep(dir, api.url, { base: '0123456789abcdef0123456789abcdef01234567' });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toContain('ctxlens report failed with exit code 2');
    expect(api.requests.length).toBe(before);
    expect(r.summary).toBe('');
  });

  it('the comment script refuses a token the API rejects, without printing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-action-'));
    writeFileSync(join(dir, 'r.md'), '<!-- ctxlens-report -->\nhello\n');
    const r = await exec(process.execPath, [resolve(ROOT, 'scripts/report-comment.mjs'), join(dir, 'r.md')], {
      env: { PATH: process.env.PATH ?? '', GITHUB_API_URL: api.url, GITHUB_REPOSITORY: 'acme/prompts', GITHUB_TOKEN: 'wrong-token-value', CTXLENS_PR: '7' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('HTTP 401 Bad credentials');
    expect(r.stderr + r.stdout).not.toContain('wrong-token-value');
  });
});
