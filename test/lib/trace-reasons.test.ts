/**
 * The trace's reasons and conflicts on the examples, wherever they are shown: every reason code
 * the examples' traces carry has a sentence of its own (reasonText.ts, no fallback to the bare
 * code); the SDK example records its 3.9 vs 4.2 retry documents as a conflict resolved by the
 * version filter, beside the labelled customer comment, and says so in the hover, the preview
 * snapshot and the text output; the library's selection log is the trace's own reasons and score
 * parts, item for item.
 */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorkspace, selectionLog } from '../../src/lib';
import { isKnownReason, reasonText } from '../../src/core/reasonText';
import { analyzeFixture } from '../../src/core/analyze';
import { formatRequest } from '../../src/core/export';
import { DiskFileHost } from '../../src/node/fileHost';
import { fixtureHover, templateHover } from '../../src/server/hover';
import { previewReply } from '../../src/server/preview';
import type { MarkupContent } from 'vscode-languageserver';

const EXAMPLES = resolve(__dirname, '../../examples');
const ws = openWorkspace(EXAMPLES);

/** Every template of examples/ with each of its fixtures (the zero-config ones with their sample). */
const CASES: Array<[string, string | undefined]> = [
  ['sdk-qa/sdk-qa.prompt', 'sdk-qa/fixtures/post-retries.fixture.yaml'],
  ['sdk-qa/sdk-qa.prompt', 'sdk-qa/fixtures/rate-limit.fixture.yaml'],
  ['refund-support/refund.prompty', 'refund-support/fixtures/pole-refund.fixture.yaml'],
  ['refund-support/refund-hybrid.prompty', 'refund-support/fixtures/pole-refund-hybrid.fixture.yaml'],
  ['defects/agent.prompt', 'defects/fixtures/agent.fixture.yaml'],
  ['defects/leaky.prompt', 'defects/fixtures/leaky.fixture.yaml'],
  ['zero-config/support-chat.prompty', undefined],
  ['zero-config/outdoor-gear.prompty', undefined],
  ['zero-config/trip-planner.prompt', undefined],
];

describe('reason texts on the examples', () => {
  it('every reason code of every example trace has a sentence of its own', () => {
    const seen = new Set<string>();
    for (const [template, fixture] of CASES) {
      const r = ws.assemble(template, fixture ? { fixture } : {});
      const codes = [...r.trace.retained.flatMap((t) => t.reasons ?? []), ...r.trace.omitted.map((o) => o.reason), ...(r.trace.conflicts ?? []).flatMap((c) => (c.reason ? [c.reason] : []))];
      for (const code of codes) {
        expect(isKnownReason(code), `${template}: ${code}`).toBe(true);
        expect(reasonText(code)).not.toBe(code);
        seen.add(code.replace(/:.*/, ':'));
      }
    }
    // The examples exercise the filters, dedup, history policies, coverage and trimming.
    expect([...seen].sort()).toEqual(expect.arrayContaining(['duplicate-of:', 'filtered:', 'required', 'high_relevance', 'exact_version', 'official_source', 'summarised-by:', 'commitment']));
  });

  it('the selection log is the trace: the same reasons, scores and score parts, item by item', () => {
    for (const [template, fixture] of CASES) {
      const r = ws.assemble(template, fixture ? { fixture } : {});
      const log = selectionLog(r.trace);
      expect(log).toHaveLength(r.trace.retained.length + r.trace.omitted.length);
      r.trace.retained.forEach((t, i) => {
        expect(log[i]).toMatchObject({ evidence_id: t.id, slot: t.slot, decision: 'selected', reasons: t.reasons?.length ? t.reasons : ['within_budget'] });
        expect(log[i].score).toBe(t.score);
        if (t.score_breakdown) expect(log[i].score_breakdown).toMatchObject(t.score_breakdown);
        else expect(log[i].score_breakdown).toBeUndefined();
      });
      r.trace.omitted.forEach((o, k) => {
        const e = log[r.trace.retained.length + k];
        expect(e).toMatchObject({ evidence_id: o.id, slot: o.slot, reasons: [o.reason === 'filtered:expired' ? 'expired' : o.reason] });
        if (o.score_breakdown) expect(e.score_breakdown).toMatchObject(o.score_breakdown);
        else expect(e.score_breakdown).toBeUndefined();
      });
    }
  });
});

