/**
 * `POST /v1/context`: seed 002's context-assembly contract over the library. The request names a
 * template under the service root and gives the candidates of each slot; the response is the
 * assembled context with its explanation (context id, template version, token count, evidence in
 * order, citation map, selection log of every candidate, rendered messages, and the provider body
 * when asked). Stateless: everything the answer depends on is in the request and the root's files.
 *
 * Request fields map onto the template like this:
 * - `query` fills the template's user slot: the config slot of kind `user`, else a slot named
 *   `question` or `query` that the template uses;
 * - `version` and `tenant` become `filters.version` and `filters.tenant` for this request;
 * - `max_input_tokens` caps the input limit;
 * - `product`: list items whose `product` metadata names another product are rejected
 *   (`filtered:product`) before assembly, as the core's tenant filter does for tenants; items
 *   without a product pass;
 * - `user_id`, `tenant`, `permission_revision`, `product` and the normalised query go into the
 *   context id beside the trace's cache key (identity.ts);
 * - items may be written in seed 002's evidence schema: `evidence_id` and `source_id` stand for
 *   `id` and `source`.
 */
import type { Finding, Trace } from '../core/types';
import type { Workspace } from '../lib/workspace';
import type { SelectionEntry } from '../lib/evidence';
import type { ContextRequest } from './schema';
import { citationMap, selectionLog, suppliedEvidence } from '../lib/evidence';
import type { SuppliedEvidence } from '../lib/evidence';
import { contextId, templateVersion } from '../lib/identity';
import { ContextLensError } from '../lib/errors';
import { FixtureValueError, formatValuePath } from '../core/fixture/values';
import { getTokenizer } from '../core/tokens';
import { relative } from '../core/paths';
import { checkTemplateName } from './templates';
import { scopeDigest } from './store';
import { redactSecrets } from '../core/text/secrets';
import { normaliseValues, redactDeep } from '../lib/values';
import type { SlotKinds } from '../lib/values';

export interface Reply {
  status: number;
  body: unknown;
  /** Set for a successful assembly: what `/v1/validate` needs to check answers to it later. */
  remember?: { contextId: string; evidence: SuppliedEvidence; scope: string };
}

export interface ContextDeps {
  workspace: Workspace;
  root: string;
  realRoot: string;
  onAssembled?: () => void;
  /**
   * The request body as a `.prompty` template's runtime reads the JSON (Python's floats such as
   * `1.0` and exact big integers, which a JavaScript number cannot keep); read only for such a
   * template.
   */
  runtimeBody?: () => unknown;
}

/**
 * An error answer. Its message and path are redacted: they may quote what the request sent (a
 * field name, a template name, a model name), and a secret sent by mistake must not come back.
 */
