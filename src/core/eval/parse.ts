/**
 * Parses an eval file (`*.eval.yaml`). Never throws: YAML syntax errors and schema errors come
 * back as located problems (UTF-16 offsets into the file), and the eval is undefined when any
 * exists, since half an eval set would measure something else than was written.
 */
import type { Span } from '../types';
import { parseYaml, toJs, valueSpanAt, keySpanAt, yamlProblems } from '../text/yaml';
import { EvalFileSchema } from './schema';
import type { EvalFile } from './schema';

export interface EvalProblem {
  message: string;
  span: Span;
}

export interface EvalDoc {
  path: string;
  text: string;
  eval?: EvalFile;
  problems: EvalProblem[];
}

export function isEvalFile(path: string): boolean {
  return /\.eval\.ya?ml$/i.test(path);
}

export function parseEval(path: string, text: string): EvalDoc {
  const src = parseYaml(text);
  const problems: EvalProblem[] = yamlProblems(src).map((p) => ({ message: p.message, span: p.span }));
  if (problems.length) return { path, text, problems };
  const data = toJs(src, src.doc.contents);
  const parsed = EvalFileSchema.safeParse(data ?? {});
  if (parsed.success) return { path, text, eval: parsed.data, problems };
  for (const issue of parsed.error.issues) {
    const at = issue.path.filter((p): p is string | number => typeof p === 'string' || typeof p === 'number');
    // An unknown key is reported on the key itself; anything else on the value it is about.
    const keys = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys ?? [] : [];
    const span = (keys.length ? keySpanAt(src, [...at, keys[0]]) : undefined) ?? valueSpanAt(src, at) ?? keySpanAt(src, at) ?? { start: 0, end: Math.min(1, text.length) };
    const where = at.length ? `${at.join('.')}: ` : '';
    problems.push({ message: `${where}${issue.message}`, span });
  }
  return { path, text, problems };
}
