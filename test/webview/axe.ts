/**
 * axe-core in the webview tier: injects node_modules/axe-core/axe.min.js into a panel page and runs
 * it with the WCAG 2.1 A and AA rules. The script goes in through the DevTools protocol
 * (`page.evaluate`), which the page's CSP does not govern, so the panel keeps its real policy and
 * the CSP violation counter stays meaningful.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { REPO } from './bundle';

const AXE_SOURCE = readFileSync(join(REPO, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** The WCAG 2.0/2.1 level A and AA tags of axe-core. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string; summary: string }>;
}

export async function injectAxe(page: Page): Promise<void> {
  const has = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  if (!has) await page.evaluate(AXE_SOURCE);
}

/**
 * Runs axe over the whole document. Messages and tables use `content-visibility: auto` so that
 * large requests stay fast; for the audit every element is laid out, so nothing off screen
 * escapes the contrast rule.
 */
export async function runAxe(page: Page): Promise<AxeViolation[]> {
  await injectAxe(page);
  return page.evaluate(async (tags) => {
    for (const e of Array.from(document.querySelectorAll<HTMLElement>('.msg, .table-wrap'))) e.style.contentVisibility = 'visible';
    type Result = { violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> }> };
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<Result> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.map(String).join(' '), summary: (n.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 300) })),
    }));
  }, [...WCAG_TAGS]);
}

/** One line per violation with its first nodes, for a failure message a reader can act on. */
export function describeViolations(list: readonly AxeViolation[]): string[] {
  return list.map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes): ${v.nodes.slice(0, 4).map((n) => `${n.target} — ${n.summary}`).join(' | ')}`);
}
