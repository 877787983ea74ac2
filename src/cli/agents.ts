/**
 * `ctxlens agents [PATH] [--agent NAME] [--format text|json] [--model NAME]`: what each coding
 * agent loads for a file by its own rules (src/core/language/agents, docs/agents.md), in order,
 * with each file's tokens and the total, and the findings of those files (hidden characters,
 * secrets, broken imports and links) and of the workspace's instruction files (patterns that
 * match nothing, budgets, near-duplicates). PATH is a file, or a folder (what loads for a file
 * there); the default is the current folder. The workspace root is the git top-level above PATH,
 * else the current folder. Exit 0, 1 with a finding at error level, 2 on usage errors.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import type { Finding } from '../core/types';
import type { AgentId, WhatLoads } from '../core/language';
import { AGENTS, checkAgentFiles, discoverAgentFiles, parseTemplate, readAgentsConfig, whatLoads } from '../core/language';
import { getTokenizer } from '../core/tokens';
import { resolveModel } from '../core/models';
import { priceFor } from '../core/cost';
import { LineIndex } from '../core/text/lineIndex';
import { scanSecrets } from '../core/text/scan';
import { DiskFileHost, SnapshotFileHost, toPosix } from '../node/fileHost';

export const AGENTS_USAGE = 'ctxlens agents [PATH] [--agent copilot|agents-md|claude|cursor|gemini] [--format text|json] [--model NAME]';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The folder with `.git` above `start`, else `fallback`. */
function workspaceRoot(start: string, fallback: string): string {
  for (let d = start; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return fallback;
  }
}

const WHY: Record<string, string> = {
  always: 'every request',
  pattern: 'pattern',
  nearest: 'nearest up the tree',
  ancestor: 'folder above the file',
  import: 'imported',
  link: 'attached by a link',
  prompt: 'the prompt file itself',
};

