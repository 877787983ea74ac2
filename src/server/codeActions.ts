/**
 * Quick fixes. The core's `Finding.fixes` become code actions as they are; the server adds the
 * fixes that need the whole picture (template + config + budget):
 * - add `trust: untrusted` (or `trusted`) to a slot that lacks it;
 * - add `label: <KIND>` to an untrusted slot, or wrap its placeholder in `<slot>` … `</slot>`;
 * - move an untrusted placeholder out of the system role into the first user message;
 * - declare an undefined slot in the config (kind guessed from the name, untrusted, a budget);
 * - rebalance optional slot budgets proportionally so the equation fits (the title shows the numbers);
 * - declare a dotprompt helper or partial the application registers in code (`helpers:` /
 *   `partials:` of the config, or a new config beside a template that has none).
 * All edits are computed against the texts the analysis read, which are current when the caller
 * waited for a fresh analysis.
 */
import { CodeActionKind } from 'vscode-languageserver';
import type { CodeAction, Diagnostic, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import type { Analysis, TemplateAnalysis } from '../core/analyze';
import type { BudgetReport, ConfigDoc, Finding, FixHint, SlotKind, SlotUse, Span, TemplateDoc } from '../core/types';
import { num } from './format';
import { contextConfigPath, initConfigText } from '../core/init';
import { TextView, overlaps } from './textMap';
import { addListEntry, addSlot, setSlotField } from './yamlEdit';
import type { TextEditSpan } from './yamlEdit';

export interface ActionContext {
  uriOf(path: string): string;
  /** Version of an open document, so edits are refused if it changed meanwhile. */
  versionOf(path: string): number | undefined;
  /** Text of a file the core read (for hints that edit files not in the analysis). */
  textOf(path: string): string | undefined;
  documentChanges: boolean;
}

interface PendingEdit {
  path: string;
  text: string;
  edit: TextEditSpan;
}

function workspaceEdit(edits: PendingEdit[], ctx: ActionContext): WorkspaceEdit {
  const byPath = new Map<string, { text: string; edits: TextEdit[] }>();
  for (const e of edits) {
    const view = new TextView(e.text);
    const entry = byPath.get(e.path) ?? { text: e.text, edits: [] };
    entry.edits.push({ range: view.range(e.edit.span), newText: e.edit.newText });
    byPath.set(e.path, entry);
  }
  if (ctx.documentChanges) {
    return {
      documentChanges: [...byPath].map(([p, v]) => ({ textDocument: { uri: ctx.uriOf(p), version: ctx.versionOf(p) ?? null }, edits: v.edits })),
    };
  }
  const changes: Record<string, TextEdit[]> = {};
  for (const [p, v] of byPath) changes[ctx.uriOf(p)] = v.edits;
  return { changes };
}

function action(title: string, diagnostic: Diagnostic | undefined, edits: PendingEdit[], ctx: ActionContext, preferred = false): CodeAction {
  const a: CodeAction = { title, kind: CodeActionKind.QuickFix, edit: workspaceEdit(edits, ctx) };
  if (diagnostic) a.diagnostics = [diagnostic];
  if (preferred) a.isPreferred = true;
  return a;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

// ---------------------------------------------------------------------------
// Which slot a finding is about
// ---------------------------------------------------------------------------

function configOf(a: Analysis): ConfigDoc | undefined {
  if (a.kind === 'config') return a.doc;
  if (a.kind === 'template') return a.config?.doc;
  return a.template?.config?.doc;
}

function templateOf(a: Analysis): TemplateAnalysis | undefined {
  if (a.kind === 'template') return a;
  if (a.kind === 'fixture') return a.template;
  return undefined;
}

function budgetOf(a: Analysis): BudgetReport | undefined {
  if (a.kind === 'fixture') return a.template?.budget;
  return a.budget;
}

/** The slot a finding points at: a placeholder in the template, an entry in the config, a key in a fixture. */
export function slotOfFinding(f: Finding, a: Analysis): { slot: string; use?: SlotUse } | undefined {
  const t = templateOf(a);
  if (t && f.path === t.path) {
    const use = t.template.uses.find((u) => !u.path && overlaps(u.span, f.span));
    if (use) return { slot: use.slot, use };
  }
  const cfg = configOf(a);
  if (cfg && f.path === cfg.path) {
    for (const name of Object.keys(cfg.config?.slots ?? {})) {
      const key = cfg.keySpan(['slots', name]);
      const value = cfg.valueSpan(['slots', name]);
      if (key && overlaps({ start: key.start, end: value?.end ?? key.end }, f.span)) return { slot: name };
    }
  }
  if (a.kind === 'fixture' && f.path === a.path) {
    for (const [name, span] of Object.entries(a.doc.slotKeySpans)) if (overlaps(span, f.span)) return { slot: name };
  }
  // Messages name the slot in quotes or backticks ("slot 'evidence' ..."); the last resort.
  const m = /[`'"]([A-Za-z_][\w-]*)[`'"]/.exec(f.message);
  return m ? { slot: m[1] } : undefined;
}

// ---------------------------------------------------------------------------
// Fixes
// ---------------------------------------------------------------------------

export function fromHints(hints: readonly FixHint[], diagnostic: Diagnostic | undefined, ctx: ActionContext, texts: Map<string, string>): CodeAction[] {
  const out: CodeAction[] = [];
  for (const h of hints) {
    const edits: PendingEdit[] = [];
    for (const e of h.edits) {
      const text = texts.get(e.path) ?? ctx.textOf(e.path);
      if (text === undefined) continue;
      edits.push({ path: e.path, text, edit: { span: e.span, newText: e.newText } });
    }
    if (edits.length === h.edits.length && edits.length > 0) out.push(action(h.title, diagnostic, edits, ctx, h.preferred));
  }
  return out;
}

function addTrust(cfg: ConfigDoc, slot: string, d: Diagnostic | undefined, ctx: ActionContext): CodeAction[] {
  const out: CodeAction[] = [];
  for (const trust of ['untrusted', 'trusted'] as const) {
    const edit = setSlotField(cfg, slot, 'trust', trust);
    if (edit) out.push(action(`Add 'trust: ${trust}' to slot '${slot}' in ${basename(cfg.path)}`, d, [{ path: cfg.path, text: cfg.text, edit }], ctx, trust === 'untrusted'));
  }
  return out;
}

export function labelFor(slot: string, kind: SlotKind | undefined): string {
  const byKind: Partial<Record<SlotKind, string>> = {
    evidence: 'EVIDENCE',
    history: 'HISTORY',
    memory: 'MEMORY',
    tool: 'TOOL_RESULT',
    user: 'USER_INPUT',
    examples: 'EXAMPLE',
    schema: 'SCHEMA',
    policy: 'POLICY',
  };
  const fromName = slot.toUpperCase().replace(/[^A-Z0-9_-]/g, '_').replace(/^[^A-Z]+/, '');
  return (kind && byKind[kind]) || fromName || 'DATA';
}

function addLabel(cfg: ConfigDoc, slot: string, d: Diagnostic | undefined, ctx: ActionContext): CodeAction | undefined {
  const label = labelFor(slot, cfg.config?.slots?.[slot]?.kind);
  const edit = setSlotField(cfg, slot, 'label', label);
  if (!edit) return undefined;
  return action(`Add 'label: ${label}' to slot '${slot}' (each item wrapped as [${label} id] … [/${label}])`, d, [{ path: cfg.path, text: cfg.text, edit }], ctx, true);
}

/**
 * The whole placeholder of a use: `{{notes}}` or the `{{#each evidence}}…{{/each}}` block, where
 * `SlotUse.span` covers only the slot name.
 */
export function extentOf(t: TemplateDoc, use: SlotUse): Span {
  let best: Span = use.span;
  const visit = (nodes: TemplateDoc['messages'][number]['nodes']): void => {
    for (const n of nodes) {
      if ((n.type === 'each' || n.type === 'if') && n.headSpan.start <= use.span.start && use.span.end <= n.headSpan.end) best = n.span;
      else if ((n.type === 'var' || n.type === 'history') && n.span.start <= use.span.start && use.span.end <= n.span.end) best = n.span;
      if (n.type === 'each' || n.type === 'if') {
        visit(n.body);
        if (n.inverse) visit(n.inverse);
      }
    }
  };
  for (const m of t.messages) visit(m.nodes);
  return best;
}

function lineBounds(text: string, span: Span): { lineStart: number; lineEnd: number; before: string; after: string } {
  const lineStart = text.lastIndexOf('\n', span.start - 1) + 1;
  let lineEnd = text.indexOf('\n', span.end);
  if (lineEnd < 0) lineEnd = text.length;
  const endNoCr = lineEnd > 0 && text[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
  return { lineStart, lineEnd, before: text.slice(lineStart, span.start), after: text.slice(span.end, endNoCr) };
}

function wrapInTags(t: TemplateDoc, use: SlotUse, d: Diagnostic | undefined, ctx: ActionContext): CodeAction {
  const text = t.text;
  const tag = use.slot;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const extent = extentOf(t, use);
  const { lineStart, before, after } = lineBounds(text, extent);
  const edits: PendingEdit[] = [];
  if (before.trim() === '' && after.trim() === '') {
    // A placeholder on a line of its own gets the tags on lines of their own.
    edits.push({ path: t.path, text, edit: { span: { start: lineStart, end: lineStart }, newText: `${before}<${tag}>${nl}` } });
    edits.push({ path: t.path, text, edit: { span: { start: extent.end, end: extent.end }, newText: `${nl}${before}</${tag}>` } });
  } else {
    edits.push({ path: t.path, text, edit: { span: { start: extent.start, end: extent.start }, newText: `<${tag}>` } });
    edits.push({ path: t.path, text, edit: { span: { start: extent.end, end: extent.end }, newText: `</${tag}>` } });
  }
  return action(`Wrap '${use.slot}' in <${tag}> … </${tag}>`, d, edits, ctx);
}

function moveToUser(t: TemplateDoc, use: SlotUse, labelled: boolean, d: Diagnostic | undefined, ctx: ActionContext): CodeAction | undefined {
  const text = t.text;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const extent = extentOf(t, use);
  const bare = text.slice(extent.start, extent.end);
  // Out of the system role it is still untrusted data: it arrives delimited unless it has a label.
  const placeholder = use.delimiter || labelled ? bare : `<${use.slot}>${nl}${bare}${nl}</${use.slot}>`;
  const { lineStart, lineEnd, before, after } = lineBounds(text, extent);
  // Remove the placeholder; when it stood alone on its line, remove the line.
  const alone = before.trim() === '' && after.trim() === '';
  const removal: Span = alone ? { start: lineStart, end: Math.min(text.length, lineEnd + 1) } : extent;
  const user = t.messages.find((m) => m.role === 'user' && m.markerSpan.start >= extent.end);
  let insert: TextEditSpan;
  if (user) {
    let at = user.markerSpan.end;
    // After the marker's own line: `{{role "user"}}⏎` or `user:⏎`.
    const eolAt = text.indexOf('\n', at);
    if (eolAt >= 0 && text.slice(at, eolAt).trim() === '') at = eolAt + 1;
    insert = { span: { start: at, end: at }, newText: `${placeholder}${nl}` };
  } else {
    const end = text.length;
    const lead = text.endsWith('\n') ? '' : nl;
    const marker = t.format === 'prompt' ? '{{role "user"}}' : 'user:';
    insert = { span: { start: end, end }, newText: `${lead}${marker}${nl}${placeholder}${nl}` };
  }
  if (insert.span.start < removal.end && insert.span.start > removal.start) return undefined;
  return action(`Move '${use.slot}' out of the ${use.role} message into ${user ? 'the first user message' : 'a new user message'}`, d, [
    { path: t.path, text, edit: { span: removal, newText: '' } },
    { path: t.path, text, edit: insert },
  ], ctx, true);
}

export function guessKind(name: string): SlotKind {
  const n = name.toLowerCase();
  if (/(evid|doc|passage|context|retriev|source|snippet|chunk|knowledge)/.test(n)) return 'evidence';
  if (/(hist|conversation|messages|chat|turns|transcript)/.test(n)) return 'history';
  if (/(tool|function)/.test(n)) return 'tool';
  if (/(memor|profile|fact)/.test(n)) return 'memory';
  if (/(example|shot|demo)/.test(n)) return 'examples';
  if (/(schema|format)/.test(n)) return 'schema';
  if (/(polic|instruction|system|rule|guideline)/.test(n)) return 'policy';
  if (/(question|query|input|user|request|ask|message)/.test(n)) return 'user';
  return 'other';
}

function declareSlot(cfg: ConfigDoc, slot: string, budget: BudgetReport | undefined, d: Diagnostic | undefined, ctx: ActionContext): CodeAction {
  const kind = guessKind(slot);
  const free = budget ? budget.window - budget.total : 0;
  const amount = free > 0 ? free : undefined;
  const fields = [`kind: ${kind}`, 'trust: untrusted'];
  if (amount !== undefined) fields.push(`budget: ${amount}`);
  const edit = addSlot(cfg, slot, `{ ${fields.join(', ')} }`);
  const what = amount !== undefined ? `budget ${num(amount)}` : 'no budget left to give';
  return action(`Declare slot '${slot}' in ${basename(cfg.path)} (kind ${kind}, untrusted, ${what})`, d, [{ path: cfg.path, text: cfg.text, edit }], ctx, true);
}

/**
 * Scales the optional slots' budgets down by one factor so that allocation + output + margin fits
 * the window. Percent budgets stay percentages (scaled, rounded down to 0.1%); required slots and
 * the reserves are left alone. Undefined when required slots alone do not fit.
 */
export function rebalance(b: BudgetReport, cfg: ConfigDoc): { changes: Array<{ slot: string; from: number; to: number; text: string; span: Span }>; total: number } | undefined {
  // Everything the allocation must give back so that input + output + margin fit again.
  const need = b.margin - b.marginLeft;
  if (b.fits || need <= 0) return undefined;
  const optional = b.slots.filter((s) => !s.required && s.budget !== undefined && s.budget > 0);
  const optionalSum = optional.reduce((n, s) => n + (s.budget ?? 0), 0);
  const target = optionalSum - need;
  if (optional.length === 0 || target <= 0) return undefined;
  const factor = target / optionalSum;
  const changes: Array<{ slot: string; from: number; to: number; text: string; span: Span }> = [];
  let saved = 0;
  for (const s of optional) {
    const span = cfg.valueSpan(['slots', s.name, 'budget']);
    if (!span) return undefined;
    const from = s.budget ?? 0;
    let to: number;
    let text: string;
    if (typeof s.written === 'string' && s.written.endsWith('%')) {
      const p = Math.floor(parseFloat(s.written) * factor * 10) / 10;
      to = Math.floor((b.inputBudget * p) / 100);
      text = `"${p}%"`;
    } else {
      to = Math.floor(from * factor);
      text = String(to);
    }
    saved += from - to;
    changes.push({ slot: s.name, from, to, text, span });
  }
  if (saved < need) return undefined;
  return { changes, total: b.total - saved };
}

function rebalanceAction(b: BudgetReport, cfg: ConfigDoc, d: Diagnostic | undefined, ctx: ActionContext): CodeAction | undefined {
  const r = rebalance(b, cfg);
  if (!r) return undefined;
  const list = r.changes.map((c) => `${c.slot} ${num(c.from)}→${num(c.to)}`).join(', ');
  const title = `Rebalance budgets to fit ${num(b.window)}: ${list} (total ${num(r.total)})`;
  return action(title, d, r.changes.map((c) => ({ path: cfg.path, text: cfg.text, edit: { span: c.span, newText: c.text } })), ctx, true);
}

const SERVER_BUILT = new Set(['untrusted-in-system']);

/**
 * "Declare 'shout' as a helper registered in code": adds the name to the config's `helpers:` (or
 * `partials:`) list; a template without a config gets one beside it (as `config-missing` writes
 * it) with the declaration. The name is the one the finding quotes.
 */
function declareCodeRegistered(f: Finding, a: Analysis, cfg: ConfigDoc | undefined, d: Diagnostic | undefined, ctx: ActionContext): CodeAction | undefined {
  const name = /'([^'\n]+)'/.exec(f.message)?.[1];
  if (!name || !/^[^\s{}()\[\],#&*!|>'"%@`]+$/.test(name)) return undefined;
  const key = f.rule === 'unknown-helper' ? 'helpers' : 'partials';
  const what = f.rule === 'unknown-helper' ? 'helper' : 'partial';
  if (cfg) {
    const edit = addListEntry(cfg, key, name);
    return action(`Declare '${name}' as a ${what} registered in code (${key}: in ${basename(cfg.path)})`, d, [{ path: cfg.path, text: cfg.text, edit }], ctx, true);
  }
  if (a.kind !== 'template' || a.config) return undefined;
  const target = contextConfigPath(a.path);
  if (ctx.textOf(target) !== undefined) return undefined;
  const uri = ctx.uriOf(target);
  const text = initConfigText(a);
  const edit: WorkspaceEdit = {
    documentChanges: [
      { kind: 'create', uri, options: { overwrite: false, ignoreIfExists: true } },
      { textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: `${text}${text.endsWith('\n') ? '' : '\n'}${key}: [${name}]\n` }] },
    ],
  };
  return { title: `Declare '${name}' as a ${what} registered in code (create ${basename(target)})`, kind: CodeActionKind.QuickFix, edit, isPreferred: true, ...(d ? { diagnostics: [d] } : {}) };
}

/** Every fix for one finding, from the core's hints and the server's own builders. */
export function actionsFor(f: Finding, d: Diagnostic | undefined, a: Analysis, ctx: ActionContext): CodeAction[] {
  const texts = new Map<string, string>();
  const t = templateOf(a);
  const cfg = configOf(a);
  if (t) texts.set(t.path, t.template.text);
  if (cfg) texts.set(cfg.path, cfg.text);
  // The core's own fixes come first; the server's builders fill in only for findings without any.
  // For untrusted-in-system the server's move is used: it lands inside a `{{#role "user"}}` block
  // (the core's hint inserts after the block's end, outside the user message).
  if (f.fixes?.length && !SERVER_BUILT.has(f.rule)) {
    const hinted = fromHints(f.fixes, d, ctx, texts);
    if (hinted.length) return hinted;
  }
  const out: CodeAction[] = [];
  const target = slotOfFinding(f, a);
  const slotCfg = target && cfg?.config?.slots?.[target.slot];
  // Edits to an inline config (inside the template's front matter) are not attempted: its spans
  // are not the template's.
  const editableCfg = cfg && !(a.kind !== 'config' && t?.config?.inline) ? cfg : undefined;
  switch (f.rule) {
    case 'config-missing': {
      // Create <name>.context.yaml beside the template with every slot it uses (core/init.ts).
      if (a.kind === 'template' && !a.config) {
        const target = contextConfigPath(a.path);
        if (ctx.textOf(target) === undefined) {
          const uri = ctx.uriOf(target);
          const edit: WorkspaceEdit = {
            documentChanges: [
              { kind: 'create', uri, options: { overwrite: false, ignoreIfExists: true } },
              { textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: initConfigText(a) }] },
            ],
          };
          out.push({ title: `Create context config ${basename(target)}`, kind: CodeActionKind.QuickFix, edit, isPreferred: true, ...(d ? { diagnostics: [d] } : {}) });
        }
      }
      break;
    }
    case 'trust-missing':
      if (editableCfg && target && slotCfg) out.push(...addTrust(editableCfg, target.slot, d, ctx));
      break;
    case 'untrusted-unlabelled': {
      if (editableCfg && target && slotCfg) {
        const a1 = addLabel(editableCfg, target.slot, d, ctx);
        if (a1) out.push(a1);
      }
      const use = target?.use ?? (target && t ? t.template.uses.find((u) => !u.path && u.slot === target.slot && !u.delimiter) : undefined);
      if (t && use && !use.delimiter) out.push(wrapInTags(t.template, use, d, ctx));
      break;
    }
    case 'untrusted-in-system': {
      const use = target?.use ?? (target && t ? t.template.uses.find((u) => !u.path && u.slot === target.slot && (u.role === 'system' || u.role === 'developer')) : undefined);
      if (t && use && use.form !== 'history') {
        const m = moveToUser(t.template, use, !!slotCfg?.label, d, ctx);
        if (m) out.push(m);
      }
      break;
    }
    case 'slot-undefined':
      if (editableCfg && target && !slotCfg) out.push(declareSlot(editableCfg, target.slot, budgetOf(a), d, ctx));
      break;
    case 'unknown-helper':
    case 'unknown-partial': {
      const a1 = declareCodeRegistered(f, a, editableCfg, d, ctx);
      if (a1) out.push(a1);
      break;
    }
    case 'budget-overflow': {
      const b = budgetOf(a);
      if (editableCfg && b) {
        const r = rebalanceAction(b, editableCfg, d, ctx);
        if (r) out.push(r);
      }
      break;
    }
  }
  return out;
}
