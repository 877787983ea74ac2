"""Times the references of the open-weight tokenizers for bench/tokenizers.ts.

usage: python_families.py <corpus file> <JSON {family: vocabulary file}>
prints {"versions", "counts": {family: tokens}, "cpu_s": {family: best CPU seconds of 3}}.
Counting follows test/oracle/tokenizers_oracle.py (encode_special_tokens = True; Tekken through
tiktoken with the file's ranks and pattern).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test", "oracle"))
from tokenizers_oracle import hf_counter, tekken_counter  # noqa: E402


def main() -> None:
    text = open(sys.argv[1], encoding="utf-8", newline="").read()
    files = json.loads(sys.argv[2])
    import tiktoken
    import tokenizers

    counts, cpu = {}, {}
    for name, path in files.items():
        count = tekken_counter(path) if name == "tekken" else hf_counter(path)
        count("warm up")
        best = None
        for _ in range(3):
            c0 = time.process_time()
            counts[name] = count(text)
            s = time.process_time() - c0
            best = s if best is None else min(best, s)
        cpu[name] = best
    versions = {"tokenizers": tokenizers.__version__, "tiktoken": getattr(tiktoken, "__version__", "unknown")}
    json.dump({"versions": versions, "counts": counts, "cpu_s": cpu}, sys.stdout)


if __name__ == "__main__":
    main()
