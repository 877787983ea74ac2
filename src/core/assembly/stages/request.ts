/**
 * Stages 8 to 10, fit -> order -> render (seed 000, `build_request`): serialize the request, count
 * it with the endpoint's accounting, and while it is over the input budget drop the lowest-priority
 * optional item and recount. The drop order is fixed up front (slot priority, then item score — for
 * history, position: the oldest kept turn goes first — then position in the slot, then slot order),
 * so fit.ts finds the shortest prefix of it whose removal makes the request fit. Every probe orders
 * each slot's kept items (order.ts) and renders the part texts through the template's own engine
 * (render.ts), counted without joining them (countParts.ts); only the chosen prefix is rendered
 * into messages.
 */
import type { Finding, TemplateDoc } from '../../types';
import type { WorkItem } from '../item';
import type { Probe, RenderIssue } from '../render';
import type { DecisionLog } from './log';
import { finding } from '../../rules/registry';
import { formatTokens as fmt } from '../../budget';
import { countJoined } from '../countParts';
import { configRelated, listIds, lostInTheMiddle, slotLocation } from '../findings';
import { fitPrefix } from '../fit';
import { orderItems } from '../order';
import { Renderer } from '../render';
import { append } from '../append';
import type { AssembledRequest, PipelineEnv, SelectedSlot } from './state';
export type { AssembledRequest } from './state';

/**
 * The request from the selected slots: what fit keeps of each slot (a new list per slot, in final
 * order; the selections' lists are not changed), the messages and their count.
 */
