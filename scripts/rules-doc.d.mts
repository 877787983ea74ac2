// Types of scripts/rules-doc.mjs for TypeScript callers (test/unit/rules-doc.test.ts).
export declare const ROOT: string;
export declare const REGISTRY: string;
export declare const SOURCE: string;
export declare const PAGE: string;
export declare function parseRuleDocs(source: string): { intro: string; bodies: Map<string, string> };
export declare function renderRulesDoc(rules: ReadonlyArray<{ id: string; severity: string; category: string; description: string; heuristic?: boolean }>, source: string): string;
