/**
 * How `ctxlens eval` prints its results: a text table per eval file (and the ablation table with
 * deltas), the JSON document CI reads, and one self-contained HTML page (inline CSS and SVG, no
 * script, no remote asset of any kind, a CSP that forbids loading anything) with charts of
 * coverage and tokens per case.
 */
import type { AblationResult, CaseResult, EvalResult, Totals } from './run';
import { formatUsd } from '../cost';

const NUM = new Intl.NumberFormat('en-US');
const num = (n: number) => NUM.format(Math.round(n));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(Math.round(x * 1000) / 10).toFixed(1)}%`);
const usd = (x: number | undefined) => (x === undefined ? '—' : formatUsd(x));

/** A signed delta in percentage points: "+12.5 pp", "−3.0 pp", "±0". */
function ppDelta(a: number | null, b: number | null): string {
  if (a === null || b === null) return '';
  const d = Math.round((b - a) * 1000) / 10;
  if (d === 0) return '±0';
  return `${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} pp`;
}

function intDelta(a: number, b: number): string {
  const d = b - a;
  if (d === 0) return '±0';
  return `${d > 0 ? '+' : '−'}${num(Math.abs(d))}`;
}

function usdDelta(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined) return '';
  const d = Math.round((b - a) * 1e10) / 1e10;
  if (d === 0) return '±0';
  return `${d > 0 ? '+' : '−'}${formatUsd(Math.abs(d))}`;
}

/** Left-aligned first column, the rest right-aligned. */
function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? '')].length)));
  const pad = (s: string, w: number, left: boolean) => {
    const n = w - [...s].length;
    return left ? s + ' '.repeat(n) : ' '.repeat(n) + s;
  };
  return rows.map((r) => r.map((c, i) => pad(c, widths[i], i === 0)).join('  ').trimEnd()).join('\n') + '\n';
}

export function caseRow(c: CaseResult): string[] {
  const m = c.metrics;
  return [
    c.id,
    pct(m.retrieval_recall),
    pct(m.selection_recall),
    pct(m.context_precision),
    pct(m.evidence_coverage),
    String(m.forbidden.length),
    num(m.input_tokens),
    usd(m.cost?.input),
    c.error ? 'error' : c.passed ? 'pass' : 'FAIL',
  ];
}

function totalsRow(t: Totals): string[] {
  return ['total', pct(t.retrieval_recall), pct(t.selection_recall), pct(t.context_precision), pct(t.evidence_coverage), String(t.forbidden), `${num(t.mean_input_tokens)} mean`, t.mean_cost !== undefined ? `${usd(t.mean_cost)} mean` : '—', `${t.passed}/${t.cases} pass`];
}

const HEAD = ['case', 'retrieval', 'selection', 'precision', 'coverage', 'forbidden', 'input tokens', 'cost', 'result'];

/** The ablation table: each ablation's totals and their deltas against the baseline. */
export function ablationTable(r: EvalResult): string {
  if (!r.ablations) return '';
  const b = r.totals;
  const rows: string[][] = [['ablation', 'cases', 'coverage', 'Δ', 'selection', 'Δ', 'precision', 'forbidden', 'mid', 'tokens/request', 'Δ', 'cost/request', 'Δ']];
  rows.push(['baseline', String(b.cases), pct(b.evidence_coverage), '', pct(b.selection_recall), '', pct(b.context_precision), String(b.forbidden), String(b.required_in_middle), num(b.mean_input_tokens), '', usd(b.mean_cost), '']);
  for (const a of r.ablations) {
    const t = a.totals;
    rows.push([
      a.id,
      a.error ? 'error' : String(a.changed),
      pct(t.evidence_coverage),
      ppDelta(b.evidence_coverage, t.evidence_coverage),
      pct(t.selection_recall),
      ppDelta(b.selection_recall, t.selection_recall),
      pct(t.context_precision),
      String(t.forbidden),
      String(t.required_in_middle),
      num(t.mean_input_tokens),
      intDelta(b.mean_input_tokens, t.mean_input_tokens),
      usd(t.mean_cost),
      usdDelta(b.mean_cost, t.mean_cost),
    ]);
  }
  let out = table(rows);
  out += '\ncases: cases the ablation changed; coverage: required facts present; selection: required evidence kept; mid: required evidence in the middle third of its slot; tokens and cost: mean input per request.\n';
  for (const a of r.ablations) {
    out += `  ${a.id}: ${a.description}${a.error ? ` — ${a.error}` : ''}\n`;
  }
  return out;
}

/** One eval file as text. */
export function evalText(r: EvalResult, cwdRelative: (p: string) => string = (p) => p): string {
  let out = `${cwdRelative(r.path)} — ${cwdRelative(r.template)}${r.model ? ` (${r.model}, ${r.tokenizer}${r.exact ? '' : ' estimate'})` : ` (${r.tokenizer})`}\n`;
  if (r.error) return out + `  error: ${r.error}\n`;
  out += table([HEAD, ...r.cases.map(caseRow), totalsRow(r.totals)]);
  const p = r.cache_prefix;
  out += `\ncacheable prefix: ${num(p.tokens)} tokens shared by ${p.requests} request${p.requests === 1 ? '' : 's'} (${p.messages} whole message${p.messages === 1 ? '' : 's'}${p.partial_chars ? ` and ${num(p.partial_chars)} characters of the next` : ''})`;
  if (p.requests < 2) out += '; one request shares itself: add fixtures or cases to measure it';
  out += '\n';
  const t = r.totals;
  if (t.mean_cost !== undefined) {
    const price = r.cases.find((c) => c.metrics.cost)?.metrics.cost?.price;
    out += `cost: ${usd(t.mean_cost)} per request mean input${t.mean_cost_cached !== undefined && t.mean_cost_cached !== t.mean_cost ? `, ${usd(t.mean_cost_cached)} with the prefix cached` : ''}`;
    if (price) out += ` (${r.model ?? 'model'} at $${price.input}/M input${price.cached_input !== undefined ? `, $${price.cached_input}/M cached` : ''}, ${price.origin === 'config' ? 'from the config' : `price of ${price.as_of}, ${price.source}`})`;
    out += '\n';
    if (t.cost_per_day !== undefined) out += `per day at ${num(t.requests_per_day!)} requests: ${usd(t.cost_per_day)}${t.cost_per_day_cached !== undefined && t.cost_per_day_cached !== t.cost_per_day ? ` (${usd(t.cost_per_day_cached)} with the prefix cached)` : ''}\n`;
  } else out += `cost: no price for ${r.model ?? 'this model'} (add it under prices: in the context config)\n`;
  const notes: string[] = [];
  for (const c of r.cases) {
    const lines: string[] = [];
    if (c.error) lines.push(`error: ${c.error}`);
    for (const th of c.thresholds) if (!th.ok) lines.push(`threshold ${th.name}: ${th.message}`);
    for (const q of c.metrics.required) if (!q.kept) lines.push(`evidence ${q.id} not in the request (${q.reason ?? 'omitted'})`);
    for (const f of c.metrics.facts) if (!f.present) lines.push(`fact missing: ${f.kind === 'regex' ? `/${f.pattern}/` : JSON.stringify(f.pattern)}`);
    for (const f of c.metrics.forbidden) lines.push(`forbidden in the request: ${f.what}${f.slot ? ` (${f.slot})` : ''}${f.note ? ` — ${f.note}` : ''}`);
    if (lines.length) notes.push(`  ${c.id}:\n${lines.map((l) => `    ${l}`).join('\n')}`);
  }
  if (notes.length) out += `\n${notes.join('\n')}\n`;
  if (r.ablations) out += `\nablations (one change at a time, everything else held fixed):\n\n${ablationTable(r)}`;
  return out;
}

/** The JSON document of a run. */
export function evalJson(results: readonly EvalResult[], rel: (p: string) => string = (p) => p): Record<string, unknown> {
  return {
    version: 1,
    files: results.map((r) => ({ ...r, path: rel(r.path), template: rel(r.template) })),
    summary: {
      files: results.length,
      cases: results.reduce((s, r) => s + r.totals.cases, 0),
      passed: results.reduce((s, r) => s + r.totals.passed, 0),
      failed: results.reduce((s, r) => s + r.totals.failed + (r.error ? 1 : 0), 0),
    },
  };
}

// ---------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A horizontal bar chart as inline SVG: one bar per row, `value` of `max`, labelled. */
function barChart(title: string, rows: Array<{ label: string; value: number; text: string; fail?: boolean }>, max: number): string {
  const bar = 18;
  const gap = 8;
  const left = 170;
  const width = 360;
  const h = rows.length * (bar + gap) + 30;
  const parts: string[] = [];
  parts.push(`<svg role="img" aria-label="${esc(title)}" viewBox="0 0 ${left + width + 110} ${h}" width="${left + width + 110}" height="${h}">`);
  parts.push(`<title>${esc(title)}</title>`);
  rows.forEach((r, i) => {
    const y = 20 + i * (bar + gap);
    const w = max > 0 ? Math.max(0, Math.min(width, (r.value / max) * width)) : 0;
    parts.push(`<text x="${left - 8}" y="${y + bar - 5}" text-anchor="end" class="lbl">${esc(r.label)}</text>`);
    parts.push(`<rect x="${left}" y="${y}" width="${width}" height="${bar}" class="track"/>`);
    parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${bar}" class="${r.fail ? 'bar fail' : 'bar'}"/>`);
    parts.push(`<text x="${left + width + 8}" y="${y + bar - 5}" class="val">${esc(r.text)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

const CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #fff; --line: #d1d9e0; --bar: #2f6fba; --fail: #c0392b; --track: #eef1f4; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --line: #30363d; --bar: #4493f8; --fail: #f85149; --track: #161b22; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 2rem auto; max-width: 72rem; padding: 0 1rem; overflow-wrap: anywhere; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2.2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; }
.table-wrap { overflow-x: auto; margin: .6rem 0 1rem; }
.table-wrap:focus-visible { outline: 2px solid var(--bar); outline-offset: 2px; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
td.fail { color: var(--fail); font-weight: 600; } td.pass { color: var(--bar); }
.muted { color: var(--muted); } code { font-family: ui-monospace, monospace; font-size: 12px; }
svg .lbl, svg .val { font: 12px system-ui, sans-serif; fill: var(--fg); }
svg .track { fill: var(--track); } svg .bar { fill: var(--bar); } svg .bar.fail { fill: var(--fail); }
.charts { display: flex; flex-wrap: wrap; gap: 2rem; }
figure { margin: 1rem 0; min-width: 0; max-width: 100%; }
svg { max-width: 100%; height: auto; }
ul.notes { margin: .2rem 0 1rem; }
`;

/**
 * A table in a frame that scrolls sideways when the page is narrower (down to 320 px, WCAG
 * reflow): the page itself never does. The frame is a named region and a tab stop, so that the
 * keyboard scrolls it too; charts scale down to the width (viewBox).
 */
function htmlTable(label: string, head: string[], rows: string[][], cls?: (row: number, col: number) => string | undefined): string {
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const trs = rows.map((r, i) => `<tr>${r.map((c, j) => `<td${cls?.(i, j) ? ` class="${cls(i, j)}"` : ''}>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<div class="table-wrap" role="region" tabindex="0" aria-label="${esc(label)}"><table><thead><tr>${th}</tr></thead><tbody>\n${trs}\n</tbody></table></div>`;
}

function htmlFile(r: EvalResult, rel: (p: string) => string): string {
  const parts: string[] = [];
  parts.push(`<section><h2>${esc(rel(r.path))}</h2><p class="muted">${esc(rel(r.template))}${r.model ? ` · ${esc(r.model)}` : ''} · ${esc(r.tokenizer)}${r.exact ? '' : ' (estimate)'}</p>`);
  if (r.error) {
    parts.push(`<p class="fail">${esc(r.error)}</p></section>`);
    return parts.join('\n');
  }
  const rows = [...r.cases.map(caseRow), totalsRow(r.totals)];
  parts.push(htmlTable(`Cases of ${rel(r.path)}`, HEAD, rows, (i, j) => (j === HEAD.length - 1 ? (rows[i][j] === 'pass' || rows[i][j].endsWith('pass') ? 'pass' : 'fail') : undefined)));
  const cov = r.cases.map((c) => ({ label: c.id, value: c.metrics.evidence_coverage ?? 0, text: pct(c.metrics.evidence_coverage), fail: !c.passed }));
  const maxTokens = Math.max(1, ...r.cases.map((c) => c.metrics.input_tokens));
  const tok = r.cases.map((c) => ({ label: c.id, value: c.metrics.input_tokens, text: `${num(c.metrics.input_tokens)} tok` }));
  parts.push(`<div class="charts"><figure><figcaption>Evidence coverage per case</figcaption>${barChart('Evidence coverage per case', cov, 1)}</figure><figure><figcaption>Input tokens per case</figcaption>${barChart('Input tokens per case', tok, maxTokens)}</figure></div>`);
  const p = r.cache_prefix;
  parts.push(`<p>Cacheable prefix: <strong>${num(p.tokens)}</strong> tokens shared by ${p.requests} request${p.requests === 1 ? '' : 's'}.${r.totals.mean_cost !== undefined ? ` Mean input cost ${esc(usd(r.totals.mean_cost))} per request${r.totals.cost_per_day !== undefined ? `, ${esc(usd(r.totals.cost_per_day))} per day at ${num(r.totals.requests_per_day!)} requests` : ''}.` : ''}</p>`);
  const notes: string[] = [];
  for (const c of r.cases) {
    for (const th of c.thresholds) if (!th.ok) notes.push(`<li><code>${esc(c.id)}</code> ${esc(th.message)}</li>`);
    for (const f of c.metrics.facts) if (!f.present) notes.push(`<li><code>${esc(c.id)}</code> fact missing: <code>${esc(f.pattern)}</code></li>`);
    if (c.error) notes.push(`<li><code>${esc(c.id)}</code> ${esc(c.error)}</li>`);
  }
  if (notes.length) parts.push(`<h3>Failures and missing facts</h3><ul class="notes">${notes.join('')}</ul>`);
  if (r.ablations) parts.push(htmlAblations(r, rel));
  parts.push('</section>');
  return parts.join('\n');
}

function htmlAblations(r: EvalResult, rel: (p: string) => string): string {
  const b = r.totals;
  const head = ['ablation', 'cases', 'coverage', 'Δ', 'selection', 'Δ', 'forbidden', 'tokens/request', 'Δ', 'cost/request', 'Δ'];
  const rows: string[][] = [['baseline', String(b.cases), pct(b.evidence_coverage), '', pct(b.selection_recall), '', String(b.forbidden), num(b.mean_input_tokens), '', usd(b.mean_cost), '']];
  const abl: AblationResult[] = r.ablations ?? [];
  for (const a of abl) {
    const t = a.totals;
    rows.push([a.id, a.error ? 'error' : String(a.changed), pct(t.evidence_coverage), ppDelta(b.evidence_coverage, t.evidence_coverage), pct(t.selection_recall), ppDelta(b.selection_recall, t.selection_recall), String(t.forbidden), num(t.mean_input_tokens), intDelta(b.mean_input_tokens, t.mean_input_tokens), usd(t.mean_cost), usdDelta(b.mean_cost, t.mean_cost)]);
  }
  const chart = barChart(
    'Evidence coverage per ablation',
    [{ label: 'baseline', value: b.evidence_coverage ?? 0, text: pct(b.evidence_coverage) }, ...abl.map((a) => ({ label: a.id, value: a.totals.evidence_coverage ?? 0, text: pct(a.totals.evidence_coverage), fail: (a.totals.evidence_coverage ?? 0) < (b.evidence_coverage ?? 0) }))],
    1,
  );
  return `<h3>Ablations</h3>${htmlTable(`Ablations of ${rel(r.path)}`, head, rows, (i, j) => (i > 0 && (j === 3 || j === 5) && rows[i][j].startsWith('−') ? 'fail' : undefined))}<figure><figcaption>Evidence coverage per ablation</figcaption>${chart}</figure>`;
}

/** One self-contained HTML page for a run. */
export function evalHtml(results: readonly EvalResult[], rel: (p: string) => string = (p) => p): string {
  const cases = results.reduce((s, r) => s + r.totals.cases, 0);
  const passed = results.reduce((s, r) => s + r.totals.passed, 0);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ctxlens eval — ${passed}/${cases} cases pass</title>
<style>${CSS}</style>
</head>
<body>
<h1>Context Lens eval: ${passed} of ${cases} case${cases === 1 ? '' : 's'} pass</h1>
<p class="muted">Retrieval recall: required evidence among the candidates. Selection recall: required evidence kept. Precision: kept required evidence / kept items of the scored slots. Coverage: required facts present in the rendered request. Tokens and cost: input of the assembled request.</p>
${results.map((r) => htmlFile(r, rel)).join('\n')}
</body>
</html>
`;
}
