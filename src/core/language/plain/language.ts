/**
 * Plain prompt files: Markdown and text prompts (`prompts/system.md`), Jinja2 templates (`.j2`,
 * `.jinja`, `.jinja2`), Mustache templates, and the requests a context config composes of them
 * (`messages:`, compose.ts). A file alone is one system message in the format of its extension
 * (`.md` / `.txt` as text); a file a config composes is the whole request the config lists, each
 * message rendered in its format as the application's library renders it (parts.ts).
 *
 * Which Markdown and text files are prompts: those under a `prompts/` folder (a README never is);
 * Jinja2 and Mustache files anywhere.
 */
import type { TemplateLanguage } from '../language';
import type { EngineMessage } from '../engineTypes';
import type { PlainDoc } from './compose';
import { basename } from '../../paths';
import { compose, standalonePart } from './compose';
import { renderPart, viewPart } from './parts';

const TEMPLATE_EXT = /\.(j2|jinja|jinja2|mustache)$/i;
const TEMPLATE_GLOB = '**/*.{j2,jinja,jinja2,mustache}';
/** The Markdown and text files that are prompts by default. */
export const DEFAULT_PROMPT_FILES: readonly string[] = ['**/prompts/**/*.{md,txt}'];

/** A workspace glob (`**`, `*`, `?`, `{a,b}`) as a pattern over a path with forward slashes; a glob without `/` matches the file name. */
export function globPattern(glob: string): RegExp {
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      re += '(?:';
      depth++;
    } else if (c === '}' && depth > 0) {
      re += ')';
      depth--;
    } else if (c === ',' && depth > 0) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(glob.includes('/') ? `(?:^|/)${re.replace(/^\(\?:\.\*\/\)\?/, '')}$` : `(?:^|/)${re}$`, 'i');
}

let promptFiles: readonly string[] = DEFAULT_PROMPT_FILES;
let promptPatterns: RegExp[] = DEFAULT_PROMPT_FILES.map(globPattern);

/** Whether a path is a plain prompt file: Jinja2 / Mustache anywhere, Markdown / text matching the prompt-file globs, never a README. */
export function isPlainPrompt(path: string): boolean {
  const name = basename(path);
  if (/^readme(\.|$)/i.test(name) || /^(changelog|license|contributing)(\.|$)/i.test(name)) return false;
  if (TEMPLATE_EXT.test(name)) return true;
  if (!/\.(md|txt|markdown|prompt\.txt)$/i.test(name)) return false;
  const slashed = path.replace(/\\/g, '/');
  return promptPatterns.some((p) => p.test(slashed));
}

function fileRef(file: string): string {
  const hash = file.indexOf('#');
  return hash >= 0 ? file.slice(0, hash) : file;
}

export const plainLanguage: TemplateLanguage = {
  id: 'plain',
  name: 'plain prompt',
  get globs() {
    return [...promptFiles, TEMPLATE_GLOB];
  },
  configure(settings) {
    const files = settings.promptFiles?.filter((g) => typeof g === 'string' && g.trim() !== '' && g.length <= 512);
    promptFiles = files?.length ? files : DEFAULT_PROMPT_FILES;
    promptPatterns = promptFiles.map(globPattern);
  },
  fallbackRole: 'system',
  claim(path) {
    return isPlainPrompt(path) ? 'template' : undefined;
  },
  parse(path, text) {
    const part = standalonePart(path, text, 'system');
    const view = viewPart(part, text);
    const doc: PlainDoc = { path, format: 'plain', text, bodySpan: { start: 0, end: text.length }, messages: [view.message], uses: view.uses, findings: view.findings, composition: { parts: [part] } };
    return doc;
  },
  render(doc, v) {
    const d = doc as PlainDoc;
    const parts = d.composition?.parts ?? [standalonePart(doc.path, doc.text, 'system')];
    const values = { ...v.defaults, ...v.input };
    const lenient = !v.hasValues;
    const messages: EngineMessage[] = [];
    const issues: ReturnType<typeof renderPart>['issues'] = [];
    const missing = new Set<string>();
    let rendered = '';
    let estimate = false;
    for (const part of parts) {
      const r = renderPart(part, values, lenient);
      const mine = part.path === doc.path;
      // Problems of another prompt file of the request are that file's (its own analysis reports
      // them); those of a key of a YAML or TOML file, a LangChain prompt file or the config's text
      // are shown on this one at its start, naming where they are.
      for (const i of r.issues) {
        if (mine) issues.push(i);
        else if (!part.path || !isPlainPrompt(part.path) || part.offset === undefined) issues.push({ ...i, message: `${basename(part.path ?? '')}: ${i.message}`, span: { start: 0, end: 0 } });
      }
      for (const m of r.missing) missing.add(m);
      if (r.estimate) estimate = true;
      rendered += r.text;
      messages.push({ role: part.role, parts: [{ type: 'text', text: r.text }] });
    }
    if (missing.size) {
      const names = [...missing].sort().map((n) => `'${n}'`).join(', ');
      const one = missing.size === 1;
      const first = doc.uses.find((u) => !u.path && missing.has(u.slot));
      issues.push({
        rule: 'value-missing',
        message: `No value for ${names}: no fixture gives ${one ? 'it' : 'them'}, so ${one ? 'it is' : 'they are'} rendered empty and the counts leave ${one ? 'it' : 'them'} out. The library raises on a missing value (LangChain: KeyError); add a fixture.`,
        span: first?.span ?? { start: 0, end: Math.min(doc.text.length, 1) },
      });
    }
    const runtimes = [...new Set(parts.map((p) => p.runtime))];
    return { rendered, messages, issues, runtime: runtimes.join(', '), ...(estimate ? { estimate: true as const } : {}) };
  },
  composedBy(config, configPath, path, resolve) {
    void configPath;
    return (config.messages ?? []).some((m) => m.file !== undefined && resolve(fileRef(m.file)) === path);
  },
  compose(doc, input) {
    return compose(doc, input);
  },
};

