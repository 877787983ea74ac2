/**
 * Credential patterns: what the `secret-in-context` scanner (scan.ts) looks for, and what every
 * message the core produces is redacted of (rules/registry.ts `finding` calls `redactSecrets`),
 * so a detected secret never appears whole in a finding, a log line built from one, or a trace.
 *
 * The patterns are the high-confidence, prefixed formats of gitleaks' default rule set
 * (config/gitleaks.toml) that an LLM request could carry, plus AWS secret access keys keyed by
 * their usual names. Each prefixed pattern starts with its literal prefix and checks the character
 * before it with a lookbehind placed after the prefix, so the regex engine can jump from prefix to
 * prefix through long text; quantifiers are bounded or run over one character class, so every
 * pattern is linear. No pattern is built from user text.
 */
import { BoundedCache } from '../cache';

export interface SecretPattern {
  name: string;
  re: RegExp;
  /** Placeholders such as `sk-your-key-here` are not secrets: the match must pass this check. */
  check?: (secret: string) => boolean;
  /** The secret is this capture group (patterns keyed by a name such as aws_secret_access_key). */
  group?: number;
  /** A `-----BEGIN … PRIVATE KEY-----` header; the block runs to its END line. */
  block?: boolean;
}

/** Whether `s` has at least `n` distinct characters (stops as soon as it has). */
function distinct(s: string, n: number): boolean {
  let seen = '';
  for (let i = 0; i < s.length && seen.length < n; i++) if (!seen.includes(s.charAt(i))) seen += s.charAt(i);
  return seen.length >= n;
}

/** Letters and digits mixed, and enough distinct characters: not `sk-xxxxxxxx…` or `sk-your-key`. */
export function looksRandom(s: string): boolean {
  return /[0-9]/.test(s) && /[A-Za-z]/.test(s) && distinct(s, 8);
}

/** For formats of letters only (Hugging Face): both cases and many distinct letters. */
function mixedLetters(s: string): boolean {
  return /[a-z]/.test(s) && /[A-Z]/.test(s) && distinct(s, 10);
}

const W = 'A-Za-z0-9_-';
const AN = '(?![A-Za-z0-9])';
const prefixed = (prefix: string, rest: string, before = W) => new RegExp(`${prefix}(?<![${before}]${prefix})${rest}`, 'g');

