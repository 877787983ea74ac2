/**
 * Template front matter: finds the `---` block at the top of a `.prompt` / `.prompty` file (after an
 * optional byte order mark), parses it with `yaml` keeping ranges, and pulls out the keys Context
 * Lens reads — `context:`, the model name and the declared inputs — with spans into the template.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Pair } from 'yaml';
import { finding } from '../rules/registry';
import type { Finding, Span, TemplateDoc, TemplateFormat } from '../types';
import { findAt, nodeSpan, parseYaml, scalarSource, toJs, yamlFindings } from '../text/yaml';
import { readYamlFast } from '../text/yamlFast';
import type { YamlSource } from '../text/yaml';
import { promptyFrontMatterBlock } from './prompty/engine';

export interface FrontMatterBlock {
  /** Offset of the opening `---`. */
  start: number;
  /** The YAML text between the fences. */
  yamlStart: number;
  yamlEnd: number;
  /** End of the closing `---` (before its line break). */
  end: number;
  /** Where the body begins (after the closing line's line break). */
  bodyStart: number;
}

export type FrontMatterSplit =
  | { kind: 'none'; bodyStart: number }
  | { kind: 'unclosed'; bodyStart: number; open: Span; /** A `.prompty` file whose runtime does not skip its byte order mark. */ bom?: true }
  | ({ kind: 'block' } & FrontMatterBlock);

const LINE = /([^\r\n]*)(\r\n|\r|\n|$)/y;

/**
 * Locates the front matter block without parsing it. Never throws. A `.prompty` file's block is
 * where its runtime's own pattern finds it (prompty/engine.ts `promptyFrontMatterBlock`: a fence
 * glued to the body, `+++`, a closing `----` read as `---` and a `-` of the body), so the editor
 * reads the front matter and the body the runtime renders; a `.prompt` file's is dotprompt's
 * `---` lines.
 */
export function splitFrontMatter(text: string, format: TemplateFormat = 'prompt'): FrontMatterSplit {
  if (format === 'prompty') {
    const b = promptyFrontMatterBlock(text);
    if (b) {
      // The body starts after the closing fence's line when the rest of that line is blank.
      LINE.lastIndex = b.end;
      const rest = LINE.exec(text);
      const bodyStart = rest && rest[1].trim() === '' ? b.end + rest[0].length : b.end;
      return { kind: 'block', start: b.start, yamlStart: b.yamlStart, yamlEnd: b.yamlEnd, end: b.end, bodyStart: Math.min(bodyStart, b.bodyStart) };
    }
  }
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  LINE.lastIndex = start;
  const first = LINE.exec(text);
  if (!first || first[1].trimEnd() !== '---') return { kind: 'none', bodyStart: start };
  // A .prompty file the runtime's pattern finds no block in: an opening fence with nothing after it.
  if (format === 'prompty') return { kind: 'unclosed', bodyStart: start + first[0].length, open: { start, end: start + 3 }, ...(start === 1 ? { bom: true as const } : {}) };
  const yamlStart = start + first[0].length;
  let pos = yamlStart;
  while (pos < text.length) {
    LINE.lastIndex = pos;
    const m = LINE.exec(text);
    if (!m || m[0].length === 0) break;
    if (m[1].trimEnd() === '---') {
      return { kind: 'block', start, yamlStart, yamlEnd: pos, end: pos + m[1].length, bodyStart: pos + m[0].length };
    }
    pos += m[0].length;
  }
  // Without a closing fence the file is read as body after the opening line, so typing the
  // front matter does not wipe out the analysis of everything below it.
  return { kind: 'unclosed', bodyStart: yamlStart, open: { start, end: start + 3 } };
}

/**
 * The YAML of a text's front matter block, located in the text (spans shifted into it), or
 * undefined without a closed block. The one place a front matter is read as YAML: the template
 * parser and the config edits of an inline config both come here.
 */
export function frontMatterYaml(text: string, format: TemplateFormat = 'prompt'): YamlSource | undefined {
  const split = splitFrontMatter(text, format);
  return split.kind === 'block' ? blockYaml(text, split) : undefined;
}

/**
 * The YAML of a located block, its spans shifted into the text. Most front matters are plain YAML,
 * which the fast reader builds as yaml would (same nodes and ranges); any other text, and every
 * text with a problem to report (a repeated key included), is read by parseYaml.
 */
function blockYaml(text: string, block: FrontMatterBlock): YamlSource {
  const yaml = text.slice(block.yamlStart, block.yamlEnd);
  return readYamlFast(yaml, block.yamlStart) ?? parseYaml(yaml, block.yamlStart);
}