export function fitRequest(env: PipelineEnv, slots: readonly SelectedSlot[], log: DecisionLog): AssembledRequest {
  const { template, fixture, tokenizer, ctx, fitLimit, requestOverhead, messageOverhead } = env;
  const slotStates = new Map(slots.filter((r) => r.used).map((r) => [r.state.name, r.state]));
  const renderer = new Renderer(template, slotStates, fixture, env.input.render);
  const slotOf = new Map(slots.map((r) => [r.state.name, r]));

  // ---- The drop sequence: lowest priority first.
  const dropSeq: WorkItem[] = [];
  for (const r of slots) if (r.used && !r.required) append(dropSeq, r.packed);
  const keepValue = (r: SelectedSlot, i: WorkItem) => (r.state.kind === 'history' ? 0 : (i.score ?? 0));
  dropSeq.sort((a, b) => {
    const ra = slotOf.get(a.slot)!;
    const rb = slotOf.get(b.slot)!;
    return ra.priority - rb.priority || keepValue(ra, a) - keepValue(rb, b) || rb.packIndex.get(b)! - ra.packIndex.get(a)! || rb.order - ra.order;
  });

  // ---- order: each probe's kept items, in each slot's final order.
  const keptAfter = (k: number): Map<string, WorkItem[]> => {
    const removed = new Set(dropSeq.slice(0, k));
    const kept = new Map<string, WorkItem[]>();
    for (const r of slots) {
      if (!r.used) continue;
      const rest = removed.size ? r.packed.filter((i) => !removed.has(i)) : r.packed;
      kept.set(r.state.name, orderItems(rest, r.orderPolicy, r.state.kind === 'history'));
    }
    return kept;
  };
  // ---- fit: each probe renders the part texts only and counts them without joining.
  const counts = new Map<number, number>();
  // The fitting probe with the fewest drops: what fitPrefix chooses when the request fits.
  let best: { k: number; kept: Map<string, WorkItem[]>; probe: Probe } | undefined;
  const tokensAfter = (k: number): number => {
    let n = counts.get(k);
    if (n === undefined) {
      const kept = keptAfter(k);
      const probe = renderer.probe(kept);
      n = requestOverhead;
      for (const texts of probe.texts) n += messageOverhead + countJoined(tokenizer, texts);
      counts.set(k, n);
      if (n <= fitLimit && (best === undefined || k < best.k)) best = { k, kept, probe };
    }
    return n;
  };
  // What dropping the first k items saves by their own counts and envelopes: steers the search.
  const saved = [0];
  for (const it of dropSeq) saved.push(saved[saved.length - 1] + it.tokens + slotOf.get(it.slot)!.overhead);
  const fit = fitPrefix(dropSeq.length, tokensAfter, fitLimit, (k) => saved[k]);
  const chosen = best !== undefined && best.k === fit.dropped ? best : undefined;
  const finalKept = chosen ? chosen.kept : keptAfter(fit.dropped);
  // ---- render: the chosen prefix, into messages (the probe's marked render is reused).
  const rendered = renderer.full(finalKept, chosen?.probe);
  let tokens = tokensAfter(fit.dropped);
  // The probes count the marked render; when attribution was lost the final messages are the plain one.
  if (rendered.issues.some((i) => i.rule === 'attribution-lost')) {
    tokens = requestOverhead;
    for (const m of rendered.messages) tokens += messageOverhead + tokenizer.count(m.content);
  }
  log.report(undefined, renderFindings(template, rendered.issues));
  const trimmed = dropSeq.slice(0, fit.dropped);
  log.omitFromRequest(trimmed.map((item) => ({ item, reason: 'trimmed-for-request' })));

  let error: string | undefined;
  if (!fit.ok) {
    const parts: string[] = [];
    let slotsTotal = 0;
    for (const r of slots) {
      if (!r.used || !r.required) continue;
      const t = slotCost(r);
      slotsTotal += t;
      parts.push(`${r.state.name} ${fmt(t)}`);
    }
    parts.push(`template text and message overhead ${fmt(tokens - slotsTotal)}`);
    error = `Required content alone is ${fmt(tokens)} tokens > ${fmt(fitLimit)} input budget (${env.inputLimitText}): ${parts.join(', ')}. No request can be built; shorten a required slot or raise the window.`;
    const biggest = slots.filter((r) => r.used && r.required).sort((a, b) => slotCost(b) - slotCost(a) || a.order - b.order)[0];
    const loc = biggest ? slotLocation(ctx, biggest.state.name) : { path: template.path, span: template.bodySpan };
    log.report(undefined, [finding('required-overflow', loc.path, loc.span, error, { related: biggest ? configRelated(ctx, biggest.state.name, 'required', 'required: true') : [] })]);
  } else if (trimmed.length) {
    const before = tokensAfter(0);
    const first = slotOf.get(trimmed[0].slot)!;
    const loc = slotLocation(ctx, first.state.name);
    const list = listIds(trimmed.map((i) => ({ id: i.id, reason: `${i.slot}, ${fmt(i.tokens)} tokens` })));
    log.report(undefined, [
      finding('request-overflow', loc.path, loc.span, `The assembled request is ${fmt(before)} tokens > ${fmt(fitLimit)} input budget (${env.inputLimitText}); trimming ${trimmed.length} optional item${trimmed.length === 1 ? '' : 's'} by priority brings it to ${fmt(tokens)}: ${list}.`, {
        related: configRelated(ctx, first.state.name, 'priority', `priority: ${first.priority}`),
      }),
    ]);
  }

  // ---- Final order: lost-in-the-middle.
  const kept = fit.ok ? finalKept : new Map<string, WorkItem[]>();
  const removed = new Set(trimmed);
  for (const r of slots) {
    const ordered = kept.get(r.state.name);
    if (!ordered || !fixture) continue;
    log.report(undefined, lostInTheMiddle(ctx, r.state, ordered, r.packed.filter((i) => !removed.has(i))));
  }
  // Without a request, every optional item is out.
  if (!fit.ok) log.omitFromRequest(dropSeq.filter((item) => !removed.has(item)).map((item) => ({ item, reason: 'trimmed-for-request' })));

  return { ok: fit.ok, kept, messages: fit.ok ? rendered.messages : [], rendered, tokens, trimmed, ...(error !== undefined ? { error } : {}) };
}

function slotCost(r: SelectedSlot): number {
  return r.packed.reduce((s, i) => s + i.tokens + r.overhead, 0);
}

/**
 * Engine problems as findings in the template. A runtime's refusal at a place where the template's
 * own parse already located a syntax error is that error again (the runtime's parser stops at the
 * same tag): one cause, one finding, the parse's, which names the tag.
 */
function renderFindings(template: TemplateDoc, issues: readonly RenderIssue[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  const parsed = template.findings.filter((f) => f.rule === 'template-invalid');
  const sameCause = (i: RenderIssue) => i.rule === 'template-invalid' && parsed.some((f) => i.span.start < Math.max(f.span.end, f.span.start + 1) && f.span.start < Math.max(i.span.end, i.span.start + 1));
  for (const i of issues) {
    if (sameCause(i)) continue;
    const key = `${i.rule}\u0000${i.span.start}\u0000${i.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(finding(i.rule === 'attribution-lost' ? 'unsupported-feature' : i.rule, template.path, i.span, i.message, i.rule === 'attribution-lost' ? { severity: 'info' } : {}));
  }
  return out;
}
