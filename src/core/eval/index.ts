/**
 * Evaluation of a template's context strategy: eval files (`*.eval.yaml`), their metrics and
 * thresholds, ablations, position variants and diffs between two assemblies. The CLI commands
 * `ctxlens eval`, `ctxlens variants` and `ctxlens diff` are thin adapters over this module.
 */
export * from './schema';
export * from './parse';
export * from './metrics';
export * from './ablate';
export * from './subject';
export * from './run';
export * from './report';
export * from './variants';
export * from './diff';
