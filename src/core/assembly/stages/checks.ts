/**
 * Findings on the final request, after fit and render: what the request loses or shows wrongly.
 *
 * - `commitment-dropped` (commitments.ts);
 * - `coverage-missing`: a required subtopic of a slot (`requires:`) that no kept item covers;
 * - `contradiction-unlabelled`: items with a conflict note, both sides in the request, rendered
 *   without the note (the slot has no label, so no envelope carries it, or the template prints a
 *   field such as `{{this.text}}` instead of the item);
 * - tools (src/core/tools): `tool-schema-invalid`, `tool-not-allowed`, `tool-result-stale`, and the
 *   valid, allowed definitions of the request's tool slots for the provider's `tools` parameter.
 */
import type { Finding, FixtureDoc, FixtureValue, OmitReason } from '../../types';
import type { ToolEntry } from '../../tools/definitions';
import type { Allowlist } from '../../tools/allowlist';
import type { WorkItem } from '../item';
import type { DecisionLog } from './log';
import { finding } from '../../rules/registry';
import { configRelated, listIds, slotLocation } from '../findings';
import { commitmentFindings } from './commitments';
import { coversOf } from './select';
import { readToolSlot, validateTools } from '../../tools/definitions';
import { allowlistOf, checkAllowed, checkTemplateTools } from '../../tools/allowlist';
import { staleResults } from '../../tools/results';
import { append } from '../append';
import type { AssembledRequest, PipelineEnv, RequestChecks, SelectedSlot } from './state';

/** The findings on the final request go to the log; the tools the request offers are returned. */
export function checkRequest(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest, log: DecisionLog): RequestChecks {
  const reasons = new Map<WorkItem, OmitReason>();
  for (const o of log.omissions) if (!reasons.has(o.item)) reasons.set(o.item, o.reason);
  log.report(undefined, commitmentFindings(env, slots, request, (it) => reasons.get(it)));
  log.report(undefined, coverageFindings(env, slots, request, reasons));
  log.report(undefined, contradictionFindings(env, slots, request));
  return checkTools(env, slots, request, log);
}

function coverageFindings(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest, reasons: ReadonlyMap<WorkItem, OmitReason>): Finding[] {
  const fx = env.fixture;
  if (!fx || !request.ok) return [];
  const out: Finding[] = [];
  for (const r of slots) {
    const requires = r.cfg?.requires;
    if (!r.used || !requires?.length || !r.candidates) continue;
    const kept = request.kept.get(r.state.name) ?? [];
    for (const sub of requires) {
      if (kept.some((i) => coversOf(i).includes(sub))) continue;
      const loaded = [...r.candidates.candidates, ...r.candidates.omitted.map((o) => o.item)].filter((i) => coversOf(i).includes(sub)).sort((a, b) => a.index - b.index);
      const why = loaded.length
        ? `its candidates ${listIds(loaded.map((i) => ({ id: i.id, reason: reasons.get(i) ?? 'not kept' })))} were dropped`
        : `no item of fixture '${fx.name}' declares covers: [${sub}]`;
      const loc = slotLocation(env.ctx, r.state.name);
      out.push(
        finding('coverage-missing', loc.path, loc.span, `'${r.state.name}' requires the subtopic '${sub}', but no item in the request covers it: ${why}. The answer will be incomplete on '${sub}'.`, {
          related: configRelated(env.ctx, r.state.name, 'requires', `requires: [${requires.join(', ')}]`),
        }),
      );
    }
  }
  return out;
}

