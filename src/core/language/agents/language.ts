/**
 * Coding agents' instruction, rule and prompt files (kinds.ts): `AGENTS.md`, `CLAUDE.md`,
 * `GEMINI.md`, `.github/copilot-instructions.md`, `*.instructions.md`, `*.prompt.md`, Cursor's
 * `.mdc` rules and `.cursorrules`. Registered before any plain-files language, so a
 * `.github/prompts/x.prompt.md` is an agent prompt file, not a plain prompt.
 *
 * A file parses into the one document type: its front matter as the agent reads it (markdown.ts),
 * one message with the text the agent sends (the body after the front matter; the whole file for
 * the kinds without one), a prompt file's `${input:…}` variables as slot uses, and the findings of
 * the file alone (hidden characters judged as rule files deserve, hidden.ts). Rendering sends the
 * text as written; a prompt file's variables take the fixture's values (VS Code asks the user for
 * `${input:…}` and fills the built-ins from the editor), and a variable without a value is kept
 * as written with a `value-missing` issue. What loads with a file for each agent is load.ts.
 */
import type { TemplateLanguage } from '../language';
import type { Finding, Role, SlotUse, TemplateDoc, TemplateNode } from '../../types';
import { agentFileKind, hasFrontMatter } from './kinds';
import { agentHiddenCharacters } from './hidden';
import { promptVariables, readAgentFrontMatter } from './markdown';

/**
 * The files a workspace scan offers this language. Hidden folders are entered only where a glob
 * names them, so Copilot's and Cursor's folders are listed by name.
 */
export const AGENT_GLOBS = [
  '**/AGENTS.md',
  '**/CLAUDE.md',
  '**/CLAUDE.local.md',
  '**/GEMINI.md',
  '**/*.instructions.md',
  '**/*.prompt.md',
  '**/*.mdc',
  '.github/copilot-instructions.md',
  '.github/**/*.instructions.md',
  '.github/**/*.prompt.md',
  '**/.cursor/rules/**/*.mdc',
  '.cursorrules',
];

function parseAgentFile(path: string, text: string): TemplateDoc {
  const kind = agentFileKind(path) ?? 'agents-md';
  const fm = hasFrontMatter(kind) ? readAgentFrontMatter(text) : undefined;
  const bodyStart = fm?.bodyStart ?? (text.charCodeAt(0) === 0xfeff ? 1 : 0);
  const role: Role = kind === 'prompt' ? 'user' : 'system';
  const findings: Finding[] = agentHiddenCharacters(path, text);
  const nodes: TemplateNode[] = [];
  const uses: SlotUse[] = [];
  let last = bodyStart;
  if (kind === 'prompt') {
    for (const v of promptVariables(text, bodyStart)) {
      if (v.span.start > last) nodes.push({ type: 'text', text: text.slice(last, v.span.start), span: { start: last, end: v.span.start } });
      nodes.push({ type: 'var', path: [v.name], span: v.span, raw: true });
      if (v.input) uses.push({ slot: v.name, span: v.span, role, form: 'var' });
      last = v.span.end;
    }
  }
  if (last < text.length) nodes.push({ type: 'text', text: text.slice(last), span: { start: last, end: text.length } });
  const data: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(fm?.fields ?? {})) data[k] = f.value;
  const model = fm?.fields.model;
  const doc: TemplateDoc = {
    path,
    format: 'agent',
    text,
    ...(fm
      ? {
          frontMatter: {
            data,
            span: fm.span,
            inputs: {},
            ...(typeof model?.value === 'string' && model.value ? { model: { value: model.value, span: model.valueSpan } } : {}),
          },
        }
      : {}),
    bodySpan: { start: bodyStart, end: text.length },
    messages: [{ role, markerSpan: { start: bodyStart, end: bodyStart }, span: { start: bodyStart, end: text.length }, nodes }],
    uses,
    findings,
  };
  return doc;
}

function valueText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map((x) => valueText(x) ?? '').join('\n');
  if (typeof v === 'object' && typeof (v as { text?: unknown }).text === 'string') return (v as { text: string }).text;
  return JSON.stringify(v);
}

export const agentsLanguage: TemplateLanguage = {
  id: 'agent',
  name: 'agent instructions',
  globs: AGENT_GLOBS,
  fallbackRole: 'system',
  claim(path) {
    return agentFileKind(path) ? 'template' : undefined;
  },
  parse: parseAgentFile,
  render(doc, v) {
    const message = doc.messages[0];
    const issues: Array<{ rule: 'value-missing'; message: string; span: { start: number; end: number } }> = [];
    let out = '';
    const missing = new Set<string>();
    for (const n of message?.nodes ?? []) {
      if (n.type === 'text') out += n.text;
      else if (n.type === 'var') {
        const name = n.path[0];
        const value = valueText(v.input[name] ?? v.defaults[name]);
        if (value === undefined) {
          out += doc.text.slice(n.span.start, n.span.end);
          if (!missing.has(name)) {
            missing.add(name);
            issues.push({ rule: 'value-missing', message: `No value for the prompt variable '${name}': VS Code asks for it (or fills it from the editor) when the prompt runs; give it a value in a fixture so the request is counted as sent. It is counted as written.`, span: n.span });
          }
        } else out += value;
      }
    }
    return { rendered: out, messages: [{ role: message?.role ?? 'system', parts: [{ type: 'text', text: out }] }], issues };
  },
};
