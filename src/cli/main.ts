/**
 * `ctxlens`: the command-line front end over the core, for CI. A thin adapter: it reads files
 * through DiskFileHost, calls the same analysis the editor uses and prints text, JSON or SARIF.
 * Exit codes follow ESLint: 0 clean, 1 findings at error level (or a request that does not
 * fit), 2 usage, unreadable input or internal error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import { analyzeConfig, analyzeTemplate, checkFiles, checkOrder, classifyFile, templateGlobs } from '../core/analyze';
import { templateFileOf } from '../core/language';
import type { FileHost } from '../core/host';
import type { BudgetReport, Finding } from '../core/types';
import { LineIndex } from '../core/text/lineIndex';
import { getTokenizer, listAllTokenizers } from '../core/tokens';
import { resolveModel } from '../core/models';
import { REQUEST_FORMATS, formatRequest, type RequestFormat } from '../core/export';
import { contextConfigPath, initConfigText } from '../core/init';
import { remainderLines } from '../core/assembly';
import { SAMPLE_FIXTURE } from '../core/sample';
import { DiskFileHost, SnapshotFileHost, toPosix } from '../node/fileHost';
import { toSarif } from './sarif';
import { autoJobs, canStartWorkers, checkFilesInParallel, isCheckWorker, serveCheckWorker } from './checkParallel';
import { SERVE_USAGE, serve } from './serve';
import { citeCheck } from './citeCheck';
import { evalCmd } from './eval';
import { templateCachePrefix } from '../core/eval';
import { variantsCmd } from './variants';
import { diffCmd } from './diff';
import { reportCmd } from './report';
import { VERSION } from './version';
import { countsExact } from '../core/tokens/exact';
import { installCliModelFiles, modelsCmd } from './models';
import { commandHelp } from './help';
import { agentsCmd } from './agents';

class UsageError extends Error {}

const HELP = `ctxlens ${VERSION} — check LLM prompt templates and context configs

Usage:
  ctxlens check [paths...] [--format text|json|sarif] [--max-warnings N] [--jobs auto|N]
  ctxlens count [files...|-] [--tokenizer NAME | --model NAME] [--chat] [--format text|json]
  ctxlens budget <config-or-template> [--function F] [--model NAME] [--format text|json]
  ctxlens assemble <template> [--fixture F|sample] [--function F] [--test T] [--format openai|anthropic|text|json|provider] [--trace FILE] [--model M]
  ctxlens init <template> [--force] [--stdout]
  ctxlens serve [--root DIR] [--host 127.0.0.1] [--port 8710] [--max-body 2mb] [--cache-size N] [--model M]
  ctxlens cite-check <answer.json> --trace <trace.json> [--format text|json] [--strict]
  ctxlens eval [files|dirs...] [--format text|json|html] [--out FILE] [--ablate] [--ablation ID]... [--model M] [--requests-per-day N]
  ctxlens variants <template> --move ID [--positions start,middle,end] [--fixture F] [--provider openai|anthropic] [--format json|jsonl|text] [--out DIR]
  ctxlens diff <template> [--fixture A [--fixture B]] [--model A [--model B]] [--budget SPEC [--budget SPEC]] [--format text|json]
  ctxlens models [QUERY] [--format text|json]
  ctxlens agents [PATH] [--agent copilot|agents-md|claude|cursor|gemini] [--format text|json] [--model NAME]
  ctxlens report --base REF [paths...] [--format text|json|markdown] [--out FILE] [--max-token-increase N|N%] [--max-cost-increase USD|N%] [--fail-on new-errors,dropped-required]

Exit codes: 0 clean, 1 findings at error level (or a request that does not fit), 2 usage or internal error.
`;

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
  stdin: () => string;
}

const fmtNum = (n: number) => n.toLocaleString('en-US');

/**
 * The last words of the budget equation. A budget can fail with nothing over (overBy 0): when the
 * output reserve and margin leave no input budget, or the margin does not fit what the slots
 * leave. Those say so, instead of "over by 0".
 */
function budgetVerdict(r: BudgetReport): string {
  if (r.fits) return 'fits';
  if (r.overBy > 0) return `over by ${fmtNum(r.overBy)}`;
  const room = (r.limits ? r.limits.input : r.window - r.output) - r.margin;
  if (r.window <= 0) return 'no context window';
  if (room <= 0) return `does not fit: the output reserve and margin leave no input budget (${fmtNum(room)})`;
  return `does not fit: the ${fmtNum(r.margin)}-token margin has ${fmtNum(Math.max(0, r.marginLeft))} left`;
}

