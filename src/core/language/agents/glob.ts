/**
 * Glob patterns of coding agents' rule files (Copilot's `applyTo`, Cursor's `globs`) matched
 * against workspace-relative paths, the way those agents match them: `*` and `?` never cross a
 * `/`, `**` takes any number of folders, `[a-z]`, `{a,b}` and backslash escapes; names that start
 * with `.` are matched like any other (VS Code's glob and Cursor have no dot rule).
 *
 * The patterns come from files in the workspace, so they are never compiled to a regular
 * expression: picomatch's regexes backtrack (`*a*a*a*b` against a 250-character name took 2 s, one
 * more `*a` 147 s, measured with picomatch 4.0.7). This matcher works name by name with the classic
 * wildcard walk and a memo over (segment, name), so its time is bounded by pattern × path. The disk
 * host's walk (src/node/fileHost.ts) uses the same algorithm with the `dot: false` rule of configs.
 */

/** Longer patterns match nothing. */
export const MAX_AGENT_GLOB = 512;
const MAX_ALTERNATIVES = 64;

type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; ch: string } | { kind: 'class'; negated: boolean; ranges: Array<[string, string]> };
type Segment = 'globstar' | Token[];

function closingBrace(p: string, open: number): number {
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

function expandBraces(p: string, out: string[] = [], from = 0): string[] | undefined {
  for (let i = from; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '{') continue;
    const close = closingBrace(p, i);
    if (close < 0) break;
    const cuts = [i];
    let depth = 0;
    for (let k = i + 1; k < close; k++) {
      const d = p.charAt(k);
      if (d === '\\') k++;
      else if (d === '{') depth++;
      else if (d === '}') depth--;
      else if (d === ',' && depth === 0) cuts.push(k);
    }
    if (cuts.length === 1) continue;
    cuts.push(close);
    for (let k = 0; k + 1 < cuts.length; k++) {
      if (!expandBraces(p.slice(0, i) + p.slice(cuts[k] + 1, cuts[k + 1]) + p.slice(close + 1), out, i)) return undefined;
    }
    return out;
  }
  if (out.length >= MAX_ALTERNATIVES) return undefined;
  out.push(p);
  return out;
}

function parseName(seg: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg.charAt(i);
    if (c === '\\' && i + 1 < seg.length) tokens.push({ kind: 'char', ch: seg.charAt(++i) });
    else if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'any' });
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) {
        tokens.push({ kind: 'char', ch: c });
        continue;
      }
      let body = seg.slice(i + 1, end);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      const ranges: Array<[string, string]> = [];
      for (let k = 0; k < body.length; k++) {
        if (body.charAt(k + 1) === '-' && k + 2 < body.length) {
          ranges.push([body.charAt(k), body.charAt(k + 2)]);
          k += 2;
        } else ranges.push([body.charAt(k), body.charAt(k)]);
      }
      tokens.push({ kind: 'class', negated, ranges });
      i = end;
    } else tokens.push({ kind: 'char', ch: c });
  }
  return tokens;
}

function tokenMatches(t: Token, ch: string): boolean {
  if (t.kind === 'any') return true;
  if (t.kind === 'char') return t.ch === ch;
  if (t.kind === 'class') return t.ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== t.negated;
  return false;
}

/** The wildcard walk that backs up to the last `*` only: O(name × pattern) at worst. */
function matchName(tokens: Token[], name: string): boolean {
  let p = 0;
  let i = 0;
  let starP = -1;
  let starI = 0;
  while (i < name.length) {
    const t = tokens[p];
    if (t && t.kind === 'star') {
      starP = p++;
      starI = i;
    } else if (t && tokenMatches(t, name.charAt(i))) {
      p++;
      i++;
    } else if (starP >= 0) {
      p = starP + 1;
      i = ++starI;
    } else return false;
  }
  while (tokens[p]?.kind === 'star') p++;
  return p === tokens.length;
}

function matchSegments(segs: Segment[], parts: string[]): boolean {
  // Names before the first `**` and the last name match one to one: most paths fail there,
  // without the memo (one pattern is matched against every file of a workspace).
  let lead = 0;
  while (lead < segs.length && segs[lead] !== 'globstar') {
    if (lead >= parts.length || !matchName(segs[lead] as Token[], parts[lead])) return false;
    lead++;
  }
  if (lead === segs.length) return lead === parts.length;
  const last = segs[segs.length - 1];
  if (last !== 'globstar' && (parts.length <= lead || !matchName(last, parts[parts.length - 1]))) return false;
  const width = parts.length + 1;
  const memo = new Uint8Array((segs.length + 1) * width);
  const at = (si: number, pi: number): boolean => {
    const key = si * width + pi;
    if (memo[key]) return memo[key] === 2;
    let ok = false;
    if (si === segs.length) ok = pi === parts.length;
    else {
      const seg = segs[si];
      if (seg === 'globstar') {
        for (let k = pi; k <= parts.length && !ok; k++) ok = at(si + 1, k);
      } else ok = pi < parts.length && matchName(seg, parts[pi]) && at(si + 1, pi + 1);
    }
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return at(lead, lead);
}

function compile(pattern: string): Segment[][] | undefined {
  const p = pattern.trim().replace(/^\.?\/+/, '');
  if (!p || p.length > MAX_AGENT_GLOB) return undefined;
  const alternatives = expandBraces(p);
  if (!alternatives) return undefined;
  return alternatives.map((alt) => {
    const segs: Segment[] = [];
    for (const seg of alt.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '**') {
        if (segs[segs.length - 1] !== 'globstar') segs.push('globstar');
      } else segs.push(parseName(seg));
    }
    return segs;
  });
}

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
  const compiled = compile(pattern);
  if (!compiled) return undefined;
  return (parts) => compiled.some((segs) => matchSegments(segs, parts as string[]));
}