// Order matters: the more specific prefix wins when two patterns match the same text.
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { name: 'private key', re: /-----BEGIN ((?:[A-Z0-9]+ ){0,8})PRIVATE KEY( BLOCK)?-----/g, block: true },
  { name: 'Anthropic API key', re: prefixed('sk-ant-', `[${W}]{20,}`), check: looksRandom },
  { name: 'OpenAI API key', re: prefixed('sk-', `(?:proj-|svcacct-|admin-)?[${W}]{20,}`), check: looksRandom },
  { name: 'Stripe API key', re: prefixed('[rs]k_(?:live|test|prod)_', '[A-Za-z0-9]{10,99}'), check: looksRandom },
  { name: 'AWS access key id', re: /(?:AKIA|ASIA|ABIA|ACCA)(?<![A-Z0-9](?:AKIA|ASIA|ABIA|ACCA))[0-9A-Z]{16}(?![A-Z0-9])/g },
  {
    name: 'AWS secret access key',
    re: /(?<![A-Za-z0-9])(?:aws[_.-]?secret(?:[_.-]?access)?[_.-]?key|secret[_.-]?access[_.-]?key)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
    check: looksRandom,
  },
  { name: 'GitHub token', re: prefixed('gh[pousr]_', '[A-Za-z0-9]{36,}'), check: looksRandom },
  { name: 'GitHub token', re: prefixed('github_pat_', '[A-Za-z0-9_]{22,}'), check: looksRandom },
  { name: 'GitLab token', re: prefixed('gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent|ffct)-', `[${W}]{20,}`), check: looksRandom },
  { name: 'GitLab runner token', re: prefixed('GR1348941', `[${W}]{20,}`), check: looksRandom },
  { name: 'Google API key', re: prefixed('AIza', `[${W}]{35}`), check: looksRandom },
  { name: 'Slack token', re: prefixed('xox[abposer]-', '[A-Za-z0-9-]{10,}'), check: looksRandom },
  { name: 'Slack app token', re: prefixed('xapp-', '[0-9]-[A-Za-z0-9]{4,}-[0-9]{4,}-[A-Za-z0-9]{16,}'), check: looksRandom },
  { name: 'Slack webhook URL', re: prefixed('hooks\\.slack\\.com/', '(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}'), check: looksRandom },
  { name: 'npm access token', re: prefixed('npm_', `[A-Za-z0-9]{36}${AN}`), check: looksRandom },
  { name: 'PyPI upload token', re: prefixed('pypi-AgEIcHlwaS5vcmc', `[${W}]{50,}`) },
  { name: 'Hugging Face token', re: prefixed('(?:hf|api_org)_', `[A-Za-z]{34}${AN}`), check: mixedLetters },
  { name: 'SendGrid API key', re: prefixed('SG\\.', `[${W}]{16,32}\\.[${W}]{16,64}`), check: looksRandom },
  { name: 'Shopify token', re: prefixed('shp(?:at|ca|pa|ss)_', `[a-fA-F0-9]{32}${AN}`), check: looksRandom },
  { name: 'DigitalOcean token', re: prefixed('do[opr]_v1_', `[a-f0-9]{64}${AN}`), check: looksRandom },
  { name: 'Databricks token', re: prefixed('dapi', `[a-f0-9]{32}${AN}`), check: looksRandom },
  { name: 'Doppler token', re: prefixed('dp\\.pt\\.', `[A-Za-z0-9]{43}${AN}`), check: looksRandom },
  { name: 'Linear API key', re: prefixed('lin_api_', `[A-Za-z0-9]{40}${AN}`), check: looksRandom },
  { name: 'Postman API key', re: prefixed('PMAK-', `[a-fA-F0-9]{24}-[a-fA-F0-9]{34}${AN}`), check: looksRandom },
  { name: 'Pulumi token', re: prefixed('pul-', `[a-f0-9]{40}${AN}`), check: looksRandom },
  { name: 'age secret key', re: prefixed('AGE-SECRET-KEY-1', `[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}${AN}`) },
  { name: 'Vault token', re: prefixed('hv[sb]\\.', `[${W}]{90,300}`), check: looksRandom },
  { name: 'Grafana token', re: prefixed('glc_', '[A-Za-z0-9+/]{32,400}={0,3}'), check: looksRandom },
  { name: 'Grafana token', re: prefixed('glsa_', `[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}${AN}`), check: looksRandom },
  { name: 'Perplexity API key', re: prefixed('pplx-', `[A-Za-z0-9]{48}${AN}`), check: looksRandom },
  { name: 'Sentry token', re: prefixed('sntryu_', `[a-f0-9]{64}${AN}`), check: looksRandom },
  { name: 'Square token', re: prefixed('sq0(?:atp|csp)-', `[${W}]{22,60}`), check: looksRandom },
  { name: 'Heroku API key', re: prefixed('HRKU-AA', `[${W}]{58}`), check: looksRandom },
  { name: 'Notion token', re: prefixed('ntn_', `[0-9]{11}[A-Za-z0-9]{35}${AN}`), check: looksRandom },
  { name: 'Twilio API key', re: prefixed('SK', `[0-9a-fA-F]{32}${AN}`), check: looksRandom },
  { name: 'JSON Web Token', re: prefixed('eyJ', `[${W}]{8,}\\.[${W}]{8,}\\.[${W}]{8,}`) },
];

/** Text without any of these cannot hold a secret: most messages and lines skip every pattern. */
const PREFILTER = /-----BEGIN|[rs]k[-_]|AKIA|ASIA|ABIA|ACCA|[Ss][Ee][Cc][Rr][Ee][Tt]|gh[pousr]_|github_pat_|gl[a-z]+[-_]|GR1348941|AIza|xox|xapp-|hooks\.slack|npm_|pypi-|hf_|api_org_|SG\.|shp|_v1_|dapi|dp\.pt\.|lin_api_|PMAK-|pul-|AGE-SECRET|hv[sb]\.|pplx-|sntryu_|sq0|HRKU-|ntn_|SK[0-9a-fA-F]|eyJ/;

export interface SecretHit {
  start: number;
  end: number;
  pattern: SecretPattern;
  /** The secret as written (for a private key, its header line). */
  secret: string;
  /** For a private key without its END line: where the key material after the header ends. */
  bodyEnd?: number;
}

/** How far past a private key header its END line is looked for. */
const MAX_KEY_BLOCK = 100_000;

/** End of the base64 key material (and armor headers) that follows a private key header. */
function keyBodyEnd(text: string, from: number): number {
  let i = from;
  const limit = Math.min(text.length, from + MAX_KEY_BLOCK);
  while (i < limit && /[A-Za-z0-9+/=:,.\s-]/.test(text.charAt(i))) {
    if (text.startsWith('-----', i)) break;
    i++;
  }
  return i;
}

/**
 * Ranges of a text already taken, for overlap checks in time proportional to the range checked
 * (a list of earlier hits would make a text full of tokens quadratic).
 */
export class Coverage {
  private marks?: Uint8Array;
  constructor(private readonly length: number) {}

  overlaps(start: number, end: number): boolean {
    if (!this.marks) return false;
    for (let i = Math.max(0, start); i < end && i < this.length; i++) if (this.marks[i]) return true;
    return false;
  }

  mark(start: number, end: number): void {
    this.marks ??= new Uint8Array(this.length);
    this.marks.fill(1, Math.max(0, start), Math.min(end, this.length));
  }
}