export function run(argv: string[], io: Io): number | Promise<number> {
  const [command, ...rest] = argv;
  const failed = (e: unknown): number => {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`ctxlens: ${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    io.err(`ctxlens: internal error: ${(e as Error).stack ?? e}\n`);
    return 2;
  };
  try {
    // `ctxlens <command> --help` (or -h) prints that command's usage and options.
    const helpAt = rest.findIndex((a) => a === '--help' || a === '-h' || a === '--');
    if (command && helpAt >= 0 && rest[helpAt] !== '--') {
      const help = commandHelp(HELP, command, command === 'serve' ? SERVE_USAGE : undefined);
      if (help) {
        io.out(help);
        return 0;
      }
    }
    installCliModelFiles(io);
    switch (command) {
      case 'check': {
        const code = check(rest, io);
        return typeof code === 'number' ? code : code.catch(failed);
      }
      case 'count':
        return count(rest, io);
      case 'budget':
        return budget(rest, io);
      case 'assemble':
        return assembleCmd(rest, io);
      case 'init':
        return init(rest, io);
      case 'serve':
        return serve(rest, io);
      case 'cite-check':
        return citeCheck(rest, io);
      case 'eval':
        return evalCmd(rest, io);
      case 'variants':
        return variantsCmd(rest, io);
      case 'diff':
        return diffCmd(rest, io);
      case 'report':
        return reportCmd(rest, io);
      case 'models':
        return modelsCmd(rest, io, (m) => new UsageError(m));
      case 'agents':
        return agentsCmd(rest, io, (m) => new UsageError(m));
      case '--version':
      case '-v':
        io.out(VERSION + '\n');
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(HELP);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (e) {
    return failed(e);
  }
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function abs(io: Io, p: string): string {
  return toPosix(path.resolve(io.cwd, p));
}

function rel(io: Io, p: string): string {
  const r = toPosix(path.relative(io.cwd, p));
  return r === '' ? '.' : r;
}

/** Workspace root for a set of paths: the git top or the current folder, whichever contains them. */
function hostFor(io: Io, paths: string[], options: { cacheListings?: boolean } = {}): DiskFileHost {
  const roots = new Set<string>([toPosix(path.resolve(io.cwd))]);
  for (const p of paths) {
    const a = abs(io, p);
    if (!a.startsWith(toPosix(path.resolve(io.cwd)) + '/') && a !== toPosix(path.resolve(io.cwd))) {
      roots.add(fs.existsSync(a) && fs.statSync(a).isDirectory() ? a : toPosix(path.dirname(a)));
    }
  }
  return new DiskFileHost([...roots], options);
}

// ---------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------

function check(args: string[], io: Io): number | Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: argOptions('check'),
  });
  const format = oneOf(values.format, ['text', 'json', 'sarif'] as const, '--format', 'text');
  let maxWarnings = -1;
  if (values['max-warnings'] !== undefined) {
    maxWarnings = Number(values['max-warnings']);
    if (!Number.isInteger(maxWarnings) || maxWarnings < 0) throw new UsageError('--max-warnings takes a whole number');
  }
  let jobs: number | 'auto' = 'auto';
  if (values.jobs !== undefined && values.jobs !== 'auto') {
    jobs = Number(values.jobs);
    if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new UsageError('--jobs takes auto or a whole number from 1 to 64');
  }
  const targets = positionals.length ? positionals : ['.'];
  // One run reads each file, folder and real path once, however many templates ask for it.
  const host = new SnapshotFileHost(hostFor(io, targets, { cacheListings: true }));
  const files: string[] = [];
  for (const t of targets) {
    const a = abs(io, t);
    if (!fs.existsSync(a)) {
      io.err(`ctxlens: cannot read '${t}': no such file or folder\n`);
      return 2;
    }
    if (fs.statSync(a).isDirectory()) {
      // `**/*` never enters hidden folders: the formats' globs that name one (`.github/…`, `.cursor/rules/…`) are walked too.
      const found = new Set<string>();
      for (const g of ['**/*', ...templateGlobs().filter((x) => /(^|\/)\.[^/.]/.test(x))]) for (const p of host.glob(a, g)) if (!found.has(p) && classifyFile(p)) found.add(p);
      for (const p of [...found].sort()) files.push(p);
    } else if (classifyFile(a)) files.push(a);
    // A dotprompt partial named on its own (a pre-commit hook passes every staged file) is checked
    // inside the templates that include it.
    else if (/(^|\/)_[^/]*\.prompt$/i.test(a)) continue;
    else {
      io.err(`ctxlens: '${t}' is not a template (.prompt, .prompty), config (*.context.yaml) or fixture (*.fixture.yaml|json)\n`);
      return 2;
    }
  }
  const workers = jobs === 'auto' ? autoJobs(checkOrder(files).templates.length) : jobs;
  if (workers > 1 && canStartWorkers()) {
    return checkFilesInParallel(files, host, workers).then((byFile) => report(byFile, files.length, host, format, maxWarnings, io));
  }
  return report(checkFiles(host, files), files.length, host, format, maxWarnings, io);
}

