/**
 * Template parsing entry point: the language of the registry (registry.ts) that claims a path
 * parses it — `.prompt` (dotprompt: YAML front matter + Handlebars), `.prompty` (Prompty: YAML
 * front matter + role lines + Jinja2/Mustache), and the formats added beside them. Never throws; every
 * problem is a `template-invalid` finding at its exact span, and the rest is still parsed.
 *
 * A `.prompty` body is read by the engine that renders it (prompty/parse.ts): a Jinja2 body from
 * the Jinja engine's tree (jinja/parser.ts parseJinja, one parse per text, shared with the
 * renderer; recovering, so a broken body still has a tree and every problem located), a Mustache
 * body from chevron's tokens (prompty/mustache.ts). The body is the text the runtime renders: from
 * the first character after the whitespace that follows the closing fence, and for Prompty 0.1.x
 * without the trailing newline. Role lines follow the runtime line's chat parser (engine.ts
 * PROMPTY_ROLES), read where they stand alone on their line once rendered.
 *
 * Conventions of the result (what the renderer and the rules can rely on):
 * - Node spans cover the whole tag or block (`{{question}}`, `{% for %}...{% endfor %}`); text
 *   nodes cover the source they render from (whitespace that Jinja's `-` trims, and the line a
 *   standalone Mustache or Handlebars tag removes, lie outside), and their `text` is what renders.
 * - `uses[].span` is the span of the path expression (`evidence` in `{{#each evidence}}` or
 *   `{% for d in evidence %}`); for `{{history}}` it is the whole tag.
 * - `var` node paths start with a slot name, a loop alias, `this` (the innermost loop item:
 *   Handlebars/Mustache loops without an alias, where bare names are item fields), `@index` /
 *   `@key` / `@first` / `@last` (Handlebars loop data), `loop` (Jinja's loop object), or `..`
 *   (a Handlebars parent item that has no alias; rare).
 * - A Mustache section `{{#items}}` is an `each` node; for a non-list value it stands for one item.
 * - Prompty's history loop (`{% for m in history %}{{m.role}}:` ...) becomes a `history` node.
 */
import type { Finding, TemplateDoc, TemplateFormat } from '../types';
import { finding } from '../rules/registry';
import { languageOf } from './registry';

/** The format of a template path: the registry's language that claims it. */
export function templateFormat(path: string): TemplateFormat {
  return languageOf(path).id;
}

/**
 * Findings of the parsers reported per template. A long line of stray `{{` gives one finding per
 * tag otherwise: a 100,000-character line gave 50,000, and spreading them into one array overflowed
 * the call stack (found by the fuzz suite).
 */
export const MAX_TEMPLATE_FINDINGS = 100;

/** Parses a template with the language that claims its path (registry.ts). Never throws. */
export function parseTemplate(path: string, text: string): TemplateDoc {
  const language = languageOf(path);
  const format = language.id;
  try {
    const doc = language.parse(path, text);
    const findings = doc.findings;
    findings.sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
    if (findings.length > MAX_TEMPLATE_FINDINGS) {
      const rest = findings.length - MAX_TEMPLATE_FINDINGS;
      const next = findings[MAX_TEMPLATE_FINDINGS];
      findings.length = MAX_TEMPLATE_FINDINGS;
      findings.push(finding(next.rule, path, next.span, `${rest.toLocaleString('en-US')} more problems in this template are not listed; fix the ones above first.`));
    }
    return doc;
  } catch (e) {
    // A parser bug must not take the editor down: report it where the user can see it.
    const message = e instanceof Error ? e.message : String(e);
    const findings: Finding[] = [
      {
        rule: 'template-invalid',
        severity: 'error',
        message: `Internal error while parsing this template (please report it): ${message}`,
        path,
        span: { start: 0, end: Math.min(text.length, 1) },
      },
    ];
    return { path, format, text, bodySpan: { start: 0, end: text.length }, messages: [], uses: [], findings };
  }
}

export { splitFrontMatter } from './frontMatter';
export { LANGUAGES, claimOf, configureLanguages, languageFor, languageOf, templateFileOf, templateGlobs, templatesIn } from './registry';
export type { TemplateLanguage, LanguageRenderInput, LanguageRenderResult, LanguageSettings } from './language';
export { promptyTemplateType } from './prompty/parse';
export { findDelimiterPairs } from './delimiters';
export { useBamlRuntime, BAML_PACKAGE, BAML_TESTED_VERSION } from './baml/runtime';
export type { BamlRuntimeHost, BamlBuild, BamlRequest } from './baml/runtime';
export type { DelimiterPair } from './delimiters';
export { whatLoads, discoverAgentFiles, outlineAgentFile, checkAgentFiles, agentSnapshot, rootOf as agentRootOf } from './agents/load';
export type { WhatLoads, AgentLoad, LoadedFile, NotLoaded, AgentFileOutline, WhatLoadsOptions, AgentSnapshot } from './agents/load';
export { AGENTS, AGENT_NAMES, agentFileKind } from './agents/kinds';
export type { AgentId, AgentFileKind } from './agents/kinds';
export { readAgentsConfig, AGENTS_CONFIG } from './agents/config';
export type { AgentsConfig } from './agents/config';
