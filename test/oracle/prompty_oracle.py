"""Oracle for test/oracle/prompty.test.ts: Prompty's Python runtime, reduced to its pure part.

Reads a JSON array of cases on stdin and writes a JSON array of results on stdout. Each case is
{"source": whole .prompty file text, "data": inputs, "templates": {name: source}}.

What it reproduces, from microsoft/prompty runtime/prompty/prompty:
- utils.load_text: the file is read in text mode (universal newlines: \r\n and \r become \n);
- utils.parse: the front matter regex, the body is group 2 (when it does not match, Prompty's
  loader fails on the missing attributes: reported as a failure here);
- renderers.Jinja2Renderer: ImmutableSandboxedEnvironment(loader=DictLoader(templates)) with
  default settings, get_template(name).render(**data);
- parsers.PromptyChatParser: parse() and parse_content() copied verbatim, except inline_image,
  which keeps every url as is instead of reading local files.

Data values: {"__str__": s, "fields": {...}} is an object that prints as s and has the fields as
attributes and items (like the assembly's ItemValue); {"__str__": s, "items": [...]} is a list that
prints as s (ItemList).
"""
import io
import json
import re
import sys
import typing
from collections.abc import Iterator

import jinja2
from jinja2 import DictLoader
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAIN = "__main__.prompty"

_yaml_regex = re.compile(
    r"^\s*" + r"(?:---|\+\+\+)" + r"(.*?)" + r"(?:---|\+\+\+)" + r"\s*(.+)$",
    re.S | re.M,
)


def load_text(contents: str) -> str:
    # open(file_path, encoding="utf-8").read(): universal newlines
    return io.TextIOWrapper(io.BytesIO(contents.encode("utf-8", "surrogatepass")), encoding="utf-8").read()


def parse_body(contents: str):
    """utils.parse; None when the regex does not match (Prompty.load then fails on attributes None)."""
    result = _yaml_regex.search(contents)
    if result:
        return result.group(2)
    return None


class Item:
    """An object with __str__ whose fields are its attributes and items."""

    def __init__(self, text, fields):
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_fields", fields)

    def __str__(self):
        return self._text

    def __getattr__(self, name):
        fields = object.__getattribute__(self, "_fields")
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def __getitem__(self, key):
        return self._fields[key]


class ItemList(list):
    """A list that prints as its own text."""

    def __init__(self, text, items):
        super().__init__(items)
        self._text = text

    def __str__(self):
        return self._text


