/**
 * `ctxlens diff <template> --fixture A --fixture B` (or `--model A --model B`, or
 * `--budget evidence=1500 --budget evidence=3000`): two assemblies of one template side by side
 * (src/core/eval/diff.ts): the items only one side kept per slot and why the other dropped them,
 * token and cost deltas, and the first message whose text differs. A flag given once compares the
 * template as it is (A) with that change (B); given twice, A takes the first value and B the
 * second, and a flag given once beside it holds for both sides. Exit 0 (a diff is a report), 2 on usage errors or unusable input.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import type { ContextConfig } from '../core/config/schema';
import type { FixtureDoc } from '../core/types';
import { classifyFile } from '../core/analyze';
import { assembleWith, diffAssemblies, findFixture, patchConfig, prepareSubject } from '../core/eval';
import type { AssemblyDiff, Subject } from '../core/eval';
import { formatUsd } from '../core/cost';
import type { Io } from './eval';
import { CommandUsageError, abs, guarded, hostFor, oneOf, rel } from './eval';

export const DIFF_USAGE = 'ctxlens diff <template> [--fixture A [--fixture B]] [--model A [--model B]] [--budget SPEC [--budget SPEC]] [--format text|json]   (SPEC: evidence=1500,window=16000,output=2000,evidence.pack=skip)';

const TOP_KEYS = ['window', 'output', 'margin'];

/** A budget spec as a config patch: `slot=N` sets the slot's budget, `slot.key=v` any slot field, `window|output|margin=N` the request. */
export function budgetPatch(spec: string, config: ContextConfig): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const slots: Record<string, Record<string, unknown>> = {};
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z_][\w-]*)(?:\.([a-z_]+))?=(.+)$/.exec(part);
    if (!m) throw new CommandUsageError(`--budget '${part}' is not key=value (evidence=1500, window=16000, evidence.max_items=4)`, DIFF_USAGE);
    const [, key, field, raw] = m;
    const value: unknown = /^\d+$/.test(raw) ? Number(raw) : raw === 'true' ? true : raw === 'false' ? false : raw;
    if (!field && TOP_KEYS.includes(key)) {
      patch[key] = value;
      continue;
    }
    if (!(key in (config.slots ?? {}))) throw new CommandUsageError(`--budget: '${key}' is neither a slot of the config (${Object.keys(config.slots ?? {}).join(', ')}) nor one of ${TOP_KEYS.join(', ')}`, DIFF_USAGE);
    (slots[key] ??= {})[field ?? 'budget'] = value;
  }
  if (Object.keys(slots).length) patch.slots = slots;
  return patch;
}

/**
 * A side's value: with two values A takes the first and B the second. With one, it is the change
 * B makes (A has none), unless another flag is given twice: then that flag is what is compared,
 * and the single value holds for both sides (`--fixture F --budget A --budget B` compares F under A
 * with F under B).
 */
function sides(list: string[] | undefined, flag: string, shared: boolean): [string | undefined, string | undefined] {
  if (!list?.length) return [undefined, undefined];
  if (list.length > 2) throw new CommandUsageError(`${flag} is given at most twice (A and B)`, DIFF_USAGE);
  if (list.length === 2) return [list[0], list[1]];
  return shared ? [list[0], list[0]] : [undefined, list[0]];
}

function describe(fixture: FixtureDoc | undefined, model: string | undefined, budget: string | undefined): string {
  return [fixture ? `fixture ${fixture.name}` : 'no fixture', model ?? 'model as configured', budget ? `budget ${budget}` : ''].filter(Boolean).join(' · ');
}

