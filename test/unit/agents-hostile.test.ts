/**
 * Hostile instruction files: a 10 MB rule file, an import cycle, imports and links that lead out
 * of the workspace (by path and by symbolic link), a link to a FIFO, tag characters and bidi
 * controls. "What loads" must answer with located findings, read nothing outside the workspace
 * and never open a FIFO. The FIFO case runs in a child process with a timeout (as
 * hostile-files.test.ts does): a regression blocks that process, not the test runner.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { outlineAgentFile, parseTemplate, whatLoads } from '../../src/core/language';
import { getTokenizer } from '../../src/core/tokens';
import { DiskFileHost, toPosix } from '../../src/node/fileHost';

const o200k = getTokenizer('o200k_base')!;
const SECRET = 'TOPSECRET-OUTSIDE-CONTENT';

function sandbox(): { ws: string; out: string } {
  const base = toPosix(realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-agents-hostile-'))));
  mkdirSync(`${base}/ws`);
  mkdirSync(`${base}/outside`);
  writeFileSync(`${base}/outside/secret.md`, SECRET);
  return { ws: `${base}/ws`, out: `${base}/outside` };
}

describe('hostile instruction files', () => {
  it('a 10 MB CLAUDE.md is listed with an estimate from its size and never read', () => {
    const { ws } = sandbox();
    writeFileSync(`${ws}/CLAUDE.md`, 'x'.repeat(10 * 1024 * 1024));
    writeFileSync(`${ws}/a.ts`, '');
    const host = new DiskFileHost([ws]);
    let reads = 0;
    const counting = { ...host, roots: host.roots, size: (p: string) => host.size(p), glob: (d: string, g: string) => host.glob(d, g), realPath: (p: string) => host.realPath(p), readFile: (p: string) => (reads++, host.readFile(p)) };
    const w = whatLoads(counting, `${ws}/a.ts`, { tokenizer: o200k, agent: 'claude' });
    expect(w.agents[0].files).toEqual([{ path: `${ws}/CLAUDE.md`, kind: 'claude-md', why: 'always', tokens: 2_621_440, estimate: true, bytes: 10 * 1024 * 1024 }]);
    expect(reads).toBe(0);
  });

  it('imports and links that leave the workspace, by path or by a symbolic link, are never read', () => {
    const { ws, out } = sandbox();
    symlinkSync(`${out}/secret.md`, `${ws}/linked.md`);
    mkdirSync(`${ws}/.github`);
    writeFileSync(`${ws}/.github/copilot-instructions.md`, '[a](../../outside/secret.md) [b](/etc/passwd) #file:../linked.md\n');
    writeFileSync(`${ws}/CLAUDE.md`, '@linked.md\n@../outside/secret.md\n');
    writeFileSync(`${ws}/a.ts`, '');
    const host = new DiskFileHost([ws]);
    const w = whatLoads(host, `${ws}/a.ts`, { tokenizer: o200k });
    expect(JSON.stringify(w)).not.toContain(SECRET);
    const copilot = w.agents.find((a) => a.agent === 'copilot')!;
    const claude = w.agents.find((a) => a.agent === 'claude')!;
    expect(copilot.files.map((f) => f.path)).toEqual([`${ws}/.github/copilot-instructions.md`]);
    expect(claude.files.map((f) => f.path)).toEqual([`${ws}/CLAUDE.md`]);
    const refs = w.findings.filter((f) => f.rule === 'instruction-reference');
    expect(refs.length).toBe(5);
    for (const f of refs) expect(f.span.end).toBeGreaterThan(f.span.start);
    expect(refs.some((f) => /symbolic link/.test(f.message))).toBe(true);
  });

  it('an import cycle of three files ends, each file counted once', () => {
    const { ws } = sandbox();
    writeFileSync(`${ws}/GEMINI.md`, '@./a.md\n');
    writeFileSync(`${ws}/a.md`, '@./b.md\n');
    writeFileSync(`${ws}/b.md`, '@./GEMINI.md\n');
    writeFileSync(`${ws}/x.ts`, '');
    const w = whatLoads(new DiskFileHost([ws]), `${ws}/x.ts`, { tokenizer: o200k, agent: 'gemini' });
    expect(w.agents[0].files.map((f) => f.path.slice(ws.length + 1))).toEqual(['GEMINI.md', 'a.md', 'b.md']);
    expect(w.findings.map((f) => f.message)).toEqual([expect.stringContaining('closes an import cycle (GEMINI.md → a.md → b.md → GEMINI.md)')]);
  });

  it('thousands of tag characters and bidi controls are found, summarised past the cap, in linear time', () => {
    const tag = String.fromCodePoint(0xe0041);
    const text = `${'Be kind. \u202Egnp.exe\u202C '.repeat(300)}${tag.repeat(50_000)}\n`;
    const f = parseTemplate('/ws/CLAUDE.md', text).findings.filter((x) => x.rule === 'hidden-characters');
    expect(f.length).toBeLessThanOrEqual(101);
    expect(f[0].severity).toBe('error');
  });

  it('the outline of a 1 MB file of brackets, backticks and headings stays linear', () => {
    const text = '[`](#'.repeat(200_000) + '\n# h\n'.repeat(10_000);
    const o = outlineAgentFile(new DiskFileHost(['/nonexistent-root']), '/nonexistent-root/AGENTS.md', text, o200k);
    expect(o.sections).toHaveLength(10_000);
  });
});

describe('a link to a FIFO (in a child process with a timeout)', () => {
  let script = '';
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-agents-fifo-'));
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import { DiskFileHost } from ${JSON.stringify(resolve(__dirname, '../../src/node/fileHost.ts'))};
import { whatLoads } from ${JSON.stringify(resolve(__dirname, '../../src/core/language/index.ts'))};
import { getTokenizer } from ${JSON.stringify(resolve(__dirname, '../../src/core/tokens/index.ts'))};
const [root] = process.argv.slice(2);
const w = whatLoads(new DiskFileHost([root]), root + '/a.ts', { tokenizer: getTokenizer('o200k_base')! });
process.stdout.write(JSON.stringify(w));
`,
    );
    script = join(dir, 'entry.js');
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
  });

  it('is reported where it is written and never opened', () => {
    const { ws } = sandbox();
    const fifo = spawnSync('mkfifo', [`${ws}/pipe.md`]);
    expect(fifo.status).toBe(0);
    mkdirSync(`${ws}/.cursor/rules`, { recursive: true });
    writeFileSync(`${ws}/.cursor/rules/r.mdc`, '---\nalwaysApply: true\n---\nRead @pipe.md first.\n');
    writeFileSync(`${ws}/CLAUDE.md`, '@pipe.md\n');
    writeFileSync(`${ws}/AGENTS.md`, 'See [pipe](pipe.md).\n');
    writeFileSync(`${ws}/a.ts`, '');
    const r = spawnSync(process.execPath, [script, ws], { encoding: 'utf8', timeout: 20_000 });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(0);
    const w = JSON.parse(r.stdout) as { agents: Array<{ agent: string; files: Array<{ path: string }> }>; findings: Array<{ path: string; message: string; span: { start: number } }> };
    for (const a of w.agents) expect(a.files.map((f) => f.path)).not.toContain(`${ws}/pipe.md`);
    const where = w.findings.map((f) => `${f.path.slice(ws.length + 1)}@${f.span.start}`).sort();
    expect(where).toEqual(['.cursor/rules/r.mdc@6'.replace('@6', `@${'---\nalwaysApply: true\n---\nRead @'.length}`), 'CLAUDE.md@1']);
    expect(w.findings[0].message).toContain('not a regular file');
  });
});
