/**
 * What the service answers to a request body, without HTTP: the JSON parse, the request schemas,
 * the response cache and the assembly (`POST /v1/context`, context.ts) or the citation check
 * (`POST /v1/validate`). It runs where the work is done: in the service's worker threads
 * (worker.ts, so that the thread that accepts connections only moves bytes and `/healthz` answers
 * while assemblies run), or in the serving thread itself when the service is embedded without
 * workers. The `context_id` store stays with the server (store.ts: per instance, or shared on
 * Redis): a validation by `context_id` asks for the evidence (`need`) and is resumed with what the
 * store answered (found, missing, or unavailable: 503 `store_unavailable`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { openWorkspace } from '../lib/workspace';
import { checkCitations, suppliedEvidence } from '../lib/evidence';
import type { SuppliedEvidence } from '../lib/evidence';
import { parseJsonValues } from '../core/language/prompty/engine';
import { toPosix } from '../node/fileHost';
import { contextReply, errorReply } from './context';
import type { Reply } from './context';
import { evidenceBytes, scopeDigest } from './store';
import type { Lookup } from './store';
import { checkTemplateName } from './templates';
import { Lru } from './lru';
import { ContextRequestSchema, ValidateRequestSchema, firstIssue } from './schema';

export const DEFAULT_RESPONSE_CACHE = 256;
export const DEFAULT_REVALIDATE_MS = 500;
/** Bytes of the response cache (its entries are whole response bodies, megabytes each at most). */
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

export type AnswerRoute = '/v1/context' | '/v1/validate';

/** What an answerer is made from: plain data, so a worker thread can be given it. */
export interface AnswerOptions {
  root: string;
  defaultModel?: string;
  responseCache?: number;
  revalidateMs?: number;
  responseCacheBytes?: number;
  /** Entries of the server's `context_id` cache (named in the answer when an id is not among them). */
  contextCacheSize?: number;
  /** The `context_id` store is shared (Redis), with entries kept this many seconds; else it is per instance. */
  sharedStoreTtl?: number;
}

/** A finished answer: the status, the JSON body, and what the server records of it. */
export interface Answer {
  status: number;
  /** The JSON text, or its UTF-8 bytes (as a worker hands it over, without a copy). */
  payload: string | Uint8Array;
  /** A successful assembly: its id, the evidence `/v1/validate` checks answers against, and the evidence's weight in bytes. */
  remember?: Remembered;
  /** The request was assembled (not served from the response cache). */
  assembled?: boolean;
  cacheHit?: boolean;
}

export interface Remembered {
  contextId: string;
  evidence: SuppliedEvidence;
  /** Digest of the request's tenant and permission revision (store.ts). */
  scope: string;
  bytes: number;
}

/** A validation by `context_id` waiting for what the server's store keeps under that id. */
export interface NeedsEvidence {
  need: string;
  resume(found: Lookup): Answer;
}

export interface Answerer {
  answer(route: AnswerRoute, body: Uint8Array): Answer | NeedsEvidence;
}

const remembered = (r: Reply['remember']): Remembered | undefined => (r ? { ...r, bytes: evidenceBytes(r.evidence) } : undefined);

const reply = (r: Reply, extra: Partial<Answer> = {}): Answer => {
  const remember = remembered(r.remember);
  return { status: r.status, payload: JSON.stringify(r.body), ...(remember ? { remember } : {}), ...extra };
};

function parseJson(buf: Uint8Array): { ok: true; value: Record<string, unknown> } | { ok: false; answer: Answer } {
  if (!buf.length) return { ok: false, answer: reply(errorReply(400, 'invalid_json', 'the body is empty; send a JSON object')) };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8'));
  } catch (e) {
    return { ok: false, answer: reply(errorReply(400, 'invalid_json', `the body is not valid JSON: ${(e as Error).message}`)) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, answer: reply(errorReply(400, 'invalid_request', 'the body must be a JSON object')) };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The body as Python's json reads it (a `.prompty` template's runtime), or undefined past the depth that reader takes. */
