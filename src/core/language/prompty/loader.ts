/**
 * Which program loads a `.prompty` file (docs/prompty-runtimes.md): a `.prompty` file is read by
 * Prompty's own runtimes (0.1.x, 2.x), by promptflow's `Prompty`, by azure-ai-inference's
 * `PromptTemplate`, and by Prompty's TypeScript and .NET runtimes, which disagree on the values,
 * the template engine and the chat parser. The choice, in order:
 *
 * 1. a pin: the project names the loader for the file (`# prompty-loader: promptflow`, a YAML
 *    comment in the file's front matter, which no loader reads; or a pin by glob the caller gives,
 *    from its settings);
 * 2. the workspace: what the project around the file runs, read through the FileHost (Python
 *    imports in the file's folder and the folders above it, `requirements*.txt`, `pyproject.toml`,
 *    a `.csproj` that references Prompty, `package.json` dependencies), nearest folder first;
 * 3. the file's own format: the Prompty runtime line its front matter targets (engine.ts
 *    promptyLineOf), or the loader its own keys belong to (promptflow's input types, a
 *    `template: nunjucks`).
 *
 * Where the choice is only a guess (nothing pins it, and the workspace says nothing or names
 * several loaders, while the file carries another loader's marks) the caller reports it once,
 * with a quick fix that pins it.
 */
import type { FileHost } from '../../host';
import type { Span } from '../../types';
import type { TemplateDoc } from '../../types';
import { PROMPTY_LOADERS, PROMPTY_LOADER_LABEL, promptyLineOf, type PromptyLoader } from './engine';
import { parsePromptyDoc, promptyLoaderPin } from './parse';

export { promptyLoaderPin };

export interface PromptyLoaderChoice {
  loader: PromptyLoader;
  /** Why, in words (shown by the hover, the preview header and the trace). */
  reason: string;
  /** How it was chosen. */
  source: 'pin' | 'workspace' | 'file';
  /** Only a guess: nothing pins it and the workspace does not settle it. */
  guessed: boolean;
  /** Where the file's own pin is (a front matter comment), for the editor. */
  pinSpan?: Span;
}

/** What a text of the project says about the loader it runs, with the evidence in words. */
interface Evidence {
  loader: PromptyLoader;
  what: string;
}

function pythonEvidence(text: string): Evidence[] {
  const out: Evidence[] = [];
  if (/^\s*from\s+promptflow\.core\s+import\s+[^\n]*\b(?:Async)?Prompty\b/m.test(text) || /^\s*from\s+promptflow\s+import\s+[^\n]*\bPrompty\b/m.test(text) || /\bpromptflow\.core\.(?:Async)?Prompty\b/.test(text)) out.push({ loader: 'promptflow', what: "imports promptflow's Prompty" });
  if (/^\s*(?:from|import)\s+azure\.ai\.inference\.prompts\b/m.test(text) || /^\s*from\s+azure\.ai\.inference\s+import\s+[^\n]*\bprompts\b/m.test(text)) out.push({ loader: 'azure-ai-inference', what: "imports azure-ai-inference's PromptTemplate" });
  if (/^\s*(?:from|import)\s+azure\.ai\.evaluation\b/m.test(text)) out.push({ loader: 'promptflow', what: "imports azure-ai-evaluation (its evaluators load .prompty files with promptflow's loader)" });
  if (/^\s*import\s+prompty\b/m.test(text) || /^\s*from\s+prompty(?:\.\w+)*\s+import\b/m.test(text)) out.push({ loader: 'prompty-0.1', what: "imports Prompty's own runtime" });
  return out;
}

