/**
 * Commitments (seed 000, 3.2 and 3.4): "A commitment that must remain available after trimming can
 * have its own structured record, with fields for the promise, responsible party, and approval
 * condition. The application can retrieve that record independently of a shrinking conversation."
 *
 * A commitment record is an item of a memory slot with `promise` (and `party`, `condition`,
 * `made_at`, `source_turn`: the id of the history turn that made it). A history turn that makes a
 * commitment says so with `commitment:` (the promise in words, or true).
 *
 * `commitment-dropped` (error) when the request loses a commitment: a turn that carries one is not
 * in the request (its policy dropped it, a summary replaced it, or it was trimmed to fit) and no
 * record in the request names it as its `source_turn`; or a commitment record itself is not in the
 * request.
 */
import type { Finding, OmitReason } from '../../types';
import type { WorkItem } from '../item';
import { finding } from '../../rules/registry';
import { configRelated } from '../findings';
import { metaList, metaString } from '../item';
import type { AssembledRequest, PipelineEnv, SelectedSlot } from './state';

/** Every item a slot loaded: candidates and those omitted by its first stages. */
function loaded(run: SelectedSlot): WorkItem[] {
  const st = run.candidates;
  if (!st) return [];
  return [...st.candidates, ...st.omitted.map((o) => o.item)].sort((a, b) => a.index - b.index);
}

/** A record: an item with a promise. */
export const isCommitmentRecord = (it: WorkItem): boolean => metaString(it, 'promise') !== undefined;

/** A turn that makes a commitment: `commitment:` is a non-empty text, true, or a mapping. */
export function turnCommitment(it: WorkItem): string | true | undefined {
  const v = it.meta.commitment;
  if (typeof v === 'string') return v.trim() ? v : undefined;
  if (v === true) return true;
  if (v && typeof v === 'object') return typeof (v as { promise?: unknown }).promise === 'string' ? ((v as { promise: string }).promise) : true;
  return undefined;
}

export function commitmentFindings(env: PipelineEnv, slots: readonly SelectedSlot[], request: AssembledRequest, reasonOf: (item: WorkItem) => OmitReason | undefined): Finding[] {
  const fx = env.fixture;
  if (!fx || !request.ok) return [];
  const inRequest = (it: WorkItem) => (request.kept.get(it.slot) ?? []).includes(it);
  const out: Finding[] = [];
  const recorded = new Set<string>();
  const memory = slots.filter((r) => r.used && r.state.kind === 'memory');
  for (const r of memory) for (const it of loaded(r)) if (isCommitmentRecord(it) && inRequest(it)) for (const t of metaList(it, 'source_turn')) recorded.add(t);
  for (const r of slots) {
    if (!r.used || r.state.kind !== 'history') continue;
    for (const it of loaded(r)) {
      const c = turnCommitment(it);
      if (c === undefined || inRequest(it) || recorded.has(it.id)) continue;
      const reason = reasonOf(it) ?? 'not kept';
      const how = reason.startsWith('summarised-by:')
        ? `is replaced by summary ${reason.slice('summarised-by:'.length)} (a summary can drop the condition)`
        : reason === 'trimmed-for-request'
          ? 'is trimmed to fit the request'
          : `is dropped by the ${r.policy ?? 'window'} policy (${reason})`;
      const when = [it.role, it.at].filter(Boolean).join(', ');
      out.push(
        finding('commitment-dropped', fx.path, it.span, `History turn ${it.id}${when ? ` (${when})` : ''} makes a commitment${typeof c === 'string' ? `: "${c}"` : ''}, and it ${how}; no commitment record in the request names it (source_turn: ${it.id}). Keep the promise as a structured record { promise, party, condition, made_at, source_turn: ${it.id} } in a memory slot, kept independently of the history.`, {
          related: configRelated(env.ctx, r.state.name, r.policy !== undefined ? 'policy' : 'budget', `history slot '${r.state.name}'`),
        }),
      );
    }
  }
  for (const r of memory) {
    for (const it of loaded(r)) {
      if (!isCommitmentRecord(it) || inRequest(it)) continue;
      out.push(
        finding('commitment-dropped', fx.path, it.span, `Commitment record ${it.id} ("${metaString(it, 'promise')}") is not in the request (${reasonOf(it) ?? 'not kept'}); the model would not know the promise. Make '${r.state.name}' required, or give it the budget and priority to stay.`, {
          related: configRelated(env.ctx, r.state.name, 'required', `memory slot '${r.state.name}'`),
        }),
      );
    }
  }
  return out;
}
