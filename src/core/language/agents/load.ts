/**
 * What each coding agent loads for a file, by the agent's own rules (kinds.ts, docs/agents.md):
 * the instruction files in the order the agent adds them, each with its tokens, why it loads
 * (always, by a pattern, nearest up the tree, imported, attached by a link) and the total; plus
 * the findings that need the workspace (broken imports and links, an import cycle, an import out
 * of the workspace, a pattern that matches no file, an always-loaded budget exceeded,
 * near-duplicate instructions across files).
 *
 * Pure: files are read through the `FileHost`, which never reads outside the workspace roots nor
 * anything but a regular file (a FIFO is never opened). References are resolved with
 * `resolveInWorkspace`; an import out of the workspace is reported and never read. Files larger
 * than the size limit are not read: they are listed with an estimate from their size.
 */
import type { FileHost } from '../../host';
import type { Finding, Span, Tokenizer } from '../../types';
import { BoundedCache } from '../../cache';
import { finding } from '../../rules/registry';
import { basename, dirname, isInside, relative, resolveInWorkspace } from '../../paths';
import type { AgentFileKind, AgentId } from './kinds';
import { AGENT_NAMES, AGENTS, agentFileKind, hasFrontMatter } from './kinds';
import { agentGlob, agentGlobParts } from './glob';
import type { AgentFrontMatter, Reference } from './markdown';
import { codeRegions, htmlComments, patternsOf, readAgentFrontMatter, references, sections } from './markdown';

/** Claude Code's documented import depth: imported files may import others, at most 5 hops. */
export const CLAUDE_IMPORT_DEPTH = 5;
/** Gemini CLI's default maximum import depth. */
export const GEMINI_IMPORT_DEPTH = 5;
const DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024;

export type LoadReason = 'always' | 'pattern' | 'nearest' | 'ancestor' | 'import' | 'link' | 'prompt';

export interface LoadedFile {
  path: string;
  kind?: AgentFileKind;
  why: LoadReason;
  /** The pattern that matched (`applyTo`, `globs`). */
  pattern?: string;
  /** The file that imports or links it. */
  from?: string;
  /** Import hops from the instruction file (1 for a direct import). */
  depth?: number;
  tokens: number;
  /** True when the file was not read (too large) and the tokens are an estimate from its size. */
  estimate?: boolean;
  bytes?: number;
}

export interface NotLoaded {
  path: string;
  /** `manual`: attached by hand only; `requested`: the agent decides from its description; `prompt`: run by the user. */
  why: 'manual' | 'requested' | 'prompt' | 'no-match';
  description?: string;
}

export interface AgentLoad {
  agent: AgentId;
  name: string;
  files: LoadedFile[];
  total: number;
  /** Tokens of the files sent with every request (always-on and their imports). */
  always: number;
  /** Tokens of the files that load because this file matches their pattern or lies below them. */
  conditional: number;
  /** Rule files that exist but do not load for this file by themselves. */
  notLoaded: NotLoaded[];
}

export interface WhatLoads {
  file: string;
  root: string;
  tokenizer: { name: string; exact: boolean };
  agents: AgentLoad[];
  findings: Finding[];
}

export interface WhatLoadsOptions {
  tokenizer: Tokenizer;
  /** Only this agent. */
  agent?: AgentId;
  /** The workspace's instruction files (from `discoverAgentFiles`), when the caller keeps them. */
  files?: readonly string[];
  maxFileSize?: number;
  /** Always-loaded token budgets per agent: a finding when exceeded. */
  budgets?: Partial<Record<AgentId, number>>;
}

// ---------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------