/** Prints what `check` found and returns its exit code. */
function report(byFile: Map<string, Finding[]>, fileCount: number, host: FileHost, format: 'text' | 'json' | 'sarif', maxWarnings: number, io: Io): number {
  const texts = new Map<string, LineIndex>();
  const index = (p: string) => {
    let li = texts.get(p);
    if (!li) texts.set(p, (li = new LineIndex(host.readFile(p) ?? '')));
    return li;
  };
  const summary = { errors: 0, warnings: 0, infos: 0 };
  const entries = [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const [, list] of entries) {
    for (const f of list) {
      if (f.severity === 'error') summary.errors++;
      else if (f.severity === 'warning') summary.warnings++;
      else summary.infos++;
    }
  }
  const range = (f: Finding) => {
    const li = index(f.path);
    return { start: li.positionAt(f.span.start), end: li.positionAt(f.span.end) };
  };
  if (format === 'json') {
    const out = {
      version: 1,
      files: entries.map(([p, list]) => ({
        path: rel(io, p),
        diagnostics: list.map((f) => ({ rule: f.rule, severity: f.severity, message: f.message, range: range(f) })),
      })),
      summary,
    };
    io.out(JSON.stringify(out, null, 2) + '\n');
  } else if (format === 'sarif') {
    io.out(JSON.stringify(toSarif(entries.map(([p, list]) => ({ path: rel(io, p), findings: list.map((f) => ({ finding: f, range: range(f) })) }))), null, 2) + '\n');
  } else {
    for (const [p, list] of entries) {
      for (const f of list) {
        const r = range(f);
        io.out(`${rel(io, p)}:${r.start.line + 1}:${r.start.character + 1} ${f.severity} ${f.rule} ${f.message}\n`);
      }
    }
    const n = summary.errors + summary.warnings + summary.infos;
    io.err(n ? `\n${summary.errors} error(s), ${summary.warnings} warning(s), ${summary.infos} info(s) in ${fileCount} file(s)\n` : `No problems in ${fileCount} file(s).\n`);
  }
  if (summary.errors > 0) return 1;
  if (maxWarnings >= 0 && summary.warnings > maxWarnings) {
    if (format === 'text') io.err(`ctxlens: ${summary.warnings} warnings exceed --max-warnings ${maxWarnings}\n`);
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// count
// ---------------------------------------------------------------------------

function count(args: string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: argOptions('count'),
  });
  const format = oneOf(values.format, ['text', 'json'] as const, '--format', 'text');
  if (values.tokenizer && values.model) throw new UsageError('use --tokenizer or --model, not both');
  const model = values.model ? resolveModel(values.model) : undefined;
  if (values.model && !model) throw new UsageError(`unknown model '${values.model}'`);
  const name = values.tokenizer ?? model?.tokenizer ?? 'o200k_base';
  const tokenizer = getTokenizer(name);
  if (!tokenizer) throw new UsageError(`unknown tokenizer '${name}' (known: ${listAllTokenizers().join(', ')})`);
  const exact = countsExact(tokenizer, model);
  const inputs = positionals.length ? positionals : ['-'];
  const files: Array<{ path: string; tokens: number; chars: number }> = [];
  for (const p of inputs) {
    let text: string;
    if (p === '-') text = io.stdin();
    else {
      try {
        // Regular files only: a FIFO (or a device) would block the read forever.
        if (!fs.statSync(abs(io, p)).isFile()) throw new Error('not a regular file');
        text = fs.readFileSync(abs(io, p), 'utf8');
      } catch {
        io.err(`ctxlens: cannot read '${p}'\n`);
        return 2;
      }
    }
    let tokens: number;
    if (values.chat) {
      // A Chat Completions messages array counted with the endpoint's accounting.
      let messages: unknown;
      try {
        messages = JSON.parse(text);
      } catch {
        io.err(`ctxlens: --chat expects a JSON messages array in '${p}'\n`);
        return 2;
      }
      if (!Array.isArray(messages)) {
        io.err(`ctxlens: --chat expects a JSON messages array in '${p}'\n`);
        return 2;
      }
      const perMessage = model?.messageOverhead ?? 3;
      const perRequest = model?.requestOverhead ?? 3;
      tokens = perRequest;
      for (const m of messages) {
        const c = (m as { content?: unknown }).content;
        // A content array (text and image parts): its text parts are counted; images are not text.
        const text = Array.isArray(c) ? c.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('') : String(c ?? '');
        tokens += perMessage + tokenizer.count(text);
      }
    } else tokens = tokenizer.count(text);
    files.push({ path: p === '-' ? '-' : rel(io, abs(io, p)), tokens, chars: [...text].length });
  }
  const total = files.reduce((s, f) => s + f.tokens, 0);
  if (format === 'json') io.out(JSON.stringify({ tokenizer: tokenizer.name, exact, files, total }, null, 2) + '\n');
  else {
    const w = Math.max(...files.map((f) => fmtNum(f.tokens).length), fmtNum(total).length);
    for (const f of files) io.out(`${fmtNum(f.tokens).padStart(w)}  ${f.path}\n`);
    if (files.length > 1) io.out(`${fmtNum(total).padStart(w)}  total\n`);
    io.out(`(${tokenizer.name}${exact ? '' : ', estimate'})\n`);
  }
  return 0;
}

