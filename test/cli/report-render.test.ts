/**
 * The Markdown of `ctxlens report --format markdown` as GitHub shows it: rendered to HTML with
 * micromark and its GFM extension (the CommonMark + GFM grammar of GitHub's cmark-gfm) and opened in
 * headless Chromium. The summary table's cells hold the JSON report's figures, there is one
 * collapsible section per changed request, opening one shows the first differing line, and hostile
 * fixture text (HTML, backticks, pipes, a mention) stays text. With UPDATE_SCREENSHOTS=1 the page is
 * saved as docs/images/report-comment.png (the README's picture); otherwise under test-results/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { launchChromium } from '../support/chromium';

const ROOT = resolve(__dirname, '../..');
const CLI = process.env.CTXLENS_CLI ?? resolve(ROOT, 'dist/cli.js');

function ctxlens(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

const HOSTILE = 'Why? </details><script>window.__pwned = 1</script> @octocat ``` | x | <img src=x onerror="window.__pwned = 2">';

const template = (rule: string) => `---
model: gpt-4o
---
{{role "system"}}
You answer billing questions for Acme.
${rule}
{{role "user"}}
{{#each evidence}}{{this}}{{/each}}
{{question}}
`;
const config = (budget: number) => `model: gpt-4o
window: 16000
output: 1000
requests_per_day: 50000
slots:
  evidence: { kind: evidence, trust: untrusted, budget: ${budget}, label: DOCS, pack: skip }
  question: { kind: user, trust: untrusted, required: true, budget: 400 }
fixtures: [fixtures/*.fixture.yaml]
`;
const fixture = (q: string) =>
  `slots:\n  question: ${JSON.stringify(q)}\n  evidence:\n    - { id: kb_refunds, relevance: 0.9, text: "Refunds are issued to the original payment method within 5 business days." }\n    - { id: kb_invoices, relevance: 0.4, text: "${'Invoices list every line item with its tax rate and the billing period it covers. '.repeat(6)}" }\n`;

/** GitHub's comment look, near enough for a picture: its font stack, table rules, code and details. */
const CSS = `
body { font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; background: #fff; margin: 0; padding: 16px 24px; width: 860px; }
h3 { font-size: 1.25em; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 0 0 16px; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { font: 85% ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace; background: rgba(129,139,152,.12); padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; overflow: auto; }
pre code { background: none; padding: 0; }
details { margin: 0 0 8px; }
summary { cursor: pointer; }
ul { padding-left: 2em; }
`;

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('ctxlens report --format markdown in Chromium', () => {
  it('renders the summary table, one section per changed request, and keeps hostile text as text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxlens-report-md-'));
    git(dir, 'init', '-q', '-b', 'main');
    write(dir, {
      'billing/answer.prompt': template('Answer from the documents only.'),
      'billing/answer.context.yaml': config(2000),
      'billing/fixtures/refund.fixture.yaml': fixture('How long does a refund take?'),
      'billing/fixtures/invoice.fixture.yaml': fixture('Where do I find the tax rate on my invoice?'),
      'chat/chat.prompt': template('Be friendly.'),
      'chat/chat.context.yaml': config(2000),
      'chat/fixtures/hostile.fixture.yaml': fixture('What is my plan?'),
      'billing/old.prompt': '---\nmodel: gpt-4o\n---\nSummarise {{text}}\n',
    });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    write(dir, { 'billing/answer.prompt': template('Answer from the documents only, and name the document you used.'), 'billing/answer.context.yaml': config(60), 'chat/fixtures/hostile.fixture.yaml': fixture(HOSTILE) });
    git(dir, 'mv', 'billing/old.prompt', 'billing/summary.prompt');
    git(dir, 'commit', '-q', '-am', 'change');

    const json = JSON.parse(ctxlens(['report', '--base', 'HEAD~1', '--format', 'json'], dir).stdout);
    const md = ctxlens(['report', '--base', 'HEAD~1', '--format', 'markdown', '--max-token-increase', '500', '--fail-on', 'new-errors'], dir);
    expect(md.code).toBe(0);
    const html = micromark(md.stdout, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    const page = await browser.newPage({ viewport: { width: 900, height: 600 }, deviceScaleFactor: 1 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>${CSS}</style></head><body>${html}</body></html>`);

    expect(await page.locator('h3').first().innerText()).toBe('Context Lens: what this change does to every request');
    const head = await page.locator('table').first().locator('th').allInnerTexts();
    expect(head).toEqual(['Requests changed', 'Input tokens Δ', 'Cost / day Δ', 'New errors']);
    const cells = await page.locator('table').first().locator('tbody td').allInnerTexts();
    const s = json.summary;
    expect(cells[0]).toBe(`${s.requests_changed} of ${s.requests}`);
    expect(cells[1]).toContain(`${s.input_tokens.delta > 0 ? '+' : '−'}${Math.abs(s.input_tokens.delta).toLocaleString('en-US')}`);
    expect(cells[3]).toBe(String(s.new_errors));
    expect(s.requests_changed).toBe(3);
    expect(await page.getByText('renamed', { exact: false }).first().innerText()).toContain('billing/old.prompt');

    const sections = page.locator('details');
    const summaries = await page.locator('details > summary').allInnerTexts();
    const perRequest = summaries.filter((t) => t.includes(' × '));
    expect(perRequest).toHaveLength(3);
    expect(perRequest.some((t) => t.startsWith('billing/answer.prompt × refund'))).toBe(true);
    // Closed by default: the first differing line shows once a section is opened.
    const refund = sections.filter({ hasText: 'billing/answer.prompt × refund' });
    expect(await refund.locator('pre').isVisible()).toBe(false);
    await refund.locator('summary').click();
    const diff = await refund.locator('pre').innerText();
    expect(diff).toContain('- Answer from the documents only.');
    expect(diff).toContain('+ Answer from the documents only, and name the document you used.');
    expect(await refund.innerText()).toContain('kb_invoices dropped');

    // The hostile question went into the request; its text is shown, never run or parsed as HTML.
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('script, img, a').count()).toBe(0);
    const hostile = sections.filter({ hasText: 'chat/chat.prompt × hostile' });
    await hostile.locator('summary').click();
    const shown = await hostile.locator('pre').innerText();
    expect(shown).toContain('+ Why? </details><script>window.__pwned = 1</script> @octocat ``` | x | <img');
    expect(errors).toEqual([]);

    await refund.locator('summary').scrollIntoViewIfNeeded();
    const target = process.env.UPDATE_SCREENSHOTS === '1' ? resolve(ROOT, 'docs/images/report-comment.png') : resolve(ROOT, 'test-results/report-comment.png');
    mkdirSync(resolve(target, '..'), { recursive: true });
    await hostile.locator('summary').click();
    await page.screenshot({ path: target, fullPage: true });
    await page.close();
  });
});