export function errorReply(status: number, code: string, message: string, extra: Record<string, unknown> = {}): Reply {
  const e: Record<string, unknown> = { code, message: redactSecrets(message) };
  for (const [k, v] of Object.entries(extra)) e[k] = typeof v === 'string' ? redactSecrets(v) : v;
  return { status, body: { error: e } };
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Slot kinds whose list values are candidates with text (tool slots may hold function definitions as data). */
const LIST_KINDS = new Set(['evidence', 'history', 'memory', 'examples']);

/** Absolute paths in a message (`/srv/app/prompts/x.yaml`), for paths outside the root. */
const ABSOLUTE_PATH = /(?<![\w.:/~-])\/(?:[^\s'"`,;:()[\]{}<>|/]+\/)+([^\s'"`,;:()[\]{}<>|/]*)/g;

/** A path or message with the server's layout taken out: root-relative inside the root, the file name alone outside it. */
export function publicText(text: string, root: string): string {
  return text.split(root + '/').join('').replace(ABSOLUTE_PATH, (_m, base: string) => base);
}

/** The slot the query fills. */
function querySlot(info: ReturnType<Workspace['describe']>): string | undefined {
  const user = info.slots.find((s) => s.kind === 'user' && s.used) ?? info.slots.find((s) => s.kind === 'user');
  if (user) return user.name;
  return info.slots.find((s) => s.used && (s.name === 'question' || s.name === 'query'))?.name;
}

interface Prefiltered {
  slot: string;
  id: string;
  text: string;
  source?: string;
}

/**
 * Seed 002's field names as the fixture's, and the product filter. Items without an id in a slot
 * the filter shortened keep the positional id they had in the request (`<slot>_<n>`), so ids do
 * not shift when an earlier item is left out.
 */
function normaliseSlots(slots: Record<string, unknown>, product: string | undefined): { values: Record<string, unknown>; removed: Prefiltered[] } {
  const values: Record<string, unknown> = {};
  const removed: Prefiltered[] = [];
  for (const [slot, value] of Object.entries(slots)) {
    if (!Array.isArray(value)) {
      values[slot] = value;
      continue;
    }
    const items = value.map((it) => {
      if (!isRecord(it) || (it.evidence_id === undefined && it.source_id === undefined)) return it;
      const o: Record<string, unknown> = { ...it };
      if (o.evidence_id !== undefined && o.id === undefined) {
        o.id = o.evidence_id;
        delete o.evidence_id;
      }
      if (o.source_id !== undefined && o.source === undefined) {
        o.source = o.source_id;
        delete o.source_id;
      }
      return o;
    });
    const other = (it: unknown) => product !== undefined && isRecord(it) && typeof it.product === 'string' && it.product !== product;
    if (!items.some(other)) {
      // Unchanged, the list is the one the request gave (so its runtime reading still applies).
      values[slot] = items.every((it, i) => it === value[i]) ? value : items;
      continue;
    }
    const kept: unknown[] = [];
    items.forEach((it, i) => {
      if (other(it)) {
        const o = it as Record<string, unknown>;
        removed.push({ slot, id: typeof o.id === 'string' || typeof o.id === 'number' ? String(o.id) : `${slot}_${i + 1}`, text: typeof o.text === 'string' ? o.text : typeof o.content === 'string' ? o.content : '', ...(typeof o.source === 'string' ? { source: o.source } : {}) });
      } else if (typeof it === 'string') kept.push({ id: `${slot}_${i + 1}`, text: it });
      else if (isRecord(it) && it.id === undefined && ('text' in it || 'content' in it)) kept.push({ ...it, id: `${slot}_${i + 1}` });
      else kept.push(it);
    });
    values[slot] = kept;
  }
  return { values, removed };
}

/** The trace with its file paths relative to the service root, so responses never show the server's layout. */
export function relativeTrace(trace: Trace, root: string): Trace {
  const rel = (p: string) => {
    const [file, hash] = p.split('#');
    const r = file.startsWith(root + '/') ? relative(root, file) : file;
    return hash === undefined ? r : `${r}#${hash}`;
  };
  const t: Trace = { ...trace, template: { ...trace.template, path: rel(trace.template.path) } };
  if (trace.config) t.config = { ...trace.config, path: rel(trace.config.path) };
  if (trace.fixture) t.fixture = { ...trace.fixture, path: rel(trace.fixture.path) };
  return t;
}

/** Most findings in one response; the rest are counted in a last summary finding. */
export const MAX_PUBLIC_FINDINGS = 200;

function publicFindings(findings: readonly Finding[], root: string): Array<{ rule: string; severity: string; message: string; path: string }> {
  const out = findings.slice(0, MAX_PUBLIC_FINDINGS).map((f) => ({ rule: f.rule, severity: f.severity, message: redactSecrets(publicText(f.message, root)), path: f.path.startsWith(root + '/') ? relative(root, f.path) : f.path.replace(/^.*\//, '') }));
  if (findings.length > MAX_PUBLIC_FINDINGS) out.push({ rule: 'findings-capped', severity: 'info', message: `${findings.length - MAX_PUBLIC_FINDINGS} more findings are not listed (only the first ${MAX_PUBLIC_FINDINGS} are).`, path: out[0]?.path ?? '' });
  return out;
}

export function contextReply(req: ContextRequest, deps: ContextDeps): Reply {
  const t = checkTemplateName(deps.root, deps.realRoot, req.template);
  if (!t.ok) return errorReply(t.status, t.status === 404 ? 'template_not_found' : 'invalid_request', t.message, { path: 'template' });
  const ws = deps.workspace;
  try {
    const info = ws.describe(t.relative, { model: req.model });
    // Own properties only, without a prototype: a slot named `__proto__` or `constructor` is a name like any other.
    const slots: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(req.slots ?? {})) slots[k] = v;
    if (req.query !== undefined) {
      const q = querySlot(info);
      if (!q) return errorReply(400, 'invalid_request', `query: template '${t.relative}' has no slot for the query (a slot of kind user, or one named question or query)`, { path: 'query' });
      if (Object.hasOwn(slots, q)) return errorReply(400, 'invalid_request', `slots.${q}: conflicts with query, which fills '${q}'; give one of them`, { path: `slots.${q}` });
      slots[q] = req.query;
    }
    // A request without a required slot would be answered with an empty section, as if it were
    // complete: it is refused (after the values themselves are checked, so a bad value is named first).
    const missing = info.slots.find((s) => s.required && s.used && !(Object.hasOwn(slots, s.name) && slots[s.name] !== null));
    // List slots hold lists of items before any filter runs: one object or one string is a one-item
    // list, so the tenant and product filters see it; history turns keep to the roles the slot allows.
    const kinds: Record<string, { kind: (typeof info.slots)[number]['kind']; trust?: 'trusted' | 'untrusted' }> = Object.create(null) as Record<string, never>;
    for (const s of info.slots) kinds[s.name] = { kind: s.kind, ...(s.trust ? { trust: s.trust } : {}) };
    const shaped = normaliseValues(slots, kinds as SlotKinds);
    for (const k of Object.keys(shaped)) Object.defineProperty(slots, k, { value: shaped[k], enumerable: true, writable: true, configurable: true });
    // Candidates of a list slot must have text: a list of objects without any would be typed as
    // data and printed as objects, never packed, counted or cited.
    for (const s of info.slots) {
      const v = slots[s.name];
      if (!LIST_KINDS.has(s.kind) || !Array.isArray(v)) continue;
      const bad = v.findIndex((it) => !(typeof it === 'string' || (isRecord(it) && ('text' in it || 'content' in it))));
      if (bad >= 0) return errorReply(400, 'invalid_request', `slots.${s.name}[${bad}]: a candidate of the ${s.kind} slot '${s.name}' is a string or an object with text (or content)`, { path: `slots.${s.name}[${bad}]` });
    }
    const { values, removed } = normaliseSlots(slots, req.product);
    const filters: Record<string, string> = {};
    if (req.tenant !== undefined) filters.tenant = req.tenant;
    if (req.version !== undefined) filters.version = req.version;
    // Slots passed on as the request gave them keep the values the runtime would read from its JSON.
    let slotsRuntime: Record<string, unknown> | undefined;
    if (/\.prompty$/i.test(t.relative) && deps.runtimeBody) {
      const typed = deps.runtimeBody();
      const given = isRecord(typed) && isRecord(typed.slots) ? typed.slots : undefined;
      const sent = req.slots;
      if (given && sent) for (const k of Object.keys(values)) if (Object.hasOwn(given, k) && Object.hasOwn(sent, k) && values[k] === sent[k]) (slotsRuntime ??= Object.create(null) as Record<string, unknown>)[k] = given[k];
    }
    const out = ws.assemble(t.relative, {
      slots: values,
      ...(slotsRuntime ? { slotsRuntime } : {}),
      name: 'request',
      files: false,
      ...(req.model !== undefined ? { model: req.model } : {}),
      ...(req.provider !== undefined ? { provider: req.provider } : {}),
      ...(Object.keys(filters).length ? { filters } : {}),
      ...(req.max_input_tokens !== undefined ? { maxInputTokens: req.max_input_tokens } : {}),
      ...(req.now !== undefined ? { now: req.now } : {}),
      ...(req.redact_secrets ? { redactSecrets: true } : {}),
    });
    if (missing) {
      const path = missing.kind === 'user' && req.query === undefined && querySlot(info) === missing.name ? 'query' : `slots.${missing.name}`;
      return errorReply(400, 'invalid_request', `${path}: the template '${t.relative}' requires the ${missing.kind} slot '${missing.name}'`, { path });
    }
    deps.onAssembled?.();
    const trace = out.trace;
    const id = contextId(trace, { query: req.query, user_id: req.user_id, tenant: req.tenant, permission_revision: req.permission_revision, product: req.product });
    const log: SelectionEntry[] = selectionLog(trace, out.fixture, { config: out.config, now: req.now });
    if (removed.length) {
      const tk = getTokenizer(trace.tokenizer);
      for (const r of removed) log.push({ evidence_id: r.id, slot: r.slot, decision: 'rejected', reasons: ['filtered:product'], tokens: tk ? tk.count(r.text) : 0, ...(r.source !== undefined ? { source_id: r.source } : {}) });
    }
    const body: Record<string, unknown> = {
      context_id: id,
      template_version: templateVersion(trace, out.declaredVersion),
      token_count: trace.input_tokens,
      input_budget: trace.input_budget,
      evidence: Object.keys(trace.citation_map),
      citation_map: citationMap(trace, out.fixture),
      selection_log: log,
      rendered_messages: out.messages,
    };
    // The explanation echoes ids, sources, titles and claims of the request: secrets in them are
    // redacted (the messages and the provider body carry the content itself, redacted only with
    // redact_secrets).
    for (const k of ['evidence', 'citation_map', 'selection_log'] as const) body[k] = redactDeep(body[k]);
    if (out.request !== undefined) body.request = out.request;
    if (out.tools.length) body.tools = out.tools;
    body.findings = publicFindings(out.findings, deps.root);
    // The library's trace is already redacted (redactTrace); making its paths relative adds no text.
    body.trace = relativeTrace(trace, deps.root);
    if (!out.ok) return { status: 422, body: { error: { code: 'does_not_fit', message: out.error ?? 'the request does not fit its input budget' }, ...body } };
    return { status: 200, body, remember: { contextId: id, evidence: suppliedEvidence(trace), scope: scopeDigest(req.tenant, req.permission_revision) } };
  } catch (e) {
    if (e instanceof FixtureValueError) {
      const path = `slots${e.path.length ? (typeof e.path[0] === 'number' ? '' : '.') + formatValuePath(e.path) : ''}`;
      return errorReply(400, 'invalid_request', `${path}: ${e.detail}`, { path });
    }
    if (e instanceof ContextLensError) {
      if (e.code === 'not-found') return errorReply(404, 'template_not_found', `template: '${t.relative}' does not exist under the service root`, { path: 'template' });
      if (e.code === 'invalid-option' || e.code === 'unknown-model' || e.code === 'unknown-tokenizer') return errorReply(400, 'invalid_request', e.message);
      return errorReply(500, 'template_unusable', `template '${t.relative}' cannot be assembled: ${e.message.split(deps.root + '/').join('')}`);
    }
    throw e;
  }
}
