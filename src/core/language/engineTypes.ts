/**
 * The contract of the template engines: what the runtime that owns a format (dotprompt for
 * `.prompt`, Prompty for `.prompty`) would render for the given data, as messages of text and
 * media parts, plus located findings for whatever cannot be rendered faithfully.
 *
 * Engines know nothing of slots, budgets or envelopes. The assembly (assembly/render.ts) prepares
 * the data: plain JSON-like values (strings, numbers, booleans, null, arrays, objects). A value may
 * also be an object or array whose class overrides `toString` (see `isStringable`): it prints as
 * that string, like a Python object with `__str__`, and its own enumerable properties are its
 * fields. Engines never call anything else on the values they are given.
 */
import type { Span } from '../types';

/** A part of a rendered message. */
export type EnginePart =
  /** `slot`: text the runtime writes itself, counted as a part of its own (BAML's `ctx.output_format`). */
  | { type: 'text'; text: string; slot?: string }
  /** dotprompt `{{media url=… contentType=…}}`, Prompty `![alt](url)` in a message. */
  | {
      type: 'media';
      url: string;
      contentType?: string;
      /** Prompty v2's part kind (`image` when absent). */
      kind?: 'image' | 'file' | 'audio';
      /** Prompty v2's image `detail`. */
      detail?: string;
    }
  /** dotprompt `{{section "name"}}`: a pending part the caller fills (Genkit's `purpose`). */
  | { type: 'section'; name: string };

export interface EngineMessage {
  /** The role exactly as the runtime names it (`model` in dotprompt, `function` in Prompty, …). */
  role: string;
  parts: EnginePart[];
  /** dotprompt: `history` for messages that came from `data.messages`. */
  purpose?: string;
  /** Prompty: the `role[key=value]:` arguments of the boundary line. */
  args?: Record<string, string | number | boolean>;
  /** Prompty 0.1.x: the runtime gives the content as a list of parts (an image pattern matched), even when every part is text. */
  contentList?: boolean;
  /** Prompty v2: the message's metadata (role-line attributes with strict mode off, a thread item's other keys). */
  metadata?: Record<string, unknown>;
}

export interface EngineIssue {
  /** `unsupported-feature`: the runtime would render this, but the engine cannot do it faithfully;
   *  `template-invalid`: the runtime itself would refuse the template (syntax or render error);
   *  `unknown-helper`: a helper nobody declared, which only the application's code could define;
   *  `code-registered`: a declared helper or partial of the application's code, shown as a placeholder;
   *  `value-missing`: rendered without values the template reads (the analysis of a file without data). */
  rule: 'unsupported-feature' | 'template-invalid' | 'unknown-helper' | 'code-registered' | 'value-missing';
  message: string;
  /** Offsets into the `source` string the engine was given (the template's body or whole file, per engine). */
  span: Span;
}

export interface EngineResult {
  /** The whole rendered text before it was split into messages (markers included), for debugging and tests. */
  rendered: string;
  messages: EngineMessage[];
  issues: EngineIssue[];
  /** Set when part of the request is a placeholder for what only the application's code renders: counts are an estimate. */
  estimate?: true;
  /**
   * Set when the engine's tree shows the template only prints, loops over and tests its values
   * (it never hands one to a helper, a partial or a measuring lookup): marked strings then render
   * as the plain ones do, marks aside, so the assembly needs no unmarked check render.
   */
  printsValuesOnly?: true;
  /**
   * With `printsValuesOnly`: the messages a render of the same values would give with `f` applied
   * to every string in them (`f` must map text to text, such as removing the assembly's
   * attribution marks), from this render's text, without rendering again.
   */
  splitWith?: (f: (s: string) => string) => EngineMessage[];
  /** The provider request the runtime built (BAML), its headers left out: URL, method and the body as serialised, values marked as given. */
  request?: { url: string; method: string; body: string };
}

/** A value that prints as its own `toString()` (an object or array whose class overrides it). */
export function isStringable(v: unknown): v is { toString(): string } {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) return false;
  if (Array.isArray(v)) return proto !== Array.prototype && v.toString !== Array.prototype.toString;
  return typeof (v as { toString?: unknown }).toString === 'function' && (v as object).toString !== Object.prototype.toString;
}
