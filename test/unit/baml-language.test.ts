/**
 * The BAML language's findings as a BAML user expects them: the runtime's own message where a
 * project does not load (located at the line it names), why a function cannot be built, a
 * generator pinning another runtime version, a client that would need the network, and a clear
 * finding naming the package where no runtime is lent.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskFileHost } from '../../src/node/fileHost';
import { analyzeTemplate } from '../../src/core/project/analyze';
import { parseTemplate, useBamlRuntime, templateFileOf } from '../../src/core/language';
import { installBamlRuntime } from '../../src/node/bamlRuntime';

function project(files: Record<string, string>): { root: string; host: DiskFileHost } {
  const root = mkdtempSync(path.join(tmpdir(), 'ctxlens-baml-'));
  for (const [name, text] of Object.entries(files)) {
    const p = path.join(root, 'baml_src', name);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  return { root, host: new DiskFileHost([root]) };
}

const GOOD = `
function Greet(name: string) -> string {
  client "openai/gpt-4o"
  prompt #"
    {{ _.role("user") }} Hello {{ name }}
  "#
}

test Ann {
  functions [Greet]
  args {
    name "Ann"
  }
}
`;

describe('BAML language', () => {
  afterEach(() => {
    // Every test leaves the Node host's runtime installed, as the front ends have it.
    installBamlRuntime();
  });

  it('addresses a function inside its file, and reads the file for it', () => {
    expect(templateFileOf('baml_src/a.baml#Greet')).toBe('baml_src/a.baml');
    expect(templateFileOf('x/y.prompt')).toBe('x/y.prompt');
    const doc = parseTemplate('baml_src/a.baml#Greet', GOOD);
    expect(doc.format).toBe('baml');
    expect(doc.uses.map((u) => [u.slot, u.role])).toEqual([['name', 'user']]);
    expect(doc.frontMatter?.model?.value).toBe('gpt-4o');
    const { root, host } = project({ 'a.baml': GOOD });
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    expect(a.fixture?.name).toBe('Ann');
    expect(a.assembly!.messages.map((m) => [m.role, m.content])).toEqual([['user', 'Hello Ann']]);
  });

  it('a project that does not load: one located finding with the runtime\'s message', () => {
    const broken = GOOD.replace('client "openai/gpt-4o"', 'client "openai/gpt-4o"\n  bogus line here');
    const { root, host } = project({ 'a.baml': broken });
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    const invalid = a.findings.filter((f) => f.rule === 'template-invalid');
    expect(invalid).toHaveLength(1);
    expect(invalid[0].message).toMatch(/^BAML: /);
    expect(invalid[0].message).not.toContain('Stack backtrace');
    // Located at the line the runtime names.
    const line = broken.slice(0, invalid[0].span.start).split('\n').length;
    expect(invalid[0].message).toContain(`baml_src/a.baml:${line}`);
  });

  it('a function whose request cannot be built says why, at the function', () => {
    const { root, host } = project({ 'a.baml': GOOD.replace('name "Ann"', 'other "x"') });
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    const f = a.findings.find((x) => x.rule === 'template-invalid')!;
    expect(f.message).toContain('Missing required parameter: name');
    expect(GOOD.replace('name "Ann"', 'other "x"').slice(f.span.start, f.span.end)).toBe('Greet');
  });

  it('a generator pinning another version is an info naming both versions', () => {
    const { root, host } = project({ 'a.baml': GOOD, 'generators.baml': 'generator g {\n  output_type "typescript"\n  version "0.201.0"\n}\n' });
    const doc = parseTemplate(`${root}/baml_src/generators.baml`, 'generator g {\n  output_type "typescript"\n  version "0.201.0"\n}\n');
    const info = doc.findings.find((f) => f.rule === 'unsupported-feature')!;
    expect(info.severity).toBe('info');
    expect(info.message).toContain('0.201.0');
    expect(info.message).toContain('0.226.2');
    // The other file of the project does not change the function's request.
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    expect(a.assembly!.messages[0].content).toBe('Hello Ann');
  });

  it('a vertex-ai client is not built (its runtime fetches a token over the network): a finding at the client', () => {
    const text = GOOD.replace('client "openai/gpt-4o"', 'client Vx').concat('\nclient<llm> Vx {\n  provider vertex-ai\n  options {\n    model "gemini-1.5-pro"\n    location "us-central1"\n  }\n}\n');
    const { root, host } = project({ 'a.baml': text });
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    const f = a.findings.find((x) => x.rule === 'unsupported-feature' && x.message.includes('vertex-ai'))!;
    expect(text.slice(f.span.start, f.span.end)).toBe('Vx');
  });

  it('without the runtime, a finding names the package to install', () => {
    const { root, host } = project({ 'a.baml': GOOD });
    // What the Node host lends where the package cannot be required.
    useBamlRuntime(() => ({ reason: 'BAML files are rendered by BAML\'s own runtime, which could not be loaded: install @boundaryml/baml (npm install @boundaryml/baml) beside Context Lens.' }));
    const a = analyzeTemplate(host, `${root}/baml_src/a.baml#Greet`)!;
    const f = a.findings.find((x) => x.message.includes('@boundaryml/baml'))!;
    expect(f.rule).toBe('unsupported-feature');
    expect(a.assembly!.messages).toEqual([]);
  });
});
