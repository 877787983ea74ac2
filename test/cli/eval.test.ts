/**
 * `ctxlens eval`, `ctxlens variants` and `ctxlens diff` run as the built binary, the way CI runs
 * them: exit codes, JSON shapes, the seed numbers, and the HTML report opened in headless Chromium
 * (no console errors, no network request, no CSP violation).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';

const ROOT = resolve(__dirname, '../..');
/** The binary under test; CTXLENS_CLI points at another build (a clean tree while the checkout is mid-change). */
const CLI = process.env.CTXLENS_CLI ?? resolve(ROOT, 'dist/cli.js');
const CWD = process.env.CTXLENS_CLI ? resolve(CLI, '../..') : ROOT;

function ctxlens(args: string[], opts: { cwd?: string } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? CWD, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxlens-eval-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
});

/** Seed 001's cost example as a workspace: a 1,500-token request (the 4-characters rule) at $0.50 per million. */
const SEED = {
  'q.prompt': '---\nmodel: example-model\n---\n{{question}}',
  'q.context.yaml':
    'model: example-model\nmodels: { example-model: { window: 8000, tokenizer: chars4 } }\nprices: { example-model: { input: 0.50, as_of: "2026-01-01", source: seed 001 } }\nrequests_per_day: 100000\nslots:\n  question: { kind: user, trust: untrusted, required: true }\nfixtures: [fixtures/*.fixture.yaml]\n',
  // 5,997 characters: (5,997 + 3) // 4 = 1,500 tokens, with or without a trailing line break.
  'fixtures/q.fixture.yaml': `slots:\n  question: "${'abcd'.repeat(1499)}a"\n`,
  'q.eval.yaml': 'template: q.prompt\ncases:\n  - { id: seed, fixture: q, required_facts: ["abcdabcd"], thresholds: { max_cost: 0.00075, max_tokens: 1500 } }\n',
};

