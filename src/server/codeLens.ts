/**
 * Code lenses, the headline of the editor experience: per-slot token counts against budgets above
 * each slot's first use, the whole request at the top of a template, budgets and shares in a
 * config, and kept/omitted verdicts in a fixture. Built from the cached analysis only; positions
 * are mapped onto the current text so lenses stay put while an edit is being analysed.
 */
import type { CodeLens, Command } from 'vscode-languageserver';
import type { ConfigAnalysis, FixtureAnalysis, SlotSummary, TemplateAnalysis } from '../core/analyze';
import type { FixtureItem, Span } from '../core/types';
import { costSuffix, equation, num, pct, plural, requestEquation, requestTotals, tok, trustLabel } from './format';
import { itemVerdicts } from './items';
import { reasonText } from '../core/reasonText';
import type { EntryView } from './analysisService';

/** Client commands the lenses run (contributed by the extension). */
export const PREVIEW_COMMAND = 'contextLens.preview';
export const SELECT_FIXTURE_COMMAND = 'contextLens.selectFixture';

/** Fixture item lenses beyond this many are left to hovers (a 10,000-item fixture stays usable). */
const MAX_ITEM_LENSES = 300;

export interface LensContext {
  uri: string;
  uriOf(path: string): string;
}

function at(view: EntryView, span: Span | undefined): CodeLens['range'] {
  const s = span ? (view.delta ? view.delta.spanToNew(span) : span) : { start: 0, end: 0 };
  const start = view.current.lines.positionAt(s.start);
  // A lens belongs to a line; a zero-width range at the line start keeps it from moving sideways.
  return { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } };
}

function lens(range: CodeLens['range'], title: string, command: string, args: unknown[], tooltip?: string): CodeLens {
  const cmd: Command = { title, command, arguments: args };
  if (tooltip) cmd.tooltip = tooltip;
  return { range, command: cmd };
}

/** "evidence · 2,940 / 3,000 tok · 4 of 7 items · untrusted" */
/** Counts are exact when the tokenizer is the model's and no placeholder (a helper registered in code) stands in the request. */
function countsExact(a: TemplateAnalysis): boolean {
  return a.tokenizer.exact && a.assembly?.trace.exact !== false;
}

export function slotTitle(s: SlotSummary, a: TemplateAnalysis): string {
  const exact = countsExact(a);
  const parts = [s.name];
  const declared = !a.config?.doc.config || s.name in (a.config.doc.config.slots ?? {});
  if (a.fixture) {
    parts.push(s.budget !== undefined ? `${tok(s.tokens, exact)} / ${num(s.budget)} tok` : `${tok(s.tokens, exact)} tok · no budget`);
    if (s.total > 1 || s.kept !== s.total) parts.push(`${num(s.kept)} of ${plural(s.total, 'item')}`);
  } else {
    parts.push(s.budget !== undefined ? `budget ${num(s.budget)} tok` : 'no budget');
  }
  if (!a.config) parts.push('trust unknown (no context config)');
  else if (!declared) parts.push('not in config');
  else parts.push(trustLabel(s));
  if (s.required) parts.push('required');
  return parts.join(' · ');
}

/** "input 272 tok · + output 1,500 + margin 1,200 = 2,972 / 12,000 · fixture sdk-retry · o200k_base" */
export function requestTitle(a: TemplateAnalysis): string {
  const tokenizer = `${a.tokenizer.name}${a.tokenizer.exact ? '' : ' estimate'}`;
  const fixture = a.fixture ? `fixture ${a.fixture.name}` : 'no fixture';
  if (a.assembly && !a.assembly.ok) return `request ✗ ${a.assembly.error ?? 'cannot be assembled'} · ${fixture} · ${tokenizer}`;
  const t = requestTotals(a);
  if (!t) return `request · no context config · ${tokenizer}`;
  const zero = a.config ? '' : ' · no context config';
  return `${requestEquation(t, countsExact(a))} · ${fixture}${zero} · ${tokenizer}${costSuffix(a)}`;
}

export function templateLenses(a: TemplateAnalysis, view: EntryView, ctx: LensContext): CodeLens[] {
  // A file of several templates (BAML): each function's lenses, its total above its name.
  if (a.functions) return a.functions.flatMap((f) => oneTemplateLenses(f, view, ctx, f.template.frontMatter?.span, { function: f.path.slice(f.path.lastIndexOf('#') + 1) }));
  return oneTemplateLenses(a, view, ctx, undefined, undefined);
}

