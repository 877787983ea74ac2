/**
 * Bounds on a dotprompt body, checked before the template parser and the Handlebars runtime parse it, in one linear pass: block nesting
 * (`{{#each}}`, `{{#if}}`, `{{#role}}`, unclosed ones included), sub-expression nesting inside one
 * tag, and the number of tags. Past a bound the body is not parsed or rendered at all (the parser,
 * the Handlebars runtime and the checks that walk the tree grow faster than linearly with these);
 * the template gets one `template-invalid` finding at the tag where the bound is crossed.
 */

/** Deepest block nesting accepted. Real templates nest a handful of levels. */
export const MAX_BLOCK_DEPTH = 100;
/** Deepest sub-expression nesting accepted inside one tag. */
export const MAX_SUBEXPRESSION_DEPTH = 32;
/** Most tags accepted in one body. */
export const MAX_TAGS = 10_000;

export interface LimitHit {
  start: number;
  end: number;
  message: string;
}

/** The first bound the body from `from` crosses, or undefined. */
export function dotpromptBodyLimit(text: string, from: number): LimitHit | undefined {
  let depth = 0;
  let tags = 0;
  let i = text.indexOf('{{', from);
  while (i >= 0) {
    // Comments are skipped whole: their text is not syntax.
    if (text.startsWith('{{!--', i) || text.startsWith('{{~!--', i)) {
      const close = text.indexOf('--', i + 5);
      const endC = close < 0 ? -1 : text.indexOf('}}', close);
      if (endC < 0) return undefined;
      i = text.indexOf('{{', endC + 2);
      continue;
    }
    const end = text.indexOf('}}', i + 2);
    if (end < 0) return undefined;
    tags++;
    if (tags > MAX_TAGS) return { start: i, end: end + 2, message: `This template has more than ${MAX_TAGS.toLocaleString('en-US')} tags; it is not parsed or rendered. Split it into partials or generate less template text.` };
    let j = i + 2;
    while (text.charAt(j) === '{' || text.charAt(j) === '~' || text.charAt(j) === ' ') j++;
    const sigil = text.charAt(j);
    if (sigil === '#' || (sigil === '^' && /[^\s}~]/.test(text.charAt(j + 1)))) {
      depth++;
      if (depth > MAX_BLOCK_DEPTH) return { start: i, end: end + 2, message: `Blocks are nested more than ${MAX_BLOCK_DEPTH} deep here; the template is not parsed or rendered. Close the blocks above, or flatten the nesting.` };
    } else if (sigil === '/') depth = Math.max(0, depth - 1);
    if (sigil !== '!') {
      let parens = 0;
      for (let k = j; k < end; k++) {
        const c = text.charCodeAt(k);
        if (c === 40) {
          parens++;
          if (parens > MAX_SUBEXPRESSION_DEPTH) return { start: i, end: end + 2, message: `Sub-expressions are nested more than ${MAX_SUBEXPRESSION_DEPTH} deep in this tag; the template is not parsed or rendered.` };
        } else if (c === 41) parens = Math.max(0, parens - 1);
      }
    }
    i = text.indexOf('{{', end + 2);
  }
  return undefined;
}
