/**
 * The Context Lens library: the core that powers the editor, the CLI and `ctxlens serve`, as an
 * npm API for applications that assemble requests at run time. One barrel; everything exported
 * here is public and follows semver (docs/library.md). No editor or LSP code is reachable from it.
 *
 *   const ws = openWorkspace('prompts');
 *   const r = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: { question, evidence }, provider: 'anthropic' });
 *   if (r.ok) await client.messages.create(r.request);
 */
export { openWorkspace, Workspace, count } from './workspace';
export type { WorkspaceOptions, AssembleOptions, AssembleOutput, CountOptions, CountResult, CheckResult, CheckedFinding, TemplateInfo } from './workspace';
export { ContextLensError } from './errors';
export type { ContextLensErrorCode } from './errors';
export { fixtureFromValues, FixtureValueError, formatValuePath } from '../core/fixture/values';
export type { FixtureFromValuesOptions } from '../core/fixture/values';
export {
  PROVIDERS,
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  toProviderRequest,
  toOpenAIChat,
  toOpenAIResponses,
  toAnthropicMessages,
  toGemini,
  toOpenAI,
  toAnthropic,
  toText,
  toolDefinitions,
} from '../core/export';
export type {
  Provider,
  ProviderBody,
  ProviderOptions,
  ToolDefinition,
  CacheControl,
  OpenAIChatBody,
  OpenAIMessage,
  OpenAIContentPart,
  OpenAIResponsesBody,
  ResponsesInputMessage,
  ResponsesContentPart,
  AnthropicMessagesBody,
  AnthropicBlock,
  AnthropicSource,
  AnthropicBody,
  GeminiBody,
  GeminiPart,
  GeminiFunctionDeclaration,
} from '../core/export';
export { citationMap, selectionLog, checkCitations, suppliedEvidence, candidatesOf, itemSpans, toolsOf } from './evidence';
export type { CitationEntry, SelectionEntry, ScoreBreakdown, Decision, CitedAnswer, CitationCheck, ClaimCheck, SuppliedEvidence, TraceEvidence, Candidate, SelectionOptions } from './evidence';
export { reasonText, conflictText, isKnownReason } from '../core/reasonText';
export type { Reason } from '../core/reasonText';
export { contextId, templateVersion, normaliseQuery } from './identity';
export type { RequestScope } from './identity';
export { VERSION } from './version';
export type {
  Trace,
  TraceItem,
  OmittedItem,
  OmitReason,
  KeepReason,
  FilterKey,
  TraceConflict,
  SlotTrace,
  RenderedMessage,
  MessagePart,
  Role,
  Finding,
  Severity,
  Span,
  BudgetReport,
  BudgetLine,
  FixtureDoc,
  FixtureItem,
  FixtureValue,
} from '../core/types';
export type { ContextConfig, Filters, SeveritySetting } from '../core/config/schema';
