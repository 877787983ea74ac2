/// <reference types="mocha" />
/**
 * Diagnostics through `vscode.languages.getDiagnostics`: the planted defects of examples/defects
 * appear with their rule ids as diagnostic codes, and the whole workspace shows exactly the table of
 * planted findings in examples/README.md — the same findings `ctxlens check examples/` prints,
 * including files that were never opened (the server's workspace scan).
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { fileUri, openFile, ourDiagnostics, plantedFindings, ruleOf, severityName, waitFor } from './util';

function key(file: string, line: number, rule: string, severity: string): string {
  return `${file}:${line} ${rule} ${severity}`;
}

suite('Context Lens: diagnostics', () => {
  test('the defects template shows its planted rule codes at their lines', async () => {
    const doc = await openFile('defects/leaky.prompt');
    const planted = plantedFindings().filter((f) => f.file === 'defects/leaky.prompt');
    assert.ok(planted.length >= 3, 'the README plants at least three findings in defects/leaky.prompt');
    const diags = await waitFor(
      'the planted diagnostics of defects/leaky.prompt',
      () => {
        const d = ourDiagnostics(doc.uri);
        return planted.every((p) => d.some((x) => ruleOf(x) === p.rule && x.range.start.line + 1 === p.line)) ? d : undefined;
      },
      60_000,
    );
    const codes = new Set(diags.map(ruleOf));
    for (const rule of ['untrusted-in-system', 'untrusted-unlabelled', 'slot-undefined']) assert.ok(codes.has(rule), `${rule} in ${[...codes].join(', ')}`);
    for (const p of planted) {
      const d = diags.find((x) => ruleOf(x) === p.rule && x.range.start.line + 1 === p.line);
      assert.ok(d, `${p.rule} on line ${p.line}`);
      assert.equal(severityName(d.severity), p.severity, `${p.rule} is a${p.severity === 'error' ? 'n' : ''} ${p.severity}`);
      assert.ok(d.message.length > 0);
    }
  });

  test('the configs and the fixture of defects/ carry their findings, opened or not', async () => {
    const want: Array<[string, string, vscode.DiagnosticSeverity]> = [
      ['defects/overflow.context.yaml', 'budget-overflow', vscode.DiagnosticSeverity.Error],
      ['defects/leaky.context.yaml', 'slot-unused', vscode.DiagnosticSeverity.Warning],
      ['defects/fixtures/leaky.fixture.yaml', 'secret-in-context', vscode.DiagnosticSeverity.Error],
      ['defects/fixtures/leaky.fixture.yaml', 'delimiter-breakout', vscode.DiagnosticSeverity.Error],
    ];
    // The two configs are never opened in an editor: their diagnostics come from the server's
    // workspace scan or from the analysis of the template they belong to.
    for (const [file, rule, severity] of want) {
      const d = await waitFor(`${rule} on ${file}`, () => ourDiagnostics(fileUri(file)).find((x) => ruleOf(x) === rule), 60_000);
      assert.equal(d.severity, severity, `severity of ${rule} on ${file}`);
    }
    const overflow = ourDiagnostics(fileUri('defects/overflow.context.yaml')).find((x) => ruleOf(x) === 'budget-overflow');
    assert.equal(overflow?.severity, vscode.DiagnosticSeverity.Error);
    assert.match(overflow?.message ?? '', /8,000/);
  });

  test('errors and warnings of the whole workspace equal the planted findings table', async () => {
    const want = plantedFindings()
      .filter((f) => f.severity === 'error' || f.severity === 'warning')
      .map((f) => key(f.file, f.line, f.rule, f.severity))
      .sort();
    const current = (): string[] =>
      vscode.languages
        .getDiagnostics()
        .flatMap(([uri, diags]) =>
          diags
            .filter((d) => d.source === 'context-lens')
            .filter((d) => d.severity === vscode.DiagnosticSeverity.Error || d.severity === vscode.DiagnosticSeverity.Warning)
            .map((d) => key(vscode.workspace.asRelativePath(uri, false), d.range.start.line + 1, ruleOf(d), severityName(d.severity))),
        )
        .sort();
    let got: string[] = [];
    try {
      await waitFor('the workspace diagnostics to equal the planted table', () => {
        got = current();
        return got.length === want.length && got.every((g, i) => g === want[i]);
      }, 90_000, 500);
    } catch {
      // Show the difference rather than a timeout.
      assert.deepEqual(got, want);
    }
    assert.deepEqual(got, want);
  });
});
