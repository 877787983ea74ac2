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
import type { Finding, ModelInfo, TemplateDoc } from '../core/types';
import { analyzeTemplate, bindConfig, classifyFile } from '../core/analyze';
import { ContextConfigSchema } from '../core/config/schema';
import { resolveModel } from '../core/models';
import { readPartials } from '../core/partials';
import { requestSettings, sampleFixture, templateDefaults } from '../core/sample';
import { parseTemplate } from '../core/template';
import { getTokenizer } from '../core/tokens';
import { withCost } from '../core/cost';
import type { AssemblyResult } from '../core/types';
import { ContextLensError } from './errors';

/** The tokenizer the core falls back to when neither the config nor the model names one (analyze.ts). */
const FALLBACK_TOKENIZER = 'o200k_base';

export interface PrepareOptions {
  model?: string;
  defaultModel?: string;
  severities?: Record<string, SeveritySetting>;
}

export interface Prepared {
  path: string;
  template: TemplateDoc;
  /** The assembly input without fixture and reference time. */
  base: Omit<AssembleInput, 'fixture' | 'now'>;
  /** The config the request is assembled with (the file's, or the zero-config defaults). */
  config: ContextConfig;
  /** True when no context config applies. */
  zeroConfig: boolean;
  model?: ModelInfo;
  modelName?: string;
  /** Findings of the template, its config and budget without any values (analyzeTemplate with no fixture). */
  findings: Finding[];
  /** Declared version: the config's `version`, else the front matter's `version`. */
  declaredVersion?: string;
  /** The config file whose prices the request's cost is computed from (analyzeTemplate's `withCost`). */
  costConfigPath?: string;
}

type Read = { op: 'readFile' | 'size'; path: string; result: string | number | undefined };

function recording(host: FileHost, reads: Read[]): FileHost {
  const rec: FileHost = {
    get roots() {
      return host.roots;
    },
    readFile(p: string) {
      const result = host.readFile(p);
      reads.push({ op: 'readFile', path: p, result });
      return result;
    },
    size(p: string) {
      const result = host.size(p);
      reads.push({ op: 'size', path: p, result });
      return result;
    },
    glob(dir: string, pattern: string) {
      return host.glob(dir, pattern);
    },
  };
  // A host over a file system with links resolves them, so the workspace gate sees where a link leads.
  const realPath = (host as { realPath?: (p: string) => string | undefined }).realPath;
  if (realPath) (rec as unknown as Record<string, unknown>).realPath = (p: string) => realPath.call(host, p);
  return rec;
}

function unchanged(host: FileHost, reads: readonly Read[]): boolean {
  for (const r of reads) if ((r.op === 'readFile' ? host.readFile(r.path) : host.size(r.path)) !== r.result) return false;
  return true;
}

/** Prepared bindings by template path and options, validated by replaying their reads. */
export class PreparedCache {
  private readonly map = new Map<string, { reads: Read[]; value: Prepared; checked: number }>();
  /**
   * @param freshMs A binding checked against the disk this recently is used without checking again
   *   (0, the library's default: every call re-reads; the service allows a short window, so an edit
   *   is seen within it).
   */
  constructor(
    private readonly host: FileHost,
    private readonly limit = 256,
    private readonly freshMs = 0,
  ) {}

  get(path: string, options: PrepareOptions): Prepared {
    const key = JSON.stringify([path, options.model ?? null, options.defaultModel ?? null, options.severities ?? null]);
    const hit = this.map.get(key);
    const now = this.freshMs > 0 ? Date.now() : 0;
    if (hit && ((this.freshMs > 0 && now - hit.checked < this.freshMs) || unchanged(this.host, hit.reads))) {
      if (this.freshMs > 0 && now - hit.checked >= this.freshMs) hit.checked = now;
      this.map.delete(key);
      this.map.set(key, hit);
      return hit.value;
    }
    const reads: Read[] = [];
    const value = prepare(recording(this.host, reads), this.host, path, options);
    this.map.delete(key);
    this.map.set(key, { reads, value, checked: this.freshMs > 0 ? Date.now() : 0 });
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as string);
    return value;
  }
}

/**
 * Binds a template. `rec` records the reads that decide the binding; `host` (not recorded) is used
 * for the findings, which also look at fixtures and would otherwise make every request re-read them.
 */
export function prepare(rec: FileHost, host: FileHost, path: string, options: PrepareOptions): Prepared {
  if (classifyFile(path) !== 'template') throw new ContextLensError('not-a-template', `'${path}' is not a template (.prompt or .prompty)`);
  const text = rec.readFile(path);
  if (text === undefined) throw new ContextLensError('not-found', `Template '${path}' does not exist`);
  const template = parseTemplate(path, text);
  const binding = bindConfig(rec, template);
  const cfgDoc = binding.config?.doc;
  const config = cfgDoc?.config;
  const analysis = analyzeTemplate(host, path, { model: options.model, defaultModel: options.defaultModel, severities: options.severities, autoFixture: false });
  const findings = analysis?.findings ?? [];
  if (binding.config && !config) {
    throw new ContextLensError('config-invalid', `The context config of '${path}' cannot be used: ${findings.filter((f) => f.severity === 'error').map((f) => f.message).join(' ') || 'it is not a mapping'}`, findings);
  }
  // Model: explicit option, then the template's front matter, then the config, then the default (as analyzeTemplate).
  const settings = requestSettings(template);
  const modelName = options.model ?? settings.model ?? config?.model ?? options.defaultModel;
  const model = modelName ? resolveModel(modelName, config?.models) : undefined;
  const tokenizer = getTokenizer(config?.tokenizer ?? model?.tokenizer ?? FALLBACK_TOKENIZER) ?? getTokenizer(FALLBACK_TOKENIZER)!;
  const zero = !config;
  const effective: ContextConfig =
    config ??
    ContextConfigSchema.parse({
      output: settings.maxOutput ?? model?.maxOutput ?? 0,
      ...(model || !modelName ? {} : { window: 128_000 }),
    });
  const partials = readPartials(rec, template);
  // Prompty's prepare() hoists the template's sample under the inputs of every run (as analyzeTemplate).
  const sample = sampleFixture(rec, template);
  const base: Prepared['base'] = {
    template,
    config: effective,
    ...(binding.config ? { configPath: binding.config.inline ? undefined : binding.config.path, configText: cfgDoc!.text, configDoc: cfgDoc } : {}),
    tokenizer,
    model,
    modelName,
    render: { partials: partials.sources, defaults: template.format === 'prompty' ? { ...templateDefaults(template), ...sample.values } : templateDefaults(template), escape: !zero },
    ...(zero ? { zeroConfig: true } : {}),
  };
  const fmVersion = template.frontMatter?.data.version;
  const declared = effective.version ?? (typeof fmVersion === 'string' || typeof fmVersion === 'number' ? fmVersion : undefined);
  return {
    path,
    template,
    base,
    config: effective,
    zeroConfig: zero,
    model,
    modelName,
    findings,
    ...(declared !== undefined ? { declaredVersion: String(declared) } : {}),
    ...(binding.config && !binding.config.inline ? { costConfigPath: binding.config.path } : {}),
  };
}

/** What analyzeTemplate does with an assembly before any front end sees it: the request's cost at its model's price. */
export function finishAssembly(prep: Prepared, result: AssemblyResult, config: ContextConfig = prep.config): AssemblyResult {
  return withCost(result, config, prep.costConfigPath);
}
