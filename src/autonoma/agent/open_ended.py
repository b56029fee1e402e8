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

# a piece of writing asked for ("a short poem about"), not one read ("the lines of the poem")
_PIECE = (
    r"(?:a|an|some|one|two|three|four|five)\s+(?:\w+\s+)?(?:summary|poem|story|haiku|limerick"
    r"|sonnet|essay|letter|e-?mail|note|message|reply|tweet|blog post|announcement|invitation"
    r"|slogan|tagline|outline|critique|opinion|explanation|description|translation)s?"
)
_OPEN = re.compile(
    rf"\b(?:{_PIECE}|summar(?:ise|ised|ize|ized|ising|izing)|describe|explain|paraphrase"
    r"|in (?:your|its|their) own words|suggest|ideas? for|brainstorm|reply to|respond to"
    r"|comment on|give advice|improve|translate)\b",
    re.IGNORECASE,
)


def open_ended(task: str) -> bool:
    """Whether the task asks for text whose wording is the writer's, many texts being right."""
    words = task
    for name in sorted(named_files([task]), key=len, reverse=True):
        words = words.replace(name, " ")
    return bool(_OPEN.search(words))
