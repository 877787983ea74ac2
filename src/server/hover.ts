/**
 * Hovers: the arithmetic behind the numbers. On a slot use in a template (budget, usage, trust,
 * kept and dropped items and why), on a slot entry in a config (how the budget resolves and its
 * share of the input), on a fixture item (tokens, score, kept or omitted and why). Offsets are in
 * the analysed text (the caller maps the cursor back when an edit is pending).
 */
import type { Hover, MarkupContent } from 'vscode-languageserver';
import type { ConfigAnalysis, FixtureAnalysis, SlotSummary, TemplateAnalysis } from '../core/analyze';
import type { BudgetReport, Span } from '../core/types';
import { budgetResolution, costLines, equation, num, pct, plural, requestTotals, tok, trustLabel } from './format';
import { itemVerdicts } from './items';
import { contains } from './textMap';
import { conflictText, reasonText } from '../core/reasonText';
import { PROMPTY_LINE_LABEL, promptyLineOf } from '../core/language/prompty/engine';

/** Items listed per section of a hover; the preview shows them all. */
const MAX_LISTED = 8;

function md(lines: Array<string | undefined | false>): MarkupContent {
  return { kind: 'markdown', value: lines.filter((l): l is string => typeof l === 'string').join('\n') };
}

/** Inline code that survives backticks in the value. */
function code(s: string): string {
  const fence = s.includes('`') ? '``' : '`';
  return `${fence}${s.replace(/\n/g, ' ')}${fence}`;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function countsLine(a: { tokenizer: { name: string; exact: boolean } }): string {
  return `_Counted with ${code(a.tokenizer.name)}${a.tokenizer.exact ? ' (exact for this model)' : ' — an estimate, not the model tokenizer'}._`;
}

/**
 * The loader a `.prompty` file is rendered as: the one its project runs, and why, as the render
 * names it in the trace (language/prompty/loader.ts); else the runtime line its front matter targets.
 */
function runtimeLine(a: TemplateAnalysis): string | undefined {
  if (a.template.format !== 'prompty') return undefined;
  const named = a.assembly?.trace.runtime;
  if (named && named.includes('(')) return `_Rendered as ${named.replace(/ \(([^()]*(?:\([^()]*\)[^()]*)*)\)$/, ' loads it: $1')}._`;
  return `_Rendered as ${named ?? PROMPTY_LINE_LABEL[promptyLineOf(a.template.frontMatter?.data)]} renders it (the front matter's format)._`;
}

function slotSection(s: SlotSummary, a: TemplateAnalysis): string[] {
  const exact = a.tokenizer.exact;
  const lines: string[] = [];
  const cfg = a.config?.doc.config?.slots?.[s.name];
  lines.push(`**${s.name}** — ${s.kind} slot, ${trustLabel(s)}${s.required ? ', required' : ''}`);
  lines.push('');
  if (a.config && !cfg) lines.push(`Not declared in ${code(basename(a.config.path))}: no budget, no trust, no envelope.`);
  const budget = a.budget ? budgetResolution(a.budget, s.name) : undefined;
  if (budget) lines.push(`- Budget: ${budget}${a.config ? ` (from ${code(basename(a.config.path))})` : ''}`);
  else if (cfg) lines.push('- Budget: none (the slot can take the whole input budget)');
  if (a.fixture) {
    const share = s.budget ? ` — ${pct(s.tokens, s.budget)} of its budget` : '';
    lines.push(`- Used with fixture ${code(a.fixture.name)}: ${tok(s.tokens, exact)} tok${share}`);
    if (s.total > 0) lines.push(`- Items: ${num(s.kept)} of ${plural(s.total, 'item')} kept`);
  } else lines.push('- No fixture selected: usage is unknown until one is.');
  if (cfg) {
    const env = cfg.label ? `wrapped as ${code(cfg.envelope === 'xml' ? `<${cfg.label.toLowerCase()} id="…">` : `[${cfg.label} id]`)}` : 'no label envelope';
    lines.push(`- Packing: ${cfg.pack}, order ${cfg.order}${cfg.max_items ? `, at most ${cfg.max_items} items` : ''}, priority ${cfg.priority}; ${env}`);
  }
  return lines;
}

function itemLists(a: TemplateAnalysis, slot: string): string[] {
  const trace = a.assembly?.trace;
  if (!trace) return [];
  const exact = a.tokenizer.exact;
  const kept = trace.retained.filter((t) => t.slot === slot);
  const dropped = trace.omitted.filter((o) => o.slot === slot);
  const lines: string[] = [];
  if (kept.length) {
    lines.push('', '**Kept** (in request order)');
    for (const t of kept.slice(0, MAX_LISTED)) {
      lines.push(`- ${code(t.id)} ${tok(t.tokens, exact)} tok${t.score !== undefined ? ` · score ${t.score.toFixed(2)}` : ''} · ${t.placement}${t.source ? ` · ${t.source}` : ''}${t.reasons?.length ? ` · ${t.reasons.map(code).join(', ')}` : ''}`);
    }
    if (kept.length > MAX_LISTED) lines.push(`- … ${num(kept.length - MAX_LISTED)} more (see the preview)`);
  }
  if (dropped.length) {
    lines.push('', '**Omitted**');
    for (const o of dropped.slice(0, MAX_LISTED)) lines.push(`- ${code(o.id)} ${tok(o.tokens, exact)} tok — ${explainReason(o.reason)}`);
    if (dropped.length > MAX_LISTED) lines.push(`- … ${num(dropped.length - MAX_LISTED)} more (see the preview)`);
  }
  const conflicts = (trace.conflicts ?? []).filter((c) => c.slot === slot);
  if (conflicts.length) {
    lines.push('', '**Conflicts**');
    for (const c of conflicts.slice(0, MAX_LISTED)) lines.push(`- ${conflictText(c)}`);
    if (conflicts.length > MAX_LISTED) lines.push(`- … ${num(conflicts.length - MAX_LISTED)} more (see the preview)`);
  }
  return lines;
}

function requestSection(a: TemplateAnalysis): string[] {
  const t = requestTotals(a);
  if (!t) return ['No context config: budgets and trust cannot be checked.'];
  const exact = a.tokenizer.exact;
  const lines = [
    `**Request** ${t.assembled ? `with fixture ${code(a.fixture?.name ?? '')}` : '(allocated budgets, no fixture)'}`,
    '',
    t.limits
      ? `${tok(t.input, exact)} input + ${num(t.margin)} margin = ${tok(t.total, exact)} / ${num(t.limits.input)} input limit ${t.total <= t.limits.input ? '✓' : `✗ over by ${num(t.total - t.limits.input)}`}; output reserve ${num(t.output)} / ${num(t.limits.output)} output limit ${t.output <= t.limits.output ? '✓' : '✗'}`
      : `${tok(t.input, exact)} input + ${num(t.output)} output reserve + ${num(t.margin)} margin = ${tok(t.total, exact)} / ${num(t.window)} ${t.fits ? '✓' : `✗ over by ${num(t.total - t.window)}`}`,
  ];
  if (!a.config) lines.push('', 'No context config: the window and output reserve come from the model registry and the front matter; trust is unknown. Run **Create context config** (quick fix) or `ctxlens init`.');
  if (a.assembly && !a.assembly.ok) lines.push('', `Assembly failed: ${a.assembly.error ?? 'required slots overflow'}`);
  const cost = costLines(a);
  if (cost.length) lines.push('', ...cost);
  return lines;
}

export function templateHover(a: TemplateAnalysis, offset: number, range: (span: Span) => Hover['range']): Hover | undefined {
  const use = a.template.uses.find((u) => !u.path && contains(u.span, offset));
  if (use) {
    const s = a.slots.find((x) => x.name === use.slot);
    if (!s) return undefined;
    const lines = [...slotSection(s, a)];
    const label = a.config?.doc.config?.slots?.[s.name]?.label;
    const around = use.delimiter ? `, inside ${code(use.delimiter)}` : label ? `, each item in a ${code(label)} envelope` : ', bare (no label or delimiter around it)';
    const placement = `- Lands in the ${code(use.role)} message${around}`;
    lines.push(placement);
    if (s.trust !== 'trusted' && (use.role === 'system' || use.role === 'developer')) lines.push('- ⚠ Untrusted data in a system/developer message is read as instructions.');
    lines.push(...itemLists(a, s.name), '', countsLine(a), runtimeLine(a) ?? '');
    return { contents: md(lines), range: range(use.span) };
  }
  const ctx = a.template.frontMatter?.context;
  if (ctx && contains(ctx.span, offset)) {
    const lines = [...requestSection(a)];
    if (a.budget) lines.push('', `Budget equation: ${equation(a.budget)}`);
    lines.push('', countsLine(a), runtimeLine(a) ?? '');
    return { contents: md(lines), range: range(ctx.span) };
  }
  return undefined;
}

function slotEntryHover(b: BudgetReport, a: ConfigAnalysis, name: string): string[] {
  const line = b.slots.find((s) => s.name === name);
  const cfg = a.doc.config?.slots?.[name];
  const lines = [`**${name}** — ${cfg?.kind ?? line?.kind ?? 'other'} slot, ${cfg?.trust ?? 'trust not declared'}${cfg?.required ? ', required' : ''}`, ''];
  const res = budgetResolution(b, name);
  if (res && line?.budget !== undefined) {
    lines.push(`- Budget: ${res}`);
    lines.push(`- Share: ${pct(line.budget, b.inputAllocated)} of the ${num(b.inputAllocated)} tok allocated to input slots; ${pct(line.budget, b.inputBudget)} of the ${num(b.inputBudget)} tok input budget (window ${num(b.window)} − output ${num(b.output)})`);
  } else lines.push('- Budget: none (the slot can take the whole input budget)');
  if (cfg) lines.push(`- Priority ${cfg.priority}${cfg.required ? ' (never dropped)' : ''}; packing ${cfg.pack}, order ${cfg.order}${cfg.label ? `; label ${code(cfg.label)}` : ''}`);
  if (a.templates.length) lines.push(`- Used by ${a.templates.map((t) => code(basename(t))).join(', ')}`);
  return lines;
}

export function configHover(a: ConfigAnalysis, offset: number, range: (span: Span) => Hover['range']): Hover | undefined {
  const b = a.budget;
  if (!b) return undefined;
  for (const line of b.slots) {
    const key = a.doc.keySpan(['slots', line.name]);
    const value = a.doc.valueSpan(['slots', line.name]);
    if (!key) continue;
    const whole = { start: key.start, end: value?.end ?? key.end };
    if (!contains(whole, offset)) continue;
    return { contents: md([...slotEntryHover(b, a, line.name), '', countsLine(a)]), range: range(key) };
  }
  for (const k of ['window', 'output', 'margin', 'limits', 'model', 'tokenizer']) {
    const key = a.doc.keySpan([k]);
    const value = a.doc.valueSpan([k]);
    if (!key || !contains({ start: key.start, end: value?.end ?? key.end }, offset)) continue;
    const lines = [
      '**Budget equation** (slot budgets + reserved output + margin ≤ window)',
      '',
      equation(b),
      '',
      `- Input budget: ${num(b.inputBudget)} tok (${b.limits ? `input limit ${num(b.limits.input)}` : `window ${num(b.window)} − output ${num(b.output)}`}); percentage budgets resolve against it`,
      `- Allocated to slots: ${num(b.inputAllocated)} tok (${pct(b.inputAllocated, b.inputBudget)} of the input budget)`,
      `- Model ${code(b.model ?? 'none')}, tokenizer ${code(b.tokenizer)}${b.exact ? '' : ' (estimate)'}`,
    ];
    return { contents: md(lines), range: range(key) };
  }
  return undefined;
}

export function fixtureHover(a: FixtureAnalysis, offset: number, range: (span: Span) => Hover['range']): Hover | undefined {
  const t = a.template;
  if (!t) return undefined;
  const verdicts = itemVerdicts(t);
  for (const [slot, value] of Object.entries(a.doc.slots)) {
    const key = a.doc.slotKeySpans[slot];
    if (key && contains(key, offset)) {
      const s = t.slots.find((x) => x.name === slot);
      if (!s) return { contents: md([`**${slot}** is not a slot of ${code(basename(t.path))}; the value is never sent.`]), range: range(key) };
      return { contents: md([...slotSection(s, t), ...itemLists(t, slot), '', countsLine(t)]), range: range(key) };
    }
    if (value.type !== 'items') continue;
    // Items are few per screen but many per file: a linear scan over one slot is cheap enough here.
    const item = value.items.find((i) => contains(i.span, offset));
    if (!item) continue;
    const v = verdicts.lookup(slot, item);
    const lines = [`**${item.id ?? `${slot} item ${item.index + 1}`}** in ${code(slot)}`, ''];
    if (!v) lines.push('Not in the trace (the template does not use this slot, or assembly failed).');
    else {
      lines.push(`- ${tok(v.tokens, t.tokenizer.exact)} tok${v.score !== undefined ? ` · selection score ${v.score.toFixed(3)}` : ''}`);
      if (v.kept) {
        lines.push(`- **Kept** at position ${v.kept.position + 1} of its slot (${v.kept.placement} third)${v.kept.merged?.length ? `; merged duplicates from ${v.kept.merged.map(code).join(', ')}` : ''}`);
        for (const r of v.kept.reasons ?? []) lines.push(`  - ${explainReason(r)}`);
      }
      if (v.omitted) lines.push(`- **Omitted**: ${explainReason(v.omitted.reason)}`);
      for (const c of t.assembly?.trace.conflicts ?? []) if (c.slot === slot && c.items.includes(v.id)) lines.push(`- **Conflict**: ${conflictText(c)}`);
    }
    const meta = [
      item.source && `source ${code(item.source)}`,
      item.source_type && `type ${code(item.source_type)}`,
      item.version && `version ${code(item.version)}`,
      item.authority !== undefined && `authority ${item.authority}`,
      item.relevance !== undefined && `relevance ${item.relevance}`,
      item.published_at && `published ${item.published_at}`,
    ].filter((x): x is string => typeof x === 'string');
    if (meta.length) lines.push(`- ${meta.join(' · ')}`);
    lines.push('', countsLine(t));
    return { contents: md(lines), range: range(item.span) };
  }
  return undefined;
}

/** A reason code of the trace in words, with the code (reasonText.ts: the same sentence as the CLI and the preview). */
export function explainReason(reason: string): string {
  const text = reasonText(reason);
  return text === reason ? code(reason) : `${text} (${code(reason)})`;
}
