/**
 * The impact report as text (terminals, the pre-commit hook) and as GitHub-flavoured Markdown (a
 * pull-request comment and `$GITHUB_STEP_SUMMARY`): a summary table (requests changed, total token
 * delta, cost per day delta, new errors), the gates, then one collapsible section per changed
 * request with its figures, the items that changed side and the first differing message line.
 *
 * Everything quoted from templates and fixtures is untrusted text in a comment other people read:
 * it goes into code spans, code blocks or escaped HTML only, so it can neither format the comment
 * nor mention anyone, and it is cut to a length so the comment stays under GitHub's size limit.
 */
import { agentsMarkdown, agentsText } from './agents';
import type { Report, ReportDelta, ReportRequest, ReportTemplate } from './schema';
import { formatUsd } from '../cost';

/** The first line of every Markdown report: how the Action finds its own comment to update it. */
export const REPORT_MARKER = '<!-- ctxlens-report -->';

/** GitHub refuses comments over 65,536 characters; the report stays well below. */
const MAX_MARKDOWN = 60_000;
/** Changed requests shown with a section of their own; the others are counted. */
const MAX_SECTIONS = 40;
/** Characters of a quoted message line. */
const MAX_LINE = 240;

const n = (x: number) => x.toLocaleString('en-US');
const signed = (x: number) => (x === 0 ? '±0' : `${x > 0 ? '+' : '−'}${n(Math.abs(x))}`);
const signedUsd = (x: number) => (x === 0 ? '±$0' : `${x > 0 ? '+' : '−'}${formatUsd(Math.abs(x))}`);
const usd = (x: number | null | undefined) => (x === null || x === undefined ? '—' : formatUsd(x));
const count = (x: number | null | undefined) => (x === null || x === undefined ? '—' : n(x));
const short = (sha: string) => sha.slice(0, 7);

/**
 * One line of quoted text, cut to `max`: line breaks become spaces, and control characters
 * (terminal escapes) and bidirectional overrides (text that reads otherwise than it is) become
 * U+FFFD, so a fixture can neither drive the terminal nor disguise a line.
 */
