/**
 * The project layer: how templates, configs and fixtures bind together (bind.ts: the one setup of
 * every assembly), the per-file analysis every front end reads (analyze.ts), reverse lookups
 * (lookup.ts), the whole-tree check (check.ts), and the parse caches and recording host (files.ts).
 */
export type { FileKind } from './files';
export { DEFAULT_MAX_FILE_SIZE, classifyFile, forgetParsed, readTemplate } from './files';
export type { AssembleExtra, BindOptions, ConfigBinding, TemplateBinding } from './bind';
export { FALLBACK_TOKENIZER, assembleBound, bindConfig, bindModel, bindTemplate, toAssembleInput } from './bind';
export type { Analysis, AnalyzeOptions, ConfigAnalysis, FixtureAnalysis, SlotSummary, TemplateAnalysis } from './analyze';
export { analyzeConfig, analyzeFile, analyzeFixture, analyzeTemplate, dedupe, finish } from './analyze';
export { fixturesFor, pickFixture, templateForFixture, templatesUsing } from './lookup';
export type { TemplateCheck } from './check';
export { checkFiles, checkOrder, checkTemplate, checkUncovered, groupFindings } from './check';
