"""Times OpenAI's Python tiktoken (Rust core) for the token-count bench (bench/tokens.ts).

The encoding is built from js-tiktoken's rank file (tiktoken's own loader would download it, and
nothing may leave the machine) with tiktoken's own pattern and special tokens, by handing the
rank dict to tiktoken_ext.openai_public's constructor in place of its download.

usage: python_tiktoken.py <encoding> <js-tiktoken rank .cjs> <corpus file> <run-length> <repeats>
prints one JSON object.
"""
import base64
import json
import sys
import time


def main() -> None:
    name, rank_file, corpus_file, run_length, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    import tiktoken
    import tiktoken_ext.openai_public as public

    src = open(rank_file, encoding="utf-8").read()
    data = json.loads(src[src.index("{"): src.rindex("}") + 1])
    ranks = {}
    for line in data["bpe_ranks"].split("\n"):
        parts = line.split(" ")
        if len(parts) < 2:
            continue
        first = int(parts[1])
        for i, tok in enumerate(parts[2:]):
            ranks[base64.b64decode(tok)] = first + i
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    t0 = time.perf_counter()
    enc = tiktoken.Encoding(**getattr(public, name)())
    enc.encode_ordinary("warm up")
    build_s = time.perf_counter() - t0

    text = open(corpus_file, encoding="utf-8", newline="").read()
    best_wall, best_cpu, count = None, None, None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        count = len(enc.encode_ordinary(text))
        w, c = time.perf_counter() - w0, time.process_time() - c0
        best_wall = w if best_wall is None else min(best_wall, w)
        best_cpu = c if best_cpu is None else min(best_cpu, c)

    run = "a" * run_length
    w0, c0 = time.perf_counter(), time.process_time()
    run_count = len(enc.encode_ordinary(run))
    run_wall, run_cpu = time.perf_counter() - w0, time.process_time() - c0

    print(json.dumps({
        "version": tiktoken.__version__,
        "build_s": build_s,
        "count": count,
        "wall_s": best_wall,
        "cpu_s": best_cpu,
        "run_count": run_count,
        "run_wall_s": run_wall,
        "run_cpu_s": run_cpu,
    }))


if __name__ == "__main__":
    main()