function runtimeJson(buf: Uint8Array): unknown {
  try {
    return parseJsonValues(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}

export function createAnswerer(options: AnswerOptions): Answerer {
  const root = toPosix(nodePath.resolve(options.root));
  const realRoot = fs.realpathSync(root);
  // The model files of the root (and the user's) apply, as for the CLI; a bad entry is a warning on stderr.
  const workspace = openWorkspace(root, {
    defaultModel: options.defaultModel,
    revalidateMs: options.revalidateMs ?? DEFAULT_REVALIDATE_MS,
    onWarning: (m) => process.stderr.write(`ctxlens serve: warning: ${m}\n`),
  });
  // Seed 002's "fully assembled context" cache: the same request bytes against the same template
  // files give the same response, so it is served again while the template's binding is the same
  // object (a changed template, config or partial makes a new one). Only successful answers are kept.
  const responses = new Lru<string, { binding: object; body: string; remember?: Remembered }>(
    options.responseCache ?? DEFAULT_RESPONSE_CACHE,
    options.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES,
    (e) => 2 * e.body.length + (e.remember ? e.remember.bytes : 0),
  );

  const context = (raw: Uint8Array, body: unknown): Answer => {
    const parsed = ContextRequestSchema.safeParse(body);
    if (!parsed.success) {
      const i = firstIssue(parsed.error);
      return reply(errorReply(400, 'invalid_request', i.message, i.path ? { path: i.path } : {}));
    }
    let key: string | undefined;
    let binding: object | undefined;
    if (responses.capacity > 0 && checkTemplateName(root, realRoot, parsed.data.template).ok) {
      try {
        binding = workspace.bindingOf(parsed.data.template, parsed.data.model);
        key = createHash('sha256').update(raw).digest('hex');
        const hit = responses.get(key);
        if (hit && hit.binding === binding) return { status: 200, payload: hit.body, cacheHit: true, ...(hit.remember ? { remember: hit.remember } : {}) };
      } catch {
        // The template cannot be bound (missing, refused, unusable): contextReply says why.
        key = undefined;
      }
    }
    let assembled = false;
    const r = contextReply(parsed.data, { workspace, root, realRoot, onAssembled: () => (assembled = true), runtimeBody: () => runtimeJson(raw) });
    const out = reply(r, assembled ? { assembled } : {});
    if (key !== undefined && binding !== undefined && r.status === 200) responses.set(key, { binding, body: out.payload as string, ...(out.remember ? { remember: out.remember } : {}) });
    return out;
  };

  const validate = (body: unknown): Answer | NeedsEvidence => {
    const parsed = ValidateRequestSchema.safeParse(body);
    if (!parsed.success) {
      const i = firstIssue(parsed.error);
      return reply(errorReply(400, 'invalid_request', i.message, i.path ? { path: i.path } : {}));
    }
    const v = parsed.data;
    const check = (evidence: SuppliedEvidence): Answer => reply({ status: 200, body: checkCitations({ ...(v.answer !== undefined ? { answer: v.answer } : {}), citations: v.citations }, evidence) });
    if (v.context_id === undefined) return check(suppliedEvidence(v.trace!));
    const id = v.context_id;
    // A validation that names the tenant or permission revision only finds ids issued for them.
    const scoped = v.tenant !== undefined || v.permission_revision !== undefined ? scopeDigest(v.tenant, v.permission_revision) : undefined;
    const notFound = () =>
      reply(
        errorReply(
          404,
          'context_not_found',
          options.sharedStoreTtl !== undefined
            ? `context_id ${id} is not in the shared context store (entries are kept ${options.sharedStoreTtl} s, and only for the tenant and permission revision they were issued for); send the response's trace instead`
            : `context_id ${id} is not among this instance's ${options.contextCacheSize ?? 0} most recent responses (the cache is per instance and not kept across restarts); send the response's trace instead`,
          { path: 'context_id' },
        ),
      );
    return {
      need: id,
      resume: (found) => {
        if ('unavailable' in found) return reply(errorReply(503, 'store_unavailable', `the context store is unavailable, so context_id ${id} cannot be looked up now; retry shortly, or send the response's trace instead`, { path: 'context_id' }));
        if ('missing' in found || (scoped !== undefined && found.found.scope !== scoped)) return notFound();
        return check(found.found.evidence);
      },
    };
  };

  return {
    answer(route, body) {
      const json = parseJson(body);
      if (!json.ok) return json.answer;
      return route === '/v1/context' ? context(body, json.value) : validate(json.value);
    },
  };
}

export { evidenceBytes } from './store';
