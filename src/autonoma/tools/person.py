"""`ask_person`: a question to the person at the terminal, in approval mode only.

In continuous mode nobody is there to answer, so the command is not offered at all. The
asking itself is handed in by the layer that talks to the person, as `ToolContext.ask_person`:
an async function from the question to the answer, or None when nobody answered.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from autonoma.tools.base import Risk, ToolContext, tool


@tool(risk=Risk.READ, timeout_s=3600)  # a person may take a while to answer
async def ask_person(
    context: ToolContext, question: Annotated[str, Field(min_length=1, max_length=2000)]
) -> str:
    """Ask the person a question and wait for the answer. Only for what you cannot find out
    or decide yourself: every question costs the person's time.

    Args:
        question: one clear question
    """
    ask = context.ask_person
    if ask is None:
        return "no one can be asked in this run; decide on your own"
    answer = await ask(question)
    if answer is None or not answer.strip():
        return "the person gave no answer; decide on your own"
    return f"the person answered: {answer.strip()}"
