/**
 * The core's only window on files. The CLI implements it over the disk, the language server over
 * the disk plus open editor buffers, tests over memory. Paths are absolute and use `/`.
 * Reads outside the workspace roots are refused by the caller's resolver (see paths.ts), never
 * attempted; a host over a file system with links also refuses, itself, to read, size or list a
 * file whose real path lies outside every root's real path, so a link cannot lead a read out.
 */
export interface FileHost {
  /** Absolute workspace root folders. A `{ file: ... }` reference must resolve inside one. */
  readonly roots: readonly string[];
  /** The file's text, or undefined when it does not exist, is not a regular file or cannot be read. */
  readFile(path: string): string | undefined;
  /** Size in bytes without reading, or undefined when missing or not a regular file. */
  size(path: string): number | undefined;
  /** Absolute paths of regular files under `dir` whose path relative to `dir` matches the glob. */
  glob(dir: string, pattern: string): string[];
  /**
   * The path with every symbolic link resolved (absolute, `/`), or undefined when it does not
   * exist. Hosts without links (memory, browsers) leave it out; the workspace gate then decides
   * lexically.
   */
  realPath?(path: string): string | undefined;
  /**
   * True when the host answers every question the same way for its whole life (the CLI's snapshot
   * of the disk for one run): a value memoized from its answers is then valid for as long as the
   * host is the same object, without asking again.
   */
  readonly unchanging?: boolean;
}
