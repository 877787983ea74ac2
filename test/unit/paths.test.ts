/**
 * Pure POSIX path helpers and the workspace gate for file references: references resolve
 * relative to the referring file and must stay inside a workspace root, decided lexically.
 */
import { describe, expect, it } from 'vitest';
import { basename, dirname, isAbsolute, isInside, join, normalize, relative, resolveInWorkspace } from '../../src/core/paths';

describe('path helpers', () => {
  it.each([
    ['/a/b/../c/./d/', '/a/c/d'],
    ['/../x', '/x'],
    ['a/../../b', '../b'],
    ['./a//b', 'a/b'],
    ['', '.'],
    ['/', '/'],
    ['c:/ws/x/../y', 'c:/ws/y'],
  ])('normalize(%j) = %j', (input, expected) => expect(normalize(input)).toBe(expected));

  it('join, dirname, basename, isAbsolute', () => {
    expect(join('/ws/fixtures', '../policy/a.md')).toBe('/ws/policy/a.md');
    expect(join('/ws', '/abs', 'x')).toBe('/abs/x');
    expect(join('a', 'b')).toBe('a/b');
    expect(dirname('/ws/fixtures/r.fixture.yaml')).toBe('/ws/fixtures');
    expect(dirname('/file')).toBe('/');
    expect(dirname('file')).toBe('.');
    expect(dirname('c:/ws/a.md')).toBe('c:/ws');
    expect(basename('/ws/a/b.md')).toBe('b.md');
    expect(isAbsolute('/x')).toBe(true);
    expect(isAbsolute('C:/x')).toBe(true);
    expect(isAbsolute('x/y')).toBe(false);
  });

  it.each([
    ['/ws', '/ws/a/b.md', 'a/b.md'],
    ['/ws/a', '/ws/b/c.md', '../b/c.md'],
    ['/ws/a/b', '/ws', '../..'],
    ['/ws', '/ws', ''],
  ])('relative(%j, %j) = %j', (from, to, expected) => expect(relative(from, to)).toBe(expected));

  it('isInside compares whole segments', () => {
    expect(isInside('/work/ws', '/work/ws/a.md')).toBe(true);
    expect(isInside('/work/ws', '/work/ws')).toBe(true);
    expect(isInside('/work/ws', '/work/ws2/a.md')).toBe(false);
    expect(isInside('/work/ws/', '/work/ws/x/../y')).toBe(true);
    expect(isInside('/work/ws', '/work/ws/../other')).toBe(false);
    expect(isInside('/', '/anything')).toBe(true);
  });
});

describe('resolveInWorkspace', () => {
  const host = { roots: ['/work/ws', '/work/shared'] };
  const from = '/work/ws/fixtures/retry.fixture.yaml';

  it.each([
    ['../policy/a.md', '/work/ws/policy/a.md'],
    ['docs/./b.md', '/work/ws/fixtures/docs/b.md'],
    ['..\\policy\\win.md', '/work/ws/policy/win.md'],
    ['../../shared/common.md', '/work/shared/common.md'],
    ['  ../policy/trimmed.md  ', '/work/ws/policy/trimmed.md'],
  ])('resolves %j inside the workspace', (ref, expected) => {
    expect(resolveInWorkspace(host, from, ref)).toEqual({ path: expected });
  });

  it.each([
    ['../../../etc/passwd', /resolves to \/etc\/passwd, outside the workspace/],
    ['../../ws2/x.md', /outside the workspace/],
    ['/etc/passwd', /is an absolute path/],
    ['C:\\Windows\\win.ini', /is an absolute path/],
    ['//server/share/x', /is an absolute path/],
    ['~/.ssh/id_rsa', /home folder/],
    ['', /empty/],
    ['a\0b', /NUL/],
  ])('refuses %j', (ref, message) => {
    const r = resolveInWorkspace(host, from, ref);
    expect(r.path).toBeUndefined();
    expect(r.error).toMatch(message);
  });
});
