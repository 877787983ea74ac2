/**
 * The added tokens of a Hugging Face tokenizer, found in text as its AddedVocabulary finds them:
 * one leftmost-longest scan (aho-corasick's LeftmostLongest) over every added token of the pass.
 * Context Lens counts special-token text as plain text (docs/ARCHITECTURE.md), which is the
 * reference's `encode_special_tokens = True`: a special token's match is consumed by the scan and
 * then dropped, so its text stays in the plain segment around it. A non-special added token (a
 * SentencePiece user-defined symbol such as Gemma's "\n\n" or "<table>", Qwen's "<think>") is one
 * token and cuts the text: the normalizer, pre-tokenizer and BPE run on the segments between.
 */

export interface AddedToken {
  content: string;
  special: boolean;
}

/** A trie over UTF-16 units; node 0 is the root. */
export class AddedTokenMatcher {
  /** Child of node for unit: key node * 65536 + unit. */
  private readonly children = new Map<number, number>();
  /** Per node: 0 = not the end of a token, 1 = end of a special token, 2 = end of a plain one. */
  private readonly terminal: number[] = [0];
  /** Which code units start some token (fast rejection). */
  private readonly first = new Uint8Array(0x10000);
  /** Internal bigrams of every token, as "unit pair" keys: a cut between them could split a match. */
  private readonly bigrams = new Set<number>();
  readonly size: number;

  constructor(tokens: readonly AddedToken[]) {
    for (const t of tokens) {
      if (t.content.length === 0) continue;
      let node = 0;
      for (let k = 0; k < t.content.length; k++) {
        const u = t.content.charCodeAt(k);
        const key = node * 65536 + u;
        let next = this.children.get(key);
        if (next === undefined) {
          next = this.terminal.length;
          this.terminal.push(0);
          this.children.set(key, next);
        }
        node = next;
        if (k > 0) this.bigrams.add(t.content.charCodeAt(k - 1) * 65536 + u);
      }
      // A token listed both ways counts as plain (the reference keeps one entry per content).
      this.terminal[node] = Math.max(this.terminal[node], t.special ? 1 : 2);
      this.first[t.content.charCodeAt(0)] = 1;
    }
    this.size = tokens.length;
  }

  /**
   * Calls `segment(a, b)` for each stretch of text[start..end) between plain added tokens, in
   * order (empty stretches included), and returns how many plain added tokens there are.
   */
  scan(text: string, start: number, end: number, segment: (a: number, b: number) => void): number {
    const first = this.first;
    let from = start;
    let found = 0;
    let i = start;
    while (i < end) {
      if (first[text.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      // Longest token starting at i.
      let node = 0;
      let best = -1;
      let bestKind = 0;
      for (let k = i; k < end; k++) {
        const next = this.children.get(node * 65536 + text.charCodeAt(k));
        if (next === undefined) break;
        node = next;
        if (this.terminal[node] !== 0) {
          best = k + 1;
          bestKind = this.terminal[node];
        }
      }
      if (best < 0) {
        i++;
        continue;
      }
      if (bestKind === 2) {
        segment(from, i);
        from = best;
        found++;
      }
      i = best; // a special token's text is consumed, then left to the plain segment
    }
    segment(from, end);
    return found;
  }

  /** Whether the units s[p-1], s[p] occur next to each other inside some added token. */
  spans(s: string, p: number): boolean {
    return this.bigrams.has(s.charCodeAt(p - 1) * 65536 + s.charCodeAt(p));
  }
}