describe('the SDK example: 3.9 vs 4.2 retry docs and the customer comment', () => {
  const r = ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'post-retries' });
  const user = r.messages.map((m) => m.content).join('\n');
  const block = (id: string) => user.slice(user.indexOf(`[EVIDENCE ${id}]`), user.indexOf('[/EVIDENCE]', user.indexOf(`[EVIDENCE ${id}]`)));

  it('records both conflicts: the comment labelled against the docs, the 3.9 docs resolved by the version filter', () => {
    expect(r.trace.conflicts).toEqual([
      {
        slot: 'evidence',
        kind: 'claim',
        topic: 'post-retry-safety',
        items: ['ev_0192', 'ev_0255'],
        values: ['POST is retried only with an Idempotency-Key or retry_non_idempotent=True', 'every POST request is idempotent, so retrying it is always safe'],
        resolution: 'labelled',
        retained: ['ev_0192', 'ev_0255'],
      },
      { slot: 'evidence', kind: 'version', items: ['ev_0192', 'ev_0077'], values: ['4.2', '3.9'], resolution: 'filtered', filtered: 'ev_0077', reason: 'filtered:version', retained: ['ev_0192'] },
    ]);
    expect(r.trace.omitted.find((o) => o.id === 'ev_0077')?.reason).toBe('filtered:version');
    // The migration guide and the tool result are kept.
    expect(r.trace.retained.map((t) => t.id)).toEqual(expect.arrayContaining(['ev_0203', 'call_8841']));
    // The comment is a non-authoritative claim whose envelope names the docs; the docs name the comment only (ev_0077 is not in the request).
    expect(block('ev_0255')).toContain('Authority: Customer comment (0.2)');
    expect(block('ev_0255')).toContain('Conflicts with: ev_0192 (official documentation)');
    expect(block('ev_0192')).toContain('Conflicts with: ev_0255 (customer comment)\n');
    expect(user).not.toContain('ev_0077');
  });

  it('stays silent when the 3.9 page is another source (the example as it was): only the labelled claim', () => {
    const f = ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: 'post-retries' }).fixture!;
    const items = f.slots.evidence.type === 'items' ? f.slots.evidence.items : [];
    const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
    const evidence = items.map((i) => defined({ id: i.id, text: i.text, source: i.id === 'ev_0077' ? 'sdk-docs/v3.9/retries' : i.source, source_type: i.source_type, version: i.version, authority: i.authority, relevance: i.relevance, published_at: i.published_at, ...i.meta }));
    const other = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { policy: 'Answer from the evidence.', question: 'Why twice?', evidence } });
    expect(other.trace.conflicts?.map((c) => [c.kind, c.resolution, c.items])).toEqual([['claim', 'labelled', ['ev_0192', 'ev_0255']]]);
  });

  it('says so in the text output, the hover and the preview snapshot', () => {
    const host = new DiskFileHost([EXAMPLES]);
    const fixturePath = join(EXAMPLES, 'sdk-qa/fixtures/post-retries.fixture.yaml');
    const fa = analyzeFixture(host, fixturePath)!;
    // What `ctxlens assemble --format text` prints: the analysis's assembly.
    const text = formatRequest(fa.template!.assembly!, 'text');
    expect(text).toContain('\n--- decisions ---\n');
    expect(text).toContain('conflict evidence: Versions of one source disagree: ev_0192 (4.2) and ev_0077 (3.9). ev_0077 is out of scope (filtered:version, not the requested version), so the model never sees it and ev_0192 carries no conflict note.\n');
    expect(text).toContain(`omitted evidence ev_0077: ${reasonText('filtered:version')} [filtered:version]\n`);
    expect(text).toContain(`kept evidence ev_0192: ${reasonText('high_relevance')} ${reasonText('exact_version')}`);

    const at = fa.doc.text.indexOf('id: ev_0077');
    const hover = (fixtureHover(fa, at + 4, () => undefined)!.contents as MarkupContent).value;
    expect(hover).toContain(`**Omitted**: ${reasonText('filtered:version')} (\`filtered:version\`)`);
    expect(hover).toContain('**Conflict**: Versions of one source disagree: ev_0192 (4.2) and ev_0077 (3.9).');
    const kept = (fixtureHover(fa, fa.doc.text.indexOf('id: ev_0192') + 4, () => undefined)!.contents as MarkupContent).value;
    expect(kept).toContain(`  - ${reasonText('official_source')} (\`official_source\`)`);
    expect(kept.match(/\*\*Conflict\*\*/g)).toHaveLength(2);

    const ta = fa.template!;
    const use = ta.template.uses.find((u) => u.slot === 'evidence')!;
    const slotHover = (templateHover(ta, use.span.start + 2, () => undefined)!.contents as MarkupContent).value;
    expect(slotHover).toContain('**Conflicts**\n- Claims on post-retry-safety disagree');
    expect(slotHover).toContain(`\`ev_0077\` `);

    const reply = previewReply({ analysis: ta, uri: 'file:///sdk-qa.prompt', version: 1, models: [], readFile: () => undefined });
    const explain = 'snapshot' in reply ? reply.snapshot.explain : undefined;
    expect(explain?.conflicts).toHaveLength(2);
    expect(explain?.conflicts[1]).toContain('ev_0077 is out of scope (filtered:version');
    expect(explain?.reasons['filtered:version']).toBe(reasonText('filtered:version'));
    expect(explain?.reasons['duplicate-of:ev_0240']).toBe(reasonText('duplicate-of:ev_0240'));
  });
});
