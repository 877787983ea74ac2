/**
 * The panel's states as the real language server produces them: the built server
 * (dist/server.js) started over LSP on a fresh temporary copy of examples/, asked for preview
 * snapshots exactly as the extension asks (`contextLens/preview`, with the same variants for
 * compare mode and what-if budgets). Nothing is synthetic and nothing is cached: every run builds
 * the workspace and asks the server again, and the temporary copy is removed afterwards.
 *
 * Besides the examples as they are, the copy gets three folders written for states the examples
 * do not reach: `failed/` (sdk-qa with a 2,500-token window, so the required content alone
 * overflows and assembly fails), `large/` (sdk-qa with a fixture of about 1 MB of evidence and
 * budgets that keep it all), `long-word/` (a question of one 30,000-character word) and `empty/` (a template with no config and no sample data, for the
 * server's empty reply). The error state is the sentence the extension shows when a preview request
 * is rejected, with the real rejection of a request sent after the server stopped.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PreviewRequest } from '../../src/protocol/lsp';
import type { PreviewParams } from '../../src/protocol/lsp';
import type { HostMessage, PreviewSnapshotBody } from '../../src/protocol/preview';
import { LspClient, REPO, copyWorkspace, removeWorkspace, uriOf } from '../lsp/harness';

/** One state of the panel: a name for reports and file names, and the host message that shows it. */
export interface PanelState {
  name: string;
  message: HostMessage;
}

/** Length of the unbroken word in the `long-word/` fixture's question. */
export const LONG_WORD = 30_000;

/** Bytes of evidence text in the `large/` fixture (the "1 MB request" state). */
export const LARGE_BYTES = 1_000_000;

const WORDS = 'retry backoff request client timeout idempotent header response status connection invoice payment token budget window evidence source version release upgrade policy'.split(' ');

