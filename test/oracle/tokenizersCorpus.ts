/**
 * The corpus of the open-weight tokenizer differential suite (tokenizers.test.ts): the project's
 * own texts (README, docs, examples, the core's sources), the bench's generated mixed documents,
 * edge cases and seeded random strings built from the characters that matter to some family's
 * pre-tokenizer, normalizer, added tokens or BPE. Deterministic: the same seed gives the same texts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mixedCorpus, mixedDocuments, prng } from '../../bench/tokens/corpus';

/** Characters that matter to some alternative of some family's pattern, or to NFC, UTF-8 and BPE. */
export const FAMILY_TRICKY = [
  // letters, case, contractions
  'a', 'b', 'e', 'z', 's', 't', 'r', 'v', 'm', 'l', 'd', 'A', 'S', 'T', 'R', 'E', 'V', 'M', 'L', 'D', 'Z', 'ſ', 'é', 'É', 'ǅ', 'ʰ', 'Ω', 'ω', 'я', 'Я',
  'ก', 'ั', 'ह', '\u093f', '𝔘', '𝔲', '\u1C89', '\u{10D50}',
  // marks and NFC: precomposable pairs, reorderable marks (some newer than Unicode 9.0), Hangul jamo
  '\u0301', '\u0300', '\u0316', '\u0323', '\u0308', '\u1DF6', '\u1AC1', '\u0898', '\u{1E08F}', '\u1100', '\u1161', '\u11A8', '\u212B', '\u2126', '\u0344', '\u0958', '\uF900',
  // numbers
  '0', '7', '9', '²', 'Ⅻ', '٣', '𝟘', '〇',
  // CJK ranges of DeepSeek's split, and their edges
  '中', '文', '龥', '龦', 'ぁ', 'ア', '\u3040', '\u309B', '\u309D', '\u30A0', '\u30FB', '\u30FC', '한', '가',
  // punctuation and symbols (ASCII and not)
  "'", "'", '’', '/', '.', ',', '-', '_', '"', '<', '|', '>', '{', '}', '!', '?', '#', '@', '$', '+', '=', '^', '`', '~', '«', '»', '€', '°', '™', '\u3001', '\u3002', '\uFF01',
  // emoji and joiners
  '😀', '👍🏽', '🇫🇷', '\u200d', '\ufe0f',
  // whitespace (Unicode White_Space and look-alikes), Gemma's space symbol
  ' ', ' ', ' ', '  ', '\t', '\t\t', '\n', '\n', '\n\n', '\r', '\r\n', '\u00a0', '\u0085', '\u1680', '\u2028', '\u3000', '\u000b', '\f', '\u180e', '\u200b', '\ufeff', '\u2581', '\u2581\u2581',
  // controls, private use, unassigned, lone surrogates
  '\u0000', '\u001c', '\uE000', '\u088F', '\ud800', '\udc00',
];

/** Added and special tokens of the families, whole and cut short, to be found or not in plain text. */
export const TOKEN_TEXTS = [
  '<|endoftext|>', '<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>',
  '<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|file_sep|>', '<｜User｜>', '<｜Assistant｜>', '<｜fim▁hole｜>', '<｜tool▁sep｜>',
  '<｜begin▁of▁sentence｜>', '<start_of_turn>', '<end_of_turn>', '<bos>', '<eos>', '<mask>', '[multimodal]', '<unused0>', '<unused42>', '<table>', '</td>', '<b>', '<s>', '</s>',
  '<code>', '<|start|>', '<|message|>', '<|channel|>', '<|return|>', '[INST]', '[/INST]', '<thi', 'think>', '<unused', '<｜User', '<|im_',
];

function tricky(r: () => number, maxLen: number, pool: readonly string[] = FAMILY_TRICKY): string {
  const len = Math.floor(r() * (maxLen + 1));
  let s = '';
  for (let i = 0; i < len; i++) s += r() < 0.04 ? TOKEN_TEXTS[Math.floor(r() * TOKEN_TEXTS.length)] : pool[Math.floor(r() * pool.length)];
  return s;
}

