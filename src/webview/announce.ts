/**
 * What the panel says to a screen reader after each re-assembly: one sentence per host message,
 * written into one persistent live region (`role=status`, polite) that lives outside the
 * re-rendered tree, so that it is the same element on every render and assistive technology
 * hears each change ("evidence 400: 3 items dropped, input −499 tokens"). Re-renders of the same
 * snapshot (a section collapsed, "show all") say nothing.
 */
import type { HostMessage, PreviewSnapshot } from '../protocol/preview';
import { fmt, plural, signed } from './format';
import { visibleString } from './hiddenChars';

/** The live region: created once, next to (not inside) the root the renderer replaces. */
export function createAnnouncer(root: HTMLElement): { say(text: string): void; element: HTMLElement } {
  const element = document.createElement('div');
  element.id = 'announcer';
  element.className = 'sr-only';
  element.setAttribute('role', 'status');
  element.setAttribute('aria-live', 'polite');
  element.setAttribute('aria-atomic', 'true');
  root.insertAdjacentElement('afterend', element);
  return {
    element,
    say(text: string) {
      // A sentence equal to the last one is still a new event: replacing the text node makes the
      // region report a change either way.
      element.textContent = '';
      element.appendChild(document.createTextNode(text));
    },
  };
}

/** The name of the selected fixture: the exact choice, or the sample a zero-config template carries (`<template>#sample`). */
export function selectedFixtureName(s: PreviewSnapshot): string | undefined {
  const sel = s.selectedFixture;
  if (sel === undefined) return undefined;
  return (s.fixtures.find((f) => f.path === sel) ?? s.fixtures.find((f) => f.path.startsWith(`${sel}#`)))?.name;
}

/** Items one side kept and the other did not, over all slots of a diff. */
function changedItems(d: { slots: ReadonlyArray<{ only_a: readonly unknown[]; only_b: readonly unknown[] }> }): { dropped: number; added: number } {
  let dropped = 0;
  let added = 0;
  for (const s of d.slots) {
    dropped += s.only_a.length;
    added += s.only_b.length;
  }
  return { dropped, added };
}

function overWindow(s: PreviewSnapshot): number {
  return Math.max(0, s.result.budget.total - s.result.budget.window);
}

/** The first sentence of a longer message, for an announcement that stays short. */
function firstSentence(text: string): string {
  const m = /^(.+?[.!?])(\s|$)/.exec(text);
  return visibleString(m ? m[1] : text);
}

/**
 * One sentence for a host message. `previous` is the last snapshot shown, so a change of the same
 * template can say how the input moved.
 */
export function announcement(message: HostMessage, previous: PreviewSnapshot | undefined): string {
  if (message.type === 'empty') return `Nothing to preview: ${firstSentence(message.reason)}`;
  if (message.type === 'error') return `Preview unavailable: ${firstSentence(message.message)}`;
  const s = message.snapshot;
  const { result } = s;
  if (!result.ok) return `Assembly failed: ${firstSentence(result.error ?? 'no request can be built.')}`;
  const over = overWindow(s);
  const overText = over > 0 ? `, over the window by ${fmt(over)} tokens` : '';
  const c = s.compare;
  if (c && c.target.kind !== 'budget') {
    if (c.error !== undefined) return `Cannot compare: ${firstSentence(c.error)}`;
    const d = c.diff;
    const first = d.first_difference ? `first difference in message ${d.first_difference.message + 1}` : 'the same messages';
    return `Compared with ${visibleString(c.b.label)}: input ${signed(d.input_tokens.delta)} tokens, ${first}.`;
  }
  const wi = s.whatIf;
  if (wi) {
    const budgets = Object.entries(wi.budgets)
      .map(([slot, n]) => `${visibleString(slot)} ${fmt(n)}`)
      .join(', ');
    if (wi.error !== undefined) return `What-if budgets not applied: ${firstSentence(wi.error)}`;
    if (!wi.diff) return `What-if budgets ${budgets}: input ${fmt(result.trace.input_tokens)} tokens${overText}.`;
    // The count the summary line shows (every item the what-if request leaves out), then how many
    // of them the what-if budgets drop that the budgets as written keep, as the banner lists them.
    const { dropped, added } = changedItems(wi.diff);
    const total = result.trace.omitted.length;
    const changes = [dropped > 0 ? `${fmt(dropped)} of them by the what-if budgets` : '', added > 0 ? `${plural(added, 'item')} added by them` : ''].filter(Boolean);
    const items = `${plural(total, 'item')} dropped${changes.length > 0 ? `, ${changes.join(', ')}` : ', the same as with the budgets as written'}`;
    return `${budgets}: ${items}, input ${signed(wi.diff.input_tokens.delta)} tokens${overText}.`;
  }
  const fixture = selectedFixtureName(s);
  const omitted = result.trace.omitted.length;
  const moved = previous && previous.templateUri === s.templateUri && previous.result.ok ? result.trace.input_tokens - previous.result.trace.input_tokens : 0;
  const delta = moved !== 0 ? `, input ${signed(moved)} tokens` : '';
  return `${visibleString(s.template.name)}${fixture ? ` with ${visibleString(fixture)}` : ''}: ${fmt(result.trace.input_tokens)} input tokens of ${fmt(result.trace.input_budget)}, ${plural(omitted, 'item')} dropped${delta}${overText}.`;
}