export function agentsCmd(args: string[], io: Io, usage: (m: string) => Error): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: argOptions('agents'),
  });
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') throw usage(`--format must be text or json, not '${format}'`);
  if (values.agent !== undefined && !(AGENTS as readonly string[]).includes(values.agent)) throw usage(`--agent must be one of ${AGENTS.join(', ')}, not '${values.agent}'`);
  if (positionals.length > 1) throw usage('ctxlens agents takes one PATH');
  const target = path.resolve(io.cwd, positionals[0] ?? '.');
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch {
    io.err(`ctxlens: ${positionals[0] ?? '.'}: no such file or folder\n`);
    return 2;
  }
  const root = toPosix(workspaceRoot(stat.isDirectory() ? target : path.dirname(target), path.resolve(io.cwd)));
  const host = new SnapshotFileHost(new DiskFileHost([root], { cacheListings: true }));
  const file = stat.isDirectory() ? `${toPosix(target)}/.` : toPosix(target);
  const config = readAgentsConfig(host, root);
  const modelName = values.model ?? config.model;
  const model = modelName ? resolveModel(modelName) : undefined;
  if (modelName && !model) io.err(`ctxlens: unknown model '${modelName}': counting with o200k_base\n`);
  const tokenizer = getTokenizer(model?.tokenizer ?? 'o200k_base') ?? getTokenizer('o200k_base')!;
  const files = discoverAgentFiles(host, root);
  const agent = values.agent as AgentId | undefined;
  const w = whatLoads(host, file, { tokenizer, files, budgets: config.budgets, ...(agent ? { agent } : {}) });

  // Findings of the files that load (their own text) and of the workspace's instruction files.
  const findings: Finding[] = [...config.findings, ...w.findings];
  const loadedPaths = new Set(w.agents.flatMap((a) => a.files.filter((f) => !f.estimate).map((f) => f.path)));
  for (const p of loadedPaths) {
    const text = host.readFile(p);
    if (text === undefined) continue;
    const doc = parseTemplate(p, text);
    findings.push(...(doc.format === 'agent' ? doc.findings : []), ...scanSecrets(p, text));
  }
  const workspaceFiles = host.glob(root, '**/*').map((p) => p.slice(root.length + 1));
  findings.push(...checkAgentFiles(host, root, { tokenizer, files, workspaceFiles, budgets: config.budgets }));
  const seen = new Set<string>();
  const unique = findings.filter((f) => {
    const k = `${f.path}\u0000${f.rule}\u0000${f.span.start}\u0000${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const rel = (p: string) => path.relative(root, p).split(path.sep).join('/') || '.';
  const located = unique.map((f) => {
    const text = host.readFile(f.path);
    const pos = text === undefined ? undefined : new LineIndex(text).positionAt(f.span.start);
    return { path: rel(f.path), line: pos ? pos.line + 1 : 1, column: pos ? pos.character + 1 : 1, rule: f.rule, severity: f.severity, message: f.message };
  });
  const price = model ? priceFor(model.name) : undefined;
  const per1000 = (tokens: number) => (price ? (tokens * price.input * 1000) / 1_000_000 : undefined);

  if (format === 'json') {
    io.out(
      `${JSON.stringify(
        {
          file: rel(w.file.replace(/\/\.$/, '')),
          root,
          tokenizer: w.tokenizer,
          ...(model ? { model: model.name } : {}),
          ...(price ? { price: { input_per_million: price.input, as_of: price.as_of, source: price.source } } : {}),
          agents: w.agents.map((a) => ({
            agent: a.agent,
            name: a.name,
            total: a.total,
            always: a.always,
            conditional: a.conditional,
            ...(price ? { cost_per_1000_requests: per1000(a.total) } : {}),
            files: a.files.map((f) => ({ ...f, path: rel(f.path), ...(f.from ? { from: rel(f.from) } : {}) })),
            not_loaded: a.notLoaded.map((n) => ({ ...n, path: rel(n.path) })),
          })),
          findings: located,
        },
        null,
        2,
      )}\n`,
    );
  } else io.out(textReport(w, rel, located, per1000, model?.name));
  return located.some((f) => f.severity === 'error') ? 1 : 0;
}

function textReport(w: WhatLoads, rel: (p: string) => string, findings: Array<{ path: string; line: number; column: number; rule: string; severity: string; message: string }>, per1000: (n: number) => number | undefined, model: string | undefined): string {
  const lines: string[] = [];
  const target = rel(w.file.replace(/\/\.$/, ''));
  lines.push(`What loads for ${target} (${w.tokenizer.name} tokens${w.tokenizer.exact ? '' : ', estimated'}${model ? `, ${model}` : ', the default tokenizer'})`);
  for (const a of w.agents) {
    lines.push('');
    const cost = per1000(a.total);
    lines.push(`${a.name}: ${fmt(a.total)} tokens per request (every request ${fmt(a.always)}, for this file ${fmt(a.conditional)})${cost !== undefined ? `, $${cost.toFixed(2)} per 1,000 requests` : ''}`);
    if (a.files.length === 0) lines.push('  nothing');
    const width = Math.max(...a.files.map((f) => rel(f.path).length + 2 * (f.depth ?? 0)), 10);
    a.files.forEach((f, i) => {
      const name = `${'  '.repeat(f.depth ?? 0)}${rel(f.path)}`;
      const why = `${WHY[f.why] ?? f.why}${f.pattern ? ` ${f.pattern}` : ''}${f.from ? ` by ${rel(f.from)}` : ''}`;
      lines.push(`  ${String(i + 1).padStart(2)}. ${name.padEnd(width)} ${fmt(f.tokens).padStart(9)}${f.estimate ? ' (estimated, not read: over the size limit)' : ''}  ${why}`);
    });
    for (const n of a.notLoaded) lines.push(`      not loaded by itself: ${rel(n.path)} (${n.why === 'manual' ? 'attached by hand' : n.why === 'requested' ? `the agent decides from its description${n.description ? `: ${n.description}` : ''}` : n.why === 'prompt' ? 'run as a prompt' : 'its pattern does not match'})`);
  }
  if (findings.length) {
    lines.push('');
    for (const f of findings) lines.push(`${f.path}:${f.line}:${f.column}: ${f.severity} ${f.rule}: ${f.message}`);
  }
  return `${lines.join('\n')}\n`;
}
