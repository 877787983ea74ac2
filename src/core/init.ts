/**
 * `ctxlens init` and the quick fix **Create context config**: a `<name>.context.yaml` for a template
 * that has none, with every slot the template uses, budgets from the sample's counts plus headroom,
 * the model and output reserve the front matter asks for, and `trust:` left for the author to
 * decide (so `trust-missing` guides them next).
 */
import type { TemplateAnalysis } from './analyze';
import { basename } from './paths';
import { guessKind } from './rules/templateRules';

/** Headroom over the sample's count, and the smallest budget written. */
const HEADROOM = 1.5;
const MIN_BUDGET = 100;

export function contextConfigPath(templatePath: string): string {
  return templatePath.replace(/\.(prompt|prompty)$/i, '') + '.context.yaml';
}

function roundUp(n: number): number {
  const step = n < 1000 ? 50 : 100;
  return Math.max(MIN_BUDGET, Math.ceil(n / step) * step);
}

function yamlString(s: string): string {
  return /^[A-Za-z0-9_.\/-]+$/.test(s) && !/^(true|false|null|yes|no|on|off|~)$/i.test(s) && !/^[\d.]+$/.test(s) ? s : JSON.stringify(s);
}

/** The text of a new context config for the analysed template. */
export function initConfigText(a: TemplateAnalysis): string {
  const lines: string[] = [];
  lines.push(`# Context config for ${basename(a.path)}, written by Context Lens (ctxlens init).`);
  lines.push('# Budgets are the sample\'s token counts plus headroom; adjust them to your traffic.');
  lines.push('# Declare trust for every slot: trusted = written by your application, untrusted = data');
  lines.push('# from users, documents, tools or uploads (labelled and neutralised before it is sent).');
  lines.push('$schema: https://raw.githubusercontent.com/context-lens/context-lens/main/schemas/context.schema.json');
  if (a.model?.name) lines.push(`model: ${yamlString(a.model.name)}`);
  const output = a.budget?.output ?? 0;
  lines.push(`output: ${output}`);
  lines.push('margin: "5%"');
  lines.push('slots:');
  const uses = new Map<string, Array<(typeof a.template.uses)[number]>>();
  for (const u of a.template.uses) uses.set(u.slot, [...(uses.get(u.slot) ?? []), u]);
  if (!uses.size) lines.push('  {}');
  for (const [name, list] of uses) {
    const s = a.slots.find((x) => x.name === name);
    // A slot the template places in the system role is taken for the application's own text
    // (policy); anything else is data until the author says otherwise.
    const inSystem = list.some((u) => u.role === 'system' || u.role === 'developer');
    const kind = inSystem ? 'policy' : guessKind(name, list[0]);
    lines.push(`  ${yamlString(name)}:`);
    lines.push(`    kind: ${kind}`);
    lines.push(`    budget: ${roundUp((s?.tokens ?? 0) * HEADROOM)}`);
    // Data printed without a delimiter around it gets an envelope label, so the model can tell it from instructions.
    const bare = list.some((u) => !u.delimiter && u.form !== 'if' && u.form !== 'history');
    if (!inSystem && bare) lines.push(`    label: ${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_').replace(/^[^A-Z]+/, '') || 'DATA'}`);
    if (kind === 'history') lines.push('    order: chronological');
  }
  const files = a.fixtures.filter((f) => !f.path.includes('#'));
  if (files.length) lines.push("fixtures: ['*.fixture.yaml', 'fixtures/*.fixture.yaml']");
  return lines.join('\n') + '\n';
}
