/**
 * The preview channel's gates, without a browser: `validateWebviewMessage` (the host's allowlist
 * for what the webview posts), `checkActionAgainstSnapshot` (actions may only name what the host
 * offered), `validateHostMessage` (the webview's shape check), the persisted-state reader used by
 * the serializer, and the HTML shell's CSP.
 */
import { describe, expect, it } from 'vitest';
import type { PreviewAction } from '../../src/protocol/preview';
import {
  FINDINGS_SHOWN,
  RevealSourceMessage,
  SelectFixtureMessage,
  checkActionAgainstSnapshot,
  snapshotPaths,
  summarizeFindings,
  templateUriFromState,
  validateHostMessage,
  validateWebviewMessage,
} from '../../src/protocol/preview';
import { previewCsp, previewHtml } from '../../src/webview/html';
import { CONFIG_PATH, FIXTURE_PATH, OTHER_FIXTURE_PATH, TEMPLATE_PATH, TEMPLATE_URI, buildCompareSnapshot, buildSnapshot, buildWhatIfSnapshot, withSeq } from './snapshots';

describe('validateWebviewMessage', () => {
  it.each([
    [{ type: 'ready' }],
    [{ type: 'selectFixture', path: '/w/a.fixture.yaml' }],
    [{ type: 'selectModel', model: 'gpt-4o' }],
    [{ type: 'copyRequest', format: 'openai' }],
    [{ type: 'copyRequest', format: 'anthropic' }],
    [{ type: 'exportTrace' }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: 0 }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: 41 }],
    [{ type: 'refresh' }],
    [{ type: 'setCompare', target: null }],
    [{ type: 'setCompare', target: { kind: 'fixture', path: '/w/b.fixture.yaml' } }],
    [{ type: 'setCompare', target: { kind: 'model', model: 'gpt-4o-mini' } }],
    [{ type: 'setCompare', target: { kind: 'budget' } }],
    [{ type: 'setBudget', slot: 'evidence', budget: 400 }],
    [{ type: 'setBudget', slot: 'evidence', budget: 0 }],
    [{ type: 'setBudget', slot: 'evidence', budget: null }],
    [{ type: 'resetWhatIf' }],
    [{ type: 'applyWhatIf' }],
  ])('accepts %j', (message) => {
    expect(validateWebviewMessage(message)).toEqual(message);
  });

  it('returns a fresh object without extra fields', () => {
    const raw = { type: 'revealSource', path: '/w/a.prompt', line: 3, command: 'rm -rf /', __proto__: { polluted: true } };
    const out = validateWebviewMessage(raw);
    expect(out).toEqual({ type: 'revealSource', path: '/w/a.prompt', line: 3 });
    expect(out).not.toBe(raw);
    expect(Object.keys(out ?? {})).toEqual(['type', 'path', 'line']);
    expect(validateWebviewMessage({ type: 'ready', extra: 1 })).toEqual({ type: 'ready' });
  });

  it.each([
    [undefined],
    [null],
    ['ready'],
    [42],
    [[{ type: 'ready' }]],
    [{}],
    [{ type: 'READY' }],
    [{ type: 'openFile', path: '/etc/passwd' }],
    [{ type: 'snapshot', snapshot: {} }],
    [{ type: 'toString' }],
    [{ type: 'constructor' }],
    [{ type: 'selectFixture' }],
    [{ type: 'selectFixture', path: '' }],
    [{ type: 'selectFixture', path: 7 }],
    [{ type: 'selectFixture', path: 'x'.repeat(5000) }],
    [{ type: 'selectModel', model: ['gpt-4o'] }],
    [{ type: 'copyRequest' }],
    [{ type: 'copyRequest', format: 'text' }],
    [{ type: 'copyRequest', format: 'OPENAI' }],
    [{ type: 'revealSource', path: '/w/a.prompt' }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: -1 }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: 1.5 }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: '3' }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: Number.NaN }],
    [{ type: 'revealSource', path: '/w/a.prompt', line: Number.MAX_VALUE }],
    [{ type: 'revealSource', path: { toString: () => '/etc/passwd' }, line: 1 }],
    [{ type: 'setCompare' }],
    [{ type: 'setCompare', target: 'fixture' }],
    [{ type: 'setCompare', target: { kind: 'fixture' } }],
    [{ type: 'setCompare', target: { kind: 'file', path: '/etc/passwd' } }],
    [{ type: 'setCompare', target: { kind: 'model', model: '' } }],
    [{ type: 'setBudget', slot: 'evidence' }],
    [{ type: 'setBudget', slot: 'evidence', budget: -1 }],
    [{ type: 'setBudget', slot: 'evidence', budget: 1.5 }],
    [{ type: 'setBudget', slot: 'evidence', budget: '400' }],
    [{ type: 'setBudget', slot: 'evidence', budget: 1e12 }],
    [{ type: 'setBudget', slot: 'evidence', budget: Number.POSITIVE_INFINITY }],
    [{ type: 'setBudget', slot: '', budget: 4 }],
    [{ type: 'setBudget', slot: 'x'.repeat(300), budget: 4 }],
  ])('rejects %j', (message) => {
    expect(validateWebviewMessage(message)).toBeUndefined();
  });

  it('has one descriptor per message with a guard', () => {
    expect(SelectFixtureMessage.type).toBe('selectFixture');
    expect(SelectFixtureMessage.is({ type: 'selectFixture', path: 'a' })).toBe(true);
    expect(SelectFixtureMessage.is({ type: 'selectModel', model: 'a' })).toBe(false);
    expect(RevealSourceMessage.is({ type: 'revealSource', path: 'a', line: -2 })).toBe(false);
  });
});