function cut(s: string, max = MAX_LINE): string {
  const flat = s.replace(/\r?\n/g, ' ').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A GitHub code span that holds any text: a fence longer than every backtick run inside. */
function code(s: string): string {
  const text = cut(s).replace(/\|/g, '\\|');
  const runs = text.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || text === '' ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function html(s: string): string {
  return cut(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/@/g, '&#64;');
}

/** A fenced block of untrusted lines: the fence is longer than any run of backticks or tildes inside. */
function block(lang: string, lines: string[]): string {
  const body = lines.join('\n');
  const runs = body.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(2, ...runs.map((r) => r.length)) + 1);
  return `${fence}${lang}\n${body}\n${fence}\n`;
}

function changedRequests(r: Report): Array<{ t: ReportTemplate; q: ReportRequest }> {
  return r.templates.flatMap((t) => t.requests.filter((q) => q.status !== 'unchanged').map((q) => ({ t, q })));
}

function headline(q: ReportRequest): string {
  if (q.status === 'added') return `new request, ${n(q.input_tokens.head ?? 0)} tokens`;
  if (q.status === 'removed') return `request removed (was ${n(q.input_tokens.base ?? 0)} tokens)`;
  const parts = [`${signed(q.input_tokens.delta)} tokens (${n(q.input_tokens.base ?? 0)} → ${n(q.input_tokens.head ?? 0)})`];
  if (q.cost_per_day && q.cost_per_day.delta !== 0) parts.push(`${signedUsd(q.cost_per_day.delta)}/day`);
  else if (q.cost && q.cost.delta !== 0) parts.push(`${signedUsd(q.cost.delta)}/request`);
  if (q.base && q.head && q.base.fits !== q.head.fits) parts.push(q.head.fits ? 'now fits' : 'no longer fits');
  return parts.join(', ');
}

function templateLabel(t: ReportTemplate): string {
  if (t.status === 'renamed') return `${t.base_path} → ${t.path}`;
  return t.path;
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

export function reportText(r: Report): string {
  const s = r.summary;
  let out = `ctxlens report: ${r.base.ref} (${short(r.base.commit)}) -> working tree\n`;
  const bits = [`${s.requests_changed} of ${s.requests} request(s) changed`, `input tokens ${signed(s.input_tokens.delta)}`];
  if (s.cost_per_day) bits.push(`cost/day ${signedUsd(s.cost_per_day.delta)}`);
  else if (s.cost) bits.push(`cost/request ${signedUsd(s.cost.delta)}`);
  bits.push(`${s.new_errors} new error(s)`);
  out += bits.join(' · ') + '\n';
  const moved = [s.templates_added && `${s.templates_added} added`, s.templates_removed && `${s.templates_removed} removed`, s.templates_renamed && `${s.templates_renamed} renamed`].filter(Boolean);
  out += `${s.templates} template(s)${moved.length ? `: ${moved.join(', ')}` : ''}\n`;
  for (const t of r.templates) {
    if (t.status === 'unchanged') continue;
    const changed = t.requests.filter((q) => q.status !== 'unchanged');
    out += `\n${templateLabel(t)}  [${t.status}]\n`;
    if (t.cache_prefix_tokens.delta !== 0) out += `  cacheable prefix ${count(t.cache_prefix_tokens.base)} -> ${count(t.cache_prefix_tokens.head)} tokens (${signed(t.cache_prefix_tokens.delta)})\n`;
    for (const q of changed) {
      out += `  × ${q.fixture}: ${headline(q)}\n`;
      if (q.base && q.head) {
        if (q.cost) out += `      cost/request ${usd(q.cost.base)} -> ${usd(q.cost.head)}${q.cost_per_day ? `, per day ${usd(q.cost_per_day.base)} -> ${usd(q.cost_per_day.head)}` : ''}\n`;
        if (q.base.output_reserve !== q.head.output_reserve) out += `      output reserve ${n(q.base.output_reserve)} -> ${n(q.head.output_reserve)}\n`;
        if (q.base.ok !== q.head.ok) out += `      ${q.head.ok ? 'can be built again' : `cannot be built: ${q.head.error ?? ''}`}\n`;
      }
      for (const sl of q.slots) {
        out += `      ${sl.slot}: kept ${sl.kept.base} -> ${sl.kept.head} of ${sl.total.head}, ${signed(sl.tokens.delta)} tokens\n`;
        for (const x of sl.dropped) out += `        - ${x.id} dropped (base: ${x.base}; head: ${x.head})\n`;
        for (const x of sl.added) out += `        + ${x.id} kept (base: ${x.base}; head: ${x.head})\n`;
      }
      const f = q.first_difference;
      if (f) out += `      first differing message: #${f.message} (${f.role_head ?? f.role_base ?? 'none'}), line ${f.line}\n        - ${cut(f.base)}\n        + ${cut(f.head)}\n`;
    }
    for (const f of t.findings.new) out += `  new ${f.severity} ${f.rule} ${f.path}${f.line ? `:${f.line}` : ''}: ${f.message}\n`;
    for (const f of t.findings.fixed) out += `  fixed ${f.severity} ${f.rule} ${f.path}: ${f.message}\n`;
    for (const e of t.eval) out += evalLine(e, '  ');
  }
  if (r.agents) out += agentsText(r.agents);
  if (r.gates.length) {
    out += '\n';
    for (const g of r.gates) {
      out += `gate ${g.gate}${g.limit ? ` ${g.limit}` : ''}: ${g.passed ? 'passed' : 'FAILED'}\n`;
      for (const why of g.reasons) out += `  ${why}\n`;
    }
  }
  // Names and messages come from the workspace too: no control character reaches the terminal.
  return out.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
}

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : `${(x * 100).toFixed(0)}%`;
}

function evalLine(e: ReportTemplate['eval'][number], indent: string): string {
  if (JSON.stringify(e.base) === JSON.stringify(e.head) && !e.required_dropped.length) return '';
  let out = `${indent}eval ${e.file}: coverage ${pct(e.base?.evidence_coverage)} -> ${pct(e.head?.evidence_coverage)}, selection recall ${pct(e.base?.selection_recall)} -> ${pct(e.head?.selection_recall)}\n`;
  for (const x of e.required_dropped) out += `${indent}  case ${x.case}: required ${x.id} no longer kept\n`;
  return out;
}

// ---------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------

function requestSection(t: ReportTemplate, q: ReportRequest): string {
  let out = `<details><summary><code>${html(templateLabel(t))}</code> × <code>${html(q.fixture)}</code>: ${html(headline(q))}</summary>\n\n`;
  const rows: string[][] = [];
  const row = (label: string, b: string, h: string, dl: string) => rows.push([label, b, h, dl]);
  const B = q.base;
  const H = q.head;
  row('input tokens', count(B?.input_tokens), count(H?.input_tokens), signed(q.input_tokens.delta));
  if (q.cost) row('cost per request', usd(q.cost.base), usd(q.cost.head), signedUsd(q.cost.delta));
  if (q.cost_per_day) row(`cost per day${H?.requests_per_day ?? B?.requests_per_day ? ` (${n(H?.requests_per_day ?? B?.requests_per_day ?? 0)} requests)` : ''}`, usd(q.cost_per_day.base), usd(q.cost_per_day.head), signedUsd(q.cost_per_day.delta));
  row('output reserve', count(B?.output_reserve), count(H?.output_reserve), B && H ? signed(H.output_reserve - B.output_reserve) : '');
  row('fits', B ? (B.fits ? 'yes' : 'no') : '—', H ? (H.fits ? 'yes' : 'no') : '—', '');
  row('cacheable prefix', count(B?.cache_prefix_tokens), count(H?.cache_prefix_tokens), B && H ? signed(H.cache_prefix_tokens - B.cache_prefix_tokens) : '');
  out += '| | base | head | Δ |\n|---|---:|---:|---:|\n' + rows.map((r) => `| ${r.join(' | ')} |`).join('\n') + '\n\n';
  if (H && !H.ok && H.error) out += `**The request cannot be built:** ${code(H.error)}\n\n`;
  for (const s of q.slots) {
    out += `- ${code(s.slot)}${s.required ? ' (required)' : ''}: kept ${s.kept.base} → ${s.kept.head} of ${s.total.head}, ${signed(s.tokens.delta)} tokens\n`;
    for (const x of s.dropped) out += `  - ${code(x.id)} dropped — base: ${code(x.base)}, head: ${code(x.head)}\n`;
    for (const x of s.added) out += `  - ${code(x.id)} now kept — base: ${code(x.base)}, head: ${code(x.head)}\n`;
  }
  if (q.slots.length) out += '\n';
  const f = q.first_difference;
  if (f) {
    out += `First differing message: #${f.message} (${code(f.role_head ?? f.role_base ?? 'none')}), line ${f.line}\n\n`;
    out += block('diff', [`- ${cut(f.base)}`, `+ ${cut(f.head)}`]) + '\n';
  }
  return out + '</details>\n';
}

export function reportMarkdown(r: Report): string {
  const s = r.summary;
  const failed = r.gates.filter((g) => !g.passed);
  let out = `${REPORT_MARKER}\n### Context Lens: what this change does to every request\n\n`;
  out += `Base ${code(r.base.ref)} (${code(short(r.base.commit))}) → working tree${r.head.commit ? ` at ${code(short(r.head.commit))}` : ''}.\n\n`;
  const costCell = s.cost_per_day ? signedUsd(s.cost_per_day.delta) : s.cost ? `${signedUsd(s.cost.delta)} per request` : '—';
  out += '| Requests changed | Input tokens Δ | Cost / day Δ | New errors |\n|---:|---:|---:|---:|\n';
  out += `| ${s.requests_changed} of ${s.requests} | ${signed(s.input_tokens.delta)} (${count(s.input_tokens.base)} → ${count(s.input_tokens.head)}) | ${costCell} | ${s.new_errors} |\n\n`;
  const moved: string[] = [];
  for (const t of r.templates) {
    if (t.status === 'added') moved.push(`added ${code(t.path)}`);
    else if (t.status === 'removed') moved.push(`removed ${code(t.path)}`);
    else if (t.status === 'renamed') moved.push(`renamed ${code(t.base_path ?? '')} → ${code(t.path)}`);
  }
  if (moved.length) out += `Templates: ${moved.slice(0, 30).join(', ')}${moved.length > 30 ? `, and ${moved.length - 30} more` : ''}.\n\n`;
  if (r.gates.length) {
    out += failed.length ? `**${failed.length} gate(s) failed:**\n\n` : '**Every gate passed.**\n\n';
    for (const g of r.gates) {
      // Plain symbols and words, not emoji: they read the same in every font and in the job summary.
      out += `- ${g.passed ? '✔ passed' : '✘ **failed**'} ${code(`${g.gate}${g.limit ? ` ${g.limit}` : ''}`)}\n`;
      for (const why of g.reasons.slice(0, 10)) out += `  - ${code(why)}\n`;
      if (g.reasons.length > 10) out += `  - and ${g.reasons.length - 10} more\n`;
    }
    out += '\n';
  }
  const findings = r.templates.flatMap((t) => t.findings.new);
  if (findings.length) {
    out += `<details><summary>${findings.length} new finding(s), ${s.fixed_findings} fixed</summary>\n\n`;
    for (const f of findings.slice(0, 50)) out += `- ${f.severity === 'error' ? '**error**' : f.severity} ${code(`${f.path}${f.line ? `:${f.line}` : ''}`)} ${code(f.rule)} ${code(f.message)}\n`;
    out += '\n</details>\n\n';
  } else if (s.fixed_findings) out += `${s.fixed_findings} finding(s) fixed.\n\n`;
  const evalRows = r.templates.flatMap((t) => t.eval.filter((e) => JSON.stringify(e.base) !== JSON.stringify(e.head) || e.required_dropped.length));
  if (evalRows.length) {
    out += '| Eval set | Coverage | Selection recall | Required dropped |\n|---|---:|---:|---:|\n';
    for (const e of evalRows) out += `| ${code(e.file)} | ${pct(e.base?.evidence_coverage)} → ${pct(e.head?.evidence_coverage)} | ${pct(e.base?.selection_recall)} → ${pct(e.head?.selection_recall)} | ${e.required_dropped.length} |\n`;
    out += '\n';
  }
  if (r.agents) out += agentsMarkdown(r.agents);
  const changed = changedRequests(r);
  let shown = 0;
  for (const { t, q } of changed) {
    if (shown >= MAX_SECTIONS) break;
    const section = requestSection(t, q);
    if (out.length + section.length > MAX_MARKDOWN) break;
    out += section + '\n';
    shown++;
  }
  if (shown < changed.length) out += `And ${changed.length - shown} more changed request(s): run ${code(`ctxlens report --base ${r.base.ref}`)} for all of them.\n`;
  if (!changed.length && !moved.length) out += 'No request changes.\n';
  return out;
}
