/**
 * The decisions of one assembly, in one place: every stage appends what it decided here (items it
 * omitted and why, findings, conflicts, history plans, tool verdicts), and the trace stage writes
 * the trace from this log alone. Decisions are kept per slot, so the trace lists them slot by slot
 * in stage order, whatever order the stages ran the slots in; request-wide decisions (trimming to
 * fit, findings on the whole request) follow.
 */
import type { Finding, TraceTool, ToolDefinitionInfo } from '../../types';
import type { Omission } from '../item';
import type { ConflictRecord } from './conflicts';
import { append } from '../append';
import type { HistoryPlan } from './state';

interface SlotDecisions {
  omitted: Omission[];
  findings: Finding[];
  conflicts: ConflictRecord[];
  history?: HistoryPlan;
}

export class DecisionLog {
  private readonly bySlot = new Map<string, SlotDecisions>();
  private readonly requestOmitted: Omission[] = [];
  private readonly requestFindings: Finding[] = [];
  /** [fixture index, sha256] of file-referenced item texts, by slot (part of the cache key). */
  readonly files: Record<string, unknown> = {};
  readonly tools: TraceTool[] = [];
  readonly toolDefinitions: ToolDefinitionInfo[] = [];
  /** Whether any slot holds tool definitions (the result then carries `tools`). */
  hasToolSlots = false;

  constructor(slotNames: readonly string[]) {
    for (const n of slotNames) this.bySlot.set(n, { omitted: [], findings: [], conflicts: [] });
  }

  private slot(name: string): SlotDecisions {
    let d = this.bySlot.get(name);
    if (!d) this.bySlot.set(name, (d = { omitted: [], findings: [], conflicts: [] }));
    return d;
  }

  /** A slot stage omitted these items. */
  omit(slot: string, omitted: readonly Omission[]): void {
    append(this.slot(slot).omitted, omitted);
  }

  /** A request stage omitted these items (trimmed to fit). */
  omitFromRequest(omitted: readonly Omission[]): void {
    append(this.requestOmitted, omitted);
  }

  report(slot: string | undefined, findings: readonly Finding[]): void {
    if (slot === undefined) append(this.requestFindings, findings);
    else append(this.slot(slot).findings, findings);
  }

  conflicts(slot: string, records: readonly ConflictRecord[]): void {
    append(this.slot(slot).conflicts, records);
  }

  history(slot: string, plan: HistoryPlan): void {
    this.slot(slot).history = plan;
  }

  /** Every omission: slot by slot in stage order, then the request's. */
  get omissions(): Omission[] {
    const out: Omission[] = [];
    for (const d of this.bySlot.values()) append(out, d.omitted);
    return out.concat(this.requestOmitted);
  }

  get findings(): Finding[] {
    const out: Finding[] = [];
    for (const d of this.bySlot.values()) append(out, d.findings);
    return out.concat(this.requestFindings);
  }

  get allConflicts(): Array<{ slot: string; record: ConflictRecord }> {
    const out: Array<{ slot: string; record: ConflictRecord }> = [];
    for (const [slot, d] of this.bySlot) for (const record of d.conflicts) out.push({ slot, record });
    return out;
  }

  get plans(): Array<{ slot: string; plan: HistoryPlan }> {
    const out: Array<{ slot: string; plan: HistoryPlan }> = [];
    for (const [slot, d] of this.bySlot) if (d.history) out.push({ slot, plan: d.history });
    return out;
  }
}
