/**
 * Whether a request's token counts are exact: the one formula every front end and the assembly
 * use. Counts are exact when the tokenizer itself is exact and it is the model's own tokenizer (or
 * the config names the tokenizer on purpose); a model the registry does not know is always counted
 * as an estimate.
 */
export function countsExact(tokenizer: { exact: boolean }, model: { exact: boolean } | undefined, options: { configTokenizer?: boolean; unknownModel?: boolean } = {}): boolean {
  if (!tokenizer.exact || options.unknownModel) return false;
  return model ? model.exact || !!options.configTokenizer : true;
}
