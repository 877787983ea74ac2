/**
 * Which files belong together: the fixtures of a template, the templates of a config, the template
 * of a fixture. Reverse lookups read templates and fixture heads through the parse caches.
 */
import type { FileHost } from '../host';
import type { ContextConfig } from '../config/schema';
import type { FixtureDoc } from '../types';
import { fixtureName } from '../fixture';
import { templateGlobs } from '../language';
import { basename, dirname, resolveInWorkspace } from '../paths';
import { bindConfig } from './bind';
import { DEFAULT_MAX_FILE_SIZE, KeyedHostMemo, classifyFile, fixtureHead, readTemplate } from './files';

/** Fixture files of a config (its `fixtures` globs) that feed this template, sorted by path. */
export function fixturesFor(host: FileHost, templatePath: string, configPath: string | undefined, config: ContextConfig | undefined): string[] {
  const found = new Set<string>();
  if (config && configPath) {
    const dir = dirname(configPath);
    for (const pattern of config.fixtures) {
      // An empty or absurd pattern matches nothing (the config schema reports it).
      if (!pattern.trim() || pattern.length > 512) continue;
      for (const p of host.glob(dir, pattern)) if (classifyFile(p) === 'fixture') found.add(p);
    }
  }
  const out: string[] = [];
  for (const p of [...found].sort()) {
    const named = fixtureTemplateRef(host, p);
    if (named) {
      const r = resolveInWorkspace(host, p, named);
      if (r.path && r.path !== templatePath) continue;
    }
    out.push(p);
  }
  // A fixture whose `template:` names this template binds without any glob: beside the template or in a fixtures/ folder there.
  for (const p of nearFixtures(host, dirname(templatePath)).get(templatePath) ?? []) if (!found.has(p)) out.push(p);
  return out;
}

/**
 * The fixtures in a folder and its fixtures/ folder whose `template:` names a template, by the
 * template it resolves to, each list sorted. Every template of the folder asks for its own: the
 * folder is read once (a folder of a thousand templates and fixtures read every fixture's head
 * for every template), and the index is reused while every file it read is unchanged.
 */
const nearIndexes = new KeyedHostMemo<Map<string, string[]>>(256, 64 * 1024 * 1024);

function nearFixtures(host: FileHost, dir: string): Map<string, string[]> {
  return nearIndexes.get(dir, host, (h) => {
    const byTemplate = new Map<string, string[]>();
    const near = [...h.glob(dir, '*.fixture.{yaml,yml,json}'), ...h.glob(dir, 'fixtures/*.fixture.{yaml,yml,json}')].sort();
    for (const p of near) {
      const named = fixtureTemplateRef(h, p);
      if (!named) continue;
      const r = resolveInWorkspace(h, p, named);
      if (!r.path) continue;
      const list = byTemplate.get(r.path);
      if (list) list.push(p);
      else byTemplate.set(r.path, [p]);
    }
    return byTemplate;
  });
}

/**
 * A fixture's `template:` value. Files over the analysis size limit are not parsed for this; a
 * top-level `template:` line (YAML) or key (JSON) is read from their first 64 KiB instead.
 */
function fixtureTemplateRef(host: FileHost, path: string): string | undefined {
  const size = host.size(path);
  if (size !== undefined && size > DEFAULT_MAX_FILE_SIZE) {
    const head = (host.readFile(path) ?? '').slice(0, 65536);
    const m = /^template:\s*["']?([^"'\n#]+?)["']?\s*(?:#.*)?$/m.exec(head) ?? /"template"\s*:\s*"([^"]+)"/.exec(head);
    return m?.[1];
  }
  return fixtureHead(host, path)?.template;
}

/** The fixture to use: the one named (by path, path suffix or name), else the first when choosing automatically. */
export function pickFixture(host: FileHost, list: string[], wanted: string | undefined, auto = true): string | undefined {
  if (!wanted) return auto ? list[0] : undefined;
  const hit = list.find((p) => p === wanted || p.endsWith('/' + wanted) || fixtureName(p) === wanted);
  if (hit) return hit;
  // A fixture named explicitly (a path) is always used, whether or not a glob lists it.
  if (classifyFile(wanted) === 'fixture' && host.size(wanted) !== undefined) return wanted;
  return list[0];
}

/** Templates (anywhere under the workspace roots) whose config resolves to `configPath`. */
export function templatesUsing(host: FileHost, configPath: string): string[] {
  const out: string[] = [];
  // The config's own project: its folder and below (a template elsewhere names it with `context:` and is found from there).
  for (const root of [dirname(configPath)]) {
    for (const t of templateGlobs().flatMap((g) => host.glob(root, g))) {
      const doc = readTemplate(host, t);
      if (!doc) continue;
      const b = bindConfig(host, doc);
      if (b.config && !b.config.inline && b.config.path === configPath) out.push(t);
    }
  }
  return [...new Set(out)].sort();
}

/** The template a fixture feeds: its `template:` key, else a template whose config globs match it. */
export function templateForFixture(host: FileHost, path: string, doc: FixtureDoc): string | undefined {
  if (doc.template) {
    const r = resolveInWorkspace(host, path, doc.template.value);
    return r.path;
  }
  // The fixture's project: the folder above its own (fixtures usually sit in a fixtures/ folder beside the template).
  const dir = dirname(path);
  for (const root of [basename(dir) === 'fixtures' ? dirname(dir) : dir]) {
    for (const t of templateGlobs().flatMap((g) => host.glob(root, g)).sort()) {
      const tdoc = readTemplate(host, t);
      if (!tdoc) continue;
      const b = bindConfig(host, tdoc);
      if (fixturesFor(host, t, b.config?.path, b.config?.doc.config).includes(path)) return t;
    }
  }
  return undefined;
}
