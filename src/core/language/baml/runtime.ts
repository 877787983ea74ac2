/**
 * BAML's runtime as the core sees it: an interface the Node host lends (src/node/bamlRuntime.ts
 * installs `@boundaryml/baml` through `useBamlRuntime`, as `useSha256` lends Node's hash). The
 * core never loads native code; without a runtime (the browser preview, or the package not
 * installed) every BAML render is a located finding naming the package.
 */

/** The package and version of the runtime Context Lens is tested with. */
export const BAML_PACKAGE = '@boundaryml/baml';
export const BAML_TESTED_VERSION = '0.226.2';

/** The provider request the runtime builds, without its headers (they hold the credentials). */
export interface BamlRequest {
  url: string;
  method: string;
  /** The JSON body exactly as the runtime serialised it. */
  body: string;
}

export type BamlBuild = { ok: true; request: BamlRequest } | { ok: false; stage: 'load' | 'build'; message: string };

export interface BamlRuntimeHost {
  /** The runtime's version (`0.226.2`). */
  readonly version: string;
  /**
   * Loads the project (its `.baml` files by path, each under `baml_src/`) and builds the request
   * of `fn` for `args`, offline, with placeholder environment values. `primary` pins the client
   * (a round-robin client's first, as BAML's client registry `setPrimary` does). Never throws.
   */
  build(files: Readonly<Record<string, string>>, fn: string, args: Record<string, unknown>, options?: { primary?: string }): BamlBuild;
  /** Whether the project loads: undefined, or the runtime's diagnostic. Never throws. */
  check(files: Readonly<Record<string, string>>): string | undefined;
}

let loader: (() => BamlRuntimeHost | { reason: string }) | undefined;
let loaded: BamlRuntimeHost | { reason: string } | undefined;
const NONE = `BAML files are rendered by BAML's own runtime, which is not available here: install ${BAML_PACKAGE} (npm install ${BAML_PACKAGE}@${BAML_TESTED_VERSION}).`;

/**
 * Lends the runtime: a loader the core calls the first time a BAML file is rendered (the native
 * module loads only then), or undefined to take it back.
 */
export function useBamlRuntime(load: (() => BamlRuntimeHost | { reason: string }) | undefined): void {
  if (load === loader) return;
  loader = load;
  loaded = undefined;
}

/** The lent runtime, or why there is none. */
export function bamlRuntime(): { runtime: BamlRuntimeHost } | { reason: string } {
  if (!loader) return { reason: NONE };
  loaded ??= loader();
  return 'reason' in loaded ? loaded : { runtime: loaded };
}
