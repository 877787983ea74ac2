// Types of scripts/code-server.mjs for TypeScript callers (the end-to-end tier).

export declare const REPO_ROOT: string;
export declare const PIN_DIR: string;
export declare const CACHE_DIR: string;
export declare const NODE24: string;
export declare const CODE_SERVER_ENTRY: string;
export declare const QUIET_SETTINGS: Readonly<Record<string, unknown>>;

export interface Profile {
  root: string;
  userDataDir: string;
  extensionsDir: string;
  xdgDir: string;
  logFile: string;
}

export interface RunningCodeServer {
  port: number;
  baseUrl: string;
  pid: number;
  profile: Profile;
  /** URL that opens `folder` (made absolute) as the workspace. */
  folderUrl(folder: string): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends the whole process group (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>;
}

export declare function pinHash(): string;
export declare function pinnedVersions(): { codeServer: string; node: string };
export declare function isCodeServerInstalled(): boolean;
export declare function node24Env(extra?: Record<string, string>): NodeJS.ProcessEnv;
export declare function ensureCodeServer(opts?: { log?: (msg: string) => void }): Promise<boolean>;
export declare function freePort(): Promise<number>;
export declare function firstFreePort(start: number, tries?: number): Promise<number>;
export declare function createProfile(opts?: { root?: string; settings?: Record<string, unknown> }): Profile;
export declare function installExtension(profile: Profile, vsixPath: string, opts?: { timeoutMs?: number }): string;
export declare function startCodeServer(opts?: {
  profile?: Profile;
  port?: number;
  workspace?: string;
  output?: 'log' | 'inherit';
  startTimeoutMs?: number;
}): Promise<RunningCodeServer>;
export declare function removeProfile(profile: Profile | undefined): void;
