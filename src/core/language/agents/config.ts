/**
 * The workspace's settings for its agents' instruction files, `.context-lens/agents.yaml` at a
 * workspace root (beside the model files of `.context-lens/models.yaml`):
 *
 * ```yaml
 * model: gpt-4o            # counts with this model's tokenizer and prices requests with it
 * budgets:                 # tokens an agent may send with every request (instruction-budget)
 *   copilot: 2000
 *   claude: 4000
 * ```
 *
 * Optional; a malformed file is a located `config-invalid` finding and is otherwise ignored.
 */
import type { FileHost } from '../../host';
import type { Finding } from '../../types';
import { finding } from '../../rules/registry';
import { parseYaml } from '../../text/yaml';
import type { AgentId } from './kinds';
import { AGENTS } from './kinds';

export const AGENTS_CONFIG = '.context-lens/agents.yaml';

export interface AgentsConfig {
  path: string;
  model?: string;
  budgets: Partial<Record<AgentId, number>>;
  findings: Finding[];
}

export function readAgentsConfig(host: FileHost, root: string): AgentsConfig {
  const path = `${root}/${AGENTS_CONFIG}`;
  const out: AgentsConfig = { path, budgets: {}, findings: [] };
  if ((host.size(path) ?? 0) > 1024 * 1024) return out;
  const text = host.readFile(path);
  if (text === undefined) return out;
  const src = parseYaml(text);
  const bad = (span: { start: number; end: number }, message: string) => out.findings.push(finding('config-invalid', path, span, message));
  if (src.doc.errors.length) {
    const e = src.doc.errors[0];
    bad({ start: e.pos[0], end: Math.max(e.pos[0] + 1, e.pos[1]) }, `Not valid YAML: ${e.message.split('\n')[0]}`);
    return out;
  }
  let data: unknown;
  try {
    data = src.doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    bad({ start: 0, end: Math.min(1, text.length) }, `Cannot be read: ${(e as Error).message}`);
    return out;
  }
  if (data === null || data === undefined) return out;
  if (typeof data !== 'object' || Array.isArray(data)) {
    bad({ start: 0, end: Math.min(1, text.length) }, 'The agents config is a mapping with model: and budgets:.');
    return out;
  }
  const d = data as Record<string, unknown>;
  const at = (key: string) => {
    const i = text.search(new RegExp(`^\\s*${key}\\s*:`, 'm'));
    return i < 0 ? { start: 0, end: Math.min(1, text.length) } : { start: i, end: i + key.length + (text.slice(i).length - text.slice(i).trimStart().length) };
  };
  if (d.model !== undefined) {
    if (typeof d.model === 'string' && d.model.trim()) out.model = d.model.trim();
    else bad(at('model'), 'model: is a model name such as gpt-4o.');
  }
  if (d.budgets !== undefined) {
    if (typeof d.budgets !== 'object' || d.budgets === null || Array.isArray(d.budgets)) bad(at('budgets'), `budgets: maps an agent (${AGENTS.join(', ')}) to a number of tokens.`);
    else {
      for (const [k, v] of Object.entries(d.budgets as Record<string, unknown>)) {
        if (!(AGENTS as readonly string[]).includes(k)) bad(at(k), `'${k}' is not an agent; budgets are for ${AGENTS.join(', ')}.`);
        else if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(at(k), `The budget of ${k} is a number of tokens.`);
        else out.budgets[k as AgentId] = v;
      }
    }
  }
  return out;
}
