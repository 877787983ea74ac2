/**
 * `ctxlens eval [files...]`: runs eval sets (`*.eval.yaml`) against their templates and prints
 * per case and in total retrieval recall, selection recall, context precision, evidence coverage,
 * forbidden items, input tokens and cost, the cacheable prefix and, with `--ablate`, the ablation
 * table (src/core/eval). Exit 0 when every threshold is met, 1 when one is not (or a case cannot
 * be assembled), 2 on usage errors or an eval file that cannot be read or parsed.
 *
 * Also the small helpers `ctxlens variants` and `ctxlens diff` share with it (the Io shape, the
 * workspace host, relative paths, usage errors).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import { DiskFileHost, toPosix } from '../node/fileHost';
import { LineIndex } from '../core/text/lineIndex';
import { evalHtml, evalJson, evalText, isEvalFile, parseEval, runEval } from '../core/eval';
import type { EvalResult } from '../core/eval';
import type { FileHost } from '../core/host';
import type { Finding } from '../core/types';
import { bindConfig, readTemplate } from '../core/analyze';
import { dirname, join } from '../core/paths';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

export const EVAL_USAGE = 'ctxlens eval [files|dirs...] [--format text|json|html] [--out FILE] [--ablate] [--ablation ID]... [--model M] [--requests-per-day N]';

/** A usage error of one of these commands: printed with the command's usage line, exit 2. */
export class CommandUsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

export function abs(io: Io, p: string): string {
  return toPosix(path.resolve(io.cwd, p));
}

export function rel(io: Io, p: string): string {
  const r = toPosix(path.relative(io.cwd, p));
  return r === '' ? '.' : r;
}

/** The workspace for some paths: the current folder, plus the folder of any path outside it. */
export function hostFor(io: Io, paths: readonly string[]): DiskFileHost {
  const cwd = toPosix(path.resolve(io.cwd));
  const roots = new Set<string>([cwd]);
  for (const p of paths) {
    const a = abs(io, p);
    if (a !== cwd && !a.startsWith(cwd + '/')) roots.add(fs.existsSync(a) && fs.statSync(a).isDirectory() ? a : toPosix(path.dirname(a)));
  }
  return new DiskFileHost([...roots]);
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string, fallback: T, usage: string): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new CommandUsageError(`${flag} must be one of ${allowed.join(', ')}`, usage);
  return value as T;
}

/** Runs a command body, turning usage errors into exit 2 with the usage line. */
export function guarded(io: Io, usage: string, body: () => number): number {
  try {
    return body();
  } catch (e) {
    if (e instanceof CommandUsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`ctxlens: ${(e as Error).message}\nusage: ${e instanceof CommandUsageError ? e.usage : usage}\n`);
      return 2;
    }
    throw e;
  }
}

/** The `config-invalid` errors of a template's context config (file or inline), located. */
function configErrors(host: FileHost, templatePath: string): Array<{ path: string; line: number; column: number; rule: string; message: string }> {
  const template = readTemplate(host, templatePath);
  if (!template) return [];
  const doc = bindConfig(host, template).config?.doc;
  if (!doc) return [];
  const li = new LineIndex(doc.text);
  return doc.findings
    .filter((x: Finding) => x.rule === 'config-invalid' && x.severity === 'error')
    .map((x: Finding) => {
      const pos = li.positionAt(x.span.start);
      return { path: doc.path, line: pos.line + 1, column: pos.character + 1, rule: x.rule, message: x.message };
    });
}

export function evalCmd(args: string[], io: Io): number {
  return guarded(io, EVAL_USAGE, () => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: argOptions('eval'),
    });
    const format = oneOf(values.format, ['text', 'json', 'html'] as const, '--format', 'text', EVAL_USAGE);
    let rate: number | undefined;
    if (values['requests-per-day'] !== undefined) {
      rate = Number(values['requests-per-day'].replace(/[_,]/g, ''));
      if (!Number.isFinite(rate) || rate < 0) throw new CommandUsageError('--requests-per-day takes a number', EVAL_USAGE);
    }
    const targets = positionals.length ? positionals : ['.'];
    const host = hostFor(io, targets);
    const files: string[] = [];
    for (const t of targets) {
      const a = abs(io, t);
      if (!fs.existsSync(a)) {
        io.err(`ctxlens: cannot read '${t}': no such file or folder\n`);
        return 2;
      }
      if (fs.statSync(a).isDirectory()) files.push(...host.glob(a, '**/*.eval.{yaml,yml}').sort());
      else if (isEvalFile(a)) files.push(a);
      else throw new CommandUsageError(`'${t}' is not an eval file (*.eval.yaml)`, EVAL_USAGE);
    }
    if (!files.length) {
      io.err(`ctxlens: no eval files (*.eval.yaml) under ${targets.join(', ')}\n`);
      return 2;
    }
    const results: EvalResult[] = [];
    let invalid = false;
    for (const f of [...new Set(files)]) {
      const text = host.readFile(f);
      const doc = text === undefined ? { path: f, text: '', problems: [{ message: `cannot read ${f}`, span: { start: 0, end: 0 } }] } : parseEval(f, text);
      if (!doc.eval) {
        invalid = true;
        const li = new LineIndex(doc.text);
        for (const p of doc.problems) {
          const pos = li.positionAt(p.span.start);
          io.err(`${rel(io, f)}:${pos.line + 1}:${pos.character + 1} error eval-invalid ${p.message}\n`);
        }
        continue;
      }
      // An invalid config would be measured with its invalid parts left out: refuse, with its findings.
      const broken = configErrors(host, join(dirname(f), doc.eval.template));
      if (broken.length) {
        invalid = true;
        for (const e of broken) io.err(`${rel(io, e.path)}:${e.line}:${e.column} error ${e.rule} ${e.message}\n`);
        io.err(`${rel(io, f)}: error its template's context config is invalid; fix it before evaluating\n`);
        continue;
      }
      const result = runEval(host, f, doc.eval, { model: values.model, ablate: values.ablate || !!values.ablation?.length, only: values.ablation, requestsPerDay: rate });
      if (result.error) {
        invalid = true;
        io.err(`${rel(io, f)}: error ${result.error}\n`);
      }
      results.push(result);
    }
    const relPath = (p: string) => rel(io, p);
    let text: string;
    if (format === 'json') text = JSON.stringify(evalJson(results, relPath), null, 2) + '\n';
    else if (format === 'html') text = evalHtml(results, relPath);
    else text = results.map((r) => evalText(r, relPath)).join('\n');
    if (values.out) {
      fs.writeFileSync(abs(io, values.out), text);
      if (format !== 'text') io.err(`wrote ${values.out}\n`);
    } else io.out(text);
    if (format === 'text') {
      const cases = results.reduce((s, r) => s + r.totals.cases, 0);
      const failed = results.reduce((s, r) => s + r.totals.failed, 0);
      io.err(`\n${cases - failed} of ${cases} case(s) pass in ${results.length} eval file(s)\n`);
    }
    if (invalid) return 2;
    return results.every((r) => r.passed) ? 0 : 1;
  });
}
