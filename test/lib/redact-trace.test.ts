/**
 * The library's trace is redacted without building its lazy entries: `redactTrace` gives the
 * JSON of `redactDeep` (secrets redacted, same keys in the same order), and an entry the core
 * builds when read (retained, omitted, citation map, conflicts) is built, and redacted, only when
 * the caller reads it.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/project/analyze';
import { DiskFileHost } from '../../src/node/fileHost';
import { redactDeep, redactTrace } from '../../src/lib/values';

const REPO = path.resolve(__dirname, '../..');
const secret = ['sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z', 'A7b0C3d9f2'].join('');

describe('redactTrace', () => {
  it('redacts a lazy entry when it is read, and only then builds it', () => {
    let built = 0;
    const trace = { version: 1, note: `key ${secret}` } as Record<string, unknown>;
    Object.defineProperty(trace, 'retained', {
      enumerable: true,
      configurable: true,
      get: () => {
        built++;
        return [{ id: 'a', text: `leaked ${secret}` }];
      },
    });
    const out = redactTrace(trace);
    expect(built).toBe(0);
    expect(Object.keys(out)).toEqual(['version', 'note', 'retained']);
    expect(String(out.note)).not.toContain(secret);
    const json = JSON.stringify(out);
    expect(built).toBe(1);
    expect(json).not.toContain(secret);
    expect(json).toBe(JSON.stringify(redactDeep({ version: 1, note: `key ${secret}`, retained: [{ id: 'a', text: `leaked ${secret}` }] })));
    // Read once: now a plain data property of the copy.
    expect(Object.getOwnPropertyDescriptor(out, 'retained')?.get).toBeUndefined();
    void out.retained;
    expect(built).toBe(1);
  });

  it('gives the JSON of redactDeep on real traces, leaving their entries unbuilt until read', () => {
    const host = new DiskFileHost(() => [REPO]);
    let lazy = 0;
    for (const t of ['examples/sdk-qa/sdk-qa.prompt', 'examples/refund-support/refund.prompty', 'examples/zero-config/support-chat.prompty']) {
      const a = analyzeTemplate(host, path.join(REPO, t).split(path.sep).join('/'));
      const trace = a?.assembly?.trace as unknown as Record<string, unknown> | undefined;
      expect(trace, t).toBeDefined();
      const lazyKeys = Object.entries(Object.getOwnPropertyDescriptors(trace!)).filter(([, d]) => d.get).map(([k]) => k);
      lazy += lazyKeys.length;
      const copy = redactTrace(trace!);
      for (const k of lazyKeys) expect(Object.getOwnPropertyDescriptor(trace!, k)?.get, `${t} ${k}`).toBeDefined();
      expect(JSON.stringify(copy)).toBe(JSON.stringify(redactDeep(trace!)));
    }
    expect(lazy).toBeGreaterThan(0);
  });
});
