// Types of scripts/prereqs.mjs for TypeScript callers (the end-to-end tier).
export declare const CHROMIUM: string;
export declare function missingAptPackages(opts?: { chromium?: boolean; replicas?: boolean; codeServerBuild?: boolean }): string[];
export declare function ensurePrereqs(opts?: { chromium?: boolean; log?: (msg: string) => void }): Promise<string[]>;
