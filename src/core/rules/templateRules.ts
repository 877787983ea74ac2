/**
 * Rules that need only a template and its config (no fixture): slot definitions, trust and
 * labelling, role placement. Each finding carries quick-fix hints the editor can apply as they are.
 */
import type { ContextConfig, SlotConfig } from '../config/schema';
import type { ConfigDoc, FixHint, Finding, SlotKind, SlotUse, Span, TemplateDoc } from '../types';
import { finding } from './registry';
import { languageFor } from '../language/registry';
import { basename } from '../paths';

/** Kinds the application writes itself; undeclared trust defaults to trusted only for these. */
const APPLICATION_KINDS: ReadonlySet<SlotKind> = new Set(['policy', 'schema', 'examples']);

/** Trust as the rules see it: declared, or the safe default for the kind. */
export function effectiveTrust(slot: SlotConfig | undefined): 'trusted' | 'untrusted' {
  if (slot?.trust) return slot.trust;
  return slot && APPLICATION_KINDS.has(slot.kind) ? 'trusted' : 'untrusted';
}

export interface TemplateRuleInput {
  template: TemplateDoc;
  config: ContextConfig;
  configDoc: ConfigDoc;
  /** True when the config is written inline in the template front matter. */
  inline: boolean;
}

/** `trust-missing` for one slot, with the fix that declares its effective trust. */
export function trustMissing(configDoc: ConfigDoc, name: string, slot: SlotConfig): Finding {
  const keySpan = configDoc.keySpan(['slots', name]) ?? { start: 0, end: 0 };
  const fix = addSlotFieldFix(configDoc, name, 'trust', effectiveTrust(slot) === 'trusted' ? 'trusted' : 'untrusted');
  return finding('trust-missing', configDoc.path, keySpan, `Slot '${name}' does not declare trust; it is treated as ${effectiveTrust(slot)}. Add trust: trusted or trust: untrusted.`, {
    fixes: fix ? [fix] : undefined,
  });
}

/** Config-level rules that need no template (for a config no template uses yet). */
export function configRules(configDoc: ConfigDoc): Finding[] {
  const out: Finding[] = [];
  for (const [name, slot] of Object.entries(configDoc.config?.slots ?? {})) if (!slot.trust) out.push(trustMissing(configDoc, name, slot));
  return out;
}

export function templateRules(input: TemplateRuleInput): Finding[] {
  const { template, config, configDoc } = input;
  const out: Finding[] = [];
  const usesBySlot = new Map<string, SlotUse[]>();
  for (const use of template.uses) {
    const list = usesBySlot.get(use.slot);
    if (list) list.push(use);
    else usesBySlot.set(use.slot, [use]);
  }
  const configRel = basename(configDoc.path);
  // A request a config composes of several plain prompt files (language/plain): the rules speak of the request, not of one file.
  const composedBy = (template as { composition?: { configPath?: string } }).composition?.configPath;
  const usedBy = composedBy ? `any file of the request ${basename(composedBy)} composes` : basename(template.path);

  // slot-undefined: used in the template, missing from the config (reported once per slot, at its first use).
  for (const [slot, uses] of usesBySlot) {
    if (config.slots[slot]) continue;
    // Text the runtime writes itself (BAML's `ctx.output_format`) is a part of the request, never a slot of the config.
    if (slot.includes('.')) continue;
    const first = uses[0];
    const fix = declareSlotFix(configDoc, slot, guessKind(slot, first));
    out.push(
      // A use in another file of a composed request (plain prompt files) is located in that file.
      finding('slot-undefined', first.path ?? template.path, first.span, `Slot '${slot}' is used here but not defined in ${configRel}.`, {
        related: [{ path: configDoc.path, span: configDoc.keySpan(['slots']) ?? { start: 0, end: 0 }, message: 'slots are defined here' }],
        fixes: fix ? [fix] : undefined,
      }),
    );
  }

  // dotprompt inserts the conversation into every template (insertHistory): its first history slot is never unused.
  const dotpromptHistory = languageFor(template).placesHistory ? Object.entries(config.slots).find(([, c]) => c.kind === 'history')?.[0] : undefined;
  for (const [name, slot] of Object.entries(config.slots)) {
    const keySpan = configDoc.keySpan(['slots', name]) ?? { start: 0, end: 0 };
    const uses = usesBySlot.get(name) ?? [];
    if (uses.length === 0 && name !== dotpromptHistory) {
      if (slot.required) {
        out.push(finding('required-missing', configDoc.path, keySpan, `Required slot '${name}' is never used by ${usedBy}, so it can never reach the model.`, { related: [{ path: template.path, span: template.bodySpan, message: 'template body' }] }));
      } else {
        out.push(finding('slot-unused', configDoc.path, keySpan, `Slot '${name}' is defined but never used by ${usedBy}.`, { related: [{ path: template.path, span: template.bodySpan, message: 'template body' }] }));
      }
    }
    if (!slot.trust) out.push(trustMissing(configDoc, name, slot));
    const trust = effectiveTrust(slot);
    if (trust !== 'untrusted') continue;
    for (const use of uses) {
      if ((use.role === 'system' || use.role === 'developer') && use.form !== 'history') {
        const fix = use.path ? undefined : moveToUserFix(template, use);
        out.push(
          finding('untrusted-in-system', use.path ?? template.path, use.span, `Untrusted slot '${name}' is placed in the ${use.role} role, where its text would carry the authority of your instructions. Move it to a user message.`, {
            related: [{ path: configDoc.path, span: configDoc.keySpan(['slots', name, 'trust']) ?? keySpan, message: slot.trust ? `trust: ${slot.trust}` : 'trust not declared' }],
            fixes: fix ? [fix] : undefined,
          }),
        );
      }
      if (!slot.label && !use.delimiter && use.form !== 'history' && use.form !== 'if') {
        const fixes: FixHint[] = [];
        const label = addSlotFieldFix(configDoc, name, 'label', name.toUpperCase().replace(/[^A-Z0-9_]/g, '_'));
        if (label) fixes.push({ ...label, preferred: true });
        if (!use.path) fixes.push(wrapFix(template, use, name));
        out.push(
          finding('untrusted-unlabelled', use.path ?? template.path, use.span, `Untrusted slot '${name}' is rendered without a label or delimiter, so the model cannot tell its data from instructions. Set a label in the config or wrap it in <${name}>…</${name}>.`, {
            related: [{ path: configDoc.path, span: keySpan, message: `slot '${name}' (${slot.trust ? 'trust: untrusted' : 'trust undeclared'})` }],
            fixes,
          }),
        );
      }
    }
  }
  return out;
}