/** Strips Picoschema annotations: `name?` and `name(string, description)` declare `name`. */
function inputName(key: string): string {
  return key.replace(/\(.*$/s, '').replace(/\?\s*$/, '').trim();
}

/** Span of `name` inside a key node (skipping a quote, `?` and annotations). */
function nameSpan(text: string, keySpan: Span, name: string): Span {
  const at = text.indexOf(name, keySpan.start);
  if (at >= 0 && at + name.length <= keySpan.end) return { start: at, end: at + name.length };
  return keySpan;
}

function mapEntries(node: unknown): Pair[] {
  return isMap(node) ? (node.items as Pair[]) : [];
}

export interface ParsedFrontMatter {
  frontMatter?: TemplateDoc['frontMatter'];
  bodyStart: number;
  findings: Finding[];
  /** The parsed YAML (spans shifted into the template), for inline configs. */
  yaml?: YamlSource;
}

export function parseFrontMatter(path: string, text: string, format: TemplateFormat): ParsedFrontMatter {
  const split = splitFrontMatter(text, format);
  const findings: Finding[] = [];
  if (split.kind === 'none') return { bodyStart: split.bodyStart, findings };
  if (split.kind === 'unclosed') {
    const message = split.bom
      ? "Prompty's runtime does not find this front matter: the file starts with a byte order mark, which its front matter pattern does not skip, so it cannot load the file. Save the file as UTF-8 without a BOM."
      : "The front matter is not closed: add a line '---' after the YAML header.";
    findings.push(finding('template-invalid', path, split.open, message));
    return { bodyStart: split.bodyStart, findings };
  }
  const src = blockYaml(text, split);
  if (format === 'prompty') {
    // PyYAML keeps a repeated key's last value where the yaml package refuses it: said, not an error.
    for (const e of src.doc.errors.filter((x) => x.code === 'DUPLICATE_KEY')) {
      const at = src.base + e.pos[0];
      findings.push(finding('template-invalid', path, { start: at, end: at + 1 }, 'This key is repeated in the front matter: Prompty (PyYAML) keeps its last value, and the earlier ones have no effect.', { severity: 'warning' }));
    }
    src.doc.errors = src.doc.errors.filter((x) => x.code !== 'DUPLICATE_KEY');
  }
  findings.push(...yamlFindings('template-invalid', path, src, 'Front matter YAML error'));
  const fmSpan = { start: split.start, end: split.end };
  const root = src.doc.contents;
  let data: Record<string, unknown> = {};
  if (isMap(root)) {
    const js = toJs(src, root);
    if (js && typeof js === 'object' && !Array.isArray(js)) data = js as Record<string, unknown>;
  } else if (root !== null && root !== undefined && !(isScalar(root) && root.value === null)) {
    findings.push(finding('template-invalid', path, nodeSpan(src, root) ?? fmSpan, 'The front matter must be a YAML mapping of keys such as model: and context:.'));
  }

  const fm: NonNullable<TemplateDoc['frontMatter']> = { data, span: fmSpan, inputs: {} };

  // context: a path to a config file, or the config inline.
  const ctx = findAt(src, ['context']);
  if (ctx.pair) {
    const span = nodeSpan(src, ctx.node) ?? nodeSpan(src, ctx.pair.key) ?? fmSpan;
    if (isScalar(ctx.node) && typeof ctx.node.value === 'string') fm.context = { value: ctx.node.value, span };
    else if (isMap(ctx.node)) fm.context = { value: (toJs(src, ctx.node) as Record<string, unknown>) ?? {}, span };
    else findings.push(finding('template-invalid', path, span, 'context: expected a relative path to a *.context.yaml file or an inline config mapping.'));
  }

  // model: a string (dotprompt, simple Prompty), or Prompty's model.configuration.
  const model = findAt(src, ['model']);
  if (model.pair) {
    if (isScalar(model.node) && model.node.value !== null && model.node.value !== undefined) {
      fm.model = { value: scalarSource(model.node) ?? '', span: nodeSpan(src, model.node) as Span };
    } else if (isMap(model.node)) {
      const candidates: Array<Array<string>> = [
        ['model', 'configuration', 'name'],
        ['model', 'configuration', 'azure_deployment'],
        ['model', 'configuration', 'model'],
        ['model', 'id'],
        ['model', 'name'],
      ];
      for (const c of candidates) {
        const hit = findAt(src, c);
        if (isScalar(hit.node) && typeof hit.node.value === 'string' && hit.node.value.trim()) {
          fm.model = { value: hit.node.value.trim(), span: nodeSpan(src, hit.node) as Span };
          break;
        }
      }
    }
  }

  // Declared inputs: dotprompt `input.schema` (Picoschema or JSON Schema), Prompty `inputs`.
  const addInput = (name: string, span: Span | undefined) => {
    if (name && span && fm.inputs[name] === undefined) fm.inputs[name] = span;
  };
  const fromKeys = (node: unknown) => {
    for (const pair of mapEntries(node)) {
      const raw = scalarSource(pair.key);
      const span = nodeSpan(src, pair.key);
      if (raw === undefined || !span) continue;
      const name = inputName(raw);
      addInput(name, nameSpan(text, span, name));
    }
  };
  const schema = findAt(src, ['input', 'schema']).node;
  if (isMap(schema)) {
    const props = findAt(src, ['properties'], schema).node;
    fromKeys(isMap(props) ? props : schema);
  }
  const inputs = findAt(src, ['inputs']).node;
  if (isMap(inputs)) fromKeys(inputs);
  else if (isSeq(inputs)) {
    for (const item of inputs.items) {
      const name = findAt(src, ['name'], item).node;
      const value = scalarSource(name);
      if (value) addInput(value, nodeSpan(src, name));
    }
  }
  if (format === 'prompt' && !isMap(schema)) {
    // dotprompt also accepts `input: { default: {...} }` without a schema: its keys are inputs too.
    fromKeys(findAt(src, ['input', 'default']).node);
  }

  Object.defineProperty(fm, 'yaml', { value: src, enumerable: false });
  return { frontMatter: fm, bodyStart: split.bodyStart, findings, yaml: src };
}
