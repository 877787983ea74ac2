/**
 * Template names from requests, checked before anything is read. A name is a path relative to the
 * service root; the service refuses absolute paths, drive letters, backslashes, `..` segments,
 * NUL and control characters, names that are not templates (`.prompt`, `.prompty`; partials
 * `_x.prompt` are not templates), and — after resolving symbolic links — anything whose real path
 * leaves the real root. Only then does a missing file count as "unknown template" (404).
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { classifyFile } from '../core/analyze';
import { templateFileOf } from '../core/language';
import { toPosix } from '../node/fileHost';

export type TemplateCheck = { ok: true; relative: string; absolute: string } | { ok: false; status: 400 | 404; message: string };

export function checkTemplateName(root: string, realRoot: string, name: string): TemplateCheck {
  const bad = (message: string): TemplateCheck => ({ ok: false, status: 400, message: `template: ${message}` });
  if (/[\u0000-\u001f\u007f]/.test(name)) return bad('contains a control character');
  if (name.includes('\\')) return bad("use '/' as the separator (backslashes are refused)");
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.startsWith('~')) return bad(`'${name}' is absolute; name the template relative to the service root`);
  // A BAML function is addressed inside its file (`baml_src/x.baml#F`): the file is what is checked and read.
  const file = templateFileOf(name);
  const inner = name.slice(file.length);
  const segments = file.split('/');
  if (segments.some((s) => s === '..')) return bad(`'${name}' climbs out of the service root ('..' is refused)`);
  if (segments.some((s) => s === '' || s === '.')) return bad(`'${name}' has an empty or '.' segment`);
  if (classifyFile(name) !== 'template') return bad(`'${name}' is not a template (.prompt or .prompty; partials starting with _ are not templates)`);
  const absolute = toPosix(nodePath.join(root, ...segments));
  let real: string;
  try {
    real = fs.realpathSync(absolute);
  } catch {
    return { ok: false, status: 404, message: `template: '${name}' does not exist under the service root` };
  }
  const rel = nodePath.relative(realRoot, real);
  if (rel === '' || rel.startsWith('..') || nodePath.isAbsolute(rel)) return bad(`'${name}' is a link to a file outside the service root`);
  try {
    if (!fs.statSync(real).isFile()) return { ok: false, status: 404, message: `template: '${name}' is not a file` };
  } catch {
    return { ok: false, status: 404, message: `template: '${name}' does not exist under the service root` };
  }
  return { ok: true, relative: segments.join('/') + inner, absolute: absolute + inner };
}
