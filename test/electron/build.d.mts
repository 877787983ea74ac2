// Types of test/electron/build.mjs for TypeScript callers (test/e2e/electron-suite.test.ts).
export declare const REPO_ROOT: string;
export declare const SUITE_OUT: string;
export declare const SUITE_INDEX: string;
export declare const RUNNER_DIR: string;
export declare const RUNNER_VSIX: string;
export declare function buildSuite(opts?: { log?: (msg: string) => void }): Promise<number>;
export declare function packageRunner(opts?: { log?: (msg: string) => void }): string;
