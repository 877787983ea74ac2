/**
 * A `.prompty` file without any values, and the runtime line a request follows, through the built
 * CLI: a template that reads `{{customer.firstName}}` with nothing to read it from is analysed and
 * counted (an info names the missing value at its use) instead of failing as a template error, and
 * the trace says whether the request follows Prompty 0.1.x or v2.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');

function ctxlens(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const V01 = `---
name: Greeting
model:
  api: chat
  configuration: { type: openai, name: gpt-5-mini }
inputs:
  customer: { type: object }
---
system:
You greet customers.

user:
Hello {{customer.firstName}}, how can I help?
`;

const V2 = `---
name: Greeting
model:
  id: gpt-5-mini
inputs:
  name: { kind: string, default: Jane }
---
system:
You greet customers.

user:
Hello {{name}}
`;

let dir: string;
beforeAll(() => {
  spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'ignore' });
  dir = mkdtempSync(join(tmpdir(), 'ctxlens-lines-'));
  writeFileSync(join(dir, 'greet.prompty'), V01);
  writeFileSync(join(dir, 'v2.prompty'), V2);
});

describe('Prompty files without values and their runtime line', () => {
  it('a missing value is an info at its use, not a template error; the request is still counted', () => {
    const check = ctxlens(['check', '.', '--format', 'json'], dir);
    expect(check.code).toBe(0);
    const findings = JSON.parse(check.stdout).files.flatMap((f: { diagnostics: Array<{ rule: string; message: string; range: { start: { line: number } } }> }) => f.diagnostics);
    expect(findings.some((f: { rule: string }) => f.rule === 'template-invalid')).toBe(false);
    const missing = findings.find((f: { rule: string }) => f.rule === 'value-missing');
    expect(missing?.message).toContain("'customer'");
    expect(missing?.range.start.line).toBe(12); // the line of {{customer.firstName}} (0-based)
    const out = JSON.parse(ctxlens(['assemble', 'greet.prompty', '--format', 'json'], dir).stdout);
    expect(out.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(out.messages[1].content).toBe('Hello , how can I help?');
    expect(out.trace.input_tokens).toBeGreaterThan(0);
  });

  it('the trace names the runtime line: 0.1.x for the older format, v2 for model.id', () => {
    expect(JSON.parse(ctxlens(['assemble', 'greet.prompty', '--format', 'json'], dir).stdout).trace.runtime).toBe('Prompty 0.1.x');
    const v2 = JSON.parse(ctxlens(['assemble', 'v2.prompty', '--format', 'json'], dir).stdout);
    expect(v2.trace.runtime).toBe('Prompty v2');
    expect(v2.messages[1].content).toBe('Hello Jane');
  });

  it('a dotprompt trace names no Prompty line', () => {
    writeFileSync(join(dir, 'd.prompt'), '---\nmodel: gpt-5-mini\n---\nHello {{name}}\n');
    expect(JSON.parse(ctxlens(['assemble', 'd.prompt', '--format', 'json'], dir).stdout).trace.runtime).toBeUndefined();
  });

  it("renders a sample's Python values as the runtime prints them: floats, tuples, key order", () => {
    const sample = `---
name: Typed
model:
  api: chat
  configuration: { type: openai, name: gpt-5-mini }
sample:
  price: 2.0
  ranks: { "2": b, "1": a }
  pair: !!python/tuple [1, x]
---
system:
Price {{price}}; keys {% for k in ranks %}{{k}}{% endfor %}; pair {{pair}}
`;
    writeFileSync(join(dir, 'typed.prompty'), sample);
    const out = JSON.parse(ctxlens(['assemble', 'typed.prompty', '--format', 'json'], dir).stdout);
    // Python: 2.0 stays a float, the mapping keeps its YAML order, a tuple prints in parentheses.
    expect(out.messages[0].content).toBe("Price 2.0; keys 21; pair (1, 'x')");
  });
});