function contradictionFindings(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest): Finding[] {
  const fx = env.fixture;
  if (!fx || !request.ok) return [];
  // The kept items that conflict with another kept item of their slot, by slot.
  const conflicting = new Map<SelectedSlot, WorkItem[]>();
  for (const r of slots) {
    const kept = request.kept.get(r.state.name) ?? [];
    if (!kept.some((i) => i.conflicts?.length)) continue;
    const ids = new Set(kept.map((i) => i.id));
    const list = kept.filter((it) => it.conflicts?.some((c) => ids.has(c.id)));
    if (list.length) conflicting.set(r, list);
  }
  if (!conflicting.size) return [];
  // The text each item prints as in the request.
  const printed = new Map<string, string>();
  for (const m of request.messages) {
    for (const p of m.parts) {
      if (p.slot === undefined || p.itemId === undefined) continue;
      const k = `${p.slot}\u0000${p.itemId}`;
      printed.set(k, (printed.get(k) ?? '') + p.text);
    }
  }
  const out: Finding[] = [];
  for (const r of slots) {
    const bare: WorkItem[] = [];
    for (const it of conflicting.get(r) ?? []) {
      const text = printed.get(`${r.state.name}\u0000${it.id}`);
      if (text === undefined) continue;
      if (!text.includes('Conflicts with: ') && !text.includes(' conflicts="')) bare.push(it);
    }
    if (!bare.length) continue;
    const first = [...bare].sort((a, b) => a.index - b.index)[0];
    const list = listIds(bare.map((i) => ({ id: i.id, reason: `conflicts with ${(i.conflicts ?? []).map((c) => c.id).join(', ')}` })));
    const fix = r.state.label
      ? `The template prints them without their ${r.state.label} envelopes (a field such as {{text}}, or a wrapper it writes itself); print each item itself ({{this}}, {{ d }}) so its envelope carries "Conflicts with: …".`
      : `Give '${r.state.name}' a label (label: EVIDENCE) so each item's envelope carries "Conflicts with: …", and print the items themselves.`;
    out.push(
      finding('contradiction-unlabelled', fx.path, first.span, `'${r.state.name}' renders items that contradict each other without their conflict note: ${list}. The model cannot tell they disagree. ${fix}`, {
        related: configRelated(env.ctx, r.state.name, r.state.label ? 'label' : undefined),
      }),
    );
  }
  return out;
}

interface ToolCheck {
  read: ReturnType<typeof readToolSlot>;
  findings: Finding[];
  allowed?: Set<ToolEntry>;
}

/**
 * Reading and validating a tool slot depends on its fixture value, the fixture document (where
 * findings are located) and the config's `tools`: kept per value while those are the same, so a
 * template edit does not re-validate the definitions.
 */
const toolChecks = new WeakMap<FixtureValue, { key: string; fixture: FixtureDoc; check: ToolCheck }>();

function toolCheck(env: PipelineEnv, r: SelectedSlot, value: FixtureValue, fx: FixtureDoc, list: Allowlist | undefined): ToolCheck {
  const key = JSON.stringify([r.state.name, r.cfg?.tool ?? null, env.config.tools?.allow ?? null]);
  const hit = toolChecks.get(value);
  if (hit && hit.key === key && hit.fixture === fx) return hit.check;
  const read = readToolSlot(r.state.name, value, fx, r.cfg?.tool);
  const check: ToolCheck = { read, findings: [] };
  if (read.definitions) {
    append(check.findings, validateTools(read.entries));
    if (list) {
      const a = checkAllowed(read.entries, list);
      append(check.findings, a.findings);
      check.allowed = a.allowed;
    }
  }
  toolChecks.set(value, { key, fixture: fx, check });
  return check;
}

/** Tool slots: definitions validated and checked against the allowlist, results checked for age. */
function checkTools(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest, log: DecisionLog): RequestChecks {
  const out: RequestChecks = { hasToolSlots: false, tools: [], toolDefinitions: [] };
  const fx = env.fixture;
  const list = allowlistOf(env.config.tools?.allow);
  if (list) log.report(undefined, checkTemplateTools(env.template, list));
  if (!fx) return out;
  for (const r of slots) {
    if (!r.used || r.state.kind !== 'tool' || !r.value) continue;
    const { read, findings, allowed: allowedSet } = toolCheck(env, r, r.value, fx, list);
    if (!read.definitions) {
      if (request.ok && r.value.type === 'items') log.report(r.state.name, staleResults(fx.path, r.state.name, request.kept.get(r.state.name) ?? [], r.cfg?.max_age ?? env.config.tools?.max_age, env.now));
      continue;
    }
    out.hasToolSlots = true;
    log.report(r.state.name, findings);
    const allowed = allowedSet ? { allowed: allowedSet } : undefined;
    if (!request.ok) continue;
    // Data values always render; text and list items only when kept.
    const keptIndex = new Set((request.kept.get(r.state.name) ?? []).map((i) => i.index));
    read.entries.forEach((e, k) => {
      if (r.value!.type !== 'data' && !keptIndex.has(read.itemOf[k])) return;
      const name = e.def?.name ?? e.name ?? '';
      const status = !e.def ? 'invalid' : allowed && !allowed.allowed.has(e) ? 'not-allowed' : 'offered';
      out.tools.push({ slot: r.state.name, name, status });
      if (status === 'offered') out.toolDefinitions.push(e.def!);
    });
  }
  return out;
}
