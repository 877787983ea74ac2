/**
 * Which coding agent reads a file, and how (docs/agents.md cites each agent's documentation):
 *
 * - GitHub Copilot in VS Code: `.github/copilot-instructions.md` with every chat request;
 *   `*.instructions.md` (default folder `.github/instructions/`) when the file in question matches
 *   its `applyTo` globs (`**` is every request; no `applyTo`: attached by hand only); prompt files
 *   `*.prompt.md` (default folder `.github/prompts/`) when the user runs them; and the root
 *   `AGENTS.md`.
 * - AGENTS.md (Codex, and the agents that follow agents.md): the nearest `AGENTS.md` up the tree
 *   from the file.
 * - Claude Code: every `CLAUDE.md` (and `.claude/CLAUDE.md`, `CLAUDE.local.md`) from the
 *   workspace root down to the file's folder, each with its `@path` imports (at most 5 hops).
 * - Cursor: `.cursor/rules/**\/*.mdc` by their front matter (`alwaysApply: true` always, `globs`
 *   when the file matches, a `description` alone when the agent asks for it, none: by hand), and
 *   the legacy root `.cursorrules` always.
 * - Gemini CLI: `GEMINI.md` from the workspace root down to the file's folder, with `@path`
 *   imports.
 */
import { basename } from '../../paths';

export type AgentId = 'copilot' | 'agents-md' | 'claude' | 'cursor' | 'gemini';

export const AGENTS: readonly AgentId[] = ['copilot', 'agents-md', 'claude', 'cursor', 'gemini'];

export const AGENT_NAMES: Record<AgentId, string> = {
  copilot: 'GitHub Copilot (VS Code)',
  'agents-md': 'AGENTS.md (Codex and agents.md readers)',
  claude: 'Claude Code',
  cursor: 'Cursor',
  gemini: 'Gemini CLI',
};

export type AgentFileKind = 'copilot-instructions' | 'instructions' | 'prompt' | 'agents-md' | 'claude-md' | 'cursor-rule' | 'cursorrules' | 'gemini-md';

/** The kind of an instruction file by its path, or undefined for any other file. */
export function agentFileKind(path: string): AgentFileKind | undefined {
  const name = basename(path);
  if (/(^|\/)\.github\/copilot-instructions\.md$/i.test(path)) return 'copilot-instructions';
  if (/\.instructions\.md$/i.test(name)) return 'instructions';
  if (/\.prompt\.md$/i.test(name)) return 'prompt';
  if (name === 'AGENTS.md') return 'agents-md';
  if (name === 'CLAUDE.md' || name === 'CLAUDE.local.md') return 'claude-md';
  if (/\.mdc$/i.test(name)) return 'cursor-rule';
  if (name === '.cursorrules') return 'cursorrules';
  if (name === 'GEMINI.md') return 'gemini-md';
  return undefined;
}

/** The agents that read a kind of file. */
export function agentsOfKind(kind: AgentFileKind): AgentId[] {
  switch (kind) {
    case 'copilot-instructions':
    case 'instructions':
    case 'prompt':
      return ['copilot'];
    case 'agents-md':
      return ['agents-md', 'copilot'];
    case 'claude-md':
      return ['claude'];
    case 'cursor-rule':
    case 'cursorrules':
      return ['cursor'];
    case 'gemini-md':
      return ['gemini'];
  }
}

/** Whether a kind of file names other files with `@path` imports that the agent inlines (Claude Code, Gemini CLI). */
export function importsInline(kind: AgentFileKind): boolean {
  return kind === 'claude-md' || kind === 'gemini-md';
}

/** The kinds that have a front matter the agent reads. */
export function hasFrontMatter(kind: AgentFileKind): boolean {
  return kind === 'instructions' || kind === 'prompt' || kind === 'cursor-rule';
}