export function diffText(d: AssemblyDiff, a: string, b: string): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const signed = (x: number) => (x === 0 ? '±0' : `${x > 0 ? '+' : '−'}${n(Math.abs(x))}`);
  let out = `A: ${a}\nB: ${b}\n\n`;
  if (!d.ok_a) out += 'A: the request cannot be built\n';
  if (!d.ok_b) out += 'B: the request cannot be built\n';
  out += `input tokens  ${n(d.input_tokens.a)} -> ${n(d.input_tokens.b)}  (${signed(d.input_tokens.delta)})\n`;
  if (d.cost) out += `cost          ${formatUsd(d.cost.a)} -> ${formatUsd(d.cost.b)}  (${d.cost.delta === 0 ? '±0' : `${d.cost.delta > 0 ? '+' : '−'}${formatUsd(Math.abs(d.cost.delta))}`} per request)\n`;
  const rows = d.slots.map((s) => [s.slot, `${s.kept_a} of ${s.total_a}`, `${s.kept_b} of ${s.total_b}`, n(s.tokens_a), n(s.tokens_b), signed(s.tokens_b - s.tokens_a)]);
  const head = ['slot', 'A kept', 'B kept', 'A tokens', 'B tokens', 'Δ'];
  const all = [head, ...rows];
  const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  out += '\n' + all.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ')).join('\n') + '\n';
  for (const s of d.slots) {
    for (const x of s.only_a) out += `  ${s.slot}: ${x.id} only in A (B: ${x.b})\n`;
    for (const x of s.only_b) out += `  ${s.slot}: ${x.id} only in B (A: ${x.a})\n`;
    for (const x of s.moved) out += `  ${s.slot}: ${x.id} moved #${x.a + 1} -> #${x.b + 1}\n`;
  }
  const f = d.first_difference;
  if (!f) out += '\nthe messages are the same\n';
  else {
    out += `\nfirst differing message: #${f.message + 1} (${f.role_a ?? 'none'}${f.role_b !== f.role_a ? ` / ${f.role_b ?? 'none'}` : ''}), line ${f.line}\n`;
    out += `  A: ${f.a.slice(0, 200)}\n  B: ${f.b.slice(0, 200)}\n`;
  }
  return out;
}

export function diffCmd(args: string[], io: Io): number {
  return guarded(io, DIFF_USAGE, () => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: argOptions('diff'),
    });
    if (positionals.length !== 1) throw new CommandUsageError('diff takes one template path', DIFF_USAGE);
    const format = oneOf(values.format, ['text', 'json'] as const, '--format', 'text', DIFF_USAGE);
    const file = abs(io, positionals[0]);
    if (classifyFile(file) !== 'template') throw new CommandUsageError(`'${positionals[0]}' is not a template (.prompt or .prompty)`, DIFF_USAGE);
    if (!fs.existsSync(file)) {
      io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
      return 2;
    }
    const twice = [values.fixture, values.model, values.budget].some((l) => (l?.length ?? 0) >= 2);
    const [fa, fb] = sides(values.fixture, '--fixture', twice);
    const [ma, mb] = sides(values.model, '--model', twice);
    const [ba, bb] = sides(values.budget, '--budget', twice);
    if (fb === undefined && mb === undefined && bb === undefined) throw new CommandUsageError('nothing to compare: give --fixture, --model or --budget', DIFF_USAGE);
    const host = hostFor(io, [positionals[0], ...(values.fixture ?? [])]);
    const side = (fixture: string | undefined, model: string | undefined, budget: string | undefined): { subject: Subject; fixture?: FixtureDoc; config: ContextConfig } | string => {
      const p = prepareSubject(host, file, { model });
      if (!p.subject) return p.error;
      const subject = p.subject;
      const wanted = fixture ?? subject.analysis.fixtures[0]?.name;
      let fx: FixtureDoc | undefined;
      if (wanted !== undefined) {
        const f = findFixture(host, subject, abs(io, 'x'), fs.existsSync(abs(io, wanted)) ? abs(io, wanted) : wanted);
        if (!f.fixture) return f.error ?? `fixture ${wanted} cannot be read`;
        fx = f.fixture;
      }
      let config = subject.config;
      if (budget !== undefined) {
        const patched = patchConfig(config, budgetPatch(budget, config));
        if (!patched.config) throw new CommandUsageError(`--budget ${budget}: ${patched.error}`, DIFF_USAGE);
        config = patched.config;
      }
      return { subject, fixture: fx, config };
    };
    const A = side(fa, ma, ba);
    if (typeof A === 'string') {
      io.err(`ctxlens: ${A}\n`);
      return 2;
    }
    const B = side(fb, mb, bb);
    if (typeof B === 'string') {
      io.err(`ctxlens: ${B}\n`);
      return 2;
    }
    const ra = assembleWith(A.subject, A.fixture, A.config);
    const rb = assembleWith(B.subject, B.fixture, B.config);
    const d = diffAssemblies(ra, rb);
    const la = describe(A.fixture, A.subject.modelName, ba);
    const lb = describe(B.fixture, B.subject.modelName, bb);
    if (format === 'json') io.out(JSON.stringify({ template: rel(io, file), a: { label: la, model: A.subject.modelName, fixture: A.fixture?.name }, b: { label: lb, model: B.subject.modelName, fixture: B.fixture?.name }, ...d }, null, 2) + '\n');
    else io.out(diffText(d, la, lb));
    return 0;
  });
}