/** A Python requirement line or a pyproject dependency naming a loader's package. */
function requirementEvidence(text: string): Evidence[] {
  const out: Evidence[] = [];
  const pkgs = text.toLowerCase();
  if (/(?:^|["'\s,[])promptflow(?:-core|-devkit)?(?:\[[^\]]*\])?\s*(?:[<>=!~;"',\n]|$)/m.test(pkgs)) out.push({ loader: 'promptflow', what: 'depends on promptflow' });
  if (/(?:^|["'\s,[])azure-ai-evaluation\b/m.test(pkgs)) out.push({ loader: 'promptflow', what: "depends on azure-ai-evaluation (promptflow's loader)" });
  if (/(?:^|["'\s,[])azure-ai-inference\b/m.test(pkgs)) out.push({ loader: 'azure-ai-inference', what: 'depends on azure-ai-inference' });
  const p = /(?:^|["'\s,[])prompty(?:\[[^\]]*\])?\s*(==|>=|~=|>|<=|<)?\s*(\d+)?/m.exec(pkgs);
  if (p) out.push({ loader: p[2] !== undefined && Number(p[2]) >= 2 && p[1] !== '<' && p[1] !== '<=' ? 'prompty-2' : 'prompty-0.1', what: `depends on prompty${p[2] !== undefined ? ` ${p[1] ?? ''}${p[2]}` : ''}` });
  return out;
}

function packageJsonEvidence(text: string): Evidence[] {
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch {
    return [];
  }
  if (pkg === null || typeof pkg !== 'object') return [];
  const deps = ['dependencies', 'devDependencies', 'peerDependencies'].flatMap((k) => Object.keys(((pkg as Record<string, unknown>)[k] as Record<string, unknown> | undefined) ?? {}));
  const name = String((pkg as Record<string, unknown>).name ?? '');
  if (deps.some((d) => d === 'prompty' || d.startsWith('@prompty/')) || name.startsWith('@prompty/')) return [{ loader: 'typescript', what: "depends on Prompty's TypeScript runtime" }];
  return [];
}

function csprojEvidence(text: string): Evidence[] {
  return /<PackageReference\s+Include\s*=\s*"Prompty(?:\.[\w.]+)?"/i.test(text) || /<ProjectReference\s+Include\s*=\s*"[^"]*Prompty[^"]*\.csproj"/i.test(text) ? [{ loader: 'dotnet', what: 'references Prompty (.NET)' }] : [];
}

/** Bounds of what the detection reads per folder (it runs on every analysis of a file in the editor). */
const MAX_READ = 256 * 1024;
const MAX_PY_READ = 64 * 1024;
const MAX_PY_FILES = 16;
const MAX_LEVELS = 8;

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? (i === 0 ? '/' : '.') : p.slice(0, i);
}

function base(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Project files read per folder: a workspace answers the same for every template of a folder. */
const FOLDER_CACHE = new WeakMap<FileHost, Map<string, Evidence[]>>();

function read(host: FileHost, path: string, max = MAX_READ): string | undefined {
  const size = host.size(path);
  if (size === undefined || size > max) return undefined;
  return host.readFile(path);
}

function folderEvidence(host: FileHost, dir: string): Evidence[] {
  let cache = FOLDER_CACHE.get(host);
  if (!cache) FOLDER_CACHE.set(host, (cache = new Map()));
  const hit = host.unchanging ? cache.get(dir) : undefined;
  if (hit) return hit;
  const out: Evidence[] = [];
  const add = (path: string, ev: Evidence[]): void => {
    for (const e of ev) out.push({ loader: e.loader, what: `${base(path)} ${e.what}` });
  };
  for (const p of host.glob(dir, '*.py').sort().slice(0, MAX_PY_FILES)) {
    const t = read(host, p, MAX_PY_READ);
    if (t !== undefined) add(p, pythonEvidence(t));
  }
  for (const p of host.glob(dir, 'requirements*.txt').sort()) {
    const t = read(host, p);
    if (t !== undefined) add(p, requirementEvidence(t));
  }
  const pyproject = read(host, `${dir}/pyproject.toml`);
  if (pyproject !== undefined) add(`${dir}/pyproject.toml`, requirementEvidence(pyproject));
  for (const p of host.glob(dir, '*.csproj').sort()) {
    const t = read(host, p);
    if (t !== undefined) add(p, csprojEvidence(t));
  }
  const pkg = read(host, `${dir}/package.json`);
  if (pkg !== undefined) add(`${dir}/package.json`, packageJsonEvidence(pkg));
  cache.set(dir, out);
  return out;
}

/**
 * The loader the workspace around `path` runs: the nearest folder (the file's, then each one above
 * it inside the workspace root) whose project files name a loader. Several loaders in that folder
 * make the answer ambiguous.
 */
export function detectPromptyLoader(host: FileHost, path: string): { loader: PromptyLoader; reason: string; ambiguous: boolean } | undefined {
  const root = host.roots.filter((r) => path === r || path.startsWith(r.endsWith('/') ? r : `${r}/`)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined) return undefined;
  let dir = dirOf(path);
  for (let level = 0; level < MAX_LEVELS; level++) {
    const ev = folderEvidence(host, dir);
    if (ev.length) {
      const loaders = [...new Set(ev.map((e) => e.loader))];
      const first = ev[0];
      const rel = dir === root ? 'the workspace root' : `${dir.slice(root.length + 1) || '.'}/`;
      return { loader: first.loader, reason: `${first.what} (in ${rel})${loaders.length > 1 ? `; ${ev.filter((e) => e.loader !== first.loader).map((e) => e.what).join(', ')} too` : ''}`, ambiguous: loaders.length > 1 };
    }
    if (dir === root || dir.length <= root.length) break;
    const up = dirOf(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The loader whose keys a front matter uses when no other says: promptflow's input types, a nunjucks template. */
function formatLoader(fm: Record<string, unknown> | undefined): { loader: PromptyLoader; reason: string; foreign: boolean } {
  const t = fm?.template;
  const engine = typeof t === 'string' ? t : isRecord(t) ? (isRecord(t.format) ? t.format.kind : (t.format ?? t.type)) : undefined;
  if (engine === 'nunjucks') return { loader: 'typescript', reason: "its front matter names the template engine nunjucks, which only Prompty's TypeScript runtime renders", foreign: true };
  const line = promptyLineOf(fm);
  if (line === '0.1' && isRecord(fm?.inputs)) {
    const pf = Object.values(fm.inputs).some((v) => isRecord(v) && (v.is_chat_input !== undefined || v.is_chat_history !== undefined || v.is_chat_output !== undefined || (typeof v.type === 'string' && ['list', 'int', 'double', 'bool', 'image'].includes(v.type))));
    if (pf) return { loader: 'promptflow', reason: "its inputs use promptflow's types (list, int, double, bool, image, is_chat_input, is_chat_history)", foreign: true };
  }
  return line === 'v2' ? { loader: 'prompty-2', reason: "its front matter is Prompty 2's format (model.id, inputs' kind, template.format)", foreign: false } : { loader: 'prompty-0.1', reason: "its front matter is Prompty 0.1's format (model.api, model.configuration, sample)", foreign: false };
}

/** A pin by glob from the caller's settings: `{ "prompts/**": "promptflow" }`, the longest matching glob first. */
export type PromptyLoaderPins = Readonly<Record<string, PromptyLoader>>;

function globRe(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`(?:^|/)${re}$`);
}

/**
 * The loader of the file at `path` (text `source`, front matter `fm`): its own pin, a pin by glob,
 * the workspace (when a host is given), else its own format.
 */
export function choosePromptyLoader(path: string, source: string, fm: Record<string, unknown> | undefined, opts: { host?: FileHost; pins?: PromptyLoaderPins; config?: { loader: PromptyLoader; path: string } } = {}): PromptyLoaderChoice {
  const own = promptyLoaderPin(source);
  if (own && 'loader' in own) return { loader: own.loader, reason: `the file pins it (# prompty-loader: ${own.loader})`, source: 'pin', guessed: false, pinSpan: own.span };
  if (opts.config && PROMPTY_LOADERS.includes(opts.config.loader)) return { loader: opts.config.loader, reason: `its context config says so (prompty.loader in ${opts.config.path.slice(opts.config.path.lastIndexOf('/') + 1)})`, source: 'pin', guessed: false };
  const pins = Object.entries(opts.pins ?? {})
    .filter(([g]) => globRe(g).test(path))
    .sort((a, b) => b[0].length - a[0].length);
  if (pins.length && PROMPTY_LOADERS.includes(pins[0][1])) return { loader: pins[0][1], reason: `the setting pins it for '${pins[0][0]}'`, source: 'pin', guessed: false };
  const format = formatLoader(fm);
  const detected = opts.host ? detectPromptyLoader(opts.host, path) : undefined;
  if (detected) {
    // The project runs Prompty's own runtime: its line follows the file's format.
    const loader = detected.loader === 'prompty-0.1' && format.loader === 'prompty-2' ? 'prompty-2' : detected.loader;
    return { loader, reason: `the project ${detected.reason}`, source: 'workspace', guessed: detected.ambiguous };
  }
  return { loader: format.loader, reason: format.reason, source: 'file', guessed: format.foreign };
}

/** How the hover, the preview header and the trace name a choice: `promptflow's Prompty (…), because …`. */
export function promptyLoaderText(choice: Pick<PromptyLoaderChoice, 'loader' | 'reason'>): string {
  return `${PROMPTY_LOADER_LABEL[choice.loader]}: ${choice.reason}`;
}

/**
 * The `.prompty` document as its project's loader reads it: a file azure-ai-inference loads (the
 * workspace says so) is parsed as the mustache it renders, not as Jinja2 (one parse, one set of
 * findings). Other documents are returned as they are.
 */
export function promptyDocForLoader(host: FileHost, template: TemplateDoc, pins?: PromptyLoaderPins, config?: { loader: PromptyLoader; path: string }): TemplateDoc {
  if (template.format !== 'prompty' || template.frontMatter?.data?.template !== undefined) return template;
  const choice = choosePromptyLoader(template.path, template.text, template.frontMatter?.data, { host, ...(pins ? { pins } : {}), ...(config ? { config } : {}) });
  // The file's own pin is read by its parse already; a pin from the config or a setting is not.
  if (choice.loader !== 'azure-ai-inference' || choice.pinSpan) return template;
  return parsePromptyDoc(template.path, template.text, 'azure-ai-inference');
}
