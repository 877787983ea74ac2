/**
 * Size of the packaged .vsix (target: under 10 MB) and its biggest files, compressed and not, so a
 * change in size names its cause. Packages it first. Most of it is the exact tokenizers' data
 * (dist/tokenizers/: OpenAI's encodings and the open-weight families' vocabularies and merges).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const TARGET = 10 * 1024 * 1024;

/** The entries of the zip with their sizes, from `unzip -v` when it is installed. */
function entries(vsix: string): Array<{ name: string; size: number; compressed: number }> {
  const r = spawnSync('unzip', ['-v', vsix], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  const out: Array<{ name: string; size: number; compressed: number }> = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*(\d+)\s+\S+\s+(\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S.*)$/.exec(line);
    if (m) out.push({ size: Number(m[1]), compressed: Number(m[2]), name: m[3] });
  }
  return out;
}

export async function run(): Promise<Record<string, unknown>> {
  const root = resolve(__dirname, '../..');
  const r = spawnSync(process.execPath, ['scripts/package.mjs'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`packaging failed: ${r.stderr}`);
  const vsix = readdirSync(join(root, 'out')).filter((f) => f.endsWith('.vsix')).map((f) => join(root, 'out', f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const bytes = statSync(vsix).size;
  const list = entries(vsix).sort((a, b) => b.compressed - a.compressed);
  const mb = (n: number) => (n / 1024 / 1024).toFixed(2);
  const tokenizerData = list.filter((e) => e.name.includes('/dist/tokenizers/')).reduce((s, e) => s + e.compressed, 0);
  console.log(`.vsix ${mb(bytes)} MB (${bytes.toLocaleString('en-US')} bytes)  target < 10 MB: ${bytes < TARGET ? 'met' : 'NOT met'}; tokenizer data ${mb(tokenizerData)} MB of it\n`);
  if (list.length) {
    console.log('| file | MB in the .vsix | MB unpacked |');
    console.log('|---|---:|---:|');
    for (const e of list.slice(0, 12)) console.log(`| ${e.name} | ${mb(e.compressed)} | ${mb(e.size)} |`);
  }
  return { path: vsix, bytes, targetBytes: TARGET, met: bytes < TARGET, tokenizerDataBytes: tokenizerData, biggest: list.slice(0, 12) };
}