describe('checkActionAgainstSnapshot', () => {
  const snapshot = withSeq(buildSnapshot(), 1);
  const allowed: PreviewAction[] = [
    { type: 'selectFixture', path: OTHER_FIXTURE_PATH },
    { type: 'selectModel', model: 'claude-sonnet-4' },
    { type: 'copyRequest', format: 'openai' },
    { type: 'exportTrace' },
    { type: 'refresh' },
    { type: 'revealSource', path: FIXTURE_PATH, line: 33 },
    { type: 'revealSource', path: CONFIG_PATH, line: 0 },
    { type: 'revealSource', path: TEMPLATE_PATH, line: 20 },
  ];
  it.each(allowed.map((a) => [a]))('allows %j', (action) => {
    expect(checkActionAgainstSnapshot(action, snapshot)).toBe(true);
  });

  const refused: PreviewAction[] = [
    { type: 'selectFixture', path: '/workspace/other/secret.fixture.yaml' },
    { type: 'selectModel', model: 'gpt-5-unlisted' },
    { type: 'revealSource', path: '/etc/passwd', line: 0 },
    { type: 'revealSource', path: `${FIXTURE_PATH}/../../../.ssh/id_rsa`, line: 0 },
  ];
  it.each(refused.map((a) => [a]))('refuses %j', (action) => {
    expect(checkActionAgainstSnapshot(action, snapshot)).toBe(false);
  });

  it('refuses everything but refresh before a snapshot, and copying a failed assembly', () => {
    expect(checkActionAgainstSnapshot({ type: 'refresh' }, undefined)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'exportTrace' }, undefined)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'revealSource', path: FIXTURE_PATH, line: 1 }, undefined)).toBe(false);
    const failed = withSeq(buildSnapshot({ ok: false, error: 'required overflow' }), 2);
    expect(checkActionAgainstSnapshot({ type: 'copyRequest', format: 'anthropic' }, failed)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'exportTrace' }, failed)).toBe(true);
  });

  it('allows what-if and compare actions only on what the snapshot shows', () => {
    expect(checkActionAgainstSnapshot({ type: 'setBudget', slot: 'evidence', budget: 400 }, snapshot)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'setBudget', slot: 'secrets', budget: 400 }, snapshot)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'fixture', path: OTHER_FIXTURE_PATH } }, snapshot)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'fixture', path: '/etc/passwd' } }, snapshot)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'model', model: 'gpt-4o-mini' } }, snapshot)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'model', model: 'unlisted' } }, snapshot)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: null }, snapshot)).toBe(true);
    // Without what-if budgets there is nothing to reset, apply or compare against.
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'budget' } }, snapshot)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'resetWhatIf' }, snapshot)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'applyWhatIf' }, snapshot)).toBe(false);
    const whatIf = withSeq(buildWhatIfSnapshot(), 2);
    expect(checkActionAgainstSnapshot({ type: 'setCompare', target: { kind: 'budget' } }, whatIf)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'resetWhatIf' }, whatIf)).toBe(true);
    expect(checkActionAgainstSnapshot({ type: 'applyWhatIf' }, whatIf)).toBe(true);
    // Not when the config cannot take them, or the budgets did not apply.
    expect(checkActionAgainstSnapshot({ type: 'applyWhatIf' }, withSeq(buildWhatIfSnapshot({ ok: false, reason: 'no config' }), 3))).toBe(false);
    const failed = withSeq(buildWhatIfSnapshot(), 4);
    failed.whatIf = { ...failed.whatIf!, error: "'x' is not a slot of the config" };
    expect(checkActionAgainstSnapshot({ type: 'applyWhatIf' }, failed)).toBe(false);
    expect(checkActionAgainstSnapshot({ type: 'setBudget', slot: 'evidence', budget: 1 }, undefined)).toBe(false);
  });

  it('collects the paths a snapshot names', () => {
    expect([...snapshotPaths(snapshot)].sort()).toEqual([CONFIG_PATH, FIXTURE_PATH, OTHER_FIXTURE_PATH, TEMPLATE_PATH].sort());
  });
});

