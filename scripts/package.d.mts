// Types of scripts/package.mjs for TypeScript callers (the end-to-end tier).
export declare function vsixPath(target?: string): string;
export declare function isVsixStale(out?: string): boolean;
export declare function packageExtension(opts?: { log?: (msg: string) => void; target?: string; tag?: string }): { path: string; bytes: number };
export declare const BAML_PLATFORMS: Record<string, string>;
export declare function ensureVsix(opts?: { log?: (msg: string) => void }): string;
