"""Whether a task leaves its result's wording to the writer: a summary, a poem, a letter, ideas.

The judge checks a task with inputs by working it out again and comparing the texts
(agent/judge_worked.py): right for a count, a sort or a copy, whose files give one right text;
wrong for "Summarise report.txt in two sentences to summary.txt", whose right texts are many,
so that no summary but the judge's own would pass and the run could never finish. Such a task
is judged by its stated criterion instead, yes or no, as a task without inputs is. A rule of
words, not a model call: it is read before the work, the same every time, and the task's file
names are set aside first ("Write the total of sales.csv to summary.txt" is a sum).
"""

from __future__ import annotations

import re

from autonoma.agent.completion import named_files

_OPEN = re.compile(
    r"\b(?:summar(?:y|ies|ise|ised|ize|ized|ising|izing)|describe|explain|explanation"
    r"|paraphrase|in (?:your|its|their) own words|poem|poems|story|stories|haiku|limerick"
    r"|sonnet|essay|(?:a|an) (?:letter|e-?mail|note|message) (?:to|for)|reply to|respond to"
    r"|suggest|ideas? for|brainstorm|outline|slogan|tagline|critique|opinion"
    r"|advice|comment on|improve|translate|translation|tweet|blog post|announcement"
    r"|invitation)\b",
    re.IGNORECASE,
)


def open_ended(task: str) -> bool:
    """Whether the task asks for text whose wording is the writer's, many texts being right."""
    words = task
    for name in sorted(named_files([task]), key=len, reverse=True):
        words = words.replace(name, " ")
    return bool(_OPEN.search(words))