/** Every instruction file of the workspace root the agents look for, sorted. */
export function discoverAgentFiles(host: FileHost, root: string): string[] {
  const out = new Set<string>();
  const exists = (p: string) => host.size(p) !== undefined;
  for (const p of [`${root}/.github/copilot-instructions.md`, `${root}/.cursorrules`]) if (exists(p)) out.add(p);
  // The disk host's walk skips folders that start with a dot: the agents' own folders are walked from inside.
  for (const [dir, pattern] of [
    ['.github/instructions', '**/*.instructions.md'],
    ['.github/prompts', '**/*.prompt.md'],
    ['.cursor/rules', '**/*.mdc'],
  ] as const) {
    for (const p of host.glob(`${root}/${dir}`, pattern)) out.add(p);
  }
  // One walk of the tree for the four names.
  for (const p of host.glob(root, '**/{AGENTS,CLAUDE,CLAUDE.local,GEMINI}.md')) out.add(p);
  for (const name of ['AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md', 'GEMINI.md']) if (exists(`${root}/${name}`)) out.add(`${root}/${name}`);
  if (exists(`${root}/.claude/CLAUDE.md`)) out.add(`${root}/.claude/CLAUDE.md`);
  return [...out].sort();
}

// ---------------------------------------------------------------------------
// Reading files (parsed once per text)
// ---------------------------------------------------------------------------

interface ReadFile {
  text: string;
  kind?: AgentFileKind;
  fm?: AgentFrontMatter;
  /** The text the agent sends (the body after a front matter). */
  sent: string;
  refs: Reference[];
}

/** Parses by path, reused while the text is the same (compared, never concatenated into a key). */
const parsed = new BoundedCache<string, ReadFile>(4096, 64 * 1024 * 1024);
/** Counts per tokenizer, keyed by the text itself. */
const counts = new Map<string, BoundedCache<string, number>>();

function parse(path: string, text: string): ReadFile {
  const hit = parsed.get(path);
  if (hit && hit.text === text) return hit;
  const kind = agentFileKind(path);
  const fm = kind && hasFrontMatter(kind) ? readAgentFrontMatter(text) : undefined;
  const bodyStart = fm?.bodyStart ?? 0;
  const code = codeRegions(text, bodyStart);
  const importsAt = kind === 'claude-md' || kind === 'gemini-md' || kind === 'cursor-rule' || kind === 'cursorrules' || kind === undefined;
  const out: ReadFile = { text, ...(kind ? { kind } : {}), ...(fm ? { fm } : {}), sent: text.slice(bodyStart), refs: references(text, bodyStart, code, importsAt) };
  parsed.set(path, out, text.length * 2 + 200);
  return out;
}

function countOf(tokenizer: Tokenizer, text: string): number {
  let cache = counts.get(tokenizer.name);
  if (!cache) counts.set(tokenizer.name, (cache = new BoundedCache<string, number>(16_384, 64 * 1024 * 1024)));
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const n = tokenizer.count(text);
  cache.set(text, n, text.length * 2 + 100);
  return n;
}

/** The sections and comments of an instruction file, with their tokens, for lenses and hovers. */
export interface AgentFileOutline {
  kind?: AgentFileKind;
  tokens: number;
  /** Where the text the agent sends starts (after a front matter). */
  bodyStart: number;
  sections: Array<{ title: string; level: number; heading: Span; span: Span; tokens: number }>;
  comments: { count: number; tokens: number; spans: Span[] };
  references: Array<Reference & { path?: string; tokens?: number; problem?: string }>;
  frontMatter?: AgentFrontMatter;
}

/** An instruction file's outline: tokens of the file, of each section, of its HTML comments, of each file it names. */
export function outlineAgentFile(host: FileHost, path: string, text: string, tokenizer: Tokenizer, maxFileSize = DEFAULT_MAX_FILE_SIZE): AgentFileOutline {
  const f = parse(path, text);
  const bodyStart = text.length - f.sent.length;
  const code = codeRegions(text, bodyStart);
  const secs = sections(text, bodyStart, code).map((s) => ({ ...s, tokens: countOf(tokenizer, text.slice(s.span.start, s.span.end)) }));
  const comments = htmlComments(text, bodyStart, code);
  const commentTokens = comments.reduce((n, s) => n + countOf(tokenizer, text.slice(s.start, s.end)), 0);
  // A long file names the same few files many times: each target is resolved and read once.
  const seen = new Map<string, { path?: string; tokens?: number; problem?: string }>();
  const refs = f.refs.map((r) => {
    const memo = seen.get(r.target);
    if (memo) return { ...r, ...memo };
    const one = resolveOne(r.target);
    seen.set(r.target, one);
    return { ...r, ...one };
  });
  function resolveOne(ref: string): { path?: string; tokens?: number; problem?: string } {
    const r = { target: ref };
    const target = resolveReference(host, path, r.target);
    if (!target.path) return { problem: target.problem };
    const size = host.size(target.path);
    if (size === undefined) return { path: target.path, problem: 'does not exist or is not a regular file' };
    if (size > maxFileSize) return { path: target.path, tokens: Math.ceil(size / 4), problem: `is ${(size / 1048576).toFixed(1)} MB, over the ${(maxFileSize / 1048576).toFixed(0)} MB limit: not read, tokens estimated from its size` };
    const t = host.readFile(target.path);
    if (t === undefined) return { path: target.path, problem: 'cannot be read' };
    return { path: target.path, tokens: countOf(tokenizer, t) };
  }
  return {
    ...(f.kind ? { kind: f.kind } : {}),
    tokens: countOf(tokenizer, f.sent),
    bodyStart,
    sections: secs,
    comments: { count: comments.length, tokens: commentTokens, spans: comments },
    references: refs,
    ...(f.fm ? { frontMatter: f.fm } : {}),
  };
}