describe('validateHostMessage', () => {
  it('accepts snapshots and the empty and error states', () => {
    const snapshot = withSeq(buildSnapshot(), 3);
    expect(validateHostMessage({ type: 'snapshot', snapshot })).toEqual({ type: 'snapshot', snapshot });
    expect(validateHostMessage({ type: 'empty', seq: 4, reason: 'no template' })).toEqual({ type: 'empty', seq: 4, reason: 'no template' });
    expect(validateHostMessage({ type: 'error', seq: 5, message: 'server down', templateUri: TEMPLATE_URI, x: 1 })).toEqual({ type: 'error', seq: 5, message: 'server down', templateUri: TEMPLATE_URI });
  });

  it('rejects malformed messages', () => {
    const snapshot = withSeq(buildSnapshot(), 3);
    expect(validateHostMessage({ type: 'snapshot', snapshot: { ...snapshot, result: undefined } })).toBeUndefined();
    expect(validateHostMessage({ type: 'snapshot', snapshot: { ...snapshot, seq: '3' } })).toBeUndefined();
    expect(validateHostMessage({ type: 'snapshot', snapshot: { ...snapshot, result: { ...snapshot.result, messages: 'x' } } })).toBeUndefined();
    expect(validateHostMessage({ type: 'snapshot', snapshot: { ...snapshot, whatIf: 'yes' } })).toBeUndefined();
    expect(validateHostMessage({ type: 'snapshot', snapshot: { ...snapshot, compare: { target: { kind: 'budget' } } } })).toBeUndefined();
    const compare = withSeq(buildCompareSnapshot(), 4);
    expect(validateHostMessage({ type: 'snapshot', snapshot: compare })).toEqual({ type: 'snapshot', snapshot: compare });
    expect(validateHostMessage({ type: 'empty', reason: 'no seq' })).toBeUndefined();
    expect(validateHostMessage({ type: 'ready' })).toBeUndefined();
    expect(validateHostMessage('snapshot')).toBeUndefined();
  });
});

describe('summarizeFindings', () => {
  it('counts by severity, lists errors first, and caps the list', () => {
    const findings = Array.from({ length: 60 }, (_, i) => ({ rule: `r${i}`, severity: i === 59 ? ('error' as const) : ('warning' as const), message: 'm', path: '/w/a.prompt', span: { start: i, end: i + 1 } }));
    const summary = summarizeFindings(findings, (_path, offset) => offset * 2);
    expect(summary.counts).toEqual({ error: 1, warning: 59, info: 0, hint: 0 });
    expect(summary.items).toHaveLength(FINDINGS_SHOWN);
    expect(summary.items[0]).toEqual({ rule: 'r59', severity: 'error', message: 'm', location: { path: '/w/a.prompt', line: 118 } });
    expect(summary.items[1].rule).toBe('r0');
  });
});

describe('persisted state and HTML shell', () => {
  it('reads the template uri for the serializer, and nothing else', () => {
    expect(templateUriFromState({ version: 1, templateUri: TEMPLATE_URI, open: {} })).toBe(TEMPLATE_URI);
    expect(templateUriFromState(undefined)).toBeUndefined();
    expect(templateUriFromState({ templateUri: 3 })).toBeUndefined();
    expect(templateUriFromState('file:///x')).toBeUndefined();
  });

  it('builds a strict CSP with the nonce and no unsafe sources', () => {
    const csp = previewCsp('https://abc.vscode-cdn.net', 'bm9uY2Vub25jZW5vbmNl');
    expect(csp).toBe(
      "default-src 'none'; script-src 'nonce-bm9uY2Vub25jZW5vbmNl'; style-src https://abc.vscode-cdn.net 'nonce-bm9uY2Vub25jZW5vbmNl'; img-src https://abc.vscode-cdn.net data:; font-src https://abc.vscode-cdn.net",
    );
    const html = previewHtml({ cspSource: 'https://abc.vscode-cdn.net', nonce: 'bm9uY2Vub25jZW5vbmNl', scriptUri: 'https://abc.vscode-cdn.net/dist/media/webview.js', styleUri: 'https://abc.vscode-cdn.net/dist/media/webview.css' });
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${csp}">`);
    expect(html).toContain('<script nonce="bm9uY2Vub25jZW5vbmNl" src="https://abc.vscode-cdn.net/dist/media/webview.js"></script>');
    expect(html).not.toMatch(/unsafe-(inline|eval)/);
    // One script, loaded from the media folder; nothing inline.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(() => previewHtml({ cspSource: 'x', nonce: "a' 'unsafe-inline", scriptUri: 'a', styleUri: 'b' })).toThrow();
  });
});
