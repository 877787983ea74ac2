/**
 * Glob patterns of coding agents' rule files (Copilot's `applyTo`, Cursor's `globs`) matched
 * against workspace-relative paths, the way those agents match them: `*` and `?` never cross a
 * `/`, `**` takes any number of folders, `[a-z]`, `{a,b}` and backslash escapes; names that start
 * with `.` are matched like any other (VS Code's glob and Cursor have no dot rule).
 *
 * The patterns come from files in the workspace, so they are never compiled to a regular
 * expression: picomatch's regexes backtrack (`*a*a*a*b` against a 250-character name took 2 s, one
 * more `*a` 147 s, measured with picomatch 4.0.7). The matcher is the core's one (text/glob.ts),
 * with the dot rule off and `[!a]` negating; the disk host's walk uses it with configs' `dot: false`.
 */

import { compileGlob, globMatches } from '../../text/glob';

/** Longer patterns match nothing. */
export const MAX_AGENT_GLOB = 512;

/**
 * A matcher for one pattern over `/`-separated workspace-relative paths, or undefined for a
 * pattern that is empty, too long or expands to too many alternatives. A leading `./` or `/` is
 * the workspace root (as Copilot and Cursor read it).
 */
export function agentGlob(pattern: string): ((relPath: string) => boolean) | undefined {
  const m = agentGlobParts(pattern);
  return m ? (relPath) => m(relPath.split('/').filter((s) => s !== '')) : undefined;
}

/** `agentGlob` over paths already split into their names (one pattern against many paths). */
export function agentGlobParts(pattern: string): ((parts: readonly string[]) => boolean) | undefined {
  const p = pattern.trim().replace(/^\.?\/+/, '');
  const compiled = compileGlob(p, { dot: true, bangNegates: true, maxLength: MAX_AGENT_GLOB });
  if (!compiled) return undefined;
  return (parts) => globMatches(compiled, parts);
}
