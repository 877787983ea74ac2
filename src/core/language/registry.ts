/**
 * The registry of template formats: the only place that lists them. The first language that
 * claims a path owns it; every feature (project scans, parsing, rendering) asks here.
 */
import type { TemplateDoc, TemplateFormat } from '../types';
import type { Claim, LanguageSettings, TemplateLanguage } from './language';
import { dotpromptLanguage } from './dotprompt/language';
import { promptyLanguage } from './prompty/language';
import { bamlLanguage } from './baml/language';
// Agent instruction files before any plain-files language: `.github/prompts/x.prompt.md` is a Copilot prompt file.
import { agentsLanguage } from './agents/language';
// Plain prompt files after the agent files (a prompts/ folder holds both): Markdown, text, Jinja2, Mustache.
import { plainLanguage } from './plain/language';

export const LANGUAGES: readonly TemplateLanguage[] = [dotpromptLanguage, promptyLanguage, bamlLanguage, agentsLanguage, plainLanguage];

/** Gives every language the settings that concern it (the editor's `contextLens.plainPrompts.files`). */
export function configureLanguages(settings: LanguageSettings): void {
  for (const language of LANGUAGES) language.configure?.(settings);
}

/** The language that claims a path, and how. */
export function claimOf(path: string): { language: TemplateLanguage; claim: Claim } | undefined {
  for (const language of LANGUAGES) {
    const claim = language.claim(path);
    if (claim) return { language, claim };
  }
  return undefined;
}

/** The language of a template path (a path no language claims is read as dotprompt, the first). */
export function languageOf(path: string): TemplateLanguage {
  return claimOf(path)?.language ?? LANGUAGES[0];
}

/** The language of a parsed document. */
export function languageFor(doc: Pick<TemplateDoc, 'format'>): TemplateLanguage {
  return byId(doc.format);
}

export function byId(id: TemplateFormat): TemplateLanguage {
  const l = LANGUAGES.find((x) => x.id === id);
  if (!l) throw new Error(`no template language '${id}'`);
  return l;
}

/** The file a template address reads (`baml_src/x.baml#F` → `baml_src/x.baml`); the path itself for file templates. */
export function templateFileOf(path: string): string {
  return claimOf(path)?.language.fileOf?.(path) ?? path;
}

/** The templates a file holds: its functions' addresses for a format with several per file (BAML), else the file itself. */
export function templatesIn(file: string, text: string): string[] {
  const language = claimOf(file)?.language;
  return language?.templatesIn ? language.templatesIn(file, text) : [file];
}

/** Every glob a workspace scan looks for templates with. */
export function templateGlobs(): string[] {
  return [...new Set(LANGUAGES.flatMap((l) => l.globs))];
}
