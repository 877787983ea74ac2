/**
 * Differential suite of the Prompty engine against Prompty's own runtimes: every case of
 * test/oracle/prompty-golden/ (0.1.50 / 0.1.24 and v2, rendered by the real Python runtimes; see
 * the README there) is rendered in process by src/core/language/prompty/engine.ts following the case's
 * runtime line, with the case's inputs or the file's own sample data as that runtime takes them.
 *
 * - Where the runtime renders (`ok`, `ok-not-chat`), the messages must be the same: roles, part
 *   kinds, every string to the character, and v2's metadata. A case may instead carry a located
 *   `unsupported-feature` issue (the engine says it cannot reproduce it), never a silent difference.
 * - Where the runtime fails (`load-error`, `prepare-error`), the engine must report an issue or
 *   render nothing.
 *
 * Cases the engine does not reproduce yet are listed with their cause in known-differences.json;
 * each of them must still differ, so the list only shrinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOLDEN_DIR, GOLDEN_FILES, compare, lineOf, mask, partsOf, readGolden, renderCase, type Bucket, type GoldenCase, type Outcome } from './promptyGolden';
import { toOpenAI } from '../../src/core/export';
import type { Role } from '../../src/core/types';

const KNOWN_FILE = JSON.parse(fs.readFileSync(path.join(GOLDEN_DIR, 'known-differences.json'), 'utf8')) as { cases: Record<string, string>; provider_messages?: Record<string, string> };
const KNOWN: Record<string, string> = KNOWN_FILE.cases;
const KNOWN_PROVIDER: Record<string, string> = KNOWN_FILE.provider_messages ?? {};
const ACCEPTED: ReadonlySet<Bucket> = new Set(['exact', 'reported', 'error-agrees']);

describe.each(GOLDEN_FILES)('%s', (file) => {
  const cases = readGolden(file);
  const outcomes = new Map<string, { c: GoldenCase; o: Outcome }>();
  for (const c of cases) outcomes.set(c.id, { c, o: compare(c, renderCase(c)) });

  it('holds every case of its runtime line', () => {
    expect(cases.length).toBeGreaterThan(2000);
    const lines = new Set(cases.map(lineOf));
    expect(lines.size).toBe(1);
  });

  it('renders every case as the runtime does, or reports it', () => {
    const unexpected: string[] = [];
    for (const [id, { o }] of outcomes) {
      if (KNOWN[id] !== undefined) continue;
      if (!ACCEPTED.has(o.bucket)) unexpected.push(`${id}: ${o.bucket}\n  got  ${o.got ?? o.issue ?? ''}\n  want ${o.want ?? ''}`);
    }
    expect(unexpected).toEqual([]);
  });

  it('lists only cases that still differ (fixed cases leave known-differences.json)', () => {
    const fixed = [...outcomes].filter(([id, { o }]) => KNOWN[id] !== undefined && ACCEPTED.has(o.bucket)).map(([id]) => id);
    expect(fixed).toEqual([]);
  });

  // family:asked: the parts of each message as the runtime saves them (`message_parts`).
  it('keeps the parts of every message as the runtime does (message_parts)', () => {
    const withParts = [...outcomes.values()].filter(({ c }) => c.message_parts !== undefined);
    if (file === 'golden-v2.jsonl') expect(withParts.length).toBeGreaterThan(5);
    for (const { c } of withParts) expect(mask(JSON.stringify(partsOf(renderCase(c).messages, lineOf(c)))), c.id).toBe(mask(JSON.stringify(c.message_parts)));
  });

  // family:asked: what the runtime's OpenAI executor sends (`provider_messages`), against the
  // product's Chat Completions messages (export.ts toOpenAI) of the same render.
  it('sends what the runtime sends to OpenAI (provider_messages), or the difference is listed', () => {
    const unexpected: string[] = [];
    const fixed: string[] = [];
    for (const { c } of outcomes.values()) {
      if (c.provider_messages === undefined) continue;
      const r = renderCase(c);
      const sent = toOpenAI(r.messages.map((m) => ({ role: m.role as Role, content: m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''), parts: m.parts.map((p) => (p.type === 'media' ? { text: '', media: { url: p.url } } : { text: p.type === 'text' ? p.text : '' })) })));
      const same = mask(JSON.stringify(sent)) === mask(JSON.stringify(c.provider_messages));
      if (!same && KNOWN_PROVIDER[c.id] === undefined) unexpected.push(`${c.id}\n  got  ${JSON.stringify(sent)}\n  want ${JSON.stringify(c.provider_messages)}`);
      if (same && KNOWN_PROVIDER[c.id] !== undefined) fixed.push(c.id);
    }
    expect(unexpected).toEqual([]);
    expect(fixed).toEqual([]);
  });

  it('locates every reported case inside the file', () => {
    for (const { c, o } of outcomes.values()) {
      if (o.bucket !== 'reported') continue;
      const r = renderCase(c);
      const issue = r.issues.find((i) => i.rule === 'unsupported-feature');
      expect(issue, c.id).toBeDefined();
      expect(issue!.span.start, c.id).toBeGreaterThanOrEqual(0);
      expect(issue!.span.end, c.id).toBeLessThanOrEqual(c.files['case.prompty'].length);
    }
  });
});