// ---------------------------------------------------------------------------
// budget
// ---------------------------------------------------------------------------

function budget(args: string[], io: Io): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: argOptions('budget') });
  const format = oneOf(values.format, ['text', 'json'] as const, '--format', 'text');
  if (positionals.length !== 1) throw new UsageError('budget takes one config or template path');
  const file = templateAddress(abs(io, positionals[0]), values.function);
  if (!fs.existsSync(templateFileOf(file))) {
    io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
    return 2;
  }
  const host = hostFor(io, [templateFileOf(file)]);
  const kind = classifyFile(file);
  let report: BudgetReport | undefined;
  let problems: Finding[] = [];
  if (kind === 'template') {
    const a = analyzeTemplate(host, file, { model: values.model });
    report = a?.budget;
    problems = a?.findings.filter((f) => f.rule === 'config-invalid' || f.rule === 'file-reference') ?? [];
  } else if (kind === 'config') {
    const a = analyzeConfig(host, file, { model: values.model });
    report = a?.budget;
    problems = a?.findings.filter((f) => f.rule === 'config-invalid') ?? [];
  } else throw new UsageError(`'${positionals[0]}' is not a template or *.context.yaml`);
  if (!report) {
    for (const f of problems) io.err(`${rel(io, f.path)}: ${f.rule} ${f.message}\n`);
    io.err(`ctxlens: no budget could be computed for '${positionals[0]}'\n`);
    return 2;
  }
  if (format === 'json') {
    io.out(
      JSON.stringify(
        {
          model: report.model,
          tokenizer: report.tokenizer,
          exact: report.exact,
          window: report.window,
          ...(report.limits ? { limits: report.limits } : {}),
          output: report.output,
          margin: report.margin,
          input_budget: report.inputBudget,
          slots: report.slots.map((s) => ({ name: s.name, kind: s.kind, budget: s.budget ?? 0, ...(s.written !== undefined && typeof s.written === 'string' ? { written: s.written } : {}) })),
          input_allocated: report.inputAllocated,
          total: report.total,
          fits: report.fits,
          over_by: report.overBy,
          ...(report.remainder ? { remainder: report.remainder } : {}),
        },
        null,
        2,
      ) + '\n',
    );
  } else io.out(budgetTable(report));
  return report.fits ? 0 : 1;
}