def decode(v):
    if isinstance(v, dict):
        if "__str__" in v and "fields" in v:
            return Item(v["__str__"], {k: decode(x) for k, x in v["fields"].items()})
        if "__str__" in v and "items" in v:
            return ItemList(v["__str__"], [decode(x) for x in v["items"]])
        return {k: decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


class PromptyChatParser:
    """parsers.PromptyChatParser without the Prompty object."""

    def __init__(self) -> None:
        self.roles = ["assistant", "function", "system", "user", "tools"]

    def inline_image(self, image_item: str) -> str:
        # Prompty reads local files here; the oracle keeps every url as is.
        return image_item

    def parse_args(self, args: str) -> dict[str, str]:
        # regular expression to parse key-value pairs
        string_match = r"\"([^\"]*)\""
        bool_match = r"([Tt]rue|[Ff]alse)"
        float_match = r"([0-9]+(\.[0-9]+))"
        int_match = r"([0-9]+)"

        s = f"({string_match}|{bool_match}|{float_match}|{int_match})"

        patterns = r"(\w+)\s*=\s*(" + s + r")\s*(,?)\s*"

        matches = re.findall(patterns, args)
        full_args = {}
        for m in matches:
            if m[3] != "":
                full_args[m[0]] = m[3]
            elif m[4] != "":
                full_args[m[0]] = m[4].lower() == "true"
            elif m[5] != "":
                full_args[m[0]] = float(m[5])
            elif m[7] != "":
                full_args[m[0]] = int(m[7])

        return full_args

    def parse_content(self, content: str):
        # regular expression to parse markdown images
        image = r"(?P<alt>!\[[^\]]*\])\((?P<filename>.*?)(?=\"|\))\)"
        matches = re.findall(image, content, flags=re.MULTILINE)
        if len(matches) > 0:
            content_items = []
            content_chunks = re.split(image, content, flags=re.MULTILINE)
            current_chunk = 0
            for i in range(len(content_chunks)):
                # image entry
                if current_chunk < len(matches) and content_chunks[i] == matches[current_chunk][0]:
                    content_items.append(
                        {
                            "type": "image_url",
                            "image_url": {"url": self.inline_image(matches[current_chunk][1].split(" ")[0].strip())},
                        }
                    )
                # second part of image entry
                elif current_chunk < len(matches) and content_chunks[i] == matches[current_chunk][1]:
                    current_chunk += 1
                # text entry
                else:
                    if len(content_chunks[i].strip()) > 0:
                        content_items.append({"type": "text", "text": content_chunks[i].strip()})
            return content_items
        else:
            return content

    def parse(self, data: str) -> Iterator[dict[str, typing.Any]]:
        # regular expression to capture boundary roles with optional key-value pairs
        boundary = (
            r"(?i)^\s*#?\s*(" + "|".join(self.roles) + r")(\[((\w+)*\s*=\s*\"?([^\"]*)\"?\s*(,?)\s*)+\])?\s*:\s*$"
        )
        content_buffer: list[str] = []
        # first role is system (if not specified)
        arg_buffer = {"role": "system"}

        for line in data.splitlines():
            # check of ![thread]
            if line.strip().startswith("![thread]"):
                # if content buffer is not empty, then add to messages
                if len(content_buffer) > 0:
                    yield arg_buffer | {"content": "\n".join(content_buffer)}
                    content_buffer = []

                arg_buffer = {
                    "role": "thread",
                }

            # check if line is a boundary
            elif re.match(boundary, line):
                # if content buffer is not empty, then add to messages
                if len(content_buffer) > 0:
                    yield arg_buffer | {"content": "\n".join(content_buffer)}
                    content_buffer = []

                # boundary check for args
                if "[" in line and "]" in line:
                    role, args = line[:-2].split("[", 2)
                    arg_buffer = self.parse_args(args) | {
                        "role": role.strip().lower(),
                    }
                # standard boundary
                else:
                    arg_buffer = {
                        "role": line.replace(":", "").strip().lower(),
                    }
            else:
                content_buffer.append(line)

        # add last message
        if len(content_buffer) > 0:
            yield arg_buffer | {"content": "\n".join(content_buffer)}

    def invoke(self, data: str) -> list[dict[str, str]]:
        messages = []
        for item in self.parse(data):
            if "content" in item:
                item["content"] = self.parse_content(item["content"])

            messages.append(item)

        return messages


def run(case):
    body = parse_body(load_text(case["source"]))
    if body is None:
        return {"ok": False, "stage": "load", "error": "no front matter: Prompty.load fails (attributes is None)"}
    templates = {MAIN: body}
    templates.update(case.get("templates") or {})
    env = ImmutableSandboxedEnvironment(loader=DictLoader(templates))
    data = decode(case.get("data") or {})
    try:
        rendered = env.get_template(MAIN).render(**data)
    except Exception as e:  # noqa: BLE001 - every failure of the runtime is a result
        return {"ok": False, "stage": "render", "error": f"{type(e).__name__}: {e}"}
    try:
        messages = PromptyChatParser().invoke(rendered)
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "stage": "parse", "rendered": rendered, "error": f"{type(e).__name__}: {e}"}
    out = []
    for m in messages:
        role = m.pop("role")
        content = m.pop("content")
        args = {}
        for k, v in m.items():
            args[k] = {"float": v} if isinstance(v, float) else v
        out.append({"role": role, "args": args, "content": content})
    return {"ok": True, "rendered": rendered, "messages": out}


def main():
    cases = json.loads(sys.stdin.read())
    results = []
    for case in cases:
        try:
            results.append(run(case))
        except RecursionError as e:
            results.append({"ok": False, "stage": "render", "error": f"RecursionError: {e}"})
    sys.stdout.write(json.dumps({"jinja2": jinja2.__version__, "results": results}, ensure_ascii=True))


if __name__ == "__main__":
    main()
