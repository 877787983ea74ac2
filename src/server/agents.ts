/**
 * The editor's side of coding agents' instruction files (src/core/language/agents): code lenses
 * (the file's tokens and when it is sent, each heading's section, each import or attached file,
 * the HTML comments the rendered view hides) and the `contextLens/whatLoads` reply (what each
 * agent loads for a file, as data and as the Markdown the preview shows). Counting uses the
 * tokenizer of the model the session, the workspace's `.context-lens/agents.yaml` or the
 * `contextLens.defaultModel` setting names, else `o200k_base`, and says which.
 */
import type { CodeLens } from 'vscode-languageserver';
import type { FileHost } from '../core/host';
import type { TemplateAnalysis } from '../core/analyze';
import type { Span, Tokenizer } from '../core/types';
import type { AgentId, WhatLoads } from '../core/language';
import { AGENT_NAMES, agentFileKind, agentRootOf, discoverAgentFiles, outlineAgentFile, readAgentsConfig, whatLoads } from '../core/language';
import { getTokenizer } from '../core/tokens';
import { resolveModel } from '../core/models';
import { priceFor } from '../core/cost';
import type { WhatLoadsResult } from '../protocol/lsp';
import type { EntryView } from './analysisService';
import { dirname, relative } from '../core/paths';

export const WHAT_LOADS_COMMAND = 'contextLens.whatLoads';

const fmt = (n: number) => n.toLocaleString('en-US');

/** The model and tokenizer instruction files are counted with, and where the choice comes from. */
export function agentTokenizer(host: FileHost, path: string, model: string | undefined): { tokenizer: Tokenizer; model?: string; label: string } {
  const root = agentRootOf(host, path) ?? dirname(path);
  const name = model ?? readAgentsConfig(host, root).model;
  const info = name ? resolveModel(name) : undefined;
  const tokenizer = getTokenizer(info?.tokenizer ?? 'o200k_base') ?? getTokenizer('o200k_base')!;
  const label = info ? `${tokenizer.name} (${info.name})` : `${tokenizer.name} (default)`;
  return { tokenizer, ...(info ? { model: info.name } : {}), label };
}

function at(view: EntryView, span: Span | undefined): CodeLens['range'] {
  const s = span ? (view.delta ? view.delta.spanToNew(span) : span) : { start: 0, end: 0 };
  const start = view.current.lines.positionAt(s.start);
  return { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } };
}

/** When the agents send a file, in words, from the file's own kind and front matter. */
function whenSent(kind: ReturnType<typeof agentFileKind>, fields: Record<string, { value: unknown }> | undefined): string {
  switch (kind) {
    case 'copilot-instructions':
      return 'sent with every Copilot request';
    case 'instructions': {
      const applyTo = fields?.applyTo?.value;
      const text = Array.isArray(applyTo) ? applyTo.join(', ') : typeof applyTo === 'string' ? applyTo : '';
      if (!text) return 'attached by hand only (no applyTo)';
      if (/^\s*\*\*(\/\*)?\s*$/.test(text)) return 'sent with every Copilot request (applyTo **)';
      return `sent for files matching ${text}`;
    }
    case 'prompt':
      return 'sent when the prompt is run';
    case 'agents-md':
      return 'sent for files below this folder (nearest AGENTS.md)';
    case 'claude-md':
      return 'sent by Claude Code for files below this folder';
    case 'gemini-md':
      return 'sent by Gemini CLI for files below this folder';
    case 'cursorrules':
      return 'sent with every Cursor request';
    case 'cursor-rule': {
      if (fields?.alwaysApply?.value === true) return 'sent with every Cursor request (alwaysApply)';
      const globs = fields?.globs?.value;
      const text = Array.isArray(globs) ? globs.join(', ') : typeof globs === 'string' ? globs : '';
      if (text) return `sent for files matching ${text}`;
      if (fields?.description?.value) return 'sent when the agent asks for it (description)';
      return 'attached by hand only';
    }
    default:
      return '';
  }
}

