/**
 * dotprompt (`.prompt`): YAML front matter and a Handlebars body, rendered with dotprompt's own
 * Handlebars setup (engine.ts). `_name.prompt` files are partials, rendered inside the templates
 * that include them.
 */
import type { TemplateLanguage } from '../language';
import { parseFenced } from '../fenced';
import { dotpromptBodyLimit } from '../../text/nesting';
import { parseDotpromptBody } from './body';
import { dotpromptPrintsValuesOnly, renderDotprompt } from './engine';
import type { DotpromptOptions } from './engine';

function options(v: { partials: Record<string, string>; defaults: Record<string, unknown>; codeHelpers?: readonly string[]; codePartials?: readonly string[] }): DotpromptOptions {
  return {
    partials: v.partials,
    inputDefault: v.defaults,
    // The product renders what the application may register in code (declared or not) instead of failing on it.
    lenient: true,
    ...(v.codeHelpers?.length ? { codeHelpers: v.codeHelpers } : {}),
    ...(v.codePartials?.length ? { codePartials: v.codePartials } : {}),
  };
}

export const dotpromptLanguage: TemplateLanguage = {
  id: 'prompt',
  name: 'dotprompt',
  globs: ['**/*.prompt'],
  fallbackRole: 'user',
  placesHistory: true,
  claim(path) {
    if (!/\.prompt$/i.test(path)) return undefined;
    return /(^|\/)_[^/]*\.prompt$/i.test(path) ? 'partial' : 'template';
  },
  parse(path, text) {
    return parseFenced(path, text, { format: 'prompt', fallbackRole: 'user', bodyLimit: dotpromptBodyLimit, body: (p, t, start) => parseDotpromptBody(p, t, start) });
  },
  render(doc, v) {
    return renderDotprompt(doc.text, { input: v.input, ...(v.context ? { context: v.context } : {}), ...(v.messages ? { messages: v.messages } : {}) } as Parameters<typeof renderDotprompt>[1], options(v));
  },
  printsValuesOnly(doc, v) {
    return dotpromptPrintsValuesOnly(doc.text, options(v));
  },
};
