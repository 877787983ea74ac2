/**
 * The README's quick starts do what the README says, run through the built CLI and the service:
 * its template and context config check without errors or warnings, `ctxlens budget` prints the equation it shows,
 * `assemble --format text` prints the decision it quotes, and the request body of its `curl`
 * example gets the answer it describes. The library's quick start is run from the packed tarball
 * by test/lib/pack.test.ts (docs/library.md).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt, startService } from '../service/harness';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'ctxlens-readme-'));

function ctxlens(args: string[], cwd = REPO) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The body of the fenced block that starts with `start` under the heading `heading`. */
function block(heading: string, lang: string, start = ''): string {
  const at = readme.indexOf(`\n${heading}\n`);
  expect(at, heading).toBeGreaterThan(0);
  const re = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```', 'g');
  re.lastIndex = at;
  for (let m = re.exec(readme); m; m = re.exec(readme)) if (m[1]!.startsWith(start)) return m[1]! + '\n';
  throw new Error(`no \`\`\`${lang} block starting with '${start}' under ${heading}`);
}

beforeAll(() => ensureCliBuilt());
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('README quick starts', () => {
  it('the template and its context config check without errors or warnings', () => {
    const dir = join(tmp, 'prompts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'support.prompt'), block('## A template and its context', 'handlebars'));
    writeFileSync(join(dir, 'support.context.yaml'), block('## A template and its context', 'yaml', '# support.context.yaml'));
    const r = ctxlens(['check', 'prompts', '--format', 'json'], tmp);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Infos (a model's announced retirement, say) may come and go with the model data; the
    // template must have nothing to fix.
    const report = JSON.parse(r.stdout) as { summary: { errors: number; warnings: number } };
    expect(report.summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('`ctxlens budget` prints the equation the README shows', () => {
    const shown = block('### The CLI', 'text').trim();
    const r = ctxlens(['budget', 'examples/sdk-qa/sdk-qa.prompt']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(shown);
  });

  it('`ctxlens assemble --format text` prints the decision the README quotes', () => {
    const quoted = /\(`(omitted evidence ev_0077: [^`]+)`\)/.exec(readme.replace(/\n(?!\n)/g, ' '))?.[1];
    expect(quoted).toBeDefined();
    const r = ctxlens(['assemble', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'post-retries', '--format', 'text']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(quoted!);
  });

  it('the service answers the curl example as the README describes', async () => {
    const sh = block('### The service', 'sh');
    expect(sh).toMatch(/^ctxlens serve --root examples\b/);
    const body = JSON.parse(/-d '([\s\S]*?)'\n/.exec(sh)![1]!) as Record<string, unknown>;
    const service = await startService(['--root', 'examples']);
    try {
      const res = await fetch(`${service.url}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { context_id: string; token_count: number; evidence: string[]; selection_log: Array<{ evidence_id: string; decision: string; reasons: string[] }> };
      expect(answer.context_id).toMatch(/^ctx_[0-9a-f]{32}$/);
      expect(answer.token_count).toBeGreaterThan(0);
      expect(answer.evidence).toEqual(['ev_0192']);
      expect(answer.selection_log.find((e) => e.evidence_id === 'ev_0077')).toMatchObject({ decision: 'rejected', reasons: ['filtered:version'] });
    } finally {
      await service.stop();
    }
  });
});