/** Lenses of an instruction file; a prompt file keeps the request lenses of its analysis before these. */
export function agentLenses(a: TemplateAnalysis, view: EntryView, host: FileHost, model: string | undefined, uri: string): CodeLens[] {
  const text = a.template.text;
  const path = a.path;
  const { tokenizer, label } = agentTokenizer(host, path, model);
  const o = outlineAgentFile(host, path, text, tokenizer);
  const kind = agentFileKind(path);
  const cmd = (title: string, tooltip?: string): CodeLens['command'] => ({ title, command: WHAT_LOADS_COMMAND, arguments: [uri], ...(tooltip ? { tooltip } : {}) });
  const top = at(view, undefined);
  const out: CodeLens[] = [];
  const big = o.tokens >= 10_000 ? ' ⚠ large' : '';
  out.push({ range: top, command: cmd(`${fmt(o.tokens)} tok${big} · ${whenSent(kind, o.frontMatter?.fields)} · ${label}`, 'Show what each agent loads for the file in the active editor') });
  if (o.comments.count) out.push({ range: top, command: cmd(`HTML comments: ${fmt(o.comments.tokens)} tok in ${o.comments.count} (hidden when rendered, sent to the model)`) });
  const referenced = o.references.filter((r) => r.tokens !== undefined || r.problem);
  if (referenced.length) {
    const sum = referenced.reduce((n, r) => n + (r.tokens ?? 0), 0);
    out.push({ range: top, command: cmd(`+ ${fmt(sum)} tok in ${referenced.length} imported or attached file${referenced.length === 1 ? '' : 's'}`) });
  }
  for (const s of o.sections) out.push({ range: at(view, s.heading), command: cmd(`${'#'.repeat(s.level)} ${s.title} · ${fmt(s.tokens)} tok`) });
  for (const r of o.references) {
    const what = r.kind === 'import' ? 'imports' : r.kind === 'file' ? 'attaches' : 'links';
    const title = r.problem ? `${what} ${r.target}: ${r.problem}` : `${what} ${r.target} · ${fmt(r.tokens ?? 0)} tok`;
    out.push({ range: at(view, r.span), command: cmd(title) });
  }
  return out;
}

function rel(root: string, p: string): string {
  return relative(root, p) || '.';
}

/** What loads for a file, with the Markdown the preview shows. */
export function whatLoadsReply(host: FileHost, path: string, options: { model?: string; agent?: AgentId; files?: readonly string[]; maxFileSize?: number }): WhatLoadsResult {
  const root = agentRootOf(host, path) ?? dirname(path);
  const config = readAgentsConfig(host, root);
  const { tokenizer, model, label } = agentTokenizer(host, path, options.model);
  const w: WhatLoads = whatLoads(host, path, {
    tokenizer,
    files: options.files ?? discoverAgentFiles(host, root),
    budgets: config.budgets,
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.maxFileSize ? { maxFileSize: options.maxFileSize } : {}),
  });
  const price = model ? priceFor(model) : undefined;
  const lines: string[] = [`# What loads for \`${rel(root, path)}\``, '', `Counted with ${label}${price ? `; cost at ${model}'s input price ($${price.input} per million tokens, ${price.as_of})` : ''}.`];
  for (const a of w.agents) {
    lines.push('', `## ${AGENT_NAMES[a.agent]}: ${fmt(a.total)} tokens per request`, '');
    lines.push(`Every request: ${fmt(a.always)} · for this file: ${fmt(a.conditional)}${price ? ` · $${((a.total * price.input) / 1000).toFixed(2)} per 1,000 requests` : ''}`, '');
    if (a.files.length === 0) lines.push('Nothing loads.');
    else {
      lines.push('| # | file | tokens | why |', '|---:|---|---:|---|');
      a.files.forEach((f, i) => {
        const why = `${f.why}${f.pattern ? ` \`${f.pattern}\`` : ''}${f.from ? ` by \`${rel(root, f.from)}\`` : ''}${f.estimate ? ' (too large to read: estimated from its size)' : ''}`;
        lines.push(`| ${i + 1} | \`${rel(root, f.path)}\` | ${fmt(f.tokens)}${f.tokens >= 10_000 ? ' ⚠' : ''} | ${why} |`);
      });
    }
    for (const n of a.notLoaded) lines.push(`- not loaded by itself: \`${rel(root, n.path)}\` (${n.why})`);
  }
  if (w.findings.length) {
    lines.push('', '## Findings', '');
    for (const f of w.findings) lines.push(`- \`${rel(root, f.path)}\` ${f.severity} \`${f.rule}\`: ${f.message}`);
  }
  return { file: path, root, tokenizer: label, ...(model ? { model } : {}), agents: w.agents, findings: w.findings, markdown: `${lines.join('\n')}\n` };
}
