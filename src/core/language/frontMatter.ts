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
import type { YamlSource } from '../text/yaml';

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
  | { kind: 'unclosed'; bodyStart: number; open: Span }
  | ({ kind: 'block' } & FrontMatterBlock);

const LINE = /([^\r\n]*)(\r\n|\r|\n|$)/y;

/** Locates the front matter block without parsing it. Never throws. */
export function splitFrontMatter(text: string): FrontMatterSplit {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  LINE.lastIndex = start;
  const first = LINE.exec(text);
  if (!first || first[1].trimEnd() !== '---') return { kind: 'none', bodyStart: start };
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
export function frontMatterYaml(text: string): YamlSource | undefined {
  const split = splitFrontMatter(text);
  return split.kind === 'block' ? parseYaml(text.slice(split.yamlStart, split.yamlEnd), split.yamlStart) : undefined;
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
  const split = splitFrontMatter(text);
  const findings: Finding[] = [];
  if (split.kind === 'none') return { bodyStart: split.bodyStart, findings };
  if (split.kind === 'unclosed') {
    findings.push(finding('template-invalid', path, split.open, "The front matter is not closed: add a line '---' after the YAML header."));
    return { bodyStart: split.bodyStart, findings };
  }
  const src = frontMatterYaml(text)!;
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
