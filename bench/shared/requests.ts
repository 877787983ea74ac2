/**
 * The requests of the service and library benches: one seed 002 request with 50 evidence
 * candidates, generated from a seed (the same seed gives the same request).
 */
import { prng } from '../tokens/corpus';

const WORDS = (
  'sdk retry retries request requests rate limit response 429 post idempotency key keys backoff exponential jitter ' +
  'client server timeout header version upgrade migration guide default enabled disabled configure option policy ' +
  'the of and to in is that it for on are as with be by this at from or an which when can has will would about'
).split(' ');

function passage(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join(' ') + '.';
}

/** One seed 002 request with 50 evidence candidates (ids, sources, versions, scores, a few another product's). */
export function request50(seed: number): Record<string, unknown> {
  const r = prng(seed);
  const evidence = Array.from({ length: 50 }, (_, i) => ({
    evidence_id: `ev_${seed}_${i}`,
    source_id: `sdk-docs/${i % 17}`,
    tenant: 'acme',
    source_type: r() < 0.6 ? 'official_documentation' : 'support_article',
    ...(r() < 0.85 ? { version: r() < 0.85 ? '4.2' : '3.9' } : {}),
    authority: Math.round(r() * 100) / 100,
    relevance: Math.round(r() * 100) / 100,
    published_at: new Date(Date.UTC(2025, 0, 1) + Math.floor(r() * 600) * 86_400_000).toISOString(),
    ...(r() < 0.05 ? { product: 'js-sdk' } : { product: 'python-sdk' }),
    text: `${passage(r, 40 + Math.floor(r() * 40))} [${seed}:${i}]`,
  }));
  return {
    template: 'sdk-qa/sdk-qa.prompt',
    query: `After upgrading from SDK 3.9 to 4.2, why are POST requests sometimes sent twice? (${seed})`,
    conversation_id: `conv_${seed}`,
    user_id: 'user_18',
    tenant: 'acme',
    product: 'python-sdk',
    version: '4.2',
    max_input_tokens: 12000,
    permission_revision: 'perm-1',
    slots: {
      policy: passage(r, 150),
      history: Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', text: passage(r, 25), at: new Date(Date.UTC(2026, 7, 30, 16, i)).toISOString() })),
      evidence,
      tool_result: [{ id: `call_${seed}`, source: 'tools/config', tenant: 'acme', text: '{"retry_non_idempotent": true, "max_retries": 3}' }],
    },
  };
}
