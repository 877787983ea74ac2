/**
 * Owns the end-to-end harness: a real VS Code workbench (code-server, installed by
 * scripts/prereqs.mjs) with the packaged .vsix installed into a throw-away profile, opened on a temp
 * copy of examples/ in headless Chromium, plus the user-level actions the scenarios need (quick open,
 * command palette, Problems count, code lens texts, webview text, quick fix, screenshots).
 * Every wait is a bounded poll on what the user would see; nothing sleeps to pass time.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import {
  REPO_ROOT,
  createProfile,
  installExtension,
  removeProfile,
  startCodeServer,
} from '../../scripts/code-server.mjs';
import type { RunningCodeServer } from '../../scripts/code-server.mjs';
import { BAML_PLATFORMS, ensureVsix, isVsixStale, packageExtension, vsixPath } from '../../scripts/package.mjs';
import { ensurePrereqs } from '../../scripts/prereqs.mjs';
import { launchChromium } from '../support/chromium';

export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-results', 'e2e');

export interface PollOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Calls `probe` until it returns something other than undefined/null/false, and returns that.
 * Throws after `timeoutMs` with `what` and the last value or error seen, so a failure says why.
 */
export async function poll<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 20_000, intervalMs = 200 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as T;
      last = v;
    } catch (err) {
      last = err instanceof Error ? err.message : err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface Workbench {
  page: Page;
  browser: Browser;
  server: RunningCodeServer;
  /** Absolute path of the workspace folder (a temp copy; quick fixes may change it). */
  workspace: string;
  /** Messages the page logged as errors, for diagnosing failures. */
  pageErrors: string[];
  close(): Promise<void>;
}

export interface WorkbenchOptions {
  /** Folder copied into the workspace; defaults to the repository's examples/ (may be absent). */
  source?: string;
  /**
   * A platform's .vsix (`vsce --target`, e.g. hostVsixTarget()) instead of the universal one: it
   * carries BAML's native runtime, so .baml files render in the installed extension.
   */
  target?: string;
  /** Extra files written into the workspace copy, relative path -> content. */
  files?: Record<string, string>;
  settings?: Record<string, unknown>;
  /** More .vsix files installed into the profile after Context Lens's (e.g. the suite runner). */
  extraExtensions?: string[];
  /**
   * Environment variables for code-server, and so for the extension host it starts when the
   * browser connects (e.g. where the suite runner writes its results).
   */
  env?: Record<string, string>;
}

/**
 * Runs `fn` with `env` added to process.env (child processes spawned meanwhile inherit it) and puts
 * the previous values back afterwards.
 */
async function withEnv<T>(env: Record<string, string> | undefined, fn: () => Promise<T>): Promise<T> {
  if (!env || Object.keys(env).length === 0) return fn();
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * The `vsce --target` of this machine when its BAML runtime package is installed (the platform
 * .vsix carries it, scripts/package.mjs), else undefined (the universal .vsix, without BAML).
 */
export function hostVsixTarget(): string | undefined {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const os = process.platform === 'linux' && !report?.header?.glibcVersionRuntime ? 'alpine' : process.platform;
  const target = `${os}-${process.arch}`;
  const platform = BAML_PLATFORMS[target];
  if (!platform) return undefined;
  return existsSync(join(REPO_ROOT, 'node_modules', '@boundaryml', `baml-${platform}`, `baml.${platform}.node`)) ? target : undefined;
}

/** The platform .vsix for `target`, packaged only when one of its inputs changed. */
function ensurePlatformVsix(target: string, log: (m: string) => void): string {
  const out = vsixPath(target);
  if (!isVsixStale(out)) {
    log(`package: ${out} is up to date`);
    return out;
  }
  return packageExtension({ target, log }).path;
}

/**
 * Installs prerequisites if needed, packages the .vsix if stale, installs it into a fresh profile,
 * starts code-server and opens the workspace copy in Chromium; resolves once the workbench renders.
 */
export async function startWorkbench(opts: WorkbenchOptions = {}): Promise<Workbench> {
  const t0 = Date.now();
  const log = (m: string): void => void process.stderr.write(`[e2e] ${m}\n`);
  const phase = (m: string): void => log(`${m} (+${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  await ensurePrereqs({ chromium: true, log });
  const vsix = opts.target ? ensurePlatformVsix(opts.target, log) : ensureVsix({ log });
  phase('prerequisites and .vsix ready');
  const profile = createProfile({ settings: opts.settings });
  let server: RunningCodeServer | undefined;
  let browser: Browser | undefined;
  try {
    installExtension(profile, vsix);
    for (const extra of opts.extraExtensions ?? []) installExtension(profile, extra);
    phase('extension installed');
    const workspace = join(profile.root, 'workspace');
    const source = opts.source ?? join(REPO_ROOT, 'examples');
    mkdirSync(workspace, { recursive: true });
    if (existsSync(source)) cpSync(source, workspace, { recursive: true });
    for (const [rel, content] of Object.entries(opts.files ?? {})) {
      mkdirSync(dirname(join(workspace, rel)), { recursive: true });
      writeFileSync(join(workspace, rel), content);
    }
    server = await withEnv(opts.env, () => startCodeServer({ profile }));
    phase(`code-server listening on ${server.baseUrl}`);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(server.folderUrl(workspace), { timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    // The workbench is usable once the status bar and the explorer of the folder have rendered.
    await page.locator('[id="status.problems"]').waitFor({ state: 'visible', timeout: 60_000 });
    phase('workbench rendered');
    const srv = server;
    const brw = browser;
    return {
      page,
      browser: brw,
      server: srv,
      workspace,
      pageErrors,
      async close() {
        await brw.close().catch(() => undefined);
        await srv.stop();
        mkdirSync(ARTIFACTS_DIR, { recursive: true });
        if (existsSync(profile.logFile)) copyFileSync(profile.logFile, join(ARTIFACTS_DIR, 'code-server.log'));
        removeProfile(profile);
      },
    };
  } catch (err) {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    if (existsSync(profile.logFile)) copyFileSync(profile.logFile, join(ARTIFACTS_DIR, 'code-server.log'));
    removeProfile(profile);
    throw err;
  }
}

/** Saves a full-page screenshot to test-results/e2e/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Closes whatever quick input / widget is open so the next keystroke goes to the workbench. */
export async function dismissQuickInput(page: Page): Promise<void> {
  const qi = page.locator('.quick-input-widget');
  if (await qi.isVisible().catch(() => false)) {
    await page.keyboard.press('Escape');
    await poll('quick input to close', async () => !(await qi.isVisible()), { timeoutMs: 5_000 });
  }
}

/** Label of the active tab of the active editor group (the preview may occupy another group). */
export async function activeTabLabel(page: Page): Promise<string> {
  return (await page.locator('.editor-group-container.active .tab.active').first().getAttribute('aria-label').catch(() => null)) ?? '';
}

/**
 * Opens a workspace file like a user: Ctrl+P, type its name, Enter; waits until its tab is active.
 * Right after startup the file index may still be building, so the name is typed again every few
 * seconds until the file is listed (bounded).
 */
export async function openFile(page: Page, fileName: string): Promise<void> {
  await dismissQuickInput(page);
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  const base = fileName.split('/').pop() ?? fileName;
  // Enter opens the focused row; the list updates after typing, so wait until that row is the file
  // (a recently opened file can be focused for a moment first).
  const row = page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: base }).first();
  let typedAt = 0;
  let attempt = 0;
  await poll(`quick open to list ${fileName}`, async () => {
    if (!(await input.isVisible())) {
      if (attempt++ > 0) await page.keyboard.press('Escape');
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: 5_000 });
      typedAt = 0;
    }
    if (Date.now() - typedAt > 5_000) {
      await input.fill('');
      await input.fill(fileName);
      typedAt = Date.now();
    }
    return (await row.isVisible()) || undefined;
  }, { timeoutMs: 45_000, intervalMs: 300 });
  await page.keyboard.press('Enter');
  // Quick open hands focus to the opened editor, so later keystrokes (Ctrl+F, Ctrl+.) reach it.
  await poll(`editor tab for ${base}`, async () => (await activeTabLabel(page)).includes(base) || undefined);
}

/**
 * Opens the command palette with F1. If it does not open (focus inside a webview or a modal editor
 * swallows the key), the retry first presses Escape to give focus back to the workbench.
 */
export async function openPalette(page: Page): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  let attempt = 0;
  await poll('command palette', async () => {
    if (await input.isVisible()) return true;
    if (attempt++ > 0) await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    return input.isVisible();
  }, { timeoutMs: 15_000, intervalMs: 500 });
}

/** Runs a command from the palette like a user: F1, type the title, pick the row with that exact label. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await dismissQuickInput(page);
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  await openPalette(page);
  await input.fill(`>${title}`);
  const row = await poll(`palette row "${title}"`, async () => {
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    const n = await rows.count();
    for (let i = 0; i < n; i++) {
      const label = (await rows.nth(i).getAttribute('aria-label')) ?? '';
      if (label === title || label.startsWith(`${title},`) || label.startsWith(`${title} `)) return rows.nth(i);
    }
    return undefined;
  }, { timeoutMs: 15_000 });
  await row.click();
}

/** True once the palette lists a command with this title (without running it). */
export async function paletteHasCommand(page: Page, title: string): Promise<boolean> {
  await dismissQuickInput(page);
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  await openPalette(page);
  await input.fill(`>${title}`);
  try {
    await poll(`palette row "${title}"`, async () => {
      const labels = await page.locator('.quick-input-widget .monaco-list-row').evaluateAll((els) =>
        els.map((e) => e.getAttribute('aria-label') ?? ''),
      );
      return labels.some((l) => l.startsWith(title)) || undefined;
    }, { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  } finally {
    await dismissQuickInput(page);
  }
}

export interface ProblemCounts {
  errors: number;
  warnings: number;
  infos: number;
  label: string;
}

/** Reads the status bar Problems item, whose aria-label reads like "Errors: 1, Warnings: 2" or "No Problems". */
export async function problemCounts(page: Page): Promise<ProblemCounts> {
  const label = (await page.locator('[id="status.problems"]').first().getAttribute('aria-label')) ?? '';
  const num = (re: RegExp): number => Number(re.exec(label)?.[1] ?? 0);
  return { errors: num(/Errors?: (\d+)/i), warnings: num(/Warnings?: (\d+)/i), infos: num(/Infos?: (\d+)/i), label };
}

/** Texts of the code lenses rendered in the active editor, one per lens (VS Code joins a line's lenses with " | "). */
export async function codeLensTexts(page: Page): Promise<string[]> {
  const lines = await page.locator('.editor-group-container.active .codelens-decoration').evaluateAll((els) =>
    els.map((e) => (e as HTMLElement).innerText.replace(/\s+/g, ' ').trim()),
  );
  return lines.flatMap((l) => l.split(' | ')).map((t) => t.trim()).filter((t) => t.length > 0);
}

/** Highest line number currently rendered in the active editor (lines and lenses outside the viewport are not in the DOM). */
async function lastRenderedLine(page: Page): Promise<number> {
  return page.locator('.editor-group-container.active .margin-view-overlays .line-numbers').evaluateAll((els) =>
    els.reduce((max, e) => Math.max(max, Number((e as HTMLElement).innerText) || 0), 0),
  );
}

/**
 * Every code lens of the active editor: the editor only renders what is on screen, so this goes to
 * the top and pages down (as a user scrolls), collecting lens texts until the end stops moving.
 * The editor must have focus (openFile leaves it there).
 */
export async function allCodeLensTexts(page: Page, maxPages = 40): Promise<string[]> {
  const seen = new Set<string>();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < maxPages; i++) {
    for (const t of await codeLensTexts(page)) seen.add(t);
    const before = await lastRenderedLine(page);
    await page.keyboard.press('PageDown');
    const moved = await poll('the editor to scroll', async () => (await lastRenderedLine(page)) !== before || undefined, {
      timeoutMs: 1_500,
      intervalMs: 100,
    }).then(
      () => true,
      () => false,
    );
    if (!moved) break;
  }
  for (const t of await codeLensTexts(page)) seen.add(t);
  await page.keyboard.press('Control+Home');
  return [...seen];
}

/** Shows the Problems panel if it is hidden. */
export async function showProblems(page: Page): Promise<void> {
  const panel = page.locator('.markers-panel').first();
  if (!(await panel.isVisible().catch(() => false))) {
    await page.keyboard.press('Control+Shift+M');
    await panel.waitFor({ state: 'visible', timeout: 10_000 });
  }
}

/** Hides the bottom panel (Ctrl+J) if it is showing, e.g. before a screenshot. */
export async function hidePanel(page: Page): Promise<void> {
  const panel = page.locator('.part.panel').first();
  if (await panel.isVisible().catch(() => false)) {
    await page.keyboard.press('Control+J');
    await poll('the panel to hide', async () => !(await panel.isVisible()) || undefined, { timeoutMs: 10_000 });
  }
}

const problemsFilter = (page: Page) => page.locator('.part.panel .viewpane-filter input').first();
const problemsBadge = (page: Page) => page.locator('.part.panel .viewpane-filter .viewpane-filter-badge').first();

/**
 * Filters the Problems panel by `text` (VS Code matches message, source and the diagnostic code, so a
 * rule id selects that rule's findings; the list is virtualised, so reading rows would miss some).
 * Waits until the filter is applied: cleared first so no badge of an earlier filter is read.
 */
export async function filterProblems(page: Page, text: string): Promise<void> {
  await showProblems(page);
  const input = problemsFilter(page);
  await input.fill('');
  await poll('the Problems filter to clear', async () => !(await problemsBadge(page).isVisible()) || undefined, { timeoutMs: 10_000 });
  if (text) {
    await input.fill(text);
    await poll(`the Problems filter "${text}"`, async () => /Showing \d+ of \d+/.test(await problemsBadge(page).innerText()) || undefined, {
      timeoutMs: 10_000,
    });
  }
}

/** How many findings the filtered Problems panel shows, from its "Showing N of M" badge. */
export async function shownProblems(page: Page): Promise<{ shown: number; total: number }> {
  const m = /Showing (\d+) of (\d+)/.exec(await problemsBadge(page).innerText());
  if (!m) throw new Error('the Problems panel is not filtered (call filterProblems first)');
  return { shown: Number(m[1]), total: Number(m[2]) };
}

/** Language mode shown in the status bar for the active editor (e.g. "Dotprompt"). */
export async function languageMode(page: Page): Promise<string> {
  const item = page.locator('[id="status.editor.mode"]').first();
  return ((await item.innerText().catch(() => '')) || '').trim();
}

/**
 * The first frame (webviews nest iframes) whose body text satisfies `match`, polled until one
 * appears. On timeout the error carries the start of every frame's text, to show what was there.
 */
export async function findFrameText(
  page: Page,
  match: (text: string) => boolean,
  opts: PollOptions = {},
): Promise<{ frame: Frame; text: string }> {
  let seen: string[] = [];
  try {
    return await poll('a frame with the expected text', async () => {
      seen = [];
      for (const frame of page.frames()) {
        if (frame === page.mainFrame()) continue;
        const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
        if (text) seen.push(text);
        if (text && match(text)) return { frame, text };
      }
      return undefined;
    }, { timeoutMs: 30_000, ...opts });
  } catch (err) {
    const frames = seen.map((t, i) => `--- frame ${i} (${t.length} chars):\n${t.slice(0, 600)}`).join('\n');
    throw new Error(`${(err as Error).message}\n${frames || '(no frame had text)'}`);
  }
}

/**
 * Selects the first occurrence of `needle` in the active editor with the find widget (Ctrl+F, type,
 * Enter, Escape), as a keyboard user would; the selection is where Ctrl+. looks for quick fixes.
 */
export async function placeCursorAt(page: Page, needle: string): Promise<void> {
  await page.keyboard.press('Control+F');
  const find = page.locator('.editor-widget.find-widget textarea, .editor-widget.find-widget input').first();
  await find.waitFor({ state: 'visible', timeout: 10_000 });
  await find.fill(needle);
  await poll(`"${needle}" found in the editor`, async () => {
    const t = (await page.locator('.find-widget .matchesCount').first().innerText().catch(() => '')) ?? '';
    return (/^\d+ of \d+$/.test(t.trim()) && !t.startsWith('No')) || undefined;
  }, { timeoutMs: 10_000 });
  await page.keyboard.press('Enter');
  // Escape closes the widget and leaves the match selected in the editor. A key can be taken by
  // something else that had focus a moment ago (a panel or notification), so it is pressed again
  // until the widget is gone: with the widget open, Ctrl+. would type into its input.
  const widget = page.locator('.editor-widget.find-widget.visible');
  await poll('the find widget to close', async () => {
    if ((await widget.count()) === 0) return true;
    await find.press('Escape').catch(() => page.keyboard.press('Escape'));
    return undefined;
  }, { timeoutMs: 10_000, intervalMs: 300 });
}

/** Opens the quick fix menu (Ctrl+.) at the cursor and picks the action whose title contains `title`. */
export async function applyQuickFix(page: Page, title: string): Promise<void> {
  const rows = page.locator('.action-widget .monaco-list-row');
  await poll('the quick fix menu', async () => {
    if ((await rows.count()) === 0) await page.keyboard.press('Control+.');
    return (await rows.count()) > 0 || undefined;
  }, { timeoutMs: 15_000, intervalMs: 700 });
  const row = rows.filter({ hasText: title }).first();
  await poll(`quick fix "${title}"`, async () => (await row.count()) > 0 || undefined, { timeoutMs: 10_000 });
  await row.click();
  await poll('the quick fix menu to close', async () => (await rows.count()) === 0 || undefined, { timeoutMs: 10_000 });
}

/** Saves the active editor (Ctrl+S) so the language server sees the file on disk too. */
export async function saveActiveEditor(page: Page): Promise<void> {
  await page.keyboard.press('Control+S');
  await poll('the editor to be saved', async () => {
    const dirty = await page.locator('.tabs-container .tab.active.dirty').count();
    return dirty === 0 || undefined;
  }, { timeoutMs: 10_000 });
}

/** The texts of the rows the (filtered) Problems panel shows: file rows and findings with their messages. */
export async function problemTexts(page: Page): Promise<string[]> {
  await showProblems(page);
  return page.locator('.markers-panel .monaco-list-row').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('aria-label') ?? ''} ${(e as HTMLElement).innerText}`.replace(/\s+/g, ' ').trim()),
  );
}