/**
 * A reference resolved as the agents do: relative to the file; where that file does not exist, to
 * the workspace root (rule files under `.cursor/rules/` and `.github/` often write their links
 * that way). Home-folder and absolute paths, and paths that leave the workspace, are never read.
 */
function resolveReference(host: FileHost, from: string, ref: string): { path?: string; problem?: string; rootRelative?: boolean } {
  const r = resolveInWorkspace(host, from, ref);
  if (r.path && host.size(r.path) !== undefined) return { path: r.path };
  const root = host.roots.find((x) => isInside(x, from));
  if (root && !ref.startsWith('.') && !ref.startsWith('~') && !ref.startsWith('/')) {
    const alt = resolveInWorkspace(host, `${root}/x`, ref);
    if (alt.path && host.size(alt.path) !== undefined) return { path: alt.path, rootRelative: true };
  }
  if (!r.path) return { problem: `${r.error ?? 'cannot be resolved'}; it is never read` };
  return { path: r.path };
}

// ---------------------------------------------------------------------------
// What loads
// ---------------------------------------------------------------------------

interface Ctx {
  /** Loads of this call by path (a file is asked for by several agents). */
  loads?: Map<string, ReturnType<typeof loadUncached>>;
  host: FileHost;
  root: string;
  tokenizer: Tokenizer;
  maxFileSize: number;
  findings: Finding[];
  reported: Set<string>;
}

function report(ctx: Ctx, f: Finding): void {
  const key = `${f.path}\u0000${f.span.start}\u0000${f.rule}\u0000${f.message}`;
  if (ctx.reported.has(key)) return;
  ctx.reported.add(key);
  ctx.findings.push(f);
}

/** Reads a file for loading (once per call): its parse, or an estimate when it is too large; undefined when missing. */
function load(ctx: Ctx, path: string): ReturnType<typeof loadUncached> {
  if (!ctx.loads) ctx.loads = new Map();
  if (ctx.loads.has(path)) return ctx.loads.get(path);
  const got = loadUncached(ctx, path);
  ctx.loads.set(path, got);
  return got;
}

function loadUncached(ctx: Ctx, path: string): { file?: ReadFile; tokens: number; estimate?: boolean; bytes?: number } | undefined {
  const size = ctx.host.size(path);
  if (size === undefined) return undefined;
  if (size > ctx.maxFileSize) return { tokens: Math.ceil(size / 4), estimate: true, bytes: size };
  const text = ctx.host.readFile(path);
  if (text === undefined) return undefined;
  const file = parse(path, text);
  return { file, tokens: countOf(ctx.tokenizer, file.sent), bytes: size };
}

/**
 * Adds a file and, depth first, what it imports (`@path`, `maxDepth` hops) or attaches (links,
 * `#file:`; one level). Each file is added once per agent; a cycle is reported and ends there.
 */