describe('ctxlens eval', () => {
  it("reproduces seed 001's cost: 1,500 input tokens at $0.50 per million = $0.00075; 100,000 a day = $75", () => {
    const dir = workspace(SEED);
    const r = ctxlens(['eval', 'q.eval.yaml', '--format', 'json'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    const c = j.files[0].cases[0].metrics;
    expect(c.input_tokens).toBe(1500);
    expect(c.cost.input).toBe(0.00075);
    expect(c.cost.per_day.input).toBe(75);
    expect(j.files[0].totals).toMatchObject({ mean_cost: 0.00075, cost_per_day: 75, requests_per_day: 100000 });
    const text = ctxlens(['eval', 'q.eval.yaml'], { cwd: dir });
    expect(text.stdout).toContain('$0.00075');
    expect(text.stdout).toMatch(/per day at 100,000 requests: \$75\b/);
  });

  it('fails (exit 1) when a threshold is not met, and says which', () => {
    const dir = workspace({ ...SEED, 'q.eval.yaml': SEED['q.eval.yaml'].replace('max_cost: 0.00075', 'max_cost: 0.0007') });
    const r = ctxlens(['eval', 'q.eval.yaml'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/seed .* FAIL/);
    expect(r.stdout).toMatch(/threshold max_cost: input cost \$0\.00075 > \$0\.0007/);
    expect(r.stderr).toMatch(/0 of 1 case\(s\) pass/);
  });

  it('exits 2 on an eval file that does not parse, with the line and column', () => {
    const dir = workspace({ ...SEED, 'q.eval.yaml': 'template: q.prompt\ncases:\n  - id: seed\n    fixtrue: q\n' });
    const r = ctxlens(['eval', 'q.eval.yaml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^q\.eval\.yaml:4:5 error eval-invalid .*fixtrue/m);
  });

  it('exits 2 without eval files, and on a flag it does not know', () => {
    const dir = workspace({ 'a.txt': 'x' });
    expect(ctxlens(['eval'], { cwd: dir }).code).toBe(2);
    const r = ctxlens(['eval', '--format', 'xml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--format must be one of text, json, html/);
  });

  it('runs the eval sets of the examples: every case passes, with the cacheable prefix and cost', () => {
    const r = ctxlens(['eval', 'examples/', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.files.map((f: { path: string }) => f.path)).toEqual(['examples/langchain-support/support.eval.yaml', 'examples/refund-support/refund.eval.yaml', 'examples/sdk-qa/sdk-qa.eval.yaml']);
    expect(j.summary).toEqual({ files: 3, cases: 6, passed: 6, failed: 0 });
    for (const f of j.files) {
      expect(f.cache_prefix_tokens).toBeGreaterThan(100);
      expect(f.totals.evidence_coverage).toBe(1);
      expect(f.totals.mean_cost).toBeGreaterThan(0);
      for (const c of f.cases) for (const k of ['retrieval_recall', 'selection_recall', 'context_precision', 'evidence_coverage', 'input_tokens', 'cost']) expect(c.metrics).toHaveProperty(k);
    }
  });

  it('--ablate prints the ablation table; --ablation picks one', () => {
    const r = ctxlens(['eval', 'examples/sdk-qa/sdk-qa.eval.yaml', '--ablate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ablation\s+cases\s+coverage\s+Δ\s+selection/);
    for (const id of ['slot:evidence', 'filter:version', 'dedup', 'scoring', 'labels', 'order', 'no-migration-guide', 'no-tool-result']) expect(r.stdout).toMatch(new RegExp(`^${id}\\s`, 'm'));
    const one = JSON.parse(ctxlens(['eval', 'examples/sdk-qa/sdk-qa.eval.yaml', '--ablation', 'no-migration-guide', '--format', 'json']).stdout);
    const abl = one.files[0].ablations;
    expect(abl.map((a: { id: string }) => a.id)).toEqual(['no-migration-guide']);
    expect(abl[0].totals.evidence_coverage).toBeLessThan(1);
  });
});

describe('the HTML report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('renders on its own: no console errors, no network requests, no CSP violations', async () => {
    const dir = workspace({});
    const out = join(dir, 'report.html');
    const r = ctxlens(['eval', 'examples/', '--ablate', '--format', 'html', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const page = await browser.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (req) => requests.push(req.url()));
    const url = pathToFileURL(out).href;
    await page.goto(url, { waitUntil: 'load' });
    const violations = await page.evaluate(
      () =>
        new Promise<number>((done) => {
          let n = 0;
          document.addEventListener('securitypolicyviolation', () => n++);
          setTimeout(() => done(n), 300);
        }),
    );
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    expect(violations).toBe(0);
    expect(await page.title()).toBe('ctxlens eval — 6/6 cases pass');
    expect(await page.locator('svg').count()).toBe(9);
    expect(await page.locator('section').count()).toBe(3);
    // The charts have size: each bar chart draws one bar per case (langchain-support has one, refund-support two).
    const bars = await page.locator('section').evaluateAll((ss) => ss.map((s) => s.querySelector('figure')!.querySelectorAll('rect.bar').length));
    expect(bars).toEqual([1, 2, 3]);
    const box = await page.locator('svg').first().boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    // At 320 px (WCAG reflow) the page does not scroll sideways: charts scale down, and tables
    // scroll inside frames that are named regions and tab stops.
    await page.setViewportSize({ width: 320, height: 800 });
    const narrow = await page.evaluate(() => {
      const doc = document.scrollingElement as HTMLElement;
      const frames = Array.from(document.querySelectorAll<HTMLElement>('table')).map((t) => t.parentElement!);
      return {
        sideways: doc.scrollWidth - doc.clientWidth,
        charts: Array.from(document.querySelectorAll('svg')).filter((s) => s.getBoundingClientRect().right > window.innerWidth).length,
        frames: frames.map((f) => ({ scrolls: f.scrollWidth > f.clientWidth, tabindex: f.getAttribute('tabindex'), role: f.getAttribute('role'), named: (f.getAttribute('aria-label') ?? '').length > 0 })),
      };
    });
    expect(narrow.sideways).toBe(0);
    expect(narrow.charts).toBe(0);
    expect(narrow.frames.length).toBeGreaterThan(0);
    expect(narrow.frames.some((f) => f.scrolls)).toBe(true);
    for (const f of narrow.frames) expect(f).toMatchObject({ tabindex: '0', role: 'region', named: true });
    await page.close();
  }, 60_000);
});

describe('ctxlens variants', () => {
  it('writes one request per position as batch lines, everything else held constant', () => {
    const r = ctxlens(['variants', 'examples/sdk-qa/sdk-qa.prompt', '--move', 'ev_0192', '--positions', 'start,middle,end', '--format', 'jsonl']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.custom_id)).toEqual(['post-retries-ev_0192-start', 'post-retries-ev_0192-middle', 'post-retries-ev_0192-end']);
    for (const l of lines) expect(l).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o', max_completion_tokens: 2000 } });
    const order = (l: { body: { messages: Array<{ content: string }> } }) => [...l.body.messages.at(-1)!.content.matchAll(/\[EVIDENCE (ev_\d+)\]/g)].map((m) => m[1]);
    expect(order(lines[0])[0]).toBe('ev_0192');
    expect(order(lines[1]).indexOf('ev_0192')).toBe(2);
    expect(order(lines[2]).at(-1)).toBe('ev_0192');
    // Everything before the evidence is the same in every variant.
    const head = (l: { body: { messages: Array<{ content: string }> } }) => JSON.stringify(l.body.messages.slice(0, -1));
    expect(new Set(lines.map(head)).size).toBe(1);
    expect(new Set(lines.map((l) => order(l).sort().join())).size).toBe(1);
  });

  it('writes Anthropic Message Batches lines and one file per variant', () => {
    const dir = workspace({});
    const r = ctxlens(['variants', 'examples/sdk-qa/sdk-qa.prompt', '--move', 'ev_0203', '--provider', 'anthropic', '--format', 'jsonl', '--out', dir]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines[0].params).toMatchObject({ model: 'gpt-4o', max_tokens: 2000 });
    expect(typeof lines[0].params.system).toBe('string');
    expect(readdirSync(dir).sort()).toEqual(['post-retries-ev_0203-end.json', 'post-retries-ev_0203-middle.json', 'post-retries-ev_0203-start.json']);
    expect(JSON.parse(readFileSync(join(dir, 'post-retries-ev_0203-start.json'), 'utf8'))).toEqual(lines[0].params);
  });

  it('refuses an item that is not in the request (exit 1) and a missing --move (exit 2)', () => {
    const r = ctxlens(['variants', 'examples/sdk-qa/sdk-qa.prompt', '--move', 'ev_0077']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ev_0077 is not in the request \(evidence: filtered:version\)/);
    expect(ctxlens(['variants', 'examples/sdk-qa/sdk-qa.prompt']).code).toBe(2);
  });
});

describe('ctxlens diff', () => {
  it('compares two fixtures: kept and omitted per slot, token and cost deltas, the first differing message', () => {
    const r = ctxlens(['diff', 'examples/sdk-qa/sdk-qa.prompt', '--fixture', 'post-retries', '--fixture', 'rate-limit', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.a.fixture).toBe('post-retries');
    expect(j.b.fixture).toBe('rate-limit');
    const ev = j.slots.find((s: { slot: string }) => s.slot === 'evidence');
    expect(ev.only_b.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining(['ev_0194', 'ev_0215']));
    expect(j.input_tokens.delta).toBe(j.input_tokens.b - j.input_tokens.a);
    expect(j.cost.delta).toBeLessThan(0);
    expect(j.first_difference.message).toBe(1);
  });

  it('compares a budget variant: items dropped for the smaller budget, with their reason', () => {
    const r = ctxlens(['diff', 'examples/sdk-qa/sdk-qa.prompt', '--budget', 'evidence=400']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/B: fixture post-retries · gpt-4o · budget evidence=400/);
    expect(r.stdout).toMatch(/evidence: ev_0203 only in A \(B: over-slot-budget\)/);
    expect(r.stdout).toMatch(/first differing message: #\d+ \(user\)/);
  });

  it('compares two models: the same request at two prices', () => {
    const j = JSON.parse(ctxlens(['diff', 'examples/sdk-qa/sdk-qa.prompt', '--model', 'gpt-4o', '--model', 'gpt-4o-mini', '--format', 'json']).stdout);
    expect(j.input_tokens.delta).toBe(0);
    expect(j.cost.b).toBeLessThan(j.cost.a);
    expect(j.same_messages).toBe(true);
  });

  it('exits 2 when there is nothing to compare or a budget names no slot', () => {
    expect(ctxlens(['diff', 'examples/sdk-qa/sdk-qa.prompt']).code).toBe(2);
    const r = ctxlens(['diff', 'examples/sdk-qa/sdk-qa.prompt', '--budget', 'nope=3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/'nope' is neither a slot/);
  });
});

describe('cost in ctxlens assemble and the help', () => {
  it('the trace of assemble --format json carries the cost of the request', () => {
    const j = JSON.parse(ctxlens(['assemble', 'examples/sdk-qa/sdk-qa.prompt', '--format', 'json']).stdout);
    expect(j.trace.cost).toMatchObject({ currency: 'USD', model: 'gpt-4o', input_tokens: j.trace.input_tokens, output_reserved: 2000 });
    // The price is the registry's dated, sourced entry, as `ctxlens models` lists it.
    const listed = JSON.parse(ctxlens(['models', 'gpt-4o', '--format', 'json']).stdout);
    const entry = (Array.isArray(listed) ? listed : listed.models).find((m: { name: string }) => m.name === 'gpt-4o');
    expect(j.trace.cost.price).toMatchObject({ ...entry.price, origin: 'builtin' });
    expect(j.trace.cost.price.as_of).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
    expect(j.trace.cost.price.source).toContain('openai');
  });

  it('lists the new commands in the help', () => {
    const r = ctxlens(['--help']);
    for (const c of ['ctxlens eval', 'ctxlens variants', 'ctxlens diff']) expect(r.stdout).toContain(c);
  });
});
