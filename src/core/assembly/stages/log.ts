/**
 * The decisions of one assembly, in one place: every stage appends what it decided here (items it
 * omitted and why, findings, conflicts, history plans), and the trace stage writes them into the
 * trace. The log is append-only: what a stage computes for the next stage is its return value
 * (stages/state.ts), never a field of the log. Decisions are kept per slot, so the trace lists them
 * slot by slot in stage order, whatever order the stages ran the slots in; request-wide decisions
 * (trimming to fit, findings on the whole request) follow.
 */
import type { Finding } from '../../types';
import type { Omission } from '../item';
import { append } from '../append';
import type { ConflictRecord, HistoryPlan } from './state';

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
