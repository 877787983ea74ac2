/**
 * `ctxlens <command> --help`: the command's usage line from the main help text, every option it
 * accepts with one line each (from the same table its argument parser reads, options.ts), and
 * exit 0.
 */
import { COMMAND_OPTIONS, optionLines } from './options';
import { SERVE_OPTIONS } from './serve';
import type { CommandName } from './options';

const NOTES: Readonly<Record<string, string>> = {
  check: 'Checks templates, context configs and fixtures (the folder by default) and prints every finding.',
  count: 'Counts the tokens of files or standard input with a tokenizer or a model\'s tokenizer.',
  budget: 'Prints the budget equation of a context config, or of the config a template binds to.',
  assemble: 'Assembles the request a template sends with a fixture, as the runtime renders it.',
  init: 'Writes a starter context config for a template, from what its front matter and sample say.',
  serve: 'Runs the HTTP service on 127.0.0.1.',
  'cite-check': 'Checks that an answer cites only evidence its request carried.',
  eval: 'Assembles every template with every fixture and reports tokens, cost and findings.',
  variants: 'Writes request variants that move one item to other positions.',
  diff: 'Compares two requests of a template: two fixtures, two models or two budgets.',
  report: 'Compares the requests of a change with a base revision.',
  models: 'Lists the models the registry knows (built-in data, model files, the config\'s models:), with window, output limit, tokenizer, price, source, as-of date and lifecycle. QUERY filters by name or provider.',
};

/**
 * The help of one command, or undefined when the main help has no usage line for it. The options
 * are the command's own table (options.ts; `serve`'s lives with the service), every option it
 * accepts with one line each; a command without a table lists the flags of its usage.
 */
export function commandHelp(mainHelp: string, command: string, fullUsage?: string): string | undefined {
  const lines = mainHelp.split('\n').filter((l) => l.startsWith(`  ctxlens ${command} `) || l === `  ctxlens ${command}`);
  if (lines.length === 0) return undefined;
  let optionText: string[];
  const table = command === 'serve' ? SERVE_OPTIONS : Object.prototype.hasOwnProperty.call(COMMAND_OPTIONS, command) ? COMMAND_OPTIONS[command as CommandName] : undefined;
  if (table) optionText = optionLines({ ...table, help: { type: 'boolean', short: 'h', help: 'this help' } });
  else {
    const flags: string[] = [];
    for (const l of (fullUsage ?? lines.join('\n')).split('\n')) {
      for (const m of l.matchAll(/(?<=[\s[])(--[a-z][a-z-]*|-[a-z])(?![a-z-])(?: ([A-Za-z0-9_|,.%:/-]+(?:\|[A-Za-z0-9_.-]+)*))?/g)) {
        const flag = m[2] && !m[2].startsWith('-') ? `${m[1]} ${m[2]}` : m[1];
        if (!flags.includes(flag)) flags.push(flag);
      }
    }
    optionText = [...flags.map((f) => `  ${f}`), '  -h, --help  this help'];
  }
  let out = `Usage:\n${fullUsage ? `  ${fullUsage}` : lines.join('\n')}\n`;
  if (NOTES[command]) out += `\n${NOTES[command]}\n`;
  out += `\nOptions:\n${optionText.join('\n')}\n`;
  return out;
}
