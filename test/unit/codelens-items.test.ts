import { describe, expect, it } from 'vitest';
import { itemTitle, itemTooltip } from '../../src/server/codeLens';
import type { ItemVerdict } from '../../src/server/codeLens';
import { reasonText } from '../../src/core/reasonText';

describe('fixture item lenses', () => {
  it('say an omitted item\'s reason as its code in the title and in words in the tooltip', () => {
    const v = { slot: 'evidence', id: 'ev_2', tokens: 40, omitted: { slot: 'evidence', id: 'ev_2', tokens: 40, reason: 'duplicate-of:ev_1' } } as unknown as ItemVerdict;
    expect(itemTitle(v, true)).toBe('ev_2 · omitted: duplicate-of:ev_1 · 40 tok');
    expect(itemTooltip(v)).toBe(reasonText('duplicate-of:ev_1'));
    expect(itemTooltip(v)).toContain('ev_1');
  });

  it('give a kept item its kept reasons in words, and no tooltip without reasons', () => {
    const kept = { slot: 'evidence', id: 'ev_1', tokens: 40, position: 0, placement: 'start', reasons: ['high_relevance', 'exact_version'] };
    const v = { slot: 'evidence', id: 'ev_1', tokens: 40, kept } as unknown as ItemVerdict;
    expect(itemTooltip(v)).toBe(`${reasonText('high_relevance')} ${reasonText('exact_version')}`);
    expect(itemTooltip({ ...v, kept: { ...kept, reasons: [] } } as unknown as ItemVerdict)).toBeUndefined();
  });
});