export function guessKind(slot: string, use: Pick<SlotUse, 'form'>): SlotKind {
  const s = slot.toLowerCase();
  if (use.form === 'history' || s.includes('history')) return 'history';
  if (/(evidence|doc|passage|context|source|result)/.test(s)) return 'evidence';
  if (/(question|query|input|message|request)/.test(s)) return 'user';
  if (/(tool|function)/.test(s)) return 'tool';
  if (/(policy|instruction|rule)/.test(s)) return 'policy';
  if (/memory/.test(s)) return 'memory';
  return 'other';
}

/** Indentation (spaces) of the line containing `offset`. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const m = /^[ \t]*/.exec(text.slice(lineStart));
  return m ? m[0] : '';
}

function lineEnd(text: string, offset: number): number {
  const i = text.indexOf('\n', offset);
  return i < 0 ? text.length : i;
}

/** Inserts a new slot entry at the end of the `slots:` mapping. */
export function declareSlotFix(doc: ConfigDoc, slot: string, kind: SlotKind): FixHint | undefined {
  const slotsKey = doc.keySpan(['slots']);
  const slotsValue = doc.valueSpan(['slots']);
  const entry = `{ kind: ${kind}, trust: ${APPLICATION_KINDS.has(kind) ? 'trusted' : 'untrusted'}, budget: 200 }`;
  if (!slotsKey) {
    const end = doc.text.length;
    const sep = doc.text.endsWith('\n') || end === 0 ? '' : '\n';
    return { title: `Declare slot '${slot}' in ${basename(doc.path)}`, edits: [{ path: doc.path, span: { start: end, end }, newText: `${sep}slots:\n  ${slot}: ${entry}\n` }] };
  }
  if (slotsValue && doc.text[slotsValue.start] === '{') {
    const close = slotsValue.end - 1;
    const inner = doc.text.slice(slotsValue.start + 1, close).trim();
    return { title: `Declare slot '${slot}' in ${basename(doc.path)}`, edits: [{ path: doc.path, span: { start: close, end: close }, newText: `${inner ? ', ' : ''}${slot}: ${entry} ` }] };
  }
  const baseIndent = indentAt(doc.text, slotsKey.start);
  let childIndent = baseIndent + '  ';
  let at = lineEnd(doc.text, slotsKey.end);
  if (slotsValue && slotsValue.end > slotsValue.start) {
    childIndent = indentAt(doc.text, slotsValue.start) || childIndent;
    at = lineEnd(doc.text, Math.max(slotsValue.start, slotsValue.end - 1));
  }
  return { title: `Declare slot '${slot}' in ${basename(doc.path)}`, edits: [{ path: doc.path, span: { start: at, end: at }, newText: `\n${childIndent}${slot}: ${entry}` }] };
}

