import { describe, expect, it } from 'vitest';
import { ContextConfigSchema } from '../../src/core/config/schema';

describe('context config schema', () => {
  it('applies defaults to a slot', () => {
    const cfg = ContextConfigSchema.parse({ window: 8000, slots: { evidence: { kind: 'evidence' } } });
    expect(cfg.slots.evidence).toMatchObject({ pack: 'stop', order: 'rank', required: false, priority: 0 });
  });
  it('rejects an unknown pack policy', () => {
    expect(ContextConfigSchema.safeParse({ slots: { e: { pack: 'greedy' } } }).success).toBe(false);
  });
});
