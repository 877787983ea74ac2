/**
 * Hostile files on disk: symbolic links that lead out of the workspace and FIFOs (or other
 * non-regular files) where a template, config, fixture or `{ file }` reference is expected.
 * DiskFileHost must refuse both (a link out is never read, a FIFO never opened for a blocking
 * read), and the workspace gate must say a link leads out instead of reading it.
 *
 * Every FIFO test runs the host in a child process with a timeout: a regression blocks that
 * process, not the test runner.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import picomatch from 'picomatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseFixture, resolveFixtureFiles } from '../../src/core/fixture';
import { resolveInWorkspace } from '../../src/core/paths';
import { DiskFileHost, globMatcher, toPosix } from '../../src/node/fileHost';

const SECRET = 'TOPSECRET-OUTSIDE-CONTENT';

/** A workspace folder and an outside folder beside it (both real paths, so macOS /tmp links do not interfere). */
function sandbox(): { ws: string; out: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-hostile-')));
  const ws = join(base, 'ws');
  const out = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(out);
  writeFileSync(join(out, 'secret.md'), SECRET);
  mkdirSync(join(out, 'dir'));
  writeFileSync(join(out, 'dir', 'leak.fixture.yaml'), `slots:\n  q: ${SECRET}\n`);
  return { ws: toPosix(ws), out: toPosix(out) };
}

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
}

describe('DiskFileHost and symbolic links', () => {
  it('does not read or size a file whose link leads outside every root', () => {
    const { ws, out } = sandbox();
    symlinkSync(`${out}/secret.md`, `${ws}/notes.md`);
    const host = new DiskFileHost([ws]);
    expect(host.readFile(`${ws}/notes.md`)).toBeUndefined();
    expect(host.size(`${ws}/notes.md`)).toBeUndefined();
    expect(host.realPath?.(`${ws}/notes.md`)).toBe(`${out}/secret.md`);
  });

  it('does not read through a linked folder that leads outside', () => {
    const { ws, out } = sandbox();
    symlinkSync(`${out}/dir`, `${ws}/linked`);
    const host = new DiskFileHost([ws]);
    expect(host.readFile(`${ws}/linked/leak.fixture.yaml`)).toBeUndefined();
    expect(host.size(`${ws}/linked/leak.fixture.yaml`)).toBeUndefined();
  });

  it('still reads links that stay inside the workspace, and roots that are links themselves', () => {
    const { ws } = sandbox();
    mkdirSync(`${ws}/docs`);
    writeFileSync(`${ws}/docs/policy.md`, 'inside');
    symlinkSync(`${ws}/docs/policy.md`, `${ws}/policy.md`);
    const host = new DiskFileHost([ws]);
    expect(host.readFile(`${ws}/policy.md`)).toBe('inside');
    // The workspace opened through a link to it: files are inside the root's real path.
    const alias = `${ws}-alias`;
    symlinkSync(ws, alias);
    const viaAlias = new DiskFileHost([alias]);
    expect(viaAlias.readFile(`${alias}/docs/policy.md`)).toBe('inside');
    expect(viaAlias.glob(alias, '**/*.md')).toEqual([`${alias}/docs/policy.md`, `${alias}/policy.md`]);
  });

  it('globs never return links out of the workspace nor walk linked folders outside', () => {
    const { ws, out } = sandbox();
    mkdirSync(`${ws}/fixtures`);
    writeFileSync(`${ws}/fixtures/own.fixture.yaml`, 'slots: {}\n');
    symlinkSync(`${out}/dir/leak.fixture.yaml`, `${ws}/fixtures/file-link.fixture.yaml`);
    symlinkSync(`${out}/dir`, `${ws}/fixtures/dir-link`);
    const host = new DiskFileHost([ws]);
    expect(host.glob(ws, '**/*.fixture.yaml')).toEqual([`${ws}/fixtures/own.fixture.yaml`]);
    expect(host.glob(`${ws}/fixtures`, 'dir-link/*.fixture.yaml')).toEqual([]);
  });

  it('globs follow a linked folder inside the workspace once, even when links form a cycle', () => {
    const { ws } = sandbox();
    mkdirSync(`${ws}/real`);
    writeFileSync(`${ws}/real/a.fixture.yaml`, 'slots: {}\n');
    symlinkSync(`${ws}/real`, `${ws}/alias`);
    symlinkSync(ws, `${ws}/real/loop`);
    const got = new DiskFileHost([ws]).glob(ws, '**/*.fixture.yaml');
    expect(got).toContain(`${ws}/real/a.fixture.yaml`);
    expect(got.length).toBeLessThanOrEqual(3);
  });

  it('the workspace gate names the link and its target', () => {
    const { ws, out } = sandbox();
    symlinkSync(`${out}/secret.md`, `${ws}/notes.md`);
    symlinkSync(`${out}/dir`, `${ws}/linked`);
    const host = new DiskFileHost([ws]);
    const file = resolveInWorkspace(host, `${ws}/a.fixture.yaml`, 'notes.md');
    expect(file.path).toBeUndefined();
    expect(file.error).toBe(`'notes.md' is a symbolic link to ${out}/secret.md, outside the workspace`);
    const dir = resolveInWorkspace(host, `${ws}/a.fixture.yaml`, 'linked/leak.fixture.yaml');
    expect(dir.path).toBeUndefined();
    expect(dir.error).toBe(`'linked/leak.fixture.yaml' leads through a symbolic link to ${out}/dir/leak.fixture.yaml, outside the workspace`);
    // A link that stays inside resolves to the path as written.
    writeFileSync(`${ws}/own.md`, 'x');
    symlinkSync(`${ws}/own.md`, `${ws}/own-link.md`);
    expect(resolveInWorkspace(host, `${ws}/a.fixture.yaml`, 'own-link.md')).toEqual({ path: `${ws}/own-link.md` });
  });

  it("a fixture's { file } reference through a link out is a file-reference finding and is never read", () => {
    const { ws, out } = sandbox();
    symlinkSync(`${out}/secret.md`, `${ws}/notes.md`);
    const text = 'slots:\n  policy: { file: notes.md }\n';
    const doc = resolveFixtureFiles(parseFixture(`${ws}/a.fixture.yaml`, text), new DiskFileHost([ws])).doc;
    const refs = doc.findings.filter((f) => f.rule === 'file-reference');
    expect(refs.map((f) => f.message)).toEqual([`File reference 'notes.md': 'notes.md' is a symbolic link to ${out}/secret.md, outside the workspace.`]);
    expect(JSON.stringify(doc.slots)).not.toContain(SECRET);
  });
});

