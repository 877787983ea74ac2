#!/usr/bin/env python3
"""A client of `ctxlens serve` with the Python standard library only (urllib): assembles the
sdk-qa example for a question with retrieved evidence, then checks a model answer's citations
against the trace of the response.

    ctxlens serve --root examples &        # prints: listening on http://127.0.0.1:8710
    python3 examples/clients/python_client.py http://127.0.0.1:8710

The service URL comes from the first argument, else CTXLENS_URL, else http://127.0.0.1:8710.
"""
import json
import os
import sys
import urllib.error
import urllib.request

BASE = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CTXLENS_URL", "http://127.0.0.1:8710")).rstrip("/")


def call(path, body):
    req = urllib.request.Request(
        BASE + path,
        data=json.dumps(body).encode("utf-8"),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        err = json.load(e).get("error", {})
        raise SystemExit(f"{path}: {e.code} {err.get('code')}: {err.get('message')}")


context = call(
    "/v1/context",
    {
        "template": "sdk-qa/sdk-qa.prompt",
        "query": "Does SDK 4.2 retry rate-limit responses?",
        "conversation_id": "conv_72",
        "user_id": "user_18",
        "tenant": "acme",
        "product": "python-sdk",
        "version": "4.2",
        "max_input_tokens": 12000,
        "permission_revision": "perm-2026-08-01",
        "provider": "openai",
        "slots": {
            "policy": "Answer from the evidence only and cite evidence ids.",
            "evidence": [
                {
                    "evidence_id": "ev_0192",
                    "source_id": "sdk-docs/retries",
                    "tenant": "acme",
                    "source_type": "official_documentation",
                    "version": "4.2",
                    "relevance": 0.94,
                    "authority": 0.95,
                    "text": "SDK 4.2 retries 429 responses up to three times, honouring Retry-After.",
                    "source_span": [820, 1160],
                },
                {
                    "evidence_id": "ev_0077",
                    "source_id": "sdk-docs/3.9/retries",
                    "tenant": "acme",
                    "version": "3.9",
                    "relevance": 0.7,
                    "text": "SDK 3.9 never retries.",
                },
            ],
        },
    },
)

print(f"context {context['context_id']} ({context['template_version']}): {context['token_count']} tokens")
print("evidence: " + ", ".join(context["evidence"]))
for e in context["selection_log"]:
    print(f"  {e['evidence_id']} {e['decision']} {' '.join(e['reasons'])}")

# A model answer citing one supplied id and one that was filtered out, checked against the trace.
check = call(
    "/v1/validate",
    {
        "answer": "Yes: 4.2 retries rate-limited requests (ev_0192); 3.9 did not (ev_0077).",
        "citations": [
            {"claim_id": "claim_1", "evidence_ids": ["ev_0192"]},
            {"claim_id": "claim_2", "evidence_ids": ["ev_0077"]},
        ],
        "trace": context["trace"],
    },
)
print(f"citations valid: {str(check['valid']).lower()}; not supplied: {', '.join(check['unknown_ids']) or 'none'}")