const SLOT_FIELDS = ['kind', 'trust', 'required', 'budget', 'priority', 'label', 'envelope', 'pack', 'order', 'max_items', 'role'] as const;

/** Adds `field: value` to a slot entry, in flow (`{ ... }`) or block style. */
export function addSlotFieldFix(doc: ConfigDoc, slot: string, field: string, value: string): FixHint | undefined {
  const valueSpan = doc.valueSpan(['slots', slot]);
  const title = `Add '${field}: ${value}' to slot '${slot}'`;
  if (!valueSpan) return undefined;
  const text = doc.text;
  if (text[valueSpan.start] === '{') {
    const inner = text.slice(valueSpan.start + 1, valueSpan.end - 1).trim();
    const at = valueSpan.start + 1;
    return { title, edits: [{ path: doc.path, span: { start: at, end: at }, newText: inner ? ` ${field}: ${value},` : ` ${field}: ${value} ` }] };
  }
  let firstKey: Span | undefined;
  for (const f of SLOT_FIELDS) {
    const k = doc.keySpan(['slots', slot, f]);
    if (k && (!firstKey || k.start < firstKey.start)) firstKey = k;
  }
  if (!firstKey) {
    const keySpan = doc.keySpan(['slots', slot]);
    if (!keySpan) return undefined;
    // `name:` with an empty value: turn it into a flow mapping.
    const at = lineEnd(text, keySpan.end);
    return { title, edits: [{ path: doc.path, span: { start: at, end: at }, newText: ` { ${field}: ${value} }` }] };
  }
  const indent = indentAt(text, firstKey.start);
  const lineStart = text.lastIndexOf('\n', firstKey.start - 1) + 1;
  return { title, edits: [{ path: doc.path, span: { start: lineStart, end: lineStart }, newText: `${indent}${field}: ${value}\n` }] };
}

/** Wraps a placeholder (or block) in `<name>` ... `</name>` tags inside the template. */
function wrapFix(template: TemplateDoc, use: SlotUse, name: string): FixHint {
  const span = useExtent(template, use);
  return {
    title: `Wrap '${name}' in <${name}>…</${name}> delimiters`,
    edits: [
      { path: template.path, span: { start: span.start, end: span.start }, newText: `<${name}>\n` },
      { path: template.path, span: { start: span.end, end: span.end }, newText: `\n</${name}>` },
    ],
  };
}

/** The whole source extent of a use: the block for `each`/`if`, the mustache for a variable. */
function useExtent(template: TemplateDoc, use: SlotUse): Span {
  let best: Span = use.span;
  const visit = (nodes: TemplateDoc['messages'][number]['nodes']): void => {
    for (const n of nodes) {
      if ((n.type === 'each' || n.type === 'if') && n.headSpan.start <= use.span.start && use.span.end <= n.headSpan.end) best = n.span;
      else if (n.type === 'var' && n.span.start <= use.span.start && use.span.end <= n.span.end) best = n.span;
      else if (n.type === 'history' && n.span.start <= use.span.start && use.span.end <= n.span.end) best = n.span;
      if (n.type === 'each' || n.type === 'if') {
        visit(n.body);
        if (n.inverse) visit(n.inverse);
      }
    }
  };
  for (const m of template.messages) visit(m.nodes);
  return best;
}

/** Moves a placeholder out of the system role into the first user message (appending it there). */
function moveToUserFix(template: TemplateDoc, use: SlotUse): FixHint | undefined {
  const user = template.messages.find((m) => m.role === 'user');
  if (!user) return undefined;
  const extent = useExtent(template, use);
  const snippet = template.text.slice(extent.start, extent.end);
  // After the message's last node: for a `{{#role "user"}}…{{/role}}` block that is still inside it.
  const last = user.nodes[user.nodes.length - 1];
  const at = last ? last.span.end : user.markerSpan.end;
  const removeEnd = template.text[extent.end] === '\n' ? extent.end + 1 : extent.end;
  return {
    title: `Move '${use.slot}' out of the ${use.role} role into the user message`,
    edits: [
      { path: template.path, span: { start: extent.start, end: removeEnd }, newText: '' },
      { path: template.path, span: { start: at, end: at }, newText: `${template.text[at - 1] === '\n' ? '' : '\n'}<${use.slot}>\n${snippet}\n</${use.slot}>\n` },
    ],
  };
}