describe('DiskFileHost and FIFOs (in a child process with a timeout)', () => {
  let script = '';
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-hostile-host-'));
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import { DiskFileHost } from ${JSON.stringify(resolve(__dirname, '../../src/node/fileHost.ts'))};
const [root, ...paths] = process.argv.slice(2);
const host = new DiskFileHost([root]);
const out = paths.map((p) => ({ path: p, text: host.readFile(p) ?? null, size: host.size(p) ?? null }));
process.stdout.write(JSON.stringify({ reads: out, glob: host.glob(root, '**/*') }));
`,
    );
    script = join(dir, 'entry.js');
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
  });

  const run = (root: string, ...paths: string[]) => {
    const r = spawnSync(process.execPath, [script, root, ...paths], { encoding: 'utf8', timeout: 10_000 });
    return { timedOut: r.error !== undefined || r.signal !== null, code: r.status, json: r.stdout ? JSON.parse(r.stdout) : undefined };
  };

  it('readFile and size of a FIFO return undefined without blocking; glob skips it', () => {
    const { ws } = sandbox();
    mkfifo(`${ws}/x.context.yaml`);
    writeFileSync(`${ws}/ok.context.yaml`, 'window: 1000\n');
    const r = run(ws, `${ws}/x.context.yaml`, `${ws}/ok.context.yaml`);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(0);
    expect(r.json.reads).toEqual([
      { path: `${ws}/x.context.yaml`, text: null, size: null },
      { path: `${ws}/ok.context.yaml`, text: 'window: 1000\n', size: 13 },
    ]);
    expect(r.json.glob).toEqual([`${ws}/ok.context.yaml`]);
  });

  it('a link to a FIFO inside the workspace is not read either', () => {
    const { ws } = sandbox();
    mkfifo(`${ws}/pipe`);
    symlinkSync(`${ws}/pipe`, `${ws}/policy.md`);
    const r = run(ws, `${ws}/policy.md`);
    expect(r.timedOut).toBe(false);
    expect(r.json.reads).toEqual([{ path: `${ws}/policy.md`, text: null, size: null }]);
  });

  it('a folder is not read as a file', () => {
    const { ws } = sandbox();
    mkdirSync(`${ws}/folder.context.yaml`);
    const r = run(ws, `${ws}/folder.context.yaml`);
    expect(r.json.reads).toEqual([{ path: `${ws}/folder.context.yaml`, text: null, size: null }]);
  });
});

describe('DiskFileHost glob with hostile patterns', () => {
  it('an empty, blank or oversize pattern matches nothing instead of throwing', () => {
    const { ws } = sandbox();
    writeFileSync(`${ws}/a.fixture.yaml`, 'slots: {}\n');
    const host = new DiskFileHost([ws]);
    expect(host.glob(ws, '')).toEqual([]);
    expect(host.glob(ws, '   ')).toEqual([]);
    expect(host.glob(ws, `${'{'.repeat(10_000)}`)).toEqual([]);
    expect(host.glob(ws, `${'['.repeat(10_000)}*.yaml`)).toEqual([]);
    expect(host.glob(ws, '*.fixture.yaml')).toEqual([`${ws}/a.fixture.yaml`]);
  });

  it('a pattern with huge brace expansions stays bounded', () => {
    const { ws } = sandbox();
    writeFileSync(`${ws}/a.fixture.yaml`, 'slots: {}\n');
    const host = new DiskFileHost([ws]);
    const bomb = '{a,b}'.repeat(40) + '*.yaml';
    expect(host.glob(ws, bomb)).toEqual([]);
  });
});

describe('globMatcher: no backtracking regex from a config', () => {
  it('a pattern of many stars against a long file name ends (picomatch backtracks for minutes)', () => {
    const { ws } = sandbox();
    writeFileSync(`${ws}/${'a'.repeat(250)}.yaml`, 'x');
    const host = new DiskFileHost([ws]);
    expect(host.glob(ws, `${'*a'.repeat(30)}*b`)).toEqual([]);
    expect(host.glob(ws, `${'*a/'.repeat(10)}**/${'*a'.repeat(20)}*b`)).toEqual([]);
    expect(host.glob(ws, '*a*a*.yaml')).toEqual([`${ws}/${'a'.repeat(250)}.yaml`]);
  });

  it('matches what picomatch matches for the patterns configs use', () => {
    const patterns = [
      'fixtures/*.fixture.yaml',
      '*.fixture.{yaml,yml,json}',
      'fixtures/*.fixture.{yaml,yml,json}',
      '**/*.prompt',
      '**/*',
      'fixtures/**/*.fixture.yaml',
      '**/fixtures/*.yaml',
      'a/**/b/**/c.md',
      'f?x/[a-c]*.yaml',
      'f?x/[!a-c]*.yaml',
      'f?x/[^a-c]*.yaml',
      '{fixtures,more}/{x,y}-*.fixture.yaml',
      'fixtures/\\*.yaml',
      'fixtures/{a}.yaml',
      './fixtures/*.yaml',
    ];
    const paths = [
      'fixtures/a.fixture.yaml',
      'fixtures/.hidden.fixture.yaml',
      'fixtures/deep/b.fixture.yaml',
      'x.fixture.yml',
      'x.fixture.json',
      'x.fixture.toml',
      'a.prompt',
      'sub/dir/b.prompt',
      '.dot/b.prompt',
      'sub/.dot/b.prompt',
      'a/b/c.md',
      'a/x/b/y/z/c.md',
      'a/c.md',
      'fix/a1.yaml',
      'fix/d1.yaml',
      'fixtures/x-1.fixture.yaml',
      'more/y-2.fixture.yaml',
      'fixtures/*.yaml',
      'fixtures/{a}.yaml',
      'fixtures/a.yaml',
      'x/fixtures/a.yaml',
    ];
    for (const pattern of patterns) {
      const ours = globMatcher(pattern)!;
      const theirs = picomatch(pattern.replace(/^\.\//, ''), { dot: false });
      for (const p of paths) expect(ours(p), `${pattern} ~ ${p}`).toBe(theirs(p));
    }
  });

  it('refuses patterns that expand to too many alternatives', () => {
    expect(globMatcher('{a,b}'.repeat(7))).toBeUndefined();
    expect(globMatcher('{a,b}'.repeat(6))).toBeDefined();
  });
});