/**
 * Hits by text, for texts of MEMO_MIN characters or more: a request's items, a fixture's passages
 * and an edited file's lines recur (retrieval repeats chunks), and the answer depends on the text
 * alone. Bounded by entries and characters, least recently used first out.
 */
const MEMO_MIN = 64;
const MEMO_MAX = 256 * 1024;
const memo = new BoundedCache<string, readonly SecretHit[]>(20_000, 16 * 1024 * 1024);
const NONE: readonly SecretHit[] = Object.freeze([]);

/** Every secret in `text`, in order, without overlaps (the first pattern listed wins). Never change the list returned. */
export function findSecrets(text: string): readonly SecretHit[] {
  if (text.length < MEMO_MIN || text.length > MEMO_MAX) return scanText(text);
  let hits = memo.get(text);
  if (hits === undefined) {
    hits = scanText(text);
    memo.set(text, hits, text.length);
  }
  return hits;
}

function scanText(text: string): readonly SecretHit[] {
  if (!PREFILTER.test(text)) return NONE;
  const hits: SecretHit[] = [];
  const taken = new Coverage(text.length);
  for (const p of SECRET_PATTERNS) {
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m; m = p.re.exec(text)) {
      const secret = p.group ? m[p.group] : m[0];
      const start = p.group ? m.index + m[0].length - secret.length : m.index;
      let end = start + secret.length;
      if (p.check && !p.check(secret)) continue;
      let bodyEnd: number | undefined;
      if (p.block) {
        // Cover the whole block when its END line is there, so the squiggle shows what to remove.
        const endMarker = `-----END ${m[1] ?? ''}PRIVATE KEY${m[2] ?? ''}-----`;
        const close = text.indexOf(endMarker, end);
        if (close >= 0 && close - end < MAX_KEY_BLOCK) end = close + endMarker.length;
        else bodyEnd = keyBodyEnd(text, end);
      }
      if (taken.overlaps(start, end)) continue;
      taken.mark(start, end);
      hits.push({ start, end, pattern: p, secret, bodyEnd });
    }
  }
  return hits.sort((a, b) => a.start - b.start);
}

/** Shows enough of a secret to find it (`sk-pro…9f2`), never the whole. */
export function redactSecret(s: string): string {
  if (s.length <= 12) return `${s.slice(0, 3)}…`;
  return `${s.slice(0, 6)}…${s.slice(-3)}`;
}

/**
 * `text` with every detected secret replaced by its redacted form, and every private key block
 * (or the key material after a lone header) cut to its header. For messages that quote user
 * text: YAML errors, unknown keys, values that failed validation.
 */
export function redactSecrets(text: string): string {
  const hits = findSecrets(text);
  if (!hits.length) return text;
  let out = '';
  let last = 0;
  for (const h of hits) {
    if (h.pattern.block) {
      const end = h.bodyEnd ?? h.end;
      // A header quoted alone (this scanner's own message) carries no key material.
      if (!text.slice(h.start + h.secret.length, end).trim()) continue;
      out += `${text.slice(last, h.start)}${h.secret}…`;
      last = end;
      continue;
    }
    out += `${text.slice(last, h.start)}${redactSecret(h.secret)}`;
    last = h.end;
  }
  return out + text.slice(last);
}

/** Shortest piece of a secret that `redactQuoted` hides (a redaction itself shows 6 + 3 characters). */
const MIN_PIECE = 8;

/**
 * `message` redacted, and also cleared of any piece of a secret found in `source` that it quotes.
 * For messages that show a window of the source (Handlebars' `...text^` excerpts): a window can
 * cut a secret so that what it shows matches no pattern, and redactSecrets alone would pass it.
 */
export function redactQuoted(message: string, source: string): string {
  return redactPieces(message, secretsOf(source));
}

/** The secrets of `source` as redactPieces takes them: a private key block's key material, else the secret. */
export function secretsOf(source: string): string[] {
  return findSecrets(source).map((h) => (h.pattern.block ? source.slice(h.start + h.secret.length, h.bodyEnd ?? h.end) : h.secret));
}

/** `message` redacted, and cleared of any piece of these secrets (see redactQuoted). */
export function redactPieces(message: string, secrets: readonly string[]): string {
  let out = redactSecrets(message);
  for (const secret of secrets) out = maskPieces(out, secret);
  return out;
}

/** `text` with each run of at least MIN_PIECE characters that occurs in `secret` replaced by `…`. */
function maskPieces(text: string, secret: string): string {
  if (secret.length < MIN_PIECE) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    let len = 0;
    if (i + MIN_PIECE <= text.length && secret.includes(text.slice(i, i + MIN_PIECE))) {
      len = MIN_PIECE;
      while (i + len < text.length && secret.includes(text.slice(i, i + len + 1))) len++;
    }
    if (len) {
      out += '…';
      i += len;
    } else {
      out += text.charAt(i);
      i++;
    }
  }
  return out;
}