export function budgetTable(r: BudgetReport): string {
  const rows: Array<[string, string, string]> = r.slots.map((s) => [s.name, s.kind + (s.required ? ', required' : ''), s.budget === undefined ? '—' : fmtNum(s.budget) + (typeof s.written === 'string' ? ` (${s.written})` : '')]);
  const w0 = Math.max(20, ...rows.map((x) => x[0].length));
  const w1 = Math.max(10, ...rows.map((x) => x[1].length));
  const w2 = Math.max(...rows.map((x) => x[2].length), fmtNum(r.total).length, 8);
  const line = (a: string, b: string, c: string) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c.padStart(w2)}\n`;
  let out = line('slot', 'kind', 'tokens');
  out += line('-'.repeat(w0), '-'.repeat(w1), '-'.repeat(w2));
  for (const row of rows) out += line(...row);
  out += line('-'.repeat(w0), '', '-'.repeat(w2));
  out += line('input allocated', '', fmtNum(r.inputAllocated));
  out += line('output reserve', '', fmtNum(r.output));
  out += line('safety margin', '', fmtNum(r.margin));
  out += r.limits ? line('input + margin', '', fmtNum(r.inputAllocated + r.margin)) : line('total', '', fmtNum(r.total));
  out += line(r.limits ? 'input limit' : 'window', '', fmtNum(r.limits ? r.limits.input : r.window));
  const sum = r.slots.length ? `${r.slots.map((s) => fmtNum(s.budget ?? 0)).join(' + ')} = ` : '';
  if (r.limits) {
    // Separate limits: the input side against the input limit, the output reserve against the output limit.
    const input = r.inputAllocated + r.margin;
    out += `\n${sum}${fmtNum(r.inputAllocated)} input + ${fmtNum(r.margin)} margin = ${fmtNum(input)} ${input <= r.limits.input ? '<=' : '>'} ${fmtNum(r.limits.input)} input limit; ${fmtNum(r.output)} output ${r.output <= r.limits.output ? '<=' : '>'} ${fmtNum(r.limits.output)} output limit: ${budgetVerdict(r)}\n`;
  } else {
    out += `\n${sum}${fmtNum(r.inputAllocated)} input + ${fmtNum(r.output)} output + ${fmtNum(r.margin)} margin = ${fmtNum(r.total)} ${r.total <= r.window ? '<=' : '>'} ${fmtNum(r.window)}: ${budgetVerdict(r)}\n`;
  }
  // Seed 000 3.4: what a history slot with a policy has left once the fixed slots are paid for.
  for (const l of remainderLines(r)) out += l + '\n';
  out += `(${r.tokenizer}${r.exact ? '' : ', estimate'}${r.model ? `, ${r.model}` : ''})\n`;
  return out;
}

// ---------------------------------------------------------------------------
// assemble
// ---------------------------------------------------------------------------

function assembleCmd(args: string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: argOptions('assemble'),
  });
  if (positionals.length !== 1) throw new UsageError('assemble takes one template path');
  // BAML: `x.baml --function F` or `x.baml#F`; `--test T` names the test block whose args are the values.
  if (values.test && values.fixture) throw new UsageError('use --test or --fixture, not both');
  const file = templateAddress(abs(io, positionals[0]), values.function);
  const baml = file.replace(/#[^/]*$/, '') !== file || /\.baml$/i.test(file);
  const provider = values.format === 'provider' || (baml && values.format === undefined);
  const format = provider ? 'openai' : (oneOf(values.format, REQUEST_FORMATS, '--format', 'openai') as RequestFormat);
  if (classifyFile(file) !== 'template') throw new UsageError(`'${positionals[0]}' is not a template (.prompt, .prompty or .baml)`);
  if (!fs.existsSync(templateFileOf(file))) {
    io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
    return 2;
  }
  const wanted = values.test ?? values.fixture;
  const host = hostFor(io, [templateFileOf(file), ...(values.fixture ? [values.fixture] : [])]);
  const fixture = wanted ? (fs.existsSync(abs(io, wanted)) ? abs(io, wanted) : wanted) : undefined;
  const a = analyzeTemplate(host, file, { fixture, model: values.model });
  if (!a) {
    io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
    return 2;
  }
  if (wanted && a.fixture?.path !== fixture && a.fixture?.name !== wanted) {
    io.err(`ctxlens: ${values.test ? 'test' : 'fixture'} '${wanted}' cannot be used for ${positionals[0]} (known: ${a.fixtures.map((f) => f.name).join(', ') || 'none'})\n`);
    return 2;
  }
  if (!a.assembly) {
    for (const f of a.findings.filter((x) => x.severity === 'error')) io.err(`${rel(io, f.path)}: ${f.rule} ${f.message}\n`);
    io.err(`ctxlens: ${positionals[0]} has no usable context config\n`);
    return 2;
  }
  // The engine's findings, and the template's own where its address names nothing (a BAML function that is not in the file).
  const engine = [...a.template.findings.filter((x) => x.rule === 'template-invalid'), ...a.assembly.findings.filter((x) => x.rule === 'template-invalid' || x.rule === 'unsupported-feature')];
  for (const f of engine) io.err(`${rel(io, templateFileOf(f.path))}: ${f.severity} ${f.rule} ${f.message}\n`);
  if (engine.some((x) => x.rule === 'template-invalid')) {
    io.err(`ctxlens: ${positionals[0]} cannot be rendered\n`);
    return 1;
  }
  // The cacheable prefix shared by every fixture of the template (src/core/eval, prefix.ts).
  const prefix = templateCachePrefix(host, file, { model: values.model });
  const result = { ...a.assembly, trace: { ...a.assembly.trace, cache_prefix_tokens: prefix?.tokens ?? 0 } };
  if (values.trace) fs.writeFileSync(abs(io, values.trace), JSON.stringify(result.trace, null, 2) + '\n');
  if (!result.ok) {
    io.err(`ctxlens: assembly failed: ${result.error}\n`);
    return 1;
  }
  if (provider) {
    // The request BAML's runtime built (its headers, which carry the credentials, are never kept).
    const r = result.trace.provider_request;
    if (!r) {
      io.err(`ctxlens: ${positionals[0]} has no request built by its runtime (--format provider is for BAML functions)\n`);
      return 2;
    }
    io.out(`${r.body}\n`);
    return 0;
  }
  io.out(formatRequest(result, format, a.model?.name ?? a.template.frontMatter?.model?.value));
  return 0;
}

