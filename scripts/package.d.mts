// Types of scripts/package.mjs for TypeScript callers (the end-to-end tier).
export declare function vsixPath(): string;
export declare function isVsixStale(out?: string): boolean;
export declare function packageExtension(opts?: { log?: (msg: string) => void }): { path: string; bytes: number };
export declare function ensureVsix(opts?: { log?: (msg: string) => void }): string;
