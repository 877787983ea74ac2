/**
 * `ctxlens report --base REF [paths...]`: what a change does to every request. For every template
 * under the paths, each of its fixtures (and its sample) is assembled at the base revision (read
 * with git, src/cli/reportGit.ts; the working tree is never touched) and in the working tree, with
 * the analysis `ctxlens check` and `ctxlens assemble` run, and the two are compared by the core
 * (src/core/report): tokens, cost per request and per day, output reserve, fit, items kept and
 * dropped per slot, findings new and fixed, eval metrics, the cacheable prefix, and templates
 * added, removed or renamed (git's rename detection). Text, JSON (schemas/report.schema.json) or
 * Markdown for a pull-request comment. Exit 0, 1 when a gate fails (with the reason), 2 on usage
 * errors, outside a repository, or a base that does not exist or that a shallow clone lacks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import type { FileHost } from '../core/host';
import type { Finding } from '../core/types';
import type { EvalRun, FailOn, GateOptions, Limit, ReportFinding, RequestRun, TemplatePair, TemplateRun } from '../core/report';
import { analyzeTemplate, classifyFile, dedupe } from '../core/analyze';
import { commonPrefix } from '../core/prefix';
import { getTokenizer } from '../core/tokens';
import { LineIndex } from '../core/text/lineIndex';
import { isEvalFile, runEvalFile } from '../core/eval';
import { buildReport, compareAgents, distinctRequests, parseLimit, reportMarkdown, reportText } from '../core/report';
import { agentSnapshot, readAgentsConfig } from '../core/language';
import { resolveModel } from '../core/models';
import { priceFor } from '../core/cost';
import { DiskFileHost, SnapshotFileHost, toPosix } from '../node/fileHost';
import type { Io } from './eval';
import { CommandUsageError, abs, guarded, oneOf, rel } from './eval';
import { GitError, GitTreeHost, gitTop, headCommit, renames, resolveCommit } from './reportGit';

export const REPORT_USAGE =
  'ctxlens report --base REF [paths...] [--format text|json|markdown] [--out FILE] [--max-token-increase N|N%] [--max-cost-increase USD|N%] [--fail-on new-errors,dropped-required] [--model M]';

const FAIL_ON: readonly FailOn[] = ['new-errors', 'dropped-required'];

interface Side {
  host: FileHost;
  /** Display path of a file of this side (the base's mapped through renames onto the working tree). */
  display: (p: string) => string;
}

function limit(text: string | undefined, flag: string): Limit | undefined {
  if (text === undefined) return undefined;
  const l = parseLimit(text);
  if (!l) throw new CommandUsageError(`${flag} takes a number or a percentage (500, 10%)`, REPORT_USAGE);
  return l;
}

/** Templates under the targets on one side, absolute and sorted. */
function templatesUnder(host: FileHost, targets: readonly string[], isDir: (p: string) => boolean): string[] {
  const out = new Set<string>();
  for (const t of targets) {
    if (isDir(t)) for (const p of host.glob(t, '**/*')) if (classifyFile(p) === 'template') out.add(p);
    else if (classifyFile(t) === 'template' && host.size(t) !== undefined) out.add(t);
  }
  return [...out].sort();
}