function addWithReferences(ctx: Ctx, out: LoadedFile[], seen: Set<string>, path: string, entry: Omit<LoadedFile, 'tokens' | 'path'>, opts: { imports: number; links: boolean }, chain: string[] = []): void {
  if (seen.has(path)) return;
  const got = load(ctx, path);
  if (!got) return;
  seen.add(path);
  out.push({ path, ...entry, tokens: got.tokens, ...(got.estimate ? { estimate: true } : {}), ...(got.bytes !== undefined ? { bytes: got.bytes } : {}) });
  const file = got.file;
  if (!file) return;
  const depth = entry.depth ?? 0;
  for (const ref of file.refs) {
    const isImport = ref.kind === 'import';
    if (isImport ? opts.imports <= 0 : !opts.links) continue;
    const where = resolveReference(ctx.host, path, ref.target);
    const what = isImport ? 'Import' : ref.kind === 'file' ? 'File reference' : 'Link';
    if (!where.path) {
      report(ctx, finding('instruction-reference', path, ref.span, `${what} '${ref.target}': ${where.problem}.`));
      continue;
    }
    if (chain.includes(where.path) || where.path === path) {
      report(ctx, finding('instruction-reference', path, ref.span, `${what} '${ref.target}' closes an import cycle (${[...chain, path, where.path].map((p) => basename(p)).join(' → ')}); the agent stops there.`));
      continue;
    }
    if (ctx.host.size(where.path) === undefined) {
      report(ctx, finding('instruction-reference', path, ref.span, `${what} '${ref.target}' does not exist or is not a regular file (${relative(ctx.root, where.path)}); nothing is loaded from it.`));
      continue;
    }
    if (seen.has(where.path)) continue;
    addWithReferences(ctx, out, seen, where.path, { why: isImport ? 'import' : 'link', from: path, depth: depth + 1 }, { imports: isImport ? opts.imports - 1 : 0, links: false }, [...chain, path]);
  }
}

function fm(ctx: Ctx, path: string): AgentFrontMatter | undefined {
  const got = load(ctx, path);
  return got?.file?.fm;
}

function ancestorsDown(root: string, file: string): string[] {
  const dirs: string[] = [];
  for (let d = dirname(file); isInside(root, d); d = dirname(d)) {
    dirs.unshift(d);
    if (d === root || dirname(d) === d) break;
  }
  return dirs;
}

function sum(files: readonly LoadedFile[], pred: (f: LoadedFile) => boolean): number {
  return files.filter(pred).reduce((n, f) => n + f.tokens, 0);
}

