/**
 * SARIF 2.1.0 output for `ctxlens check --format sarif`, in the shape GitHub code scanning
 * accepts: one run, the full rule table, 1-based regions relative to %SRCROOT%.
 */
import type { Finding, Severity } from '../core/types';
import type { Position } from '../core/text/lineIndex';
import { RULES } from '../core/rules/registry';
import { VERSION } from './version';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note', hint: 'note' };

export interface SarifFile {
  path: string;
  findings: Array<{ finding: Finding; range: { start: Position; end: Position } }>;
}

export function toSarif(files: SarifFile[]): Record<string, unknown> {
  const ruleIndex = new Map(RULES.map((r, i) => [r.id, i]));
  const results = files.flatMap((file) =>
    file.findings.map(({ finding, range }) => ({
      ruleId: finding.rule,
      ruleIndex: ruleIndex.get(finding.rule),
      level: LEVEL[finding.severity],
      message: { text: finding.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: encodeURI(file.path), uriBaseId: '%SRCROOT%' },
            region: {
              startLine: range.start.line + 1,
              startColumn: range.start.character + 1,
              endLine: range.end.line + 1,
              endColumn: range.end.character + 1,
            },
          },
        },
      ],
    })),
  );
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'ctxlens',
            version: VERSION,
            semanticVersion: VERSION,
            rules: RULES.map((r) => ({
              id: r.id,
              name: r.id.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase()),
              shortDescription: { text: r.description },
              fullDescription: { text: r.description },
              help: { text: `${r.description} See docs/rules.md#rule-${r.id} in the Context Lens package.` },
              defaultConfiguration: { level: LEVEL[r.severity] },
              properties: { category: r.category, ...(r.heuristic ? { precision: 'medium' } : { precision: 'high' }) },
            })),
          },
        },
        columnKind: 'utf16CodeUnits',
        originalUriBaseIds: { '%SRCROOT%': { uri: 'file:///' } },
        results,
      },
    ],
  };
}