/** A template's address: the path, or with `--function F` the function F of a BAML file (`x.baml#F`). */
function templateAddress(path: string, fn: string | undefined): string {
  if (fn === undefined) return path;
  if (!/^[A-Za-z_]\w*$/.test(fn)) throw new UsageError(`--function takes a function name, not '${fn}'`);
  if (!/\.baml$/i.test(path)) throw new UsageError('--function is for a .baml file');
  return `${path}#${fn}`;
}

// ---------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------

function init(args: string[], io: Io): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: argOptions('init') });
  if (positionals.length !== 1) throw new UsageError('init takes one template path');
  const file = abs(io, positionals[0]);
  if (classifyFile(file) !== 'template') throw new UsageError(`'${positionals[0]}' is not a template (.prompt or .prompty)`);
  if (!fs.existsSync(file)) {
    io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
    return 2;
  }
  const host = hostFor(io, positionals);
  const a = analyzeTemplate(host, file, { model: values.model });
  if (!a) {
    io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
    return 2;
  }
  if (a.config && !values.force) {
    io.err(`ctxlens: ${positionals[0]} already has a context config: ${rel(io, a.config.path)}\n`);
    return 2;
  }
  const text = initConfigText(a);
  if (values.stdout) {
    io.out(text);
    return 0;
  }
  const target = contextConfigPath(file);
  if (fs.existsSync(target) && !values.force) {
    io.err(`ctxlens: ${rel(io, target)} exists; use --force to overwrite it\n`);
    return 2;
  }
  fs.writeFileSync(target, text);
  io.out(`wrote ${rel(io, target)}: ${a.template.uses.length ? new Set(a.template.uses.map((u) => u.slot)).size : 0} slot(s); declare trust: for each, then run ctxlens check\n`);
  return 0;
}

if (isCheckWorker()) serveCheckWorker();
else if (require.main === module) {
  const code = run(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    cwd: process.cwd(),
    stdin: () => fs.readFileSync(0, 'utf8'),
  });
  if (typeof code === 'number') process.exitCode = code;
  else void code.then((c) => (process.exitCode = c));
}
