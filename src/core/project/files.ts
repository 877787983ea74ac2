/**
 * How the project layer reads files: what kind a path is, the parse caches (one parse per path and
 * text), the one recording host that lets a derived value be checked against the host later, and
 * the fixture scans and reference resolution memoized by it.
 *
 * Parsing is keyed by path and exact text, so re-analysing a template after a config edit
 * re-parses only the config. Each cache is bounded by entries and by the characters of the texts
 * it keeps (a parsed document takes several times its text): a scan of a folder of 2 MB fixtures
 * must not keep every one of them.
 */
import type { FileHost } from '../host';
import type { ConfigDoc, Finding, FixtureDoc, TemplateDoc } from '../types';
import { BoundedCache } from '../cache';
import { claimOf, parseTemplate, templateFileOf } from '../language';
import { parseConfig } from '../config/parse';
import { fixtureName, parseFixture, resolveFixtureFiles } from '../fixture';
import { scanHiddenCharacters, scanSecrets } from '../text/scan';

export type FileKind = 'template' | 'config' | 'fixture';

export const DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024;

export function classifyFile(path: string): FileKind | undefined {
  if (/\.context\.ya?ml$/i.test(path)) return 'config';
  if (/\.fixture\.(ya?ml|json)$/i.test(path)) return 'fixture';
  // The registry's languages claim templates; partials (dotprompt's `_name.prompt`) are rendered inside the templates that include them, not on their own.
  return claimOf(path)?.claim === 'template' ? 'template' : undefined;
}

/**
 * Appends every list to `to` one by one. Spreading a list into push() passes it as arguments, and
 * a fixture with 150,000 hidden characters (as many findings) overflowed the call stack (found by
 * the fuzz suite).
 */
export function append<T>(to: T[], ...lists: ReadonlyArray<readonly T[]>): void {
  for (const list of lists) for (const x of list) to.push(x);
}

/** A value parsed from a file's text, kept while the text is the same. */
class TextCache<T> {
  private readonly cache: BoundedCache<string, { text: string; value: T }>;
  constructor(entries: number, chars: number) {
    this.cache = new BoundedCache(entries, chars);
  }
  get(path: string, text: string, make: () => T): T {
    const hit = this.cache.get(path);
    if (hit && hit.text === text) return hit.value;
    const value = make();
    this.cache.set(path, { text, value }, text.length);
    return value;
  }
  delete(path: string): void {
    this.cache.delete(path);
  }
}

const MB = 1024 * 1024;
const templates = new TextCache<TemplateDoc>(512, 32 * MB);
const configs = new TextCache<ConfigDoc>(512, 32 * MB);
const fixtures = new TextCache<FixtureDoc>(512, 8 * MB);
/**
 * What binding needs of a fixture file: its `template:` and `name:`. Every template's analysis asks
 * it of every fixture its config matches or that lies beside it, so it is kept, by text, longer
 * than the parses (a folder of twelve 2 MB fixtures was parsed in full for every analysis).
 */
export interface FixtureHead {
  template?: string;
  name: string;
}
const fixtureHeads = new TextCache<FixtureHead>(4096, 64 * MB);

export function readTemplate(host: FileHost, path: string): TemplateDoc | undefined {
  // A template inside a file (BAML's `x.baml#F`) is read from its file.
  const text = host.readFile(templateFileOf(path));
  return text === undefined ? undefined : templates.get(path, text, () => parseTemplate(path, text));
}

export function readConfig(host: FileHost, path: string): ConfigDoc | undefined {
  const text = host.readFile(path);
  return text === undefined ? undefined : configs.get(path, text, () => parseConfig(path, text));
}

export function readFixture(host: FileHost, path: string): FixtureDoc | undefined {
  const text = host.readFile(path);
  return text === undefined ? undefined : fixtures.get(path, text, () => parseFixture(path, text));
}

export function fixtureHead(host: FileHost, path: string): FixtureHead | undefined {
  const text = host.readFile(path);
  if (text === undefined) return undefined;
  return fixtureHeads.get(path, text, () => {
    // Without the words, or an escape that could spell them, no key of the document is `template` or `name`.
    if (!text.includes('template') && !text.includes('name') && !text.includes('\\')) return { name: fixtureName(path) };
    const doc = fixtures.get(path, text, () => parseFixture(path, text));
    return { ...(doc.template ? { template: doc.template.value } : {}), name: doc.name };
  });
}

/**
 * Drops the parsed documents of these paths (the language server, after its workspace scan read
 * files no open document needs). Later analyses parse them again.
 */
export function forgetParsed(paths: Iterable<string>): void {
  for (const p of paths) {
    templates.delete(p);
    configs.delete(p);
    fixtures.delete(p);
  }
}

export function tooLarge(host: FileHost, path: string, maxFileSize = DEFAULT_MAX_FILE_SIZE): number | undefined {
  const size = host.size(path);
  return size !== undefined && size > maxFileSize ? size : undefined;
}

// ---------------------------------------------------------------------------
// The recording host. Typing in a template re-analyses it with the same config and fixtures: the
// fixture's file references, its hidden-character and secret scans (a 1 MB fixture takes
// milliseconds to scan), the config scan and a library binding are reused while every host call
// they made answers the same.
// ---------------------------------------------------------------------------

/** One host call made while computing a cached value, with what it returned. */
export type HostCall =
  | { op: 'roots'; result: string }
  | { op: 'readFile' | 'size'; path: string; result: string | number | undefined }
  | { op: 'glob'; path: string; pattern: string; result: string }
  | { op: 'realPath'; path: string; result: string | undefined };

/**
 * A host that records every call, so a cached value can be checked against the host later. It
 * never says it is `unchanging`: a memo asked through it replays its calls, so they are recorded too.
 */