/** Deterministic prose of about `bytes` characters, in lines of about 80, no YAML specials. */
function prose(seed: number, bytes: number): string {
  const lines: string[] = [];
  let line = '';
  let n = 0;
  let x = seed;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const w = WORDS[x % WORDS.length];
    line += (line ? ' ' : '') + w;
    if (line.length > 76) {
      lines.push(line);
      n += line.length + 1;
      line = '';
    }
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

function writeExtraFolders(ws: string): void {
  const sdk = path.join(ws, 'sdk-qa');
  // failed/: the required policy and question alone exceed the input budget of a 2,500-token window.
  const failed = path.join(ws, 'failed');
  cpSync(sdk, failed, { recursive: true });
  const failedConfig = path.join(failed, 'sdk-qa.context.yaml');
  writeFileSync(failedConfig, readFileSync(failedConfig, 'utf8').replace('window: 16000', 'window: 2500'));

  // large/: one fixture of about LARGE_BYTES of evidence, and budgets that keep every item.
  const large = path.join(ws, 'large');
  cpSync(sdk, large, { recursive: true });
  for (const f of readdirSync(path.join(large, 'fixtures'))) rmSync(path.join(large, 'fixtures', f));
  const largeConfig = path.join(large, 'sdk-qa.context.yaml');
  writeFileSync(
    largeConfig,
    readFileSync(largeConfig, 'utf8')
      .replace('window: 16000', 'window: 700000')
      .replace('budget: 3000, priority: 3, label: EVIDENCE, pack: skip, order: edges, max_items: 8', 'budget: 500000, priority: 3, label: EVIDENCE, pack: skip, order: edges'),
  );
  const items = 250;
  const each = Math.ceil(LARGE_BYTES / items);
  const evidence = Array.from({ length: items }, (_, i) => {
    const text = prose(i + 1, each)
      .split('\n')
      .map((l) => `        ${l}`)
      .join('\n');
    return `    - id: big_${String(i).padStart(4, '0')}\n      title: Generated passage ${i}\n      source: generated/${i}\n      version: "4.2"\n      text: |-\n${text}`;
  });
  writeFileSync(
    path.join(large, 'fixtures', 'big.fixture.yaml'),
    `template: ../sdk-qa.prompt\nslots:\n  policy: { file: ../policy/support-v3.md }\n  question: How do retries work?\n  evidence:\n${evidence.join('\n')}\n`,
  );

  // long-word/: a question that is one unbroken word of LONG_WORD characters (reflow at 320 px).
  const long = path.join(ws, 'long-word');
  cpSync(sdk, long, { recursive: true });
  const longConfig = path.join(long, 'sdk-qa.context.yaml');
  writeFileSync(longConfig, readFileSync(longConfig, 'utf8').replace('window: 16000', 'window: 64000').replace('required: true, budget: 300 }', 'required: true, budget: 20000 }'));
  const longFixture = path.join(long, 'fixtures', 'post-retries.fixture.yaml');
  const word = 'x'.repeat(LONG_WORD);
  writeFileSync(longFixture, readFileSync(longFixture, 'utf8').replace(/^  question: .*$/m, `  question: ${word}`));

  // empty/: a template the server has nothing to assemble for.
  const empty = path.join(ws, 'empty');
  mkdirSync(empty, { recursive: true });
  writeFileSync(path.join(empty, 'plain.prompt'), '---\nmodel: gpt-4o\n---\n{{role "user"}}\nSummarise {{topic}} in one paragraph.\n');
}

/** The extension's sentence for a rejected preview request (src/extension/previewController.ts). */
function errorSentence(e: unknown): string {
  return `The Context Lens language server did not answer: ${e instanceof Error ? e.message : String(e)}`;
}

/**
 * Starts the server on a fresh copy of examples/, collects every state of the panel and stops the
 * server. Snapshots get consecutive sequence numbers from 1, as the panel stamps them.
 */
export async function collectRealStates(): Promise<PanelState[]> {
  const ws = copyWorkspace(path.join(REPO, 'examples'));
  writeExtraFolders(ws);
  const client = await LspClient.start({ workspace: ws });
  const states: PanelState[] = [];
  let seq = 0;
  const add = (name: string, body: PreviewSnapshotBody): void => {
    states.push({ name, message: { type: 'snapshot', snapshot: { ...body, seq: ++seq } } });
  };
  const ask = async (file: string, variant?: PreviewParams['variant'], extra: Partial<PreviewParams> = {}): Promise<PreviewSnapshotBody> => {
    const uri = uriOf(file);
    const reply = await client.connection.sendRequest(PreviewRequest.type, { uri, variant, ...extra });
    if (!('snapshot' in reply)) throw new Error(`no snapshot for ${file}: ${reply.empty}`);
    return reply.snapshot;
  };
  try {
    const examples: Array<[string, string]> = [
      ['sdk-qa', 'sdk-qa/sdk-qa.prompt'],
      ['refund', 'refund-support/refund.prompty'],
      ['refund-hybrid', 'refund-support/refund-hybrid.prompty'],
      ['defects-leaky', 'defects/leaky.prompt'],
      ['defects-agent', 'defects/agent.prompt'],
      ['zero-config-outdoor-gear', 'zero-config/outdoor-gear.prompty'],
      ['zero-config-support-chat', 'zero-config/support-chat.prompty'],
      ['zero-config-trip-planner', 'zero-config/trip-planner.prompt'],
    ];
    for (const [name, rel] of examples) {
      const file = path.join(ws, rel);
      await client.open(file);
      add(name, await ask(file));
    }
    const sdk = path.join(ws, 'sdk-qa', 'sdk-qa.prompt');
    const sdkUri = uriOf(sdk);
    add('compare-fixture', await ask(sdk, { templateUri: sdkUri, compare: { kind: 'fixture', path: path.join(ws, 'sdk-qa', 'fixtures', 'rate-limit.fixture.yaml') } }));
    add('compare-model', await ask(sdk, { templateUri: sdkUri, compare: { kind: 'model', model: 'gpt-4.1' } }));
    add('what-if', await ask(sdk, { templateUri: sdkUri, budgets: { evidence: 400 } }));
    add('compare-budget', await ask(sdk, { templateUri: sdkUri, budgets: { evidence: 400 }, compare: { kind: 'budget' } }));
    add('what-if-overflow', await ask(sdk, { templateUri: sdkUri, budgets: { evidence: 20000 } }));
    const failed = path.join(ws, 'failed', 'sdk-qa.prompt');
    await client.open(failed);
    add('assembly-failed', await ask(failed));
    const large = path.join(ws, 'large', 'sdk-qa.prompt');
    await client.open(large);
    add('large-1mb', await ask(large));

    const longWord = path.join(ws, 'long-word', 'sdk-qa.prompt');
    await client.open(longWord);
    add('long-word', await ask(longWord));

    const plain = path.join(ws, 'empty', 'plain.prompt');
    await client.open(plain);
    const emptyReply = await client.connection.sendRequest(PreviewRequest.type, { uri: uriOf(plain) });
    if (!('empty' in emptyReply)) throw new Error('expected an empty reply for empty/plain.prompt');
    states.push({ name: 'empty', message: { type: 'empty', seq: ++seq, reason: emptyReply.empty } });

  } finally {
    await client.stop();
    removeWorkspace(ws);
  }
  // The error state: what the panel shows when the server is gone, with the client's own rejection.
  let error = errorSentence(new Error('no reply'));
  try {
    await client.connection.sendRequest(PreviewRequest.type, { uri: uriOf(path.join(ws, 'sdk-qa', 'sdk-qa.prompt')) });
  } catch (e) {
    error = errorSentence(e);
  }
  states.push({ name: 'error', message: { type: 'error', seq: ++seq, message: error } });
  return states;
}
