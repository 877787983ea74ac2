/**
 * The library's one error type. Problems with the files (a template that does not exist, a config
 * that cannot be used) and with the call (a fixture that does not feed the template, an unknown
 * model or tokenizer) throw it with a stable `code`; values that no fixture could hold throw the
 * core's `FixtureValueError` with the path of the value. Problems *in* a template (rules, budget,
 * overflows) are never thrown: they are findings and `ok: false` results.
 */
import type { Finding } from '../core/types';

export type ContextLensErrorCode =
  | 'not-found'
  | 'not-a-template'
  | 'outside-workspace'
  | 'config-invalid'
  | 'fixture-not-found'
  | 'unknown-model'
  | 'unknown-tokenizer'
  | 'invalid-option';

export class ContextLensError extends Error {
  override readonly name = 'ContextLensError';
  constructor(
    readonly code: ContextLensErrorCode,
    message: string,
    /** Findings that explain the error, when there are any (an invalid config's). */
    readonly findings: Finding[] = [],
  ) {
    super(message);
  }
}
