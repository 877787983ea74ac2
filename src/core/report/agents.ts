/**
 * The coding agents' part of `ctxlens report --base`: two snapshots of what each agent loads
 * (src/core/language/agents `agentSnapshot`, at the base and in the working tree) compared, per
 * agent: the tokens sent with every request, their cost over 1,000 requests at the model's input
 * price, and each pattern-scoped file whose tokens or pattern changed.
 */
import type { AgentSnapshot } from '../language';
import type { Report, ReportAgentChange, ReportDelta } from './schema';

function delta(base: number | null, head: number | null): ReportDelta {
  return { base, head, delta: (head ?? 0) - (base ?? 0) };
}

/** USD rounded to 1e-10, as the report's other figures. */
const usd = (x: number) => Math.round(x * 1e10) / 1e10;

/**
 * The agents' changes, or undefined when nothing an agent loads changed. `display` maps an
 * absolute path of either side to the report's path; `inputPerMillion` is the model's price.
 */
export function compareAgents(base: readonly AgentSnapshot[], head: readonly AgentSnapshot[], display: (p: string) => string, meta: { tokenizer: string; model?: string; inputPerMillion?: number }): Report['agents'] {
  const changes: ReportAgentChange[] = [];
  for (const h of head) {
    const b = base.find((x) => x.agent === h.agent);
    const always = delta(b ? b.always : null, h.always);
    const patterns: ReportAgentChange['patterns'] = [];
    const key = (s: { path: string; pattern: string }) => `${display(s.path)}\u0000${s.pattern}`;
    const before = new Map((b?.scoped ?? []).map((s) => [key(s), s]));
    const after = new Map(h.scoped.map((s) => [key(s), s]));
    for (const [k, s] of after) {
      const o = before.get(k);
      if (o && o.tokens === s.tokens) continue;
      patterns.push({ file: display(s.path), pattern: s.pattern, tokens: delta(o ? o.tokens : null, s.tokens) });
    }
    for (const [k, o] of before) if (!after.has(k)) patterns.push({ file: display(o.path), pattern: o.pattern, tokens: delta(o.tokens, null) });
    if (always.delta === 0 && patterns.length === 0) continue;
    patterns.sort((x, y) => x.file.localeCompare(y.file) || x.pattern.localeCompare(y.pattern));
    const change: ReportAgentChange = { agent: h.agent, name: h.name, always, patterns };
    if (meta.inputPerMillion !== undefined) {
      const c = (t: number | null) => (t === null ? null : usd((t * meta.inputPerMillion!) / 1000));
      const cb = c(always.base);
      const ch = c(always.head);
      change.cost_per_1000_requests = { base: cb, head: ch, delta: usd((ch ?? 0) - (cb ?? 0)) };
    }
    changes.push(change);
  }
  if (!changes.length) return undefined;
  return { tokenizer: meta.tokenizer, ...(meta.model ? { model: meta.model } : {}), changes };
}

const signed = (n: number) => (n > 0 ? `+${n.toLocaleString('en-US')}` : n.toLocaleString('en-US'));
const money = (n: number | null) => (n === null ? '—' : `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2)}`);
const count = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US'));

/** The agents' lines of the text report. */
export function agentsText(a: NonNullable<Report['agents']>): string {
  let out = `\ncoding agents' instructions (${a.tokenizer}${a.model ? `, ${a.model}` : ''}):\n`;
  for (const c of a.changes) {
    const cost = c.cost_per_1000_requests ? `, per 1,000 requests ${money(c.cost_per_1000_requests.base)} -> ${money(c.cost_per_1000_requests.head)}` : '';
    out += `  ${c.name}: every request ${count(c.always.base)} -> ${count(c.always.head)} tokens (${signed(c.always.delta)})${cost}\n`;
    for (const p of c.patterns) out += `    ${p.file} [${p.pattern}]: ${count(p.tokens.base)} -> ${count(p.tokens.head)} tokens (${signed(p.tokens.delta)})\n`;
  }
  return out;
}

/** The agents' table of the Markdown report. */
export function agentsMarkdown(a: NonNullable<Report['agents']>): string {
  let out = `#### Coding agents' instructions (${a.tokenizer}${a.model ? `, ${a.model}` : ''})\n\n| Agent | Every request | Δ | Per 1,000 requests |\n|---|---:|---:|---:|\n`;
  for (const c of a.changes) out += `| ${c.name} | ${count(c.always.base)} → ${count(c.always.head)} | ${signed(c.always.delta)} | ${c.cost_per_1000_requests ? `${money(c.cost_per_1000_requests.base)} → ${money(c.cost_per_1000_requests.head)}` : '—'} |\n`;
  const rows = a.changes.flatMap((c) => c.patterns.map((p) => `| ${c.name} | \`${p.file}\` | \`${p.pattern}\` | ${count(p.tokens.base)} → ${count(p.tokens.head)} (${signed(p.tokens.delta)}) |`));
  if (rows.length) out += `\n| Agent | File | Loaded for | Tokens |\n|---|---|---|---:|\n${rows.join('\n')}\n`;
  return `${out}\n`;
}
