/**
 * Every relative link and `#anchor` in the README, CONTRIBUTING.md and docs/*.md resolves: the
 * file or folder exists inside the repository, and an anchor names a heading of the target page
 * (its GitHub-style slug) or an explicit `<a id>` there. The pages are read with micromark and its
 * GFM extension, so links inside code are not links, as on GitHub. Links with a scheme (https:,
 * mailto:) are not fetched.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

const html = (markdown: string) => micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const decode = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : (ENTITIES[e.toLowerCase()] ?? m),
  );

/**
 * GitHub's heading anchor (github-slugger): the heading's text, lower-cased, without punctuation
 * and symbols (letters, marks, digits, connector punctuation, spaces and hyphens stay), each space
 * a hyphen; a repeated slug gets `-1`, `-2`, ….
 */
export function slug(text: string, seen: Map<string, number>): string {
  const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
  const n = seen.get(base);
  seen.set(base, (n ?? -1) + 1);
  return n === undefined ? base : `${base}-${n + 1}`;
}

/** The anchors a page offers: heading slugs and explicit ids or names. */
export function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  const page = html(markdown);
  const seen = new Map<string, number>();
  for (const m of page.matchAll(/<h[1-6]>([\s\S]*?)<\/h[1-6]>/g)) out.add(slug(decode(m[1]!.replace(/<[^>]*>/g, '')).trim(), seen));
  for (const m of page.matchAll(/<[a-z][^>]*?\s(?:id|name)="([^"]*)"/gi)) out.add(decode(m[1]!));
  return out;
}

/** The link targets of a page (`href` and `src`), as written after Markdown's own encoding. */
export function linksOf(markdown: string): string[] {
  return [...html(markdown).matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => decode(m[1]!));
}

/** Every broken relative link of the pages, as `page: target (why)`. */
export function brokenLinks(root: string, pages: string[]): string[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsAt = (file: string) => {
    let a = anchors.get(file);
    if (!a) anchors.set(file, (a = anchorsOf(readFileSync(file, 'utf8'))));
    return a;
  };
  const broken: string[] = [];
  for (const page of pages) {
    const file = join(root, page);
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) continue;
      const hash = link.indexOf('#');
      const path = decodeURIComponent(hash < 0 ? link : link.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(link.slice(hash + 1));
      const target = path ? resolve(dirname(file), path) : file;
      const inside = relative(root, target);
      if (inside.startsWith('..') || inside.startsWith(sep)) broken.push(`${page}: ${link} (outside the repository)`);
      else if (!existsSync(target)) broken.push(`${page}: ${link} (no such file)`);
      else if (anchor !== undefined) {
        if (statSync(target).isDirectory() || !target.endsWith('.md')) broken.push(`${page}: ${link} (an anchor into a file that is not Markdown)`);
        else if (!anchorsAt(target).has(anchor)) broken.push(`${page}: ${link} (no heading or id "${anchor}" in ${relative(root, target)})`);
      }
    }
  }
  return broken;
}

const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].filter((p) => existsSync(join(ROOT, p)));

describe('links of the README, CONTRIBUTING.md and docs/', () => {
  it('reads the pages it is meant to', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/rules.md']));
  });

  it.each(pages)('%s: every relative link and anchor resolves', (page) => {
    expect(brokenLinks(ROOT, [page])).toEqual([]);
  });
});

describe('the link checker', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'ctxlens-links-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('computes GitHub heading slugs', () => {
    const a = anchorsOf(
      ['# Context config: `*.context.yaml`', '## `ctxlens serve`: the context-assembly service', '### Zero-config: a template on its own', '## Notes', '## Notes', '## Ünïcode & co', '<a id="rule-x"></a>'].join('\n\n'),
    );
    expect([...a]).toEqual(['context-config-contextyaml', 'ctxlens-serve-the-context-assembly-service', 'zero-config-a-template-on-its-own', 'notes', 'notes-1', 'ünïcode--co', 'rule-x']);
  });

  it('reports a missing file, a missing anchor, an anchor into code, a link out of the tree; not links in code', () => {
    mkdirSync(join(tmp, 'docs'), { recursive: true });
    writeFileSync(join(tmp, 'docs', 'b.md'), '# B page\n\n<a id="rule-y"></a>\n');
    writeFileSync(join(tmp, 'x.ts'), '');
    writeFileSync(
      join(tmp, 'a.md'),
      [
        '# A',
        '[ok](docs/b.md#b-page) [ok](docs/b.md#rule-y) [ok](#a) [ok](docs/) [web](https://example.com/x#y)',
        '[gone](docs/c.md) [no anchor](docs/b.md#nope) [self](#missing) [code](x.ts#L3) [out](../../etc/passwd)',
        '`[in code](nowhere.md)`',
        '```\n[in a block](nowhere.md)\n```',
      ].join('\n\n'),
    );
    expect(brokenLinks(tmp, ['a.md'])).toEqual([
      'a.md: docs/c.md (no such file)',
      'a.md: docs/b.md#nope (no heading or id "nope" in docs/b.md)',
      'a.md: #missing (no heading or id "missing" in a.md)',
      'a.md: x.ts#L3 (an anchor into a file that is not Markdown)',
      'a.md: ../../etc/passwd (outside the repository)',
    ]);
  });
});
