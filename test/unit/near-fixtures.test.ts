/**
 * Fixtures that name their template with `template:` bind without a glob when they lie beside it
 * (or in its fixtures/ folder). The folder's index of them is built once and reused while the
 * files it read are unchanged; on a host that says it is unchanging, for that host's life.
 */
import { describe, expect, it } from 'vitest';
import { fixturesFor } from '../../src/core/project';
import type { FileHost } from '../../src/core/host';
import { MemoryHost } from '../fuzz/support';

const fixture = (template?: string) => `${template ? `template: ${template}\n` : ''}slots:\n  question: Does it retry?\n`;

/** A memory host that counts reads. */
function counted(files: Record<string, string>, unchanging = false): { host: FileHost & { files: Record<string, string> }; reads: () => number } {
  const inner = new MemoryHost(['/ws'], files);
  let n = 0;
  const host = {
    roots: inner.roots,
    files: inner.files,
    readFile: (p: string) => (n++, inner.readFile(p)),
    size: (p: string) => inner.size(p),
    glob: (d: string, pat: string) => inner.glob(d, pat),
    ...(unchanging ? { unchanging: true } : {}),
  };
  return { host, reads: () => n };
}

describe('fixtures beside their templates', () => {
  it('binds each to the template it names, and sees a fixture gain or lose its template: key', () => {
    const { host } = counted({
      '/ws/a.prompt': 'A {{question}}',
      '/ws/b.prompt': 'B {{question}}',
      '/ws/fixtures/x.fixture.yaml': fixture('../a.prompt'),
      '/ws/fixtures/y.fixture.yaml': fixture('../b.prompt'),
      '/ws/z.fixture.yaml': fixture('a.prompt'),
      '/ws/fixtures/w.fixture.yaml': fixture(),
    });
    expect(fixturesFor(host, '/ws/a.prompt', undefined, undefined)).toEqual(['/ws/fixtures/x.fixture.yaml', '/ws/z.fixture.yaml']);
    expect(fixturesFor(host, '/ws/b.prompt', undefined, undefined)).toEqual(['/ws/fixtures/y.fixture.yaml']);
    host.files['/ws/fixtures/w.fixture.yaml'] = fixture('../b.prompt');
    host.files['/ws/z.fixture.yaml'] = fixture();
    expect(fixturesFor(host, '/ws/a.prompt', undefined, undefined)).toEqual(['/ws/fixtures/x.fixture.yaml']);
    expect(fixturesFor(host, '/ws/b.prompt', undefined, undefined)).toEqual(['/ws/fixtures/w.fixture.yaml', '/ws/fixtures/y.fixture.yaml']);
  });

  it('reads the folder once for all its templates on an unchanging host, and again on another host', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) {
      files[`/ws/p${i}.prompt`] = `P${i} {{question}}`;
      files[`/ws/fixtures/p${i}.fixture.yaml`] = fixture(`../p${i}.prompt`);
    }
    const one = counted({ ...files }, true);
    for (let i = 0; i < 20; i++) expect(fixturesFor(one.host, `/ws/p${i}.prompt`, undefined, undefined)).toEqual([`/ws/fixtures/p${i}.fixture.yaml`]);
    // One read per fixture in all, not one per fixture and template.
    expect(one.reads()).toBe(20);
    // A host that may change is asked again (its answers validate the index).
    const two = counted({ ...files });
    for (let i = 0; i < 20; i++) expect(fixturesFor(two.host, `/ws/p${i}.prompt`, undefined, undefined)).toEqual([`/ws/fixtures/p${i}.fixture.yaml`]);
    expect(two.reads()).toBeGreaterThanOrEqual(20 * 20);
  });
});
