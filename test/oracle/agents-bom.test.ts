/**
 * Instruction files counted as tiktoken counts them, a byte order mark included. JavaScript's `\s`
 * matches U+FEFF, Rust's (tiktoken's) does not, so an engine that reuses the pattern verbatim
 * counts a file that starts with a BOM one token off (seen on real rule files). The reference is
 * tiktoken itself (Python, installed by scripts/prereqs.mjs) with its own o200k_base definition
 * (`tiktoken_ext.openai_public.o200k_base`: pattern and special tokens), fed the o200k_base ranks
 * that ship with js-tiktoken instead of downloading them.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getTokenizer } from '../../src/core/tokens';
import { outlineAgentFile, whatLoads } from '../../src/core/language';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DiskFileHost, toPosix } from '../../src/node/fileHost';

const root = resolve(__dirname, '../..');
const require = createRequire(join(root, 'package.json'));
const PYTHON = process.env.PYTHON ?? 'python3';

const ORACLE = `
import json, sys, base64
import tiktoken, tiktoken.load
import tiktoken_ext.openai_public as public
req = json.load(sys.stdin)
ranks = {}
for line in req["bpe_ranks"].split("\\n"):
    if not line:
        continue
    parts = line.split(" ")
    offset = int(parts[1])
    for i, tok in enumerate(parts[2:]):
        ranks[base64.b64decode(tok)] = offset + i
public.load_tiktoken_bpe = lambda *a, **k: ranks
enc = tiktoken.Encoding(**public.o200k_base())
json.dump({"version": tiktoken.__version__, "counts": [len(enc.encode_ordinary(t)) for t in req["texts"]]}, sys.stdout)
`;

function bpeRanks(): string {
  // js-tiktoken's o200k_base module: {"pat_str":…, "special_tokens":…, "bpe_ranks":"…"} as an ES default export.
  const file = require.resolve('js-tiktoken/ranks/o200k_base');
  const src = readFileSync(file.replace(/\.c?js$/, '.cjs'), 'utf8');
  const m = /"bpe_ranks":"((?:[^"\\]|\\.)*)"/.exec(src);
  if (!m) throw new Error(`no bpe_ranks in ${file}`);
  return JSON.parse(`"${m[1]}"`) as string;
}

const TEXTS = [
  '\uFEFF# Project rules\n\nUse pnpm.\n',
  '\uFEFF---\napplyTo: "**/*.ts"\n---\nPrefer named exports.\n',
  '\uFEFF\uFEFF two marks\n',
  'A mark \uFEFF inside a line and \uFEFF\n\uFEFF at a line start',
  ' \uFEFF leading space then mark',
  '\uFEFF',
  'no mark at all\n',
];

describe('instruction files with a BOM count as tiktoken counts them', () => {
  it('equals tiktoken o200k_base on every text, and a loaded file counts its BOM', () => {
    const r = spawnSync(PYTHON, ['-c', ORACLE], { input: JSON.stringify({ bpe_ranks: bpeRanks(), texts: TEXTS }), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
    if (r.status !== 0) throw new Error(`tiktoken oracle failed (scripts/prereqs.mjs installs tiktoken): ${r.stderr}`);
    const reply = JSON.parse(r.stdout) as { version: string; counts: number[] };
    const o200k = getTokenizer('o200k_base')!;
    expect(TEXTS.map((t) => o200k.count(t))).toEqual(reply.counts);

    // Through "what loads" and the outline: the file's text as read, its BOM included.
    const ws = toPosix(realpathSync(mkdtempSync(join(tmpdir(), 'ctxlens-agents-bom-'))));
    writeFileSync(`${ws}/AGENTS.md`, TEXTS[0]);
    writeFileSync(`${ws}/a.ts`, '');
    const host = new DiskFileHost([ws]);
    const w = whatLoads(host, `${ws}/a.ts`, { tokenizer: o200k, agent: 'agents-md' });
    expect(w.agents[0].total).toBe(reply.counts[0]);
    expect(outlineAgentFile(host, `${ws}/AGENTS.md`, TEXTS[0], o200k).tokens).toBe(reply.counts[0]);
  });
});
