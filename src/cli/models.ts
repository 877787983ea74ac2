/**
 * `ctxlens models [QUERY] [--format text|json]`: what the model registry knows, and the model
 * files the CLI installs for it (the workspace's `.context-lens/models.yaml`, then the user's
 * `~/.config/context-lens/models.yaml`; docs/models.md).
 */
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import type { ModelInfo } from '../core/types';
import { listModels, modelFiles, resolveModel } from '../core/models';
import { installModelFiles } from '../node/modelFiles';
import { priceFor } from '../core/cost';
import { getTokenizer } from '../core/tokens';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

/** Reads and installs the model files of `cwd`; their problems go to stderr as warnings (a bad entry is skipped). */
export function installCliModelFiles(io: Io): void {
  installModelFiles([io.cwd], (line) => io.err(`ctxlens: warning: ${line}\n`));
}

interface Row {
  name: string;
  provider: string;
  window: number;
  max_output?: number;
  max_input?: number;
  tokenizer: string;
  counts: 'exact' | 'estimate';
  price?: { input: number; cached_input?: number; output?: number; as_of: string; source: string };
  source?: string;
  as_of?: string;
  retired?: { date?: string; successor?: string; source: string };
  retires?: { date?: string; successor?: string; source: string };
  estimate?: { family: string; like: string };
}

function row(m: ModelInfo): Row {
  const p = m.estimate ? undefined : priceFor(m.name);
  return {
    name: m.name,
    provider: m.provider,
    window: m.window,
    ...(m.maxOutput !== undefined ? { max_output: m.maxOutput } : {}),
    ...(m.maxInput !== undefined ? { max_input: m.maxInput } : {}),
    tokenizer: m.tokenizer,
    counts: m.exact && getTokenizer(m.tokenizer)?.exact ? 'exact' : 'estimate',
    ...(p ? { price: { input: p.input, ...(p.cached_input !== undefined ? { cached_input: p.cached_input } : {}), ...(p.output !== undefined ? { output: p.output } : {}), as_of: p.as_of, source: p.source } } : {}),
    ...(m.source ? { source: m.source } : {}),
    ...(m.asOf ? { as_of: m.asOf } : {}),
    ...(m.retired ? { retired: m.retired } : {}),
    ...(m.retires ? { retires: m.retires } : {}),
    ...(m.estimate ? { estimate: m.estimate } : {}),
  };
}

const num = (n: number) => n.toLocaleString('en-US');
const usd = (n: number | undefined) => (n === undefined ? '—' : `$${n}`);

function status(r: Row): string {
  const next = (l: { successor?: string }) => (l.successor ? ` → ${l.successor}` : '');
  if (r.retired) return `retired ${r.retired.date ?? '(date not published)'}${next(r.retired)}`;
  if (r.retires) return `retires ${r.retires.date ?? ''}${next(r.retires)}`;
  if (r.estimate) return `estimate (${r.estimate.family} family, limits of ${r.estimate.like})`;
  return 'current';
}

function table(rows: Row[]): string {
  const head = ['model', 'provider', 'window', 'output', 'tokenizer', 'price in/out per 1M', 'as of', 'status', 'source'];
  const body = rows.map((r) => [
    r.name,
    r.provider,
    num(r.max_input ?? r.window),
    r.max_output !== undefined ? num(r.max_output) : 'shares window',
    `${r.tokenizer} (${r.counts})`,
    r.price ? `${usd(r.price.input)}/${usd(r.price.output)} (${r.price.as_of})` : '—',
    r.as_of ?? '—',
    status(r),
    r.source ?? '—',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n') + '\n';
}

export function modelsCmd(args: string[], io: Io, usage: (message: string) => Error): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: argOptions('models') });
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') throw usage('--format must be one of text, json');
  if (positionals.length > 1) throw usage('models takes at most one QUERY');
  const query = positionals[0]?.toLowerCase();
  const all = listModels();
  let models = query ? all.filter((m) => m.name.toLowerCase().includes(query) || m.provider.toLowerCase() === query) : all;
  // A name of a known family the registry does not list: show what it resolves to.
  if (query && models.length === 0) {
    const m = resolveModel(positionals[0]);
    if (m) models = [m];
  }
  const rank = (m: ModelInfo) => (m.retired ? 2 : m.retires ? 1 : 0);
  models = models.map((m, i) => ({ m, i })).sort((a, b) => rank(a.m) - rank(b.m) || a.i - b.i).map((x) => x.m);
  const rows = models.map(row);
  if (format === 'json') {
    io.out(JSON.stringify({ query: positionals[0] ?? null, model_files: modelFiles().map((l) => l.path), models: rows }, null, 2) + '\n');
    return 0;
  }
  if (rows.length === 0) {
    io.out(`No model matches '${positionals[0]}'.\n`);
    return 0;
  }
  const files = modelFiles();
  io.out(table(rows) + (files.length ? `\nModel files: ${files.map((l) => l.path).join(', ')}\n` : ''));
  return 0;
}
