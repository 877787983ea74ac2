/**
 * The core's only window on files. The CLI implements it over the disk, the language server over
 * the disk plus open editor buffers, tests over memory. Paths are absolute and use `/`.
 * Reads outside the workspace roots are refused by the caller's resolver (see paths.ts), never
 * attempted.
 */
export interface FileHost {
  /** Absolute workspace root folders. A `{ file: ... }` reference must resolve inside one. */
  readonly roots: readonly string[];
  /** The file's text, or undefined when it does not exist or cannot be read. */
  readFile(path: string): string | undefined;
  /** Size in bytes without reading, or undefined when missing. */
  size(path: string): number | undefined;
  /** Absolute paths of files under `dir` whose path relative to `dir` matches the glob. */
  glob(dir: string, pattern: string): string[];
}