/** The load of one agent for the file at `rel` (relative to the root). */
function agentLoad(ctx: Ctx, agent: AgentId, file: string, rel: string, files: readonly string[]): AgentLoad {
  const out: LoadedFile[] = [];
  const notLoaded: NotLoaded[] = [];
  const seen = new Set<string>();
  const { root } = ctx;
  const has = new Set(files);
  const dirs = ancestorsDown(root, file);
  const always = new Set<string>();
  const add = (p: string, entry: Omit<LoadedFile, 'tokens' | 'path'>, opts: { imports: number; links: boolean }) => {
    const before = out.length;
    addWithReferences(ctx, out, seen, p, entry, opts);
    if (entry.why === 'always') for (const f of out.slice(before)) always.add(f.path);
  };
  if (agent === 'copilot') {
    const ci = `${root}/.github/copilot-instructions.md`;
    if (has.has(ci)) add(ci, { kind: 'copilot-instructions', why: 'always' }, { imports: 0, links: true });
    if (has.has(`${root}/AGENTS.md`)) add(`${root}/AGENTS.md`, { kind: 'agents-md', why: 'always' }, { imports: 0, links: false });
    for (const p of files) {
      const kind = agentFileKind(p);
      if (kind === 'instructions') {
        const front = fm(ctx, p);
        const patterns = patternsOf(front?.fields.applyTo);
        if (patterns.length === 0) {
          notLoaded.push({ path: p, why: 'manual' });
          continue;
        }
        if (patterns.some((x) => x.trim() === '**' || x.trim() === '**/*')) {
          add(p, { kind, why: 'always', pattern: patterns.join(', ') }, { imports: 0, links: true });
          continue;
        }
        const hit = patterns.find((x) => matches(x, rel));
        if (hit) add(p, { kind, why: 'pattern', pattern: hit }, { imports: 0, links: true });
        else notLoaded.push({ path: p, why: 'no-match' });
      } else if (kind === 'prompt') {
        if (p === file) add(p, { kind, why: 'prompt' }, { imports: 0, links: true });
        else notLoaded.push({ path: p, why: 'prompt' });
      }
    }
  } else if (agent === 'agents-md') {
    for (const d of [...dirs].reverse()) {
      if (has.has(`${d}/AGENTS.md`)) {
        add(`${d}/AGENTS.md`, { kind: 'agents-md', why: d === root ? 'always' : 'nearest' }, { imports: 0, links: false });
        break;
      }
    }
  } else if (agent === 'claude' || agent === 'gemini') {
    const names = agent === 'claude' ? ['CLAUDE.md', '.claude/CLAUDE.md', 'CLAUDE.local.md'] : ['GEMINI.md'];
    const depth = agent === 'claude' ? CLAUDE_IMPORT_DEPTH : GEMINI_IMPORT_DEPTH;
    for (const d of dirs) {
      for (const n of names) {
        const p = `${d}/${n}`;
        if (has.has(p) || (n.startsWith('.') && ctx.host.size(p) !== undefined)) add(p, { kind: agent === 'claude' ? 'claude-md' : 'gemini-md', why: d === root ? 'always' : 'ancestor' }, { imports: depth, links: false });
      }
    }
  } else if (agent === 'cursor') {
    if (has.has(`${root}/.cursorrules`)) add(`${root}/.cursorrules`, { kind: 'cursorrules', why: 'always' }, { imports: 1, links: false });
    for (const p of files) {
      if (agentFileKind(p) !== 'cursor-rule') continue;
      const front = fm(ctx, p);
      const alwaysApply = front?.fields.alwaysApply?.value === true;
      const globs = patternsOf(front?.fields.globs);
      const description = typeof front?.fields.description?.value === 'string' ? front.fields.description.value : '';
      if (alwaysApply) {
        add(p, { kind: 'cursor-rule', why: 'always' }, { imports: 1, links: false });
        continue;
      }
      const hit = globs.find((x) => matches(x, rel));
      if (hit) add(p, { kind: 'cursor-rule', why: 'pattern', pattern: hit }, { imports: 1, links: false });
      else if (globs.length) notLoaded.push({ path: p, why: 'no-match' });
      else if (description) notLoaded.push({ path: p, why: 'requested', description });
      else notLoaded.push({ path: p, why: 'manual' });
    }
  }
  const total = sum(out, () => true);
  const alwaysTokens = sum(out, (f) => always.has(f.path));
  return { agent, name: AGENT_NAMES[agent], files: out, total, always: alwaysTokens, conditional: total - alwaysTokens, notLoaded };
}

/** Whether a pattern matches a workspace-relative path: a pattern without `/` matches the file name in any folder. */
function matches(pattern: string, rel: string): boolean {
  let m = compiled.get(pattern);
  if (m === undefined) {
    const p = pattern.trim();
    m = agentGlob(p.includes('/') ? p : `**/${p}`) ?? null;
    compiled.set(pattern, m);
  }
  return m ? m(rel) : false;
}

/** Compiled patterns (a pattern is matched against every workspace file by the pattern check). */
const compiled = new BoundedCache<string, ((rel: string) => boolean) | null>(4096);

/** The workspace root of a path (the longest root that holds it). */
export function rootOf(host: FileHost, path: string): string | undefined {
  return [...host.roots].filter((r) => isInside(r, path)).sort((a, b) => b.length - a.length)[0];
}

/** What every agent (or the one asked for) loads for the file at `path`. */
export function whatLoads(host: FileHost, path: string, options: WhatLoadsOptions): WhatLoads {
  const root = rootOf(host, path) ?? dirname(path);
  const ctx: Ctx = { host, root, tokenizer: options.tokenizer, maxFileSize: options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE, findings: [], reported: new Set() };
  const files = options.files ?? discoverAgentFiles(host, root);
  const rel = relative(root, path);
  const agents = (options.agent ? [options.agent] : AGENTS).map((a) => agentLoad(ctx, a, path, rel, files));
  for (const a of agents) {
    const budget = options.budgets?.[a.agent];
    if (budget !== undefined && a.always > budget) {
      const first = a.files.find((f) => f.why === 'always');
      if (first) report(ctx, finding('instruction-budget', first.path, { start: 0, end: 0 }, `${a.name} sends ${a.always.toLocaleString('en-US')} tokens of instructions with every request, over the budget of ${budget.toLocaleString('en-US')} (agents.budgets.${a.agent}).`));
    }
  }
  return { file: path, root, tokenizer: { name: options.tokenizer.name, exact: options.tokenizer.exact }, agents, findings: ctx.findings };
}

