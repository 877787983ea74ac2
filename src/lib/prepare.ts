/**
 * Everything an assembly of one template needs except its values, bound once per version of the
 * files involved: the parsed template, its context config (or the zero-config defaults), the model,
 * the tokenizer, partials and front matter defaults. It is the binding `analyzeTemplate`
 * (src/core/analyze.ts) does before it picks a fixture, done without listing or reading fixtures,
 * so a request with live values costs one assembly and a re-read of the template, config and
 * partials (parity.test.ts holds the two bindings to the same bytes).
 *
 * A prepared binding is reused while every file it read reads the same: each use replays the
 * reads (the template, the config, the partials), so an edit on disk is seen on the next request.
 */
import type { FileHost } from '../core/host';
import type { AssembleInput } from '../core/assembly';
import type { ContextConfig, SeveritySetting } from '../core/config/schema';
import type { AssemblyResult, Finding, ModelInfo, TemplateDoc } from '../core/types';
import type { HostCall } from '../core/project/files';
import type { TemplateBinding } from '../core/project';
import { assembleBound, bindTemplate, classifyFile, finish, readTemplate, toAssembleInput } from '../core/project';
import { recordingHost, sameAnswers } from '../core/project/files';
import { BoundedCache } from '../core/cache';
import { ContextLensError } from './errors';

export interface PrepareOptions {
  model?: string;
  defaultModel?: string;
  severities?: Record<string, SeveritySetting>;
}

export interface Prepared {
  path: string;
  /** The one setup every assembly of this template starts from (src/core/project/bind.ts). */
  binding: TemplateBinding;
  template: TemplateDoc;
  /** The assembly input without fixture and reference time. */
  base: Omit<AssembleInput, 'fixture' | 'now'>;
  /** The config the request is assembled with (the file's, or the zero-config defaults). */
  config: ContextConfig;
  /** True when no context config applies. */
  zeroConfig: boolean;
  model?: ModelInfo;
  modelName?: string;
  /** Findings of the template, its config, budget and partials without any values. */
  findings: Finding[];
  /** Declared version: the config's `version`, else the front matter's `version`. */
  declaredVersion?: string;
  /** The config file whose prices the request's cost is computed from (analyzeTemplate's `withCost`). */
  costConfigPath?: string;
}

/** Prepared bindings by template path and options, validated by replaying their reads. */
export class PreparedCache {
  private readonly cache: BoundedCache<string, { calls: HostCall[]; value: Prepared; checked: number }>;
  /**
   * @param freshMs A binding checked against the disk this recently is used without checking again
   *   (0, the library's default: every call re-reads; the service allows a short window, so an edit
   *   is seen within it).
   */
  constructor(
    private readonly host: FileHost,
    limit = 256,
    private readonly freshMs = 0,
  ) {
    this.cache = new BoundedCache(limit);
  }

  get(path: string, options: PrepareOptions): Prepared {
    const key = JSON.stringify([path, options.model ?? null, options.defaultModel ?? null, options.severities ?? null]);
    const hit = this.cache.get(key);
    const now = this.freshMs > 0 ? Date.now() : 0;
    if (hit && ((this.freshMs > 0 && now - hit.checked < this.freshMs) || sameAnswers(this.host, hit.calls))) {
      if (this.freshMs > 0 && now - hit.checked >= this.freshMs) hit.checked = now;
      return hit.value;
    }
    const calls: HostCall[] = [];
    const value = prepare(recordingHost(this.host, calls), path, options);
    this.cache.set(key, { calls, value, checked: now });
    return value;
  }
}

/**
 * Binds a template for the library: the project layer's binding (src/core/project/bind.ts), with
 * the library's errors for a path that is not a template or a config that cannot be used.
 */
export function prepare(host: FileHost, path: string, options: PrepareOptions): Prepared {
  if (classifyFile(path) !== 'template') throw new ContextLensError('not-a-template', `'${path}' is not a template (.prompt or .prompty)`);
  const template = readTemplate(host, path);
  if (template === undefined) throw new ContextLensError('not-found', `Template '${path}' does not exist`);
  const binding = bindTemplate(host, template, options);
  const findings = finish([...binding.findings, ...binding.partials.findings], binding.zeroConfig ? undefined : binding.effective, options.severities);
  if (!binding.usable) {
    throw new ContextLensError('config-invalid', `The context config of '${path}' cannot be used: ${findings.filter((f) => f.severity === 'error').map((f) => f.message).join(' ') || 'it is not a mapping'}`, findings);
  }
  return {
    path,
    binding,
    template,
    base: toAssembleInput(binding, undefined),
    config: binding.effective,
    zeroConfig: !!binding.zeroConfig,
    model: binding.model.info,
    modelName: binding.model.name,
    findings,
    ...(binding.declaredVersion !== undefined ? { declaredVersion: binding.declaredVersion } : {}),
    ...(binding.costConfigPath !== undefined ? { costConfigPath: binding.costConfigPath } : {}),
  };
}

/** One assembly of a prepared template: the call's config (filters, `now`, input cap) over the file's, with the request's cost. */
export function assemblePrepared(prep: Prepared, fixture: AssembleInput['fixture'], config: ContextConfig, now?: string): AssemblyResult {
  return assembleBound(prep.binding, fixture, config, { sameDocument: true, ...(now !== undefined ? { now } : {}) });
}
