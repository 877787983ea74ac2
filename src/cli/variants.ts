/**
 * `ctxlens variants <template> --move ev_0192 --positions start,middle,end`: one provider request
 * per position of the moved item, everything else held constant (src/core/eval/variants.ts), for
 * a position test. `--format jsonl` writes batch input lines (OpenAI Batch API
 * `{custom_id, method, url, body}`, or with `--provider anthropic` Message Batches
 * `{custom_id, params}`); `--out DIR` writes one request body per file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { argOptions } from './options';
import { classifyFile } from '../core/analyze';
import { toAnthropic, toOpenAI } from '../core/export';
import type { AssemblyResult } from '../core/types';
import { findFixture, positionVariants, prepareSubject } from '../core/eval';
import type { Subject, Variant } from '../core/eval';
import { formatUsd } from '../core/cost';
import type { Io } from './eval';
import { CommandUsageError, abs, guarded, hostFor, oneOf, rel } from './eval';

export const VARIANTS_USAGE =
  'ctxlens variants <template> --move ID [--positions start,middle,end] [--fixture F] [--model M] [--provider openai|anthropic] [--format json|jsonl|text] [--out DIR]';

type Provider = 'openai' | 'anthropic';

/** The body a provider receives for one variant. */
function body(result: AssemblyResult, provider: Provider, model: string | undefined): Record<string, unknown> {
  if (provider === 'anthropic') return toAnthropic(result.messages, { model, maxTokens: result.trace.reserved_output || 1024 }) as unknown as Record<string, unknown>;
  const b: Record<string, unknown> = {};
  if (model) b.model = model;
  b.messages = toOpenAI(result.messages);
  if (result.trace.reserved_output > 0) b.max_completion_tokens = result.trace.reserved_output;
  return b;
}

/** A batch custom id: letters, digits, `_` and `-` only, at most 64 characters (both providers accept it). */
function customId(fixture: string, item: string, position: string): string {
  return `${fixture}-${item}-${position}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export function variantsCmd(args: string[], io: Io): number {
  return guarded(io, VARIANTS_USAGE, () => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: argOptions('variants'),
    });
    if (positionals.length !== 1) throw new CommandUsageError('variants takes one template path', VARIANTS_USAGE);
    if (!values.move) throw new CommandUsageError('--move names the item to move (an id from the trace, e.g. ev_0192)', VARIANTS_USAGE);
    const format = oneOf(values.format, ['json', 'jsonl', 'text'] as const, '--format', 'json', VARIANTS_USAGE);
    const provider = oneOf(values.provider, ['openai', 'anthropic'] as const, '--provider', 'openai', VARIANTS_USAGE);
    const positions = (values.positions ?? 'start,middle,end')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const file = abs(io, positionals[0]);
    if (classifyFile(file) !== 'template') throw new CommandUsageError(`'${positionals[0]}' is not a template (.prompt or .prompty)`, VARIANTS_USAGE);
    if (!fs.existsSync(file)) {
      io.err(`ctxlens: cannot read '${positionals[0]}'\n`);
      return 2;
    }
    const host = hostFor(io, [positionals[0], ...(values.fixture ? [values.fixture] : [])]);
    const prepared = prepareSubject(host, file, { model: values.model });
    if (!prepared.subject) {
      io.err(`ctxlens: ${prepared.error}\n`);
      return 2;
    }
    const subject: Subject = prepared.subject;
    const wanted = values.fixture ?? subject.analysis.fixtures[0]?.name;
    if (!wanted) {
      io.err(`ctxlens: ${positionals[0]} has no fixture; name one with --fixture\n`);
      return 2;
    }
    const fixturePath = values.fixture && fs.existsSync(abs(io, values.fixture)) ? abs(io, values.fixture) : wanted;
    const fx = findFixture(host, subject, path.posix.join(toDir(io), 'x'), fixturePath);
    if (!fx.fixture) {
      io.err(`ctxlens: ${fx.error}\n`);
      return 2;
    }
    const r = positionVariants(subject, fx.fixture, values.move, positions);
    if (!r.set) {
      io.err(`ctxlens: ${r.error}\n`);
      return 1;
    }
    const set = r.set;
    const model = subject.modelName;
    const fixtureName = fx.fixture.name;
    const entry = (v: Variant) => ({ custom_id: customId(fixtureName, set.item, v.position), position: v.position, index: v.index, order: v.order, input_tokens: v.result.trace.input_tokens, body: body(v.result, provider, model) });
    if (values.out) {
      const dir = abs(io, values.out);
      fs.mkdirSync(dir, { recursive: true });
      for (const v of set.variants) {
        const target = path.join(dir, `${customId(fixtureName, set.item, v.position)}.json`);
        fs.writeFileSync(target, JSON.stringify(body(v.result, provider, model), null, 2) + '\n');
        io.err(`wrote ${rel(io, toPosixPath(target))}\n`);
      }
    }
    if (format === 'jsonl') {
      for (const v of set.variants) {
        const e = entry(v);
        const line = provider === 'anthropic' ? { custom_id: e.custom_id, params: e.body } : { custom_id: e.custom_id, method: 'POST', url: '/v1/chat/completions', body: e.body };
        io.out(JSON.stringify(line) + '\n');
      }
    } else if (format === 'text') {
      io.out(`${set.item} in ${set.slot} (${set.count} kept items), fixture ${fixtureName}:\n`);
      for (const v of set.variants) {
        const cost = v.result.trace.cost ? ` · ${formatUsd(v.result.trace.cost.input)}` : '';
        io.out(`  ${v.position.padEnd(7)} #${v.index + 1}  ${v.order.join(' ')}  · ${v.result.trace.input_tokens.toLocaleString('en-US')} tok${cost}\n`);
      }
    } else if (!values.out) {
      io.out(JSON.stringify({ template: rel(io, file), fixture: fixtureName, slot: set.slot, item: set.item, count: set.count, provider, variants: set.variants.map(entry) }, null, 2) + '\n');
    }
    return 0;
  });
}

function toDir(io: Io): string {
  return abs(io, '.');
}

function toPosixPath(p: string): string {
  return p.split(path.sep).join('/');
}