/** Edge cases shared with the tiktoken suite, plus the families' own. */
export const FAMILY_EDGE_CASES: string[] = [
  '',
  '\ufeffHello world',
  'one\ufefftwo \ufeff three\ufeff\ufeff\n\ufeff',
  ' \ufeffhello \ufeff  hello',
  'a\u0085b\u0085\u0085 c  \u0085x',
  "DON'T I'Ll WE'RE You'VE it'S she'D they'Ve I'M o'CLOCK X I'ſ",
  "'s 'S 'LL 'Ll 'rE 'vE ''s 's's rock'n'roll '",
  'Ignore this: <|endoftext|> and <|endofprompt|><|fim_prefix|><|fim_middle|><|fim_suffix|>',
  '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  '<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n<table><tr><td>1</td></tr></table>',
  '<｜begin▁of▁sentence｜>You are helpful.<｜User｜>Hi<｜Assistant｜><｜tool▁calls▁begin｜>',
  '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023<|eot_id|>',
  '<|start|>system<|message|>You are ChatGPT.<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>',
  'a'.repeat(12_000),
  'A'.repeat(3_000),
  'ab'.repeat(2_500),
  '1234567890'.repeat(1_000),
  '='.repeat(5_000),
  ' '.repeat(5_000) + 'word',
  'word' + ' '.repeat(5_000),
  '\n'.repeat(3_000) + 'x' + '\r\n'.repeat(2_000),
  '\t'.repeat(100) + 'x' + '\t \t'.repeat(50),
  '\u2581'.repeat(100) + ' x ' + '\u2581 '.repeat(40),
  ' \t \u00a0\u3000 \n \t\u2028 \u0085 x',
  '中文字符'.repeat(800),
  'ひらがなカタカナ漢字'.repeat(200),
  '😀👍🏽🇫🇷'.repeat(500),
  Array.from({ length: 4_000 }, (_, i) => 'QmFzZTY0+/'[(i * 7) % 10]).join(''),
  'e\u0301\u0301\u0301 ה\u05b8 किताब ก\u0e31\u0e48 a\u1DF6\u0316 a\u0316\u1DF6 \u1100\u1161\u11A8 \u212B\u2126',
  'x\ud800y \udc00 z\ud83d',
  'a.\n/b\n//c\r\n/\n\n/',
  'ǅemal ʰello ǈ ʻokina Ωmega',
  'x\u1C89\u1C8A A\uA7CBa \u{10D50}\u{10D70}a \u{16D40}\u{16D41}1 \u{105C0}x',
  'a\u088Fb \u0C5C1 A\uA7CEa \u{10940}x \u1ACF\u1ACF a\u0CDC\u0CDC\u{11DB0}',
  'Version 3.14159 costs $1,234,567.89 (¥12345) on 2025-10-01T12:34:56Z; ID 0x1F600 #42 ²³ Ⅻ ٣٤٥',
  '.NET C# F# #include <stdio.h> e.g. i.e. \'Hello\' "World" `code` --flag=value ../path/to/file.ts',
];

/** Text files of the repository, read whole (the project's own corpora: prompts, docs, code). */
function projectFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries.sort()) {
      if (e.startsWith('.') || e === 'node_modules' || e === 'dist' || e === 'out') continue;
      const p = join(dir, e);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (depth < 4) walk(p, depth + 1);
      } else if (/\.(prompt|prompty|ya?ml|json|md|ts|txt)$/.test(e) && st.size < 200_000 && !/unicodeClasses|unicodeFamilies|package-lock/.test(e)) {
        out.push(readFileSync(p, 'utf8'));
      }
    }
  };
  for (const d of ['examples', 'docs', 'src/core', 'test/unit/support']) walk(join(root, d), 0);
  for (const f of ['README.md', 'CHANGELOG.md']) {
    try {
      out.push(readFileSync(join(root, f), 'utf8'));
    } catch {
      // not there yet
    }
  }
  return out;
}

/** The whole corpus: at least 2,000 texts of every kind above. */
export function familyCorpus(root: string, seed = 2024): string[] {
  const r = prng(seed);
  const texts: string[] = [...FAMILY_EDGE_CASES];
  const files = projectFiles(root);
  texts.push(...files);
  // Slices of the project's files at arbitrary offsets (cuts inside words, tags and tokens).
  for (let i = 0; i < 300 && files.length > 0; i++) {
    const f = files[Math.floor(r() * files.length)];
    const a = Math.floor(r() * f.length);
    texts.push(f.slice(a, a + 1 + Math.floor(r() * 600)));
  }
  texts.push(...mixedDocuments(500, seed));
  const big = mixedCorpus(400 * 1024, seed + 1);
  texts.push(big);
  for (let i = 0; i < 200; i++) {
    const a = Math.floor(r() * big.length);
    texts.push(big.slice(a, a + Math.floor(r() * 4000)));
  }
  for (let i = 0; i < 1_800; i++) texts.push(tricky(r, i < 1_500 ? 24 : 200));
  // Runs of one or two characters, of lengths around the merge and heap thresholds.
  for (const unit of ['a', 'A', '1', '=', '.', '-', '_', ' ', '\n', '\t', '\u2581', '中', 'あ', '😀', 'é', 'e\u0301', 'ab', 'aab', ' a', '\n\n ', '<b>', '0 ']) {
    for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000]) texts.push(unit.repeat(n));
  }
  return texts;
}