// ---------------------------------------------------------------------------
// Workspace checks
// ---------------------------------------------------------------------------

export interface AgentCheckOptions {
  tokenizer: Tokenizer;
  files?: readonly string[];
  /** Every workspace file, relative to the root, for the pattern check (`applyTo`, `globs`). */
  workspaceFiles?: readonly string[];
  maxFileSize?: number;
  budgets?: Partial<Record<AgentId, number>>;
}

/** Word shingles of a paragraph, for the near-duplicate check. */
function shingles(s: string): Set<string> {
  const words = s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const out = new Set<string>();
  for (let i = 0; i + 3 <= words.length; i++) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

/**
 * The workspace's instruction files checked together: references of every file (imports, links,
 * cycles, out of the workspace), each `applyTo` / `globs` pattern against the workspace's files,
 * always-loaded budgets per agent (as loaded for a file at the root), and near-duplicate
 * paragraphs across files (word 3-shingles, Jaccard ≥ 0.8, paragraphs of 12 words or more).
 */
export function checkAgentFiles(host: FileHost, root: string, options: AgentCheckOptions): Finding[] {
  const files = options.files ?? discoverAgentFiles(host, root);
  const ctx: Ctx = { host, root, tokenizer: options.tokenizer, maxFileSize: options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE, findings: [], reported: new Set() };
  const workspaceParts = options.workspaceFiles?.map((r) => r.split('/').filter((x) => x !== ''));
  for (const p of files) {
    const kind = agentFileKind(p);
    const out: LoadedFile[] = [];
    const imports = kind === 'claude-md' ? CLAUDE_IMPORT_DEPTH : kind === 'gemini-md' ? GEMINI_IMPORT_DEPTH : kind === 'cursor-rule' || kind === 'cursorrules' ? 1 : 0;
    addWithReferences(ctx, out, new Set(), p, { why: 'always' }, { imports, links: kind !== 'agents-md' && kind !== 'claude-md' && kind !== 'gemini-md' });
    const front = fm(ctx, p);
    const field = kind === 'instructions' ? front?.fields.applyTo : kind === 'cursor-rule' ? front?.fields.globs : undefined;
    if (field && workspaceParts) {
      // Only a file that no pattern of its own can load: `**/*.ts, **/*.tsx` in a project without `.tsx` files is common and harmless.
      const patterns = patternsOf(field);
      const live = patterns.some((pattern) => {
        if (pattern === '**' || pattern === '**/*') return true;
        const p = pattern.trim();
        const m = agentGlobParts(p.includes('/') ? p : `**/${p}`);
        return m ? workspaceParts.some(m) : false;
      });
      if (patterns.length && !live) {
        const list = patterns.map((x) => `'${x}'`).join(', ');
        report(ctx, finding('instruction-pattern-unmatched', p, field.valueSpan, `${list} ${patterns.length === 1 ? 'matches' : 'match'} no file in the workspace, so ${kind === 'instructions' ? 'Copilot' : 'Cursor'} never loads this file by ${patterns.length === 1 ? 'it' : 'them'}.`));
      }
    }
  }
  const w = whatLoads(host, `${root}/.`, { tokenizer: options.tokenizer, files, ...(options.maxFileSize ? { maxFileSize: options.maxFileSize } : {}), ...(options.budgets ? { budgets: options.budgets } : {}) });
  for (const f of w.findings) report(ctx, f);
  // Near-duplicates: paragraphs of one file repeated in another.
  const paras: Array<{ path: string; span: Span; sh: Set<string> }> = [];
  for (const p of files) {
    const got = load(ctx, p);
    if (!got?.file) continue;
    const text = got.file.text;
    const re = /(?:^|\n\s*\n)([^\n][\s\S]*?)(?=\n\s*\n|$)/g;
    let n = 0;
    for (let m = re.exec(text); m && n < 2000; m = re.exec(text), n++) {
      const sh = shingles(m[1]);
      if (sh.size < 10) continue;
      const start = m.index + m[0].indexOf(m[1]);
      paras.push({ path: p, span: { start, end: start + m[1].length }, sh });
      if (re.lastIndex === m.index) re.lastIndex++;
    }
  }
  const byShingle = new Map<string, number[]>();
  paras.forEach((q, i) => {
    for (const s of q.sh) {
      const l = byShingle.get(s);
      if (l) {
        if (l.length < 50) l.push(i);
      } else byShingle.set(s, [i]);
    }
  });
  const done = new Set<string>();
  paras.forEach((q, i) => {
    const shared = new Map<number, number>();
    for (const s of q.sh) for (const j of byShingle.get(s) ?? []) if (j < i && paras[j].path !== q.path) shared.set(j, (shared.get(j) ?? 0) + 1);
    for (const [j, n] of shared) {
      const other = paras[j];
      const jac = n / (q.sh.size + other.sh.size - n);
      if (jac < 0.8 || done.has(`${i}`)) continue;
      done.add(`${i}`);
      report(
        ctx,
        finding('instruction-duplicate', q.path, q.span, `This paragraph repeats one in ${relative(root, other.path)} (${Math.round(jac * 100)}% of its word triples): an agent that loads both pays for it twice.`, {
          related: [{ path: other.path, span: other.span, message: 'the same instructions' }],
        }),
      );
    }
  });
  return ctx.findings;
}



// ---------------------------------------------------------------------------
// Snapshot for `ctxlens report --base`
// ---------------------------------------------------------------------------

export interface AgentSnapshot {
  agent: AgentId;
  name: string;
  /** Tokens sent with every request (the always-on files and what they import or attach). */
  always: number;
  /** Files that load only for some files: by their pattern, or below their folder. */
  scoped: Array<{ path: string; pattern: string; tokens: number }>;
}

/**
 * What each agent loads with every request, and each pattern-scoped file with its pattern and
 * tokens (a nested AGENTS.md, CLAUDE.md or GEMINI.md is scoped to `its/folder/**`): the figures a
 * pull request changes.
 */
export function agentSnapshot(host: FileHost, root: string, options: { tokenizer: Tokenizer; maxFileSize?: number }): AgentSnapshot[] {
  const files = discoverAgentFiles(host, root);
  const w = whatLoads(host, `${root}/.`, { tokenizer: options.tokenizer, files, ...(options.maxFileSize ? { maxFileSize: options.maxFileSize } : {}) });
  const ctx: Ctx = { host, root, tokenizer: options.tokenizer, maxFileSize: options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE, findings: [], reported: new Set() };
  return w.agents.map((a) => {
    const scoped: AgentSnapshot['scoped'] = [];
    for (const p of files) {
      const kind = agentFileKind(p);
      const front = fm(ctx, p);
      let pattern: string | undefined;
      if (a.agent === 'copilot' && kind === 'instructions') {
        const ps = patternsOf(front?.fields.applyTo);
        if (ps.length && !ps.some((x) => x === '**' || x === '**/*')) pattern = ps.join(', ');
      } else if (a.agent === 'cursor' && kind === 'cursor-rule' && front?.fields.alwaysApply?.value !== true) {
        const ps = patternsOf(front?.fields.globs);
        if (ps.length) pattern = ps.join(', ');
      } else if ((a.agent === 'agents-md' && kind === 'agents-md') || (a.agent === 'claude' && kind === 'claude-md') || (a.agent === 'gemini' && kind === 'gemini-md')) {
        const dir = dirname(p).replace(/\/\.claude$/, '');
        if (dir !== root) pattern = `${relative(root, dir)}/**`;
      }
      if (pattern === undefined) continue;
      const got = load(ctx, p);
      if (got) scoped.push({ path: p, pattern, tokens: got.tokens });
    }
    return { agent: a.agent, name: a.name, always: a.always, scoped };
  });
}
