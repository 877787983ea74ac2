"""Renders plain prompt files with the real libraries, for test/oracle/plain-golden.test.ts.

Reads {"cases": [{"id", "dir", "messages": [{"role", "file", "key"?, "via", "format"?, "jinja"?,
"replace"?, "strip"?}], "values"}]} on stdin and writes {"versions", "results": {id: {"ok": true,
"messages": [{"role", "text"}]} | {"ok": false, "error"}}} on stdout.

via:
  langchain   PromptTemplate.from_file(path, template_format=format).format(**values)
  jinja2      jinja2.Environment(**settings) (or SandboxedEnvironment) .from_string(text).render(**values)
  load_prompt langchain_core.prompts.load_prompt(path): format_messages for a chat prompt, else format
  text        the file read as text, str.replace of each replacement in order
Nothing of these libraries is reimplemented here: each case is the library's own call.
"""

import json
import os
import sys
import warnings

import jinja2
import jinja2.sandbox
import langchain_core
import yaml
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate, load_prompt

warnings.simplefilter("ignore")

ROLE = {"system": "system", "human": "user", "ai": "assistant", "user": "user", "assistant": "assistant", "developer": "developer", "tool": "tool"}


def read_source(path, key):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if key is None:
        return text
    data = yaml.safe_load(text)
    for seg in key.split("."):
        data = data[int(seg)] if isinstance(data, list) else data[seg]
    return data


def render_message(base, m, values):
    path = os.path.join(base, m["file"])
    via = m["via"]
    if via == "langchain":
        if m.get("key") is not None:
            prompt = PromptTemplate.from_template(read_source(path, m["key"]), template_format=m.get("format", "f-string"))
        else:
            prompt = PromptTemplate.from_file(path, template_format=m.get("format", "f-string"))
        text = prompt.format(**values)
        return [{"role": m["role"], "text": text.strip() if m.get("strip") == "output" else text}]
    if via == "jinja2":
        s = dict(m.get("jinja") or {})
        sandboxed = s.pop("sandboxed", False)
        undefined = s.pop("undefined", "default")
        env_class = jinja2.sandbox.SandboxedEnvironment if sandboxed else jinja2.Environment
        env = env_class(undefined=jinja2.StrictUndefined if undefined == "strict" else jinja2.Undefined, **s)
        source = read_source(path, m.get("key"))
        if m.get("strip") == "file":
            source = source.strip()
        text = env.from_string(source).render(**values)
        return [{"role": m["role"], "text": text.strip() if m.get("strip") == "output" else text}]
    if via == "load_prompt":
        # load_prompt reads template_path from the working directory: the project's root, as an application runs.
        os.chdir(base)
        prompt = load_prompt(path)
        if isinstance(prompt, ChatPromptTemplate):
            return [{"role": ROLE[msg.type], "text": msg.content} for msg in prompt.format_messages(**values)]
        return [{"role": m["role"], "text": prompt.format(**values)}]
    if via == "text":
        text = read_source(path, m.get("key"))
        if m.get("strip") == "file":
            text = text.strip()
        for needle, name in (m.get("replace") or {}).items():
            text = text.replace(needle, str(values[name]))
        return [{"role": m["role"], "text": text.strip() if m.get("strip") == "output" else text}]
    raise ValueError("unknown via " + via)


def main():
    request = json.load(sys.stdin)
    results = {}
    for case in request["cases"]:
        try:
            messages = []
            for m in case["messages"]:
                messages.extend(render_message(case["dir"], m, case["values"]))
            results[case["id"]] = {"ok": True, "messages": messages}
        except Exception as e:  # the library's refusal is the expected answer of some cases
            results[case["id"]] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    json.dump({"versions": {"langchain_core": langchain_core.__version__, "jinja2": jinja2.__version__}, "results": results}, sys.stdout)


main()
