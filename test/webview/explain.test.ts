/**
 * The preview's reasons and conflicts in words: the language server's own snapshot of the SDK
 * example (previewReply over a real analysis) rendered by the built webview bundle in Chromium.
 * The omitted items read the server's sentences (src/core/reasonText.ts), kept items show
 * their reason codes with the sentence as a tooltip, and the Conflicts section lists the labelled
 * customer comment and the 3.9 docs resolved by the version filter.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import { reasonText } from '../../src/core/reasonText';
import { DiskFileHost } from '../../src/node/fileHost';
import { previewReply } from '../../src/server/preview';
import { launchChromium } from '../support/chromium';
import { REPO, ensureWebviewBundle } from './bundle';
import type { HostServer, Panel } from './harness';
import { openPanel, startHostServer } from './harness';
import { withSeq } from './snapshots';

vi.setConfig({ testTimeout: 60_000 });

const EXAMPLES = resolve(__dirname, '../../examples');
let browser: Browser;
let server: HostServer;
let panel: Panel;

beforeAll(async () => {
  await ensureWebviewBundle();
  server = await startHostServer();
  browser = await launchChromium();
  const a = analyzeTemplate(new DiskFileHost([EXAMPLES]), join(EXAMPLES, 'sdk-qa/sdk-qa.prompt'))!;
  const reply = previewReply({ analysis: a, uri: 'file:///sdk-qa.prompt', version: 1, models: [], readFile: () => undefined });
  if (!('snapshot' in reply)) throw new Error('no snapshot');
  panel = await openPanel(browser, server);
  await panel.post({ type: 'snapshot', snapshot: withSeq(reply.snapshot, 1) });
});

afterAll(async () => {
  if (panel) {
    const rec = await panel.record();
    expect(panel.errors).toEqual([]);
    expect(rec.violations).toEqual([]);
    await panel.close();
  }
  await browser?.close();
  await server?.close();
});

describe('reasons and conflicts in the preview', () => {
  it('omitted items read the server sentence next to the code', async () => {
    const rows = await panel.page.locator('.omitted-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.lastElementChild?.textContent));
    expect(rows).toEqual([`${reasonText('filtered:version')} filtered:version`, `${reasonText('duplicate-of:ev_0240')} duplicate-of:ev_0240`]);
  });

  it('kept items carry their reason codes, the sentence as the tooltip, and the conflict badge', async () => {
    const row = panel.page.locator('.kept-table tbody tr[data-item="ev_0192"]');
    expect(await row.locator('.badge.reason').allTextContents()).toEqual(['high_relevance', 'exact_version', 'official_source', 'high_authority']);
    expect(await row.locator('.badge.reason').first().getAttribute('title')).toBe(reasonText('high_relevance'));
    expect(await row.locator('.badge.warn').textContent()).toBe('conflicts with ev_0255');
    expect(await panel.page.locator('.kept-table tbody tr[data-item="ev_0203"] .badge.warn').count()).toBe(0);
  });

  it('lists each conflict with its resolution', async () => {
    expect(await panel.page.locator('#sec-conflicts .section-head').textContent()).toContain('2 found · 1 labelled');
    const items = await panel.page.locator('.conflicts-list li').evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-resolution'), li.textContent]));
    expect(items).toHaveLength(2);
    expect(items[0]).toEqual(['labelled', expect.stringContaining('evidence Claims on post-retry-safety disagree: ev_0192')]);
    const shots = join(REPO, 'test-results', 'webview');
    mkdirSync(shots, { recursive: true });
    await panel.page.locator('#sec-conflicts').screenshot({ path: join(shots, 'conflicts.png') });
    await panel.page.locator('#sec-kept').screenshot({ path: join(shots, 'kept-reasons.png') });
    expect(items[1]).toEqual(['filtered', 'evidence Versions of one source disagree: ev_0192 (4.2) and ev_0077 (3.9). ev_0077 is out of scope (filtered:version, not the requested version), so the model never sees it and ev_0192 carries no conflict note.']);
  });
});
