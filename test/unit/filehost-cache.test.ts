/**
 * What makes `ctxlens check` read a tree once: globs that skip folders no match can lie in
 * (`globFolderFilter`), folder listings kept for a run (`cacheListings`) and `SnapshotFileHost`,
 * which answers each question once. Each must give exactly the answers of the plain disk host.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskFileHost, SnapshotFileHost, globFolderFilter, globMatcher, toPosix } from '../../src/node/fileHost';

const PATTERNS = [
  '**/*',
  '*.fixture.yaml',
  'fixtures/*.fixture.{yaml,yml,json}',
  'fixtures/**/*.yaml',
  '**/deep/*.prompt',
  'a/*/c/*.yaml',
  'a/**/c/**',
  '[ab]/x?.yaml',
  'fixtures/p1.fixture.yaml',
  '../up/*.yaml',
  '**/.hidden/*',
];

/** Every folder prefix of a relative path (`a/b/c.yaml` -> '', 'a', 'a/b'). */
function folders(rel: string): string[] {
  const parts = rel.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i).join('/')).concat(parts.slice(0, -1).join('/'));
}

describe('globFolderFilter', () => {
  const paths = [
    'x.fixture.yaml',
    'fixtures/p1.fixture.yaml',
    'fixtures/nested/q.yaml',
    'src/deep/t.prompt',
    'a/b/c/d.yaml',
    'a/b/e/c/f.yaml',
    'b/x1.yaml',
    'c/x1.yaml',
    'lib/.hidden/h.txt',
    'a/c/z.txt',
  ];

  it('never rules out a folder that holds a match', () => {
    for (const pattern of PATTERNS) {
      const match = globMatcher(pattern)!;
      const hold = globFolderFilter(pattern)!;
      for (const p of paths) if (match(p)) for (const dir of folders(p)) expect(hold(dir), `${pattern} ${p} ${dir}`).toBe(true);
    }
  });

  it('rules out folders a pattern cannot reach', () => {
    expect(globFolderFilter('fixtures/*.yaml')!('src')).toBe(false);
    expect(globFolderFilter('fixtures/*.yaml')!('fixtures')).toBe(true);
    // A file pattern without folders holds nothing below the start.
    expect(globFolderFilter('*.yaml')!('fixtures')).toBe(false);
    expect(globFolderFilter('a/*/c/*.yaml')!('a/b')).toBe(true);
    expect(globFolderFilter('a/*/c/*.yaml')!('a/b/d')).toBe(false);
    expect(globFolderFilter('**/x.yaml')!('any/depth/at/all')).toBe(true);
    expect(globFolderFilter('**/x.yaml')!('.git')).toBe(false);
  });

  it('is undefined where globMatcher is (empty, too long, too many alternatives)', () => {
    expect(globFolderFilter('')).toBeUndefined();
    expect(globFolderFilter('a'.repeat(600))).toBeUndefined();
    expect(globFolderFilter('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}')).toBeUndefined();
  });
});

describe('DiskFileHost with cached listings, and SnapshotFileHost', () => {
  let base: string;
  let ws: string;

  beforeAll(() => {
    base = toPosix(realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-hostcache-'))));
    ws = `${base}/ws`;
    const files = ['x.fixture.yaml', 'fixtures/p1.fixture.yaml', 'fixtures/p2.fixture.json', 'fixtures/nested/q.yaml', 'src/deep/t.prompt', 'a/b/c/d.yaml', 'a/b/e/c/f.yaml', 'b/x1.yaml', 'up/u.yaml', 'ws-sibling.txt', 'node_modules/m.yaml', '.hidden/h.yaml', '.dot.fixture.yaml'];
    for (const f of files) {
      const p = f === 'up/u.yaml' ? `${base}/up/u.yaml` : `${ws}/${f}`;
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, `text of ${f}\n`);
    }
    // A linked folder inside the workspace, and a link out of it (never followed).
    symlinkSync(`${ws}/a/b`, `${ws}/linked`);
    symlinkSync(`${base}/up`, `${ws}/out`);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('globs exactly as the plain host does, from every folder, with and without cached listings', () => {
    const plain = new DiskFileHost([ws]);
    const cached = new DiskFileHost([ws], { cacheListings: true });
    const snap = new SnapshotFileHost(new DiskFileHost([ws], { cacheListings: true }));
    for (const dir of [ws, `${ws}/fixtures`, `${ws}/a`]) {
      for (const pattern of PATTERNS) {
        const want = plain.glob(dir, pattern);
        expect(cached.glob(dir, pattern), `${dir} ${pattern}`).toEqual(want);
        expect(snap.glob(dir, pattern), `${dir} ${pattern}`).toEqual(want);
        // A second ask gives the same list (a copy: callers may sort or extend it).
        const again = snap.glob(dir, pattern);
        expect(again).toEqual(want);
        again.push('changed by the caller');
        expect(snap.glob(dir, pattern)).toEqual(want);
      }
    }
    // The linked folder is walked once, under its own path.
    expect(plain.glob(ws, '**/*.yaml')).toContain(`${ws}/a/b/c/d.yaml`);
    expect(plain.glob(ws, 'linked/**/*.yaml')).toEqual([`${ws}/linked/c/d.yaml`, `${ws}/linked/e/c/f.yaml`]);
    expect(plain.glob(ws, '**/*.yaml').some((p) => p.includes('/out/'))).toBe(false);
  });

  it('a pattern without wildcards finds what the walk finds', () => {
    const host = new DiskFileHost([ws]);
    // The same pattern with its last character as a class is walked, not looked up.
    const walked = (dir: string, literal: string): string[] => host.glob(dir, `${literal.slice(0, -1)}[${literal.slice(-1)}]`);
    const cases: Array<[string, string]> = [
      [ws, 'x.fixture.yaml'],
      [ws, 'fixtures/p1.fixture.yaml'],
      [ws, './fixtures//p2.fixture.json'],
      [ws, 'missing.yaml'],
      [ws, 'fixtures'],
      [ws, 'linked/c/d.yaml'],
      [ws, 'out/u.yaml'],
      [ws, 'a/../x.fixture.yaml'],
      [`${ws}/fixtures`, '../b/x1.yaml'],
      [`${ws}/a`, 'b/c/d.yaml'],
      [ws, 'node_modules/m.yaml'],
      [ws, '.hidden/h.yaml'],
      [ws, '.dot.fixture.yaml'],
    ];
    for (const [dir, literal] of cases) expect(host.glob(dir, literal), `${dir} ${literal}`).toEqual(walked(dir, literal));
    expect(host.glob(ws, 'fixtures/p1.fixture.yaml')).toEqual([`${ws}/fixtures/p1.fixture.yaml`]);
    expect(host.glob(ws, 'out/u.yaml')).toEqual([]);
  });

  it('answers reads, sizes and real paths as the disk does, outside the workspace included', () => {
    const plain = new DiskFileHost([ws]);
    const snap = new SnapshotFileHost(new DiskFileHost([ws]));
    for (const p of [`${ws}/x.fixture.yaml`, `${ws}/missing.yaml`, `${ws}/out/u.yaml`, `${ws}/linked/c/d.yaml`, `${ws}/fixtures`]) {
      for (let round = 0; round < 2; round++) {
        expect(snap.readFile(p), p).toBe(plain.readFile(p));
        expect(snap.size(p), p).toBe(plain.size(p));
        expect(snap.realPath(p), p).toBe(plain.realPath(p));
      }
    }
    expect(snap.readFile(`${ws}/out/u.yaml`)).toBeUndefined();
    expect(snap.roots).toEqual(plain.roots);
  });
});
