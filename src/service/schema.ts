/**
 * The request bodies of the service, validated with zod. Every refusal names the path of the bad
 * field (`slots.evidence[2].relevance: expected a number such as 0.8`), so a client can fix its
 * request from the message alone. Unknown fields are refused too: a misspelt `max_input_token`
 * would otherwise be ignored silently.
 */
import { z } from 'zod';
import { PROVIDERS } from '../core/export';
import type { Provider } from '../core/export';

const id = (what: string) => z.string({ error: `expected ${what} as a string` }).min(1, `${what} is empty`).max(512, `${what} is longer than 512 characters`);

export const ContextRequestSchema = z
  .object({
    template: z.string({ error: 'expected the template path (relative to the service root) as a string' }).min(1, 'template is empty').max(1024, 'template is longer than 1,024 characters'),
    query: z.string({ error: 'expected the query as a string' }).max(100_000, 'query is longer than 100,000 characters').optional(),
    conversation_id: id('conversation_id').optional(),
    user_id: id('user_id').optional(),
    tenant: id('tenant').optional(),
    product: id('product').optional(),
    version: z.union([z.string().min(1).max(64), z.number().finite()], { error: 'expected the version as a string such as "4.2"' }).transform(String).optional(),
    max_input_tokens: z.number({ error: 'expected max_input_tokens as a number' }).int('max_input_tokens must be a whole number').positive('max_input_tokens must be positive').max(100_000_000).optional(),
    permission_revision: z.union([z.string().max(512), z.number().finite()], { error: 'expected permission_revision as a string or number' }).optional(),
    model: id('model').optional(),
    provider: z.enum(PROVIDERS as [Provider, ...Provider[]], { error: `expected provider to be one of ${PROVIDERS.join(', ')}` }).optional(),
    slots: z.record(z.string().min(1).max(256), z.unknown(), { error: 'expected slots as an object of slot name -> value' }).optional(),
    redact_secrets: z.boolean({ error: 'expected redact_secrets as true or false' }).optional(),
    now: z.iso.datetime({ offset: true, error: 'expected now as an ISO 8601 date-time such as 2026-09-01T00:00:00Z' }).optional(),
  })
  .strict();

export type ContextRequest = z.infer<typeof ContextRequestSchema>;

const Citation = z
  .object({
    claim_id: id('claim_id'),
    evidence_ids: z.array(z.string({ error: 'expected an evidence id as a string' }).max(512), { error: 'expected evidence_ids as a list of ids' }).max(10_000),
  })
  .strict();

/** The part of a trace a citation check reads; the rest of a full trace is accepted and ignored. */
const TraceEvidence = z.looseObject({
  citation_map: z.record(z.string(), z.unknown(), { error: 'expected trace.citation_map as an object of evidence id -> entry' }),
  omitted: z.array(z.looseObject({ id: z.string(), reason: z.string() }), { error: 'expected trace.omitted as a list' }).optional(),
});

export const ValidateRequestSchema = z
  .object({
    answer: z.string({ error: 'expected the answer as a string' }).optional(),
    citations: z.array(Citation, { error: 'expected citations as a list of { claim_id, evidence_ids }' }).max(10_000),
    trace: TraceEvidence.optional(),
    context_id: z.string({ error: 'expected context_id as a string' }).regex(/^ctx_[0-9a-f]{32}$/, 'context_id is not one this service issues (ctx_ and 32 hex digits)').optional(),
    // With a context_id: the id is found only if it was issued for this tenant and permission revision.
    tenant: id('tenant').optional(),
    permission_revision: z.union([z.string().max(512), z.number().finite()], { error: 'expected permission_revision as a string or number' }).optional(),
  })
  .strict()
  .refine((v) => (v.trace === undefined) !== (v.context_id === undefined), { message: 'give the trace of the request, or its context_id (one of them)', path: ['trace'] })
  .refine((v) => v.context_id !== undefined || (v.tenant === undefined && v.permission_revision === undefined), { message: 'tenant and permission_revision scope a lookup by context_id; a trace needs neither', path: ['tenant'] });

export type ValidateRequest = z.infer<typeof ValidateRequestSchema>;

/** `slots.evidence[2].relevance` for a zod issue path. */
export function issuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const s = String(seg);
      out += /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(s) ? (out ? `.${s}` : s) : `[${JSON.stringify(s)}]`;
    }
  }
  return out;
}

/** The first problem of a failed parse as `path: message`, and the path on its own. */
export function firstIssue(error: z.ZodError): { path: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { path: '', message: 'invalid request' };
  let path = [...issue.path];
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys?: string[] }).keys ?? [];
    path = [...path, ...(keys.length === 1 ? [keys[0]] : [])];
    message = `unknown field${keys.length === 1 ? '' : 's'} ${keys.map((k) => `'${k}'`).join(', ')}`;
  } else if (issue.code === 'invalid_type' && /received undefined$/.test(message)) {
    message = `${issuePath(path) || 'field'} is required`;
  }
  const p = issuePath(path);
  return { path: p, message: p && !message.startsWith(p) ? `${p}: ${message}` : message };
}