function located(side: Side, findings: readonly Finding[]): ReportFinding[] {
  const lines = new Map<string, LineIndex | undefined>();
  return findings.map((f) => {
    // A finding on a template's sample data is located in the template, whose front matter holds it.
    const file = f.path.replace(/#sample$/, '');
    let li = lines.get(file);
    if (!lines.has(file)) {
      const text = side.host.readFile(file);
      li = text === undefined ? undefined : new LineIndex(text);
      lines.set(file, li);
    }
    const out: ReportFinding = { path: side.display(file), rule: f.rule, severity: f.severity, message: f.message };
    if (li) out.line = li.positionAt(f.span.start).line + 1;
    return out;
  });
}

/** One host call made while a template was analysed, with its answer. */
type HostCall = { op: 'read' | 'size' | 'real'; path: string; result: string | number | undefined } | { op: 'glob'; path: string; pattern: string; result: string };

/** The host with every answer it gives recorded in `calls`. */
function recording(host: FileHost, calls: HostCall[]): FileHost {
  return {
    roots: host.roots,
    readFile: (p) => {
      const result = host.readFile(p);
      calls.push({ op: 'read', path: p, result });
      return result;
    },
    size: (p) => {
      const result = host.size(p);
      calls.push({ op: 'size', path: p, result });
      return result;
    },
    glob: (dir, pattern) => {
      const result = host.glob(dir, pattern);
      calls.push({ op: 'glob', path: dir, pattern, result: result.join('\u0000') });
      return result;
    },
    ...(host.realPath
      ? {
          realPath: (p: string) => {
            const result = host.realPath!(p);
            calls.push({ op: 'real', path: p, result });
            return result;
          },
        }
      : {}),
  };
}

/**
 * Whether another host answers every recorded call alike. The analysis is a function of what its
 * host answers, so when the base answers a template's calls as the working tree did, the base's
 * requests and findings are the working tree's, and the template is not analysed twice.
 */
function answersAlike(host: FileHost, calls: readonly HostCall[]): boolean {
  for (const c of calls) {
    let now: string | number | undefined;
    if (c.op === 'glob') now = host.glob(c.path, c.pattern).join('\u0000');
    else if (c.op === 'read') now = host.readFile(c.path);
    else if (c.op === 'size') now = host.size(c.path);
    else now = host.realPath?.(c.path);
    if (now !== c.result) return false;
  }
  return true;
}

/** A template's requests on one side: the analysis of each fixture, as `ctxlens check` runs them. */
function runTemplate(side: Side, file: string, model: string | undefined, evals: ReadonlyArray<EvalRun & { template: string }>, calls?: HostCall[]): TemplateRun | undefined {
  const host = calls ? recording(side.host, calls) : side.host;
  const first = analyzeTemplate(host, file, { model });
  if (!first) return undefined;
  const analyses = [first];
  for (const f of first.fixtures) {
    if (f.path === first.fixture?.path) continue;
    const again = analyzeTemplate(host, file, { model, fixture: f.path });
    if (again) analyses.push(again);
  }
  const requests: RequestRun[] = [];
  const seen = new Set<string>();
  for (const a of analyses) {
    if (!a.assembly) continue;
    let name = a.fixture ? (first.fixtures.find((f) => f.path === a.fixture!.path)?.name ?? a.fixture.name) : '(no fixture)';
    // Two fixtures of one name are told apart by their files.
    if (seen.has(name) && a.fixture) name = side.display(a.fixture.path);
    seen.add(name);
    requests.push({ fixture: name, result: a.assembly });
  }
  const config = first.zeroConfig?.config ?? first.config?.doc.config;
  const tokenizer = getTokenizer(first.tokenizer.name);
  let cachePrefixTokens = 0;
  if (tokenizer && config) {
    // What `ctxlens assemble` reports as cache_prefix_tokens: the prefix every fixture's request shares.
    const fixtured = requests.filter((r) => r.fixture !== '(no fixture)' && r.result.ok).map((r) => r.result.messages);
    cachePrefixTokens = commonPrefix(distinctRequests(fixtured), tokenizer, config.overhead?.message ?? first.model?.messageOverhead ?? 0).tokens;
  }
  const findings: Finding[] = [];
  for (const a of analyses) for (const f of a.findings) findings.push(f);
  return {
    requests,
    requiredSlots: Object.entries(config?.slots ?? {})
      .filter(([, s]) => s.required)
      .map(([n]) => n),
    cachePrefixTokens,
    findings: located(side, dedupe(findings)),
    evals: evals.filter((e) => e.template === side.display(file)),
  };
}

/** Eval files under the targets on one side, run, keyed to the display path of their template. */
function runEvals(side: Side, targets: readonly string[], isDir: (p: string) => boolean, model: string | undefined, warn: (s: string) => void): Array<EvalRun & { template: string }> {
  const files = new Set<string>();
  for (const t of targets) {
    if (isDir(t)) for (const p of side.host.glob(t, '**/*.eval.{yaml,yml}')) files.add(p);
    else if (isEvalFile(t) && side.host.size(t) !== undefined) files.add(t);
  }
  const out: Array<EvalRun & { template: string }> = [];
  for (const f of [...files].sort()) {
    const { result, doc } = runEvalFile(side.host, f, { model });
    if (!result || result.error) {
      // `ctxlens eval` says what is wrong with the file; the report only says it is left out.
      warn(`${side.display(f)}: ${result?.error ?? doc.problems[0]?.message ?? 'cannot be run'}; left out of the report`);
      continue;
    }
    out.push({
      file: side.display(f),
      template: side.display(result.template),
      side: { evidence_coverage: result.totals.evidence_coverage, selection_recall: result.totals.selection_recall, passed: result.passed, cases: result.totals.cases },
      required: result.cases.flatMap((c) => c.metrics.required.map((r) => ({ case: c.id, id: r.id, kept: r.kept }))),
    });
  }
  return out;
}

/** The eval results of a template are the same on both sides. */
function sameEvals(a: ReadonlyArray<EvalRun & { template: string }>, b: ReadonlyArray<EvalRun & { template: string }>, template: string): boolean {
  return JSON.stringify(a.filter((e) => e.template === template)) === JSON.stringify(b.filter((e) => e.template === template));
}

export function reportCmd(args: string[], io: Io): number {
  return guarded(io, REPORT_USAGE, () => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: argOptions('report'),
    });
    if (values.base === undefined || values.base === '') throw new CommandUsageError('report needs --base REF (a branch, tag or commit to compare the working tree with)', REPORT_USAGE);
    const format = oneOf(values.format, ['text', 'json', 'markdown'] as const, '--format', 'text', REPORT_USAGE);
    const failOn: FailOn[] = [];
    for (const v of (values['fail-on'] ?? []).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean)) {
      if (!(FAIL_ON as readonly string[]).includes(v)) throw new CommandUsageError(`--fail-on takes ${FAIL_ON.join(', ')} (comma-separated or repeated)`, REPORT_USAGE);
      failOn.push(v as FailOn);
    }
    const gates: GateOptions = { failOn };
    const tokens = limit(values['max-token-increase'], '--max-token-increase');
    if (tokens) gates.maxTokenIncrease = tokens;
    const cost = limit(values['max-cost-increase'], '--max-cost-increase');
    if (cost) gates.maxCostIncrease = cost;

    let top: string;
    let commit: string;
    try {
      top = gitTop(io.cwd);
      commit = resolveCommit(top, values.base);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      io.err(`ctxlens: ${e.message}\n`);
      return 2;
    }
    const cwd = toPosix(path.resolve(io.cwd));
    const targets = (positionals.length ? positionals : ['.']).map((t) => abs(io, t));
    // The workspace as `ctxlens check` sees it: the current folder and any target outside it.
    const roots = new Set<string>([cwd]);
    for (const a of targets) if (a !== cwd && !a.startsWith(cwd + '/')) roots.add(fs.existsSync(a) && fs.statSync(a).isDirectory() ? a : toPosix(path.dirname(a)));
    const disk = new SnapshotFileHost(new DiskFileHost([...roots], { cacheListings: true }));
    let base: GitTreeHost;
    try {
      base = new GitTreeHost(top, commit, disk.roots);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      io.err(`ctxlens: ${e.message}\n`);
      return 2;
    }
    const baseFiles = base.list();
    const baseDir = (p: string) => baseFiles.some((f) => f.startsWith(p.endsWith('/') ? p : p + '/'));
    const diskDir = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();
    for (const [i, a] of targets.entries()) {
      if (!fs.existsSync(a) && base.size(a) === undefined && !baseDir(a)) {
        io.err(`ctxlens: cannot read '${positionals[i] ?? '.'}': no such file or folder in the working tree or at ${values.base}\n`);
        return 2;
      }
    }
    // One batch read of the base's files under the paths (the analysis asks for most of them).
    base.preload(targets);

    const moved = renames(top, commit, targets);
    const display = (p: string) => rel(io, p);
    const head: Side = { host: disk, display };
    const old: Side = { host: base, display: (p) => display(moved.get(p) ?? p) };

    const headTemplates = templatesUnder(disk, targets, diskDir);
    const baseTemplates = templatesUnder(base, targets, (p) => !classifyFile(p) && baseDir(p));
    const headSet = new Set(headTemplates);
    const baseSet = new Set(baseTemplates);
    const warn = (where: string) => (s: string) => io.err(`ctxlens: ${where} eval ${s}\n`);
    const headEvals = runEvals(head, targets, diskDir, values.model, warn('working tree:'));
    const baseEvals = runEvals(old, targets, (p) => !isEvalFile(p) && baseDir(p), values.model, warn(`${values.base}:`));

    const pairs: TemplatePair[] = [];
    const pairedBase = new Set<string>();
    for (const h of headTemplates) {
      let b: string | undefined = baseSet.has(h) ? h : undefined;
      if (!b) {
        for (const [from, to] of moved) if (to === h && baseSet.has(from) && !headSet.has(from)) b = from;
      }
      if (b) pairedBase.add(b);
      const pair: TemplatePair = { path: display(h) };
      if (b && b !== h) pair.basePath = display(b);
      const calls: HostCall[] = [];
      const hr = runTemplate(head, h, values.model, headEvals, b === h ? calls : undefined);
      if (hr) pair.head = hr;
      if (b) {
        // Most templates of a change read nothing it touched: their base is their working tree.
        const same = b === h && hr !== undefined && answersAlike(base, calls) && sameEvals(baseEvals, headEvals, display(h));
        const br = same ? hr : runTemplate(old, b, values.model, baseEvals);
        if (br) pair.base = br;
      }
      pairs.push(pair);
    }
    for (const b of baseTemplates) {
      if (pairedBase.has(b)) continue;
      const br = runTemplate(old, b, values.model, baseEvals);
      pairs.push({ path: display(b), ...(br ? { base: br } : {}) });
    }

    const report = buildReport(pairs, { baseRef: values.base, baseCommit: commit, headCommit: headCommit(top) }, gates);
    // What each coding agent sends with every request and per pattern, at the base and now.
    const agentModel = values.model ?? readAgentsConfig(disk, cwd).model;
    const agentInfo = agentModel ? resolveModel(agentModel) : undefined;
    const agentTokenizer = getTokenizer(agentInfo?.tokenizer ?? 'o200k_base') ?? getTokenizer('o200k_base')!;
    const headAgents = agentSnapshot(disk, cwd, { tokenizer: agentTokenizer });
    const baseAgents = agentSnapshot(base, cwd, { tokenizer: agentTokenizer }).map((a) => ({ ...a, scoped: a.scoped.map((x) => ({ ...x, path: moved.get(x.path) ?? x.path })) }));
    const agentPrice = agentInfo ? priceFor(agentInfo.name) : undefined;
    const agents = compareAgents(baseAgents, headAgents, display, { tokenizer: agentTokenizer.name, ...(agentInfo ? { model: agentInfo.name } : {}), ...(agentPrice ? { inputPerMillion: agentPrice.input } : {}) });
    if (agents) report.agents = agents;
    const text = format === 'json' ? JSON.stringify(report, null, 2) + '\n' : format === 'markdown' ? reportMarkdown(report) : reportText(report);
    if (values.out) {
      try {
        fs.writeFileSync(abs(io, values.out), text);
      } catch (e) {
        io.err(`ctxlens: cannot write '${values.out}': ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
        return 2;
      }
    } else io.out(text);
    for (const g of report.gates) {
      if (g.passed) continue;
      io.err(`ctxlens: gate ${g.gate}${g.limit ? ` ${g.limit}` : ''} failed:\n${g.reasons.map((r) => `  ${r}\n`).join('')}`);
    }
    return report.passed ? 0 : 1;
  });
}
