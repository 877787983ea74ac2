/**
 * The context store's parts without a server: store URLs (a password only where it is not on the
 * command line, no echo of the URL), the entries read back from a shared store (anything the
 * service did not write is refused, never trusted), the scope digest, and the per-instance store's
 * bounds.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, parseStoreUrl, readEntry, scopeDigest } from '../../src/service/store';

describe('parseStoreUrl', () => {
  it('reads host, port, database, user and TLS', () => {
    expect(parseStoreUrl('redis://cache.internal:6380/3', false)).toEqual({ ok: true, target: { tls: false, host: 'cache.internal', port: 6380, database: 3 } });
    expect(parseStoreUrl('rediss://svc@[::1]', false)).toEqual({ ok: true, target: { tls: true, host: '::1', port: 6379, database: 0, username: 'svc' } });
    expect(parseStoreUrl('redis://u:p%40ss@h:1/0', true)).toMatchObject({ ok: true, target: { username: 'u', password: 'p@ss' } });
  });

  it('refuses a password from the command line, other schemes, bad databases, queries, without repeating the URL', () => {
    const cases = ['redis://u:hunter2secret@h:1/0', 'http://h:1', 'redis://h:1/db', 'redis://h:1/0?password=hunter2secret', 'not a url hunter2secret', 'redis://h:1/-1'];
    for (const text of cases) {
      const r = parseStoreUrl(text, false);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.message).not.toContain('hunter2secret');
    }
  });
});

describe('readEntry', () => {
  it('reads what the store writes, with ids such as __proto__ as plain keys', () => {
    const e = readEntry(JSON.stringify({ v: 1, s: 'abc', e: { supplied: ['ev_1', '__proto__'], omitted: { __proto__: 'filtered:tenant', ev_9: 'budget' } } }));
    expect(e?.scope).toBe('abc');
    expect(e?.evidence.supplied).toEqual(['ev_1', '__proto__']);
    expect(Object.getPrototypeOf(e!.evidence.omitted)).toBeNull();
    expect(e?.evidence.omitted.ev_9).toBe('budget');
  });

  it('refuses anything else (a key of another program, a truncated value, wrong types)', () => {
    for (const text of ['', 'OK', '{"v":2,"s":"a","e":{"supplied":[],"omitted":{}}}', '{"v":1,"s":"a","e":{"supplied":[1],"omitted":{}}}', '{"v":1,"s":"a","e":{"supplied":[],"omitted":[]}}', '{"v":1,"e":{"supplied":[],"omitted":{}}}', '{"v":1,"s":"a","e":', 'null', '[]']) {
      expect(readEntry(text), text).toBeUndefined();
    }
  });
});

describe('scopeDigest', () => {
  it('differs by tenant and by permission revision, and tells a missing value from an empty one', () => {
    const all = [scopeDigest('acme', 'perm-1'), scopeDigest('globex', 'perm-1'), scopeDigest('acme', 'perm-2'), scopeDigest(undefined, undefined), scopeDigest('', undefined), scopeDigest('acme', 1), scopeDigest('acme', '1')];
    expect(new Set(all).size).toBe(all.length);
    expect(scopeDigest('acme', 'perm-1')).toBe(scopeDigest('acme', 'perm-1'));
  });
});

describe('MemoryStore', () => {
  it('keeps the most recent entries within its bounds and answers missing for the others', async () => {
    const store = new MemoryStore(2, 1024 * 1024);
    const entry = (id: string) => ({ scope: 's', evidence: { supplied: [id], omitted: Object.create(null) as Record<string, string> } });
    for (const id of ['a', 'b', 'c']) expect(await store.put(id, entry(id))).toBe(true);
    expect(await store.get('a')).toEqual({ missing: true });
    expect(await store.get('c')).toMatchObject({ found: { evidence: { supplied: ['c'] } } });
    expect(store.health()).toEqual({ kind: 'memory', status: 'up' });
  });
});
