/**
 * `.prompty` files rendered as the loader their project runs (language/prompty/loader.ts), through
 * the library as the CLI and the editor assemble them: a workspace on disk, its Python imports,
 * requirements, package.json and .csproj read through the host, the file's own pin, and the
 * file's own format as the last resort. Each case checks the messages the loader renders, that
 * no error says the file cannot be loaded, and that the trace names the loader and why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspace, type AssembleOutput } from '../../src/lib';
import { analyzeTemplate } from '../../src/core/analyze';
import { DiskFileHost } from '../../src/node/fileHost';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxlens-loaders-')).replace(/\\/g, '/');
  roots.push(root);
  fs.mkdirSync(path.join(root, '.git'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text, 'utf8');
  }
  return root;
}

const messages = (r: AssembleOutput) => r.messages.map((m) => ({ role: m.runtimeRole ?? m.role, content: m.content }));
const errors = (r: AssembleOutput) => r.findings.filter((f) => f.severity === 'error').map((f) => `${f.rule}: ${f.message}`);

// A promptflow chat flow's prompt: list inputs, chat history, a block tag on its own line.
const CHAT = `---
name: chat
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-4o
  parameters:
    max_tokens: 256
inputs:
  question:
    type: string
    is_chat_input: true
  chat_history:
    type: list
    is_chat_history: true
    default: []
sample:
  question: And Bing?
  chat_history:
    - inputs: { question: What is ChatGPT? }
      outputs: { answer: A language model. }
---
system:
You are a helpful assistant.
{% for item in chat_history %}
user:
{{ item.inputs.question }}
assistant:
{{ item.outputs.answer }}
{% endfor %}
user:
{{ question }}
`;

const CHAT_MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'What is ChatGPT?' },
  { role: 'assistant', content: 'A language model.' },
  { role: 'user', content: 'And Bing?' },
];

describe('the loader a .prompty file is rendered as', () => {
  it("follows promptflow where the project's Python imports its Prompty, without an error", () => {
    const root = workspace({ 'flow/app.py': 'from promptflow.core import Prompty\n\nflow = Prompty.load("chat.prompty")\n', 'flow/chat.prompty': CHAT });
    const r = openWorkspace(root, { modelFiles: false }).assemble('flow/chat.prompty');
    expect(errors(r)).toEqual([]);
    expect(messages(r)).toEqual(CHAT_MESSAGES);
    expect(r.trace.runtime).toMatch(/^promptflow's Prompty .*app\.py imports promptflow's Prompty/);
    expect(r.findings.filter((f) => f.rule === 'loader-guessed')).toEqual([]);
  });

  it('says once that the loader is a guess where nothing in the workspace names it, with quick fixes that pin it', () => {
    const root = workspace({ 'chat.prompty': CHAT });
    const r = openWorkspace(root, { modelFiles: false }).assemble('chat.prompty');
    expect(errors(r)).toEqual([]);
    expect(messages(r)).toEqual(CHAT_MESSAGES);
    const guessed = r.findings.filter((f) => f.rule === 'loader-guessed');
    expect(guessed).toHaveLength(1);
    expect(guessed[0].severity).toBe('info');
    expect(guessed[0].fixes?.[0].edits[0].newText).toBe('# prompty-loader: promptflow\n');
    // Applying the preferred fix pins the loader: the finding goes, the rendering stays.
    const fix = guessed[0].fixes![0].edits[0];
    const text = fs.readFileSync(path.join(root, 'chat.prompty'), 'utf8');
    fs.writeFileSync(path.join(root, 'chat.prompty'), text.slice(0, fix.span.start) + fix.newText + text.slice(fix.span.end));
    const pinned = openWorkspace(root, { modelFiles: false }).assemble('chat.prompty');
    expect(pinned.findings.filter((f) => f.rule === 'loader-guessed')).toEqual([]);
    expect(messages(pinned)).toEqual(CHAT_MESSAGES);
    expect(pinned.trace.runtime).toMatch(/the file pins it/);
  });

  it("takes the loader the context config names (prompty.loader), before the workspace and the file's format", () => {
    const config = 'version: 1\nwindow: 8000\noutput: 500\nprompty: { loader: promptflow }\nslots:\n  question: { kind: user, trust: untrusted }\n  chat_history: { kind: history, trust: trusted }\n';
    const root = workspace({ 'chat.prompty': CHAT, 'chat.context.yaml': config });
    const r = openWorkspace(root, { modelFiles: false }).assemble('chat.prompty');
    expect(errors(r)).toEqual([]);
    expect(r.findings.filter((f) => f.rule === 'loader-guessed')).toEqual([]);
    expect(messages(r)).toEqual(CHAT_MESSAGES);
    expect(r.trace.runtime).toMatch(/^promptflow's Prompty .*its context config says so \(prompty\.loader in chat\.context\.yaml\)/);
  });

  it('takes the loader a setting pins by glob (contextLens.prompty.loaders), and a config key over it', () => {
    const root = workspace({ 'flows/chat.prompty': CHAT });
    const host = new DiskFileHost([root]);
    const a = analyzeTemplate(host, `${root}/flows/chat.prompty`, { promptyLoaders: { 'flows/**': 'promptflow' } })!;
    expect(a.findings.filter((f) => f.rule === 'loader-guessed')).toEqual([]);
    expect(a.assembly!.trace.runtime).toMatch(/^promptflow's Prompty .*the setting pins it for 'flows\/\*\*'/);
    // Not matched by the glob: the file's own format decides, as a guess.
    const b = analyzeTemplate(new DiskFileHost([root]), `${root}/flows/chat.prompty`, { promptyLoaders: { 'other/**': 'promptflow' } })!;
    expect(b.findings.filter((f) => f.rule === 'loader-guessed')).toHaveLength(1);
  });

  it("renders a RAG template as azure-ai-inference's mustache where the project depends on it, with no Jinja error", () => {
    const rag = `---
name: grounded chat
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-4o-mini
sample:
  question: Where is the pool?
  documents:
    - { id: "1", content: "The pool is on floor 3 & open <daily>." }
    - { id: "2", content: "Breakfast is free." }
---
system:
Answer from the documents.
# Documents
{{#documents}}
[{{id}}] {{content}}
{{/documents}}
user:
{{question}}
`;
    const root = workspace({ 'requirements.txt': 'azure-ai-inference[prompts]==1.0.0b9\nazure-identity\n', 'src/prompts/grounded.prompty': rag });
    const r = openWorkspace(root, { modelFiles: false }).assemble('src/prompts/grounded.prompty');
    expect(errors(r)).toEqual([]);
    expect(r.findings.filter((f) => f.rule === 'template-invalid' || f.rule === 'unsupported-feature')).toEqual([]);
    expect(messages(r)).toEqual([
      { role: 'system', content: 'Answer from the documents.\n# Documents\n[1] The pool is on floor 3 &amp; open &lt;daily&gt;.\n[2] Breakfast is free.' },
      { role: 'user', content: 'Where is the pool?' },
    ]);
    expect(r.trace.runtime).toMatch(/^azure-ai-inference's PromptTemplate .*requirements\.txt depends on azure-ai-inference/);
  });

  it("renders `template: nunjucks` as Prompty's TypeScript runtime where package.json depends on it, never with a Python runtime's error", () => {
    const file = `---\nname: ts\nmodel:\n  api: chat\ntemplate: nunjucks\nsample:\n  name: "Ada & Bob"\n---\nsystem:\nHello {{ name }}.\n`;
    const root = workspace({ 'package.json': JSON.stringify({ name: 'app', dependencies: { '@prompty/core': '^2.0.0' } }), 'prompts/hello.prompty': file });
    const r = openWorkspace(root, { modelFiles: false }).assemble('prompts/hello.prompty');
    expect(errors(r)).toEqual([]);
    expect(messages(r)).toEqual([{ role: 'system', content: 'Hello Ada &amp; Bob.' }]);
    expect(r.trace.runtime).toMatch(/^Prompty's TypeScript runtime .*package\.json/);
  });

  it('says that the .NET runtime is not reproduced instead of a Python runtime error', () => {
    const file = `---\nname: eval\ninputs:\n  answer: string\n---\nsystem:\nRate: {{ answer }}\n`;
    const root = workspace({ 'Evals/Evals.csproj': '<Project Sdk="Microsoft.NET.Sdk">\n  <ItemGroup>\n    <PackageReference Include="Prompty.Core" Version="0.2.0" />\n  </ItemGroup>\n</Project>\n', 'Evals/eval.prompty': file });
    const r = openWorkspace(root, { modelFiles: false }).assemble('Evals/eval.prompty');
    expect(errors(r)).toEqual([]);
    expect(r.findings.some((f) => f.rule === 'unsupported-feature' && /\.NET runtime is not reproduced/.test(f.message))).toBe(true);
    expect(r.trace.runtime).toMatch(/^Prompty's \.NET runtime .*Evals\.csproj references Prompty/);
  });

  it("keeps Prompty's own runtime line where nothing says otherwise (no finding, the short trace name)", () => {
    const file = `---\nname: plain\nmodel:\n  api: chat\nsample:\n  name: Ada\n---\nsystem:\nHello {{ name }}.\n`;
    const root = workspace({ 'p.prompty': file });
    const r = openWorkspace(root, { modelFiles: false }).assemble('p.prompty');
    expect(r.trace.runtime).toBe('Prompty 0.1.x');
    expect(r.findings.filter((f) => f.rule === 'loader-guessed')).toEqual([]);
    expect(messages(r)).toEqual([{ role: 'system', content: 'Hello Ada.' }]);
  });
});
