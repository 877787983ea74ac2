/**
 * BAML's own runtime (`@boundaryml/baml`, a native module) lent to the core's BAML language
 * (core/language/baml/runtime.ts), as the disk host lends Node's SHA-256. It is required the first
 * time a Node front end installs it, never by the core or the browser preview; where it is not
 * installed, every BAML render is a finding that names the package.
 *
 * Requests are built offline: `buildRequestSync` with no client registry and an environment of
 * placeholders (never the process's environment), so no credential reaches a request, and only
 * the URL, method and body are kept (the headers carry the key placeholders). A loaded project
 * is kept by its files' texts, so an edit of one function re-loads once and a render of another
 * function, or of the same one with other values, reuses it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BamlBuild, BamlRuntimeHost } from '../core/language';
import { BAML_PACKAGE, useBamlRuntime } from '../core/language';

interface NativeRequest {
  url: string;
  method: string;
  body: { text(): string };
}
interface NativeRuntime {
  createContextManager(): unknown;
  buildRequestSync(fn: string, args: Record<string, unknown>, ctx: unknown, tb: null, cb: unknown, stream: boolean, env: Record<string, string>): NativeRequest;
}
interface NativeModule {
  BamlRuntime: { fromFiles(root: string, files: Record<string, string>, env: Record<string, string>): NativeRuntime };
  ClientRegistry: new () => { setPrimary(name: string): void };
}

/** Placeholders for the environment the files read (`env.NAME`): a base URL gets a URL that resolves nowhere; a key is left to the runtime, which writes `$NAME`. */
export function placeholderEnv(files: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const text of Object.values(files)) {
    for (const m of text.matchAll(/\benv\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
      const name = m[1];
      if (/URL|ENDPOINT|HOST|BASE/i.test(name)) env[name] = `https://${name.toLowerCase().replace(/_/g, '-')}.placeholder.invalid`;
    }
  }
  return env;
}

class NodeBamlRuntime implements BamlRuntimeHost {
  private readonly loaded = new Map<string, { runtime?: NativeRuntime; error?: string; env: Record<string, string> }>();
  constructor(
    private readonly native: NativeModule,
    readonly version: string,
  ) {}

  private load(files: Readonly<Record<string, string>>): { runtime?: NativeRuntime; error?: string; env: Record<string, string> } {
    const keys = Object.keys(files).sort();
    const key = keys.map((k) => `${k}\u0000${files[k]}`).join('\u0001');
    const hit = this.loaded.get(key);
    if (hit) {
      // Most recently used last.
      this.loaded.delete(key);
      this.loaded.set(key, hit);
      return hit;
    }
    const env = placeholderEnv(files);
    let entry: { runtime?: NativeRuntime; error?: string; env: Record<string, string> };
    try {
      const sorted: Record<string, string> = {};
      for (const k of keys) sorted[k] = files[k];
      entry = { runtime: this.native.BamlRuntime.fromFiles('baml_src', sorted, env), env };
    } catch (e) {
      entry = { error: e instanceof Error ? e.message : String(e), env };
    }
    if (this.loaded.size >= 8) this.loaded.delete(this.loaded.keys().next().value!);
    this.loaded.set(key, entry);
    return entry;
  }

  check(files: Readonly<Record<string, string>>): string | undefined {
    return this.load(files).error;
  }

  build(files: Readonly<Record<string, string>>, fn: string, args: Record<string, unknown>, options: { primary?: string } = {}): BamlBuild {
    const l = this.load(files);
    if (!l.runtime) return { ok: false, stage: 'load', message: l.error ?? 'the project does not load' };
    try {
      let registry: unknown = null;
      if (options.primary !== undefined) {
        const cr = new this.native.ClientRegistry();
        cr.setPrimary(options.primary);
        registry = cr;
      }
      const r = l.runtime.buildRequestSync(fn, args, l.runtime.createContextManager(), null, registry, false, l.env);
      return { ok: true, request: { url: r.url, method: r.method, body: r.body.text() } };
    } catch (e) {
      return { ok: false, stage: 'build', message: e instanceof Error ? e.message : String(e) };
    }
  }
}

/** Requires the runtime (once, when the core first asks for it); where it is missing, why, naming the package. */
let memo: BamlRuntimeHost | { reason: string } | undefined;
function loadBamlRuntime(): BamlRuntimeHost | { reason: string } {
  return (memo ??= requireBamlRuntime());
}

function requireBamlRuntime(): BamlRuntimeHost | { reason: string } {
  try {
    // A name, not a literal: the bundles never include the native module; it is resolved from node_modules at run time.
    const id = BAML_PACKAGE;
    let native: NativeModule;
    try {
      native = require(id) as NativeModule;
    } catch (e) {
      // A platform's .vsix carries the runtime as dist/baml/ beside the server's bundle (scripts/package.mjs).
      const bundled = join(__dirname, 'baml');
      if (!existsSync(join(bundled, 'package.json'))) throw e;
      native = require(bundled) as NativeModule;
    }
    let version = 'unknown';
    try {
      version = (require(`${id}/package.json`) as { version: string }).version;
    } catch {
      // The package's exports may not list package.json.
    }
    return new NodeBamlRuntime(native, version);
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return { reason: `BAML files are rendered by BAML's own runtime, which could not be loaded (${why}): install ${BAML_PACKAGE} (npm install ${BAML_PACKAGE}) beside Context Lens.` };
  }
}

/** Lends the runtime to the core; it is required the first time a BAML file is rendered. */
export function installBamlRuntime(): void {
  useBamlRuntime(loadBamlRuntime);
}
