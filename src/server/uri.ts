/**
 * Conversion between LSP document uris and the absolute `/`-separated paths the core uses.
 * Open documents keep the uri string the client sent (VS Code encodes some characters its own
 * way), so diagnostics go back under the exact uri the editor knows.
 */
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Absolute posix path of a `file:` uri, or undefined for other schemes (untitled, vscode-vfs...). */
export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return toPosix(fileURLToPath(uri));
  } catch {
    return undefined;
  }
}

export class UriMap {
  /** path -> uri as the client spelled it, for documents the client opened. */
  private readonly known = new Map<string, string>();

  remember(uri: string, p: string): void {
    this.known.set(p, uri);
  }

  forget(p: string): void {
    this.known.delete(p);
  }

  uriOf(p: string): string {
    return this.known.get(p) ?? pathToFileURL(p).href;
  }
}
