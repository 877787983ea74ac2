"""How the application builds the request Context Lens checks (support.context.yaml mirrors it).

Not run by Context Lens: it reads the prompt files as this code does.
"""
from pathlib import Path

import jinja2
from langchain_core.prompts import PromptTemplate

PROMPTS = Path(__file__).parent / "prompts"
rules_env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)


def build_messages(language, versions, evidence, question):
    system = (PROMPTS / "system.md").read_text()
    rules = rules_env.from_string((PROMPTS / "answer-rules.j2").read_text()).render(language=language, versions=versions)
    user = PromptTemplate.from_file(PROMPTS / "question.md").format(evidence=evidence, question=question)
    return [{"role": "system", "content": system}, {"role": "system", "content": rules}, {"role": "user", "content": user}]
