#!/usr/bin/env node
// A client of `ctxlens serve` with nothing but Node (18+): assembles the sdk-qa example for a
// question with retrieved evidence, then checks a model answer's citations against the response.
//
//   ctxlens serve --root examples &        # prints: listening on http://127.0.0.1:8710
//   node examples/clients/node-client.mjs http://127.0.0.1:8710
//
// The service URL comes from the first argument, else CTXLENS_URL, else http://127.0.0.1:8710.
const base = (process.argv[2] ?? process.env.CTXLENS_URL ?? 'http://127.0.0.1:8710').replace(/\/$/, '');

async function call(path, body) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error?.code}: ${json.error?.message}`);
  return json;
}

const context = await call('/v1/context', {
  template: 'sdk-qa/sdk-qa.prompt',
  query: 'Does SDK 4.2 retry rate-limit responses?',
  conversation_id: 'conv_72',
  user_id: 'user_18',
  tenant: 'acme',
  product: 'python-sdk',
  version: '4.2',
  max_input_tokens: 12000,
  permission_revision: 'perm-2026-08-01',
  provider: 'anthropic',
  slots: {
    policy: 'Answer from the evidence only and cite evidence ids.',
    evidence: [
      { evidence_id: 'ev_0192', source_id: 'sdk-docs/retries', tenant: 'acme', source_type: 'official_documentation', version: '4.2', relevance: 0.94, authority: 0.95, text: 'SDK 4.2 retries 429 responses up to three times, honouring Retry-After.', source_span: [820, 1160] },
      { evidence_id: 'ev_0077', source_id: 'sdk-docs/3.9/retries', tenant: 'acme', version: '3.9', relevance: 0.7, text: 'SDK 3.9 never retries.' },
    ],
  },
});

console.log(`context ${context.context_id} (${context.template_version}): ${context.token_count} tokens`);
console.log(`evidence: ${context.evidence.join(', ')}`);
for (const e of context.selection_log) console.log(`  ${e.evidence_id} ${e.decision} ${e.reasons.join(' ')}`);

// A model answer citing one supplied id and one that was filtered out.
const check = await call('/v1/validate', {
  answer: 'Yes: 4.2 retries rate-limited requests (ev_0192); 3.9 did not (ev_0077).',
  citations: [
    { claim_id: 'claim_1', evidence_ids: ['ev_0192'] },
    { claim_id: 'claim_2', evidence_ids: ['ev_0077'] },
  ],
  context_id: context.context_id,
});
console.log(`citations valid: ${check.valid}; not supplied: ${check.unknown_ids.join(', ') || 'none'}`);
