/**
 * `ctxlens cite-check answer.json --trace trace.json`: the citation check of `POST /v1/validate`
 * as a command, for CI and offline evaluation. The answer is seed 002's `{ answer, citations:
 * [{ claim_id, evidence_ids }] }`; the trace is a trace file (`ctxlens assemble --trace`) or a
 * service response (its `trace`). Exit 0 when every cited id was supplied, 1 when one was not
 * (or, with --strict, when a claim cites nothing), 2 on usage or unreadable input.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import { checkCitations } from '../lib/evidence';
import type { CitedAnswer } from '../lib/evidence';
import { ValidateRequestSchema, firstIssue } from '../service/schema';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

export const CITE_CHECK_USAGE = 'ctxlens cite-check <answer.json> --trace <trace.json> [--format text|json] [--strict]';

function readJson(io: Io, file: string, what: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(io.cwd, file), 'utf8');
  } catch {
    throw new Error(`cannot read ${what} '${file}'`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} '${file}' is not valid JSON: ${(e as Error).message}`);
  }
}

export function citeCheck(args: string[], io: Io): number {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: ReturnType<typeof argOptions<'cite-check'>> }>>;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: argOptions('cite-check') });
  } catch (e) {
    io.err(`ctxlens cite-check: ${(e as Error).message}\n\nUsage: ${CITE_CHECK_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const format = values.format ?? 'text';
  if (positionals.length !== 1 || !values.trace || (format !== 'text' && format !== 'json')) {
    io.err(`ctxlens cite-check: ${positionals.length !== 1 ? 'give one answer file' : !values.trace ? '--trace is required' : '--format must be text or json'}\n\nUsage: ${CITE_CHECK_USAGE}\n`);
    return 2;
  }
  let answer: unknown;
  let traceFile: unknown;
  try {
    answer = readJson(io, positionals[0], 'answer');
    traceFile = readJson(io, values.trace, 'trace');
  } catch (e) {
    io.err(`ctxlens cite-check: ${(e as Error).message}\n`);
    return 2;
  }
  // A service response carries its trace under `trace`.
  const trace = traceFile && typeof traceFile === 'object' && 'trace' in traceFile && !('citation_map' in traceFile) ? (traceFile as { trace: unknown }).trace : traceFile;
  const a = answer && typeof answer === 'object' ? (answer as Record<string, unknown>) : {};
  const req = ValidateRequestSchema.safeParse({ ...(a.answer !== undefined ? { answer: a.answer } : {}), citations: a.citations, trace });
  if (!req.success) {
    const i = firstIssue(req.error);
    io.err(`ctxlens cite-check: ${i.path.startsWith('trace') ? values.trace : positionals[0]}: ${i.message}\n`);
    return 2;
  }
  const r = checkCitations(req.data as CitedAnswer, req.data.trace!);
  if (format === 'json') io.out(JSON.stringify(r, null, 2) + '\n');
  else {
    for (const c of r.claims) {
      if (c.status === 'invalid') io.out(`${c.claim_id}: cites ${c.unknown_ids.map((id) => `${id}${r.omitted_ids[id] ? ` (left out: ${r.omitted_ids[id]})` : ' (not a candidate)'}`).join(', ')}, not supplied in the request\n`);
      else if (c.status === 'uncited') io.out(`${c.claim_id}: cites no evidence\n`);
    }
    const n = r.claims.length;
    io.err(`${n} claim(s): ${r.claims.filter((c) => c.status === 'supported').length} cite supplied evidence, ${r.claims.filter((c) => c.status === 'invalid').length} cite ids that were not supplied, ${r.uncited_claims.length} cite nothing\n`);
  }
  return !r.valid || (values.strict && !r.complete) ? 1 : 0;
}
