/**
 * Glob patterns matched without regular expressions: patterns come from workspace files (config
 * `fixtures:` globs, Copilot's `applyTo`, Cursor's `globs`), and a compiled regex backtracks
 * (picomatch's `*a*a*a*b` against a 250-character name took 2 s, one more `*a` 147 s, measured
 * with picomatch 4.0.7). Each name is matched with the classic wildcard walk that backs up to the
 * last `*` only, and paths with a memo over (segment, name): time is bounded by pattern × path.
 *
 * `*` and `?` never cross a `/`, `**` takes any number of folders, `[a-z]` classes (`^` negates,
 * and with `bangNegates` also `!`), `{a,b}` alternatives and backslash escapes. With `dot: false`
 * (picomatch's rule, the disk host's config globs) a name starting with `.` needs a pattern
 * segment starting with `.`, and `**` never takes one; with `dot: true` (VS Code's and Cursor's
 * globs) such names are like any other.
 */

export interface GlobOptions {
  /** Names starting with `.` match `*`, `?` and `**` like any other (default false). */
  dot?: boolean;
  /** `[!a]` negates as `[^a]` does (default false: picomatch reads it as the characters ! and a). */
  bangNegates?: boolean;
  /** Longer patterns match nothing. */
  maxLength: number;
}

/** Most alternatives a pattern's braces may expand to (`{a,b}{c,d}` is four). */
const MAX_ALTERNATIVES = 64;

type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; ch: string } | { kind: 'class'; negated: boolean; ranges: Array<[string, string]> };
/** A path segment of a pattern: `**`, or the tokens of one name. */
type Segment = 'globstar' | Token[];

/** A compiled pattern: its alternatives, each a list of segments, and the dot rule. */
export interface CompiledGlob {
  alternatives: Segment[][];
  dot: boolean;
}

/** Index of the `}` closing the `{` at `open`, or -1; escapes and nested braces respected. */
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

/** Top-level comma positions inside the braces `open`..`close`. */
function braceCommas(p: string, open: number, close: number): number[] {
  const commas: number[] = [];
  let depth = 0;
  for (let i = open + 1; i < close; i++) {
    const c = p.charAt(i);
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) commas.push(i);
  }
  return commas;
}

/** The pattern with its `{a,b}` alternatives expanded, or undefined when there are too many. */
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
    const commas = braceCommas(p, i, close);
    // Braces without a comma are literal text, as in picomatch.
    if (!commas.length) continue;
    const cuts = [i, ...commas, close];
    for (let k = 0; k + 1 < cuts.length; k++) {
      const alt = p.slice(0, i) + p.slice(cuts[k] + 1, cuts[k + 1]) + p.slice(close + 1);
      if (!expandBraces(alt, out, i)) return undefined;
    }
    return out;
  }
  if (out.length >= MAX_ALTERNATIVES) return undefined;
  out.push(p);
  return out;
}

function parseName(seg: string, bangNegates: boolean): Token[] {
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
      const negated = body.startsWith('^') || (bangNegates && body.startsWith('!'));
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
  switch (t.kind) {
    case 'any':
      return true;
    case 'char':
      return t.ch === ch;
    case 'class':
      return t.ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== t.negated;
    default:
      return false;
  }
}

/** Whether a name matches a segment's tokens: the wildcard walk, O(name × pattern) at worst. */
function matchName(tokens: Token[], name: string, dot: boolean): boolean {
  if (!dot && name.startsWith('.') && !(tokens[0]?.kind === 'char' && tokens[0].ch === '.')) return false;
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

/** Whether path names match pattern segments. */
function matchSegments(segs: Segment[], parts: readonly string[], dot: boolean): boolean {
  // Names before the first `**` and the last name match one to one: most paths fail there,
  // without the memo (one pattern is matched against every file of a workspace).
  let lead = 0;
  while (lead < segs.length && segs[lead] !== 'globstar') {
    if (lead >= parts.length || !matchName(segs[lead] as Token[], parts[lead], dot)) return false;
    lead++;
  }
  if (lead === segs.length) return lead === parts.length;
  const last = segs[segs.length - 1];
  if (last !== 'globstar' && (parts.length <= lead || !matchName(last, parts[parts.length - 1], dot))) return false;
  // memo[si * (parts.length + 1) + pi]: 0 unknown, 1 no, 2 yes. Each state is decided once.
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
        for (let k = pi; k <= parts.length; k++) {
          if (at(si + 1, k)) {
            ok = true;
            break;
          }
          // Without the dot rule's consent, `**` takes no name starting with `.`.
          if (!dot && k < parts.length && parts[k].startsWith('.')) break;
        }
      } else ok = pi < parts.length && matchName(seg, parts[pi], dot) && at(si + 1, pi + 1);
    }
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return at(lead, lead);
}

/**
 * Whether a file below the folder `parts` could match: the folder's names match a prefix of the
 * segments and at least one segment is left for what lies below. Lets a walk skip folders that
 * cannot hold a match (`fixtures/*.yaml` never enters `src/`), same memoized shape as above.
 */
function mayHoldMatch(segs: Segment[], parts: readonly string[], dot: boolean): boolean {
  const width = parts.length + 1;
  const memo = new Uint8Array((segs.length + 1) * width);
  const at = (si: number, pi: number): boolean => {
    const key = si * width + pi;
    if (memo[key]) return memo[key] === 2;
    let ok: boolean;
    if (pi === parts.length) ok = si < segs.length;
    else if (si === segs.length) ok = false;
    else {
      const seg = segs[si];
      if (seg === 'globstar') ok = at(si + 1, pi) || ((dot || !parts[pi].startsWith('.')) && at(si, pi + 1));
      else ok = matchName(seg, parts[pi], dot) && at(si + 1, pi + 1);
    }
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return at(0, 0);
}

/** A pattern compiled once, or undefined for one that is empty, too long or expands to too many alternatives. */
export function compileGlob(pattern: string, options: GlobOptions): CompiledGlob | undefined {
  if (!pattern.trim() || pattern.length > options.maxLength) return undefined;
  const expanded = expandBraces(pattern);
  if (!expanded) return undefined;
  const alternatives = expanded.map((alt) => {
    const segs: Segment[] = [];
    for (const seg of alt.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '**') {
        if (segs[segs.length - 1] !== 'globstar') segs.push('globstar');
      } else segs.push(parseName(seg, options.bangNegates ?? false));
    }
    return segs;
  });
  return { alternatives, dot: options.dot ?? false };
}

/** Whether a path, split into its names, matches the pattern. */
export function globMatches(g: CompiledGlob, parts: readonly string[]): boolean {
  return g.alternatives.some((segs) => matchSegments(segs, parts, g.dot));
}

/** Whether a folder, split into its names (none for the start), can hold a file the pattern matches. */
export function globMayHold(g: CompiledGlob, parts: readonly string[]): boolean {
  return g.alternatives.some((segs) => mayHoldMatch(segs, parts, g.dot));
}
