/**
 * Request assembly: template + context config + fixture -> the exact messages a model would
 * receive, deterministically, with a trace of why every item was or was not included. This is the
 * pipeline of seed 002 and `build_request` of seed 000, shared by the CLI, the language server and
 * the preview. Each stage is a function from its typed input to its typed output (stages/state.ts);
 * a stage returns a new value and never fills a field of an earlier stage's. Decisions go to an
 * append-only log (stages/log.ts) that the trace reads.
 *
 *   prepare    stages/env.ts         AssembleInput -> PipelineEnv (model, budget report, fit limit, shaped fixture)
 *   load       stages/load.ts        PipelineEnv -> LoadedSlot[] (slots, render state, fixture values)
 *   filter     filters.ts            \
 *   dedup      dedup.ts               | LoadedSlot[] -> CandidateSlot[] (stages/slots.ts rankSlots):
 *   conflicts  stages/conflicts.ts    | hard gates, duplicates, contradictions, the selection score
 *   score      score.ts              /  (history.ts ranks turns for retrieval)
 *   budget     stages/budget.ts      CandidateSlot[] -> BudgetedSlot[] (arithmetic in budget/)
 *   select     stages/select.ts      BudgetedSlot[] -> SelectedSlot[] (stages/slots.ts selectSlots; history.ts)
 *   fit        stages/request.ts     \
 *   order      order.ts               | SelectedSlot[] -> AssembledRequest: drop the lowest-priority
 *   render     render.ts             /  item until the request fits (fit.ts), order, render
 *   checks     stages/checks.ts      AssembledRequest -> RequestChecks (tools; findings to the log)
 *   trace      stages/trace.ts       everything above -> Trace
 *
 * Load .. select are memoized per fixture value (stages/candidates.ts), so a template edit does
 * not redo them. Same inputs give a byte-identical `JSON.stringify(trace)`: no clock is read
 * (`now` comes from the input or `filters.now`), every sort breaks ties by fixture index, and
 * objects are built in a fixed key order.
 */
import type { AssemblyResult } from '../types';
import type { AssembleInput } from './stages/state';
import { prepare } from './stages/env';
import { loadSlots } from './stages/load';
import { DecisionLog } from './stages/log';
import { rankSlots, selectSlots } from './stages/slots';
import { budgetSlots } from './stages/budget';
import { fitRequest } from './stages/request';
import { checkRequest } from './stages/checks';
import { buildTrace } from './stages/trace';
import { useContentNamespace } from './contentCache';

export { atTheEdges, chronological, placementOf } from './order';
export { pack } from './pack';
export { escapeUntrusted, neutralise, restore, findBreakouts } from './escape';
export { roleOf } from './render';
export type { RenderOptions } from './render';
export { sha256 } from './sha256';
export { canonicalJson } from '../canonical';
export { fitPrefix } from './fit';
export type { AssembleInput } from './stages/state';
export { historyRemainders, remainderLines, withRemainder } from '../budget/remainder';

/** Bumped whenever a change to the pipeline can change its output for the same inputs (part of the cache key). */
export const ASSEMBLY_VERSION = 4;

export function assemble(input: AssembleInput): AssemblyResult {
  // Per-text facts kept across requests are valid for one pipeline version (contentCache.ts).
  useContentNamespace(`assembly:${ASSEMBLY_VERSION}`);
  const env = prepare(input);
  const loaded = loadSlots(env); // load
  const log = new DecisionLog(loaded.map((s) => s.state.name));
  log.report(undefined, env.shapeFindings);
  const ranked = rankSlots(env, loaded, log); // filter -> dedup -> conflicts -> score
  const budgeted = budgetSlots(env.budget, ranked); // budget
  const selected = selectSlots(env, budgeted, log); // select
  const request = fitRequest(env, selected, log); // fit -> order -> render
  const checks = checkRequest(env, selected, request, log); // findings on the final request, tools
  const trace = buildTrace(env, selected, request, checks, log, ASSEMBLY_VERSION); // trace

  const result: AssemblyResult = { ok: request.ok, messages: request.messages, trace, budget: env.budget, findings: log.findings };
  if (request.error !== undefined) result.error = request.error;
  if (checks.hasToolSlots) result.tools = checks.toolDefinitions.map((t) => ({ ...t }));
  return result;
}
