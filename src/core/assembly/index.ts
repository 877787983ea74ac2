/**
 * Request assembly: template + context config + fixture -> the exact messages a model would
 * receive, deterministically, with a trace of why every item was or was not included. This is the
 * pipeline of seed 002 and `build_request` of seed 000, shared by the CLI, the language server and
 * the preview. Each stage is a module with a typed input and output (stages/ and the modules they
 * call):
 *
 *   load       stages/load.ts        slots, their render state, work items with ids and counts
 *   filter     filters.ts            hard gates: tenant, version, expiry, source type
 *   dedup      dedup.ts              exact, normalized and near-duplicates of one version
 *   conflicts  stages/conflicts.ts   contradictions: supersession, or a conflict note
 *   score      score.ts              the selection score; history.ts ranks turns for retrieval
 *   budget     stages/budget.ts      slot budgets, the history remainder and its shares
 *   select     stages/select.ts      score or value-per-token order, coverage, diversity; history policies
 *   fit        stages/request.ts     drop the lowest-priority item until the request fits (fit.ts)
 *   order      order.ts              rank, edges, chronological
 *   render     render.ts             the template's own engine (envelope.ts, escape.ts)
 *   checks     stages/checks.ts      findings on the final request (commitments, coverage, conflicts, tools)
 *   trace      stages/trace.ts       the record, from the decision log (stages/log.ts)
 *
 * Load .. select are memoized per fixture value (stages/candidates.ts), so a template edit does
 * not redo them. Same inputs give a byte-identical `JSON.stringify(trace)`: no clock is read
 * (`now` comes from the input or `filters.now`), every sort breaks ties by fixture index, and
 * objects are built in a fixed key order.
 */
import type { AssemblyResult } from '../types';
import type { AssembleInput } from './stages/env';
import { prepare } from './stages/env';
import { loadSlots } from './stages/load';
import { DecisionLog } from './stages/log';
import { runCandidates, runSelection } from './stages/slots';
import { slotBudgets } from './stages/budget';
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
export type { AssembleInput } from './stages/env';
export { historyRemainders, remainderLines, withRemainder } from '../budget/remainder';

/** Bumped whenever a change to the pipeline can change its output for the same inputs (part of the cache key). */
export const ASSEMBLY_VERSION = 4;

export function assemble(input: AssembleInput): AssemblyResult {
  // Per-text facts kept across requests are valid for one pipeline version (contentCache.ts).
  useContentNamespace(`assembly:${ASSEMBLY_VERSION}`);
  const env = prepare(input);
  const { runs } = loadSlots(env);
  const log = new DecisionLog(runs.map((r) => r.state.name));
  log.report(undefined, env.shapeFindings);
  runCandidates(env, runs, log); // load -> filter -> dedup -> conflicts -> score
  slotBudgets(env.budget, runs); // budget
  runSelection(env, runs, log); // select
  const request = fitRequest(env, runs, log); // fit -> order -> render
  checkRequest(env, runs, request, log); // findings on the final request
  const trace = buildTrace(env, runs, request, log, ASSEMBLY_VERSION); // trace

  const result: AssemblyResult = { ok: request.ok, messages: request.messages, trace, budget: env.budget, findings: log.findings };
  if (request.error !== undefined) result.error = request.error;
  if (log.hasToolSlots) result.tools = log.toolDefinitions.map((t) => ({ ...t }));
  return result;
}