function oneTemplateLenses(a: TemplateAnalysis, view: EntryView, ctx: LensContext, head: Span | undefined, which: { function: string } | undefined): CodeLens[] {
  const top = at(view, head);
  const out: CodeLens[] = [lens(top, requestTitle(a), PREVIEW_COMMAND, which ? [ctx.uri, which] : [ctx.uri])];
  if (a.fixtures.length > 1 || (!a.fixture && a.fixtures.length > 0)) {
    out.push(lens(top, a.fixture ? `switch fixture (${a.fixtures.length})` : 'select a fixture', SELECT_FIXTURE_COMMAND, [ctx.uri]));
  }
  for (const s of a.slots) {
    if (!s.firstUse) continue;
    out.push(lens(at(view, s.firstUse), slotTitle(s, a), PREVIEW_COMMAND, [ctx.uri, { slot: s.name, ...which }]));
  }
  return out;
}

export function configLenses(a: ConfigAnalysis, view: EntryView, ctx: LensContext): CodeLens[] {
  const b = a.budget;
  if (!b) return [];
  const target = a.templates[0] ? [ctx.uriOf(a.templates[0])] : [ctx.uri];
  const out: CodeLens[] = [lens(at(view, undefined), equation(b), PREVIEW_COMMAND, target)];
  for (const line of b.slots) {
    const span = a.doc.keySpan(['slots', line.name]);
    if (!span) continue;
    let title: string;
    if (line.budget === undefined) title = `no budget · ${line.trust ?? 'trust not declared'}`;
    else {
      const written = typeof line.written === 'string' ? `${line.written} = ` : '';
      title = `${written}${num(line.budget)} tok · ${pct(line.budget, b.inputAllocated)} of input`;
    }
    out.push(lens(at(view, span), title, PREVIEW_COMMAND, target));
  }
  return out;
}

export function fixtureLenses(a: FixtureAnalysis, view: EntryView, ctx: LensContext): CodeLens[] {
  const t = a.template;
  if (!t) return [];
  const templateUri = ctx.uriOf(t.path);
  const out: CodeLens[] = [lens(at(view, undefined), requestTitle(t), PREVIEW_COMMAND, [templateUri, { fixture: a.path }])];
  const verdicts = itemVerdicts(t);
  let itemLenses = 0;
  for (const s of t.slots) {
    const key = a.doc.slotKeySpans[s.name];
    if (key) out.push(lens(at(view, key), slotTitle(s, t), PREVIEW_COMMAND, [templateUri, { fixture: a.path, slot: s.name }]));
    const value = a.doc.slots[s.name];
    if (value?.type !== 'items') continue;
    for (const item of value.items) {
      if (itemLenses++ >= MAX_ITEM_LENSES) break;
      const v = verdicts.lookup(s.name, item);
      if (!v) continue;
      out.push(lens(at(view, item.span), itemTitle(v, t.tokenizer.exact), PREVIEW_COMMAND, [templateUri, { fixture: a.path, slot: s.name }], itemTooltip(v)));
    }
  }
  return out;
}

export type ItemVerdict = NonNullable<ReturnType<ReturnType<typeof itemVerdicts>['lookup']>>;

export function itemTitle(v: ItemVerdict, exact: boolean): string {
  const score = v.score !== undefined ? ` · score ${v.score.toFixed(2)}` : '';
  if (v.kept) return `${v.id} · kept #${v.kept.position + 1} (${v.kept.placement}) · ${tok(v.tokens, exact)} tok${score}`;
  return `${v.id} · omitted: ${v.omitted?.reason} · ${tok(v.tokens, exact)} tok${score}`;
}

/** The lens's hover text: the omit reason, or the kept reasons, in words (reasonText). */
export function itemTooltip(v: ItemVerdict): string | undefined {
  if (v.omitted) return reasonText(v.omitted.reason);
  const reasons = v.kept?.reasons ?? [];
  return reasons.length ? reasons.map((r) => reasonText(r)).join(' ') : undefined;
}

export type { FixtureItem };