export function recordingHost(host: FileHost, calls: HostCall[]): FileHost {
  return {
    get roots() {
      calls.push({ op: 'roots', result: host.roots.join('\u0000') });
      return host.roots;
    },
    readFile(path: string) {
      const result = host.readFile(path);
      calls.push({ op: 'readFile', path, result });
      return result;
    },
    size(path: string) {
      const result = host.size(path);
      calls.push({ op: 'size', path, result });
      return result;
    },
    glob(dir: string, pattern: string) {
      const result = host.glob(dir, pattern);
      calls.push({ op: 'glob', path: dir, pattern, result: result.join('\u0000') });
      return result;
    },
    ...(host.realPath
      ? {
          realPath(p: string) {
            const result = host.realPath!(p);
            calls.push({ op: 'realPath', path: p, result });
            return result;
          },
        }
      : {}),
  };
}

/** Whether every recorded call gives the same answer now (a changed referenced file invalidates). */
export function sameAnswers(host: FileHost, calls: readonly HostCall[]): boolean {
  for (const c of calls) {
    switch (c.op) {
      case 'roots':
        if (host.roots.join('\u0000') !== c.result) return false;
        break;
      case 'readFile':
        if (host.readFile(c.path) !== c.result) return false;
        break;
      case 'size':
        if (host.size(c.path) !== c.result) return false;
        break;
      case 'glob':
        if (host.glob(c.path, c.pattern).join('\u0000') !== c.result) return false;
        break;
      case 'realPath':
        if (host.realPath?.(c.path) !== c.result) return false;
        break;
    }
  }
  return true;
}

/**
 * `compute(host)` memoized by `key` (a parsed or resolved document, kept by the parse caches while
 * its text is unchanged) and validated by replaying the host calls it made (or, on an unchanging
 * host, by being asked of the same host).
 */
class HostMemo<K extends object, V> {
  private readonly map = new WeakMap<K, Memo<V>>();
  get(key: K, host: FileHost, compute: (host: FileHost) => V): V {
    const hit = this.map.get(key);
    if (hit && stillValid(hit, host)) return hit.value;
    const memo = memoize(host, compute);
    this.map.set(key, memo);
    return memo.value;
  }
}

/** A value computed from a host's answers: the calls it made, and the host when that never changes. */
interface Memo<V> {
  value: V;
  calls: HostCall[];
  host?: FileHost;
}

function memoize<V>(host: FileHost, compute: (host: FileHost) => V): Memo<V> {
  const calls: HostCall[] = [];
  const value = compute(recordingHost(host, calls));
  return { value, calls, ...(host.unchanging ? { host } : {}) };
}

/** Whether a memo still holds: made from this unchanging host, or every call it made answers the same. */
function stillValid(memo: Memo<unknown>, host: FileHost): boolean {
  return (memo.host !== undefined && memo.host === host) || sameAnswers(host, memo.calls);
}

/**
 * `compute(host)` memoized by a string key (a folder, say), in a bounded cache, and validated like
 * `HostMemo` by replaying the host calls it made: what the value was made of is read again, so
 * only the cost of computing it is saved.
 */
export class KeyedHostMemo<V> {
  private readonly cache: BoundedCache<string, Memo<V>>;
  /** The recorded answers hold the texts read: the cache is bounded by their characters too. */
  constructor(entries: number, chars: number) {
    this.cache = new BoundedCache(entries, chars);
  }
  get(key: string, host: FileHost, compute: (host: FileHost) => V): V {
    const hit = this.cache.get(key);
    if (hit && stillValid(hit, host)) return hit.value;
    const memo = memoize(host, compute);
    let chars = 0;
    for (const c of memo.calls) if (typeof c.result === 'string') chars += c.result.length;
    this.cache.set(key, memo, chars);
    return memo.value;
  }
}

const resolvedFixtures = new HostMemo<FixtureDoc, { doc: FixtureDoc; dependencies: string[] }>();
const fixtureScans = new HostMemo<FixtureDoc, Finding[]>();
const configScans = new WeakMap<ConfigDoc, Finding[]>();

/** The fixture with its `{ file: ... }` values read; the same object while nothing it read changed. */
export function resolveFixture(raw: FixtureDoc, host: FileHost): { doc: FixtureDoc; dependencies: string[] } {
  return resolvedFixtures.get(raw, host, (h) => resolveFixtureFiles(raw, h));
}

/** Hidden characters in a (file) config's text; a config document is kept per text by the parse cache. */
export function scanConfig(doc: ConfigDoc): Finding[] {
  let f = configScans.get(doc);
  if (!f) {
    f = scanHiddenCharacters(doc.path, doc.text);
    configScans.set(doc, f);
  }
  return f;
}

/** Hidden characters and secrets in fixture text (inline values are in the fixture, file values in their file). */
export function scanFixture(host: FileHost, fixture: FixtureDoc): Finding[] {
  return fixtureScans.get(fixture, host, (h) => scanFixtureNow(h, fixture));
}

function scanFixtureNow(host: FileHost, fixture: FixtureDoc): Finding[] {
  const out: Finding[] = [...scanHiddenCharacters(fixture.path, fixture.text), ...scanSecrets(fixture.path, fixture.text)];
  const seen = new Set<string>();
  const scanFile = (file: string | undefined) => {
    if (!file || seen.has(file)) return;
    seen.add(file);
    const text = host.readFile(file);
    if (text !== undefined) append(out, scanHiddenCharacters(file, text), scanSecrets(file, text));
  };
  for (const value of Object.values(fixture.slots)) {
    if (value.type === 'text') scanFile(value.file);
    else if (value.type === 'items') for (const item of value.items) scanFile(item.file);
  }
  return out;
}
