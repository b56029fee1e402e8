"""The paper's interview evaluation: a persona asked questions in its five categories
(self-knowledge, memory, plans, reactions, reflections), five each, answered in character
from its memories; and its ablation, the same questions answered with access to fewer kinds
of memory. Where an answer can be checked against what the sim holds (the persona's file,
its seed memories, its schedule, whom it met and talked with), it is checked here by rule;
the others (what it would do if its breakfast burned, what inspires it) are stored unchecked,
for a person to read. Accuracy is reported per category over the checked answers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.interview import Recall, interview
from autonoma.sim.memory import TownMemory
from autonoma.sim.persona import Persona
from autonoma.sim.plan import minute_of_day
from autonoma.sim.store import Sim

CATEGORIES = ("self-knowledge", "memory", "plans", "reactions", "reflections")

# The paper's ablation: what an answer may draw on (its "no observation" keeps the seed
# memories alone: what the persona knew before the sim began).
FULL = "full"
CONDITIONS = (
    FULL,
    "no reflection",
    "no reflection, no planning",
    "no observation, no reflection, no planning",
)

_DENIES = re.compile(
    r"\b(don'?t know|do not know|not sure|no idea|never (?:met|heard)|haven'?t (?:met|heard)|"
    r"not familiar|unfamiliar|doesn'?t ring|can'?t recall|cannot recall|not aware|no one|"
    r"nobody|i'?m afraid i|who is that)\b",
    re.IGNORECASE,
)
_STOP = frozenset((
    "a", "an", "and", "at", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with",
    "my", "his", "her", "their", "is", "am", "are", "be", "being", "doing", "going", "some",
    "time", "up", "out",
))  # fmt: skip
Check = Callable[[str], bool]


@dataclass(frozen=True)
class Question:
    category: str
    text: str
    check: Check | None = None  # None: not checkable by rule
    expected: str = ""  # what the check looks for, in words


@dataclass
class Answered:
    category: str
    question: str
    answer: str
    expected: str
    right: bool | None  # None: not checked


@dataclass
class Evaluation:
    persona: str
    condition: str
    answers: list[Answered] = field(default_factory=list)

    def accuracy(self) -> dict[str, tuple[int, int]]:
        """Per category: (right, checked)."""
        return accuracy_of([self])

    def to_json(self) -> dict[str, Any]:
        return {
            "persona": self.persona,
            "condition": self.condition,
            "accuracy": {k: list(v) for k, v in self.accuracy().items()},
            "answers": [a.__dict__ for a in self.answers],
        }


def accuracy_of(evaluations: Sequence[Evaluation]) -> dict[str, tuple[int, int]]:
    """Per category, (right, checked) over the evaluations' checked answers."""
    checked = [a for e in evaluations for a in e.answers if a.right is not None]
    return {
        c: (sum(bool(a.right) for a in checked if a.category == c),
            sum(a.category == c for a in checked))
        for c in CATEGORIES
    }  # fmt: skip


def recall_for(condition: str, start: datetime) -> Recall:
    if condition == FULL:
        return Recall()
    if condition == "no reflection":
        return Recall(kinds=("observation", "chat", "thought", "plan"))
    if condition == "no reflection, no planning":
        return Recall(kinds=("observation", "chat", "thought"))
    if condition == "no observation, no reflection, no planning":
        return Recall(kinds=("thought",), until=start)
    raise ValueError(f"no condition {condition!r}: one of {', '.join(CONDITIONS)}")


def denies(answer: str) -> bool:
    return bool(_DENIES.search(answer))


def _first(name: str) -> str:
    return name.split()[0]


def names_all(names: Sequence[str]) -> Check:
    firsts = [_first(n).lower() for n in names]
    return lambda answer: all(f in answer.lower() for f in firsts)


def knows(name: str) -> Check:
    first = _first(name).lower()
    return lambda answer: first in answer.lower() and not denies(answer)


def says_alone(answer: str) -> bool:
    return bool(re.search(r"\b(alone|by myself|on my own|live by|no one|nobody)\b", answer, re.I))


def shares_words(activity: str) -> Check:
    """The answer names something of the activity: a content word in common, its ending
    aside ("reading" meets "read", "writing" meets "write")."""
    wanted = _stems(activity)
    return lambda answer: bool(wanted & _stems(answer))


def _stems(text: str) -> set[str]:
    words = (w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP)
    return {re.sub(r"(ing|ed|es|s|e)$", "", w) if len(w) > 4 else w for w in words}


def says_hour(hour: int) -> Check:
    """The answer gives this hour of the day, as 22:00, 10 pm, 10pm or 10 p.m."""
    twelve = hour % 12 or 12
    half = "am" if hour < 12 else "pm"
    pattern = rf"\b({hour}:\d\d|{hour:02d}:\d\d|{twelve}(:\d\d)?\s*{half[0]}\.?\s*{half[1]}\.?)"
    return lambda answer: bool(re.search(pattern, answer, re.IGNORECASE))


def mentioned(texts: Sequence[str], personas: Sequence[Persona], who: Persona) -> list[str]:
    """The other personas the texts name, most named first."""
    counts = {p.name: sum(p.name in t for t in texts) for p in personas if p is not who}
    return [name for name, n in sorted(counts.items(), key=lambda c: -c[1]) if n]


def questions_for(sim: Sim, persona: Persona, memories: Sequence[str]) -> list[Question]:
    """The 25 questions for `persona` at the sim's step, each with its check where the sim
    holds the answer. `memories` are the texts of everything the persona has stored."""
    spec, now = persona.spec, sim.clock.at(sim.step)
    sector = persona.home.split(": ")[0]
    mates = [p.name for p in sim.personas if p is not persona and p.home.startswith(sector)]
    seeded = mentioned(spec.seed_memories(), sim.personas, persona)
    known = mentioned(memories, sim.personas, persona)
    strangers = [p.name for p in sim.personas if p is not persona and p.name not in known]
    home_words = [w for w in re.findall(r"[A-Za-z']+", sector) if w.lower() not in _HOME_WORDS]
    questions = [
        Question("self-knowledge", "Give an introduction of yourself.",
                 lambda a: _first(spec.name).lower() in a.lower(), f"names {spec.name}"),
        Question("self-knowledge", "How old are you?",
                 lambda a: str(spec.age) in a, str(spec.age)),
        Question("self-knowledge", "Where do you live?",
                 lambda a: any(w.lower() in a.lower() for w in home_words) or not home_words,
                 sector),
        Question("self-knowledge", "Who do you live with?",
                 names_all(mates) if mates else says_alone,
                 ", ".join(mates) or "alone"),
        Question("self-knowledge", "What is your occupation?"),
    ]  # fmt: skip
    for name in seeded[:2]:
        questions.append(Question("memory", f"Who is {name}?", knows(name), f"knows {name}"))
    spare = iter(_SPARE_MEMORIES)
    while len(questions) < 7:  # the seed memories name fewer than two others
        questions.append(Question("memory", next(spare)))
    if strangers:
        stranger = strangers[-1]
        questions.append(
            Question("memory", f"Who is {stranger}?", denies, f"does not know {stranger}")
        )
    else:
        questions.append(Question("memory", "Who is the newest person you met?"))
    schedule, minute = persona.schedule, minute_of_day(now)
    past = [b for b in schedule.blocks if b.start <= minute - 60 and not b.asleep]
    if past:
        block = past[-1]
        questions.append(Question(
            "memory", f"What were you doing at {block.start // 60:02d}:00 today?",
            shares_words(block.activity), block.activity,
        ))  # fmt: skip
    else:
        questions.append(Question("memory", "What did you do yesterday?"))
    talked = [n for n, at in persona.talk.last.items() if at[:10] == now.date().isoformat()]
    questions.append(Question(
        "memory", "Whom have you talked with today?",
        names_all(talked) if talked else denies, ", ".join(talked) or "no one",
    ))  # fmt: skip
    ahead = [b for b in schedule.blocks if b.start > minute and not b.asleep][:3]
    for block in ahead:
        questions.append(Question(
            "plans", f"What will you be doing at {block.start // 60:02d}:00 today?",
            shares_words(block.activity), block.activity,
        ))  # fmt: skip
    spare = iter(_SPARE_PLANS)
    while len(questions) < 13:  # the day has fewer blocks ahead than three
        questions.append(Question("plans", next(spare)))
    rest = [b.activity for b in schedule.blocks if b.end > minute and not b.asleep]
    questions.append(Question(
        "plans", "What is your plan for the rest of today?",
        shares_words(" ".join(rest)) if rest else None, "; ".join(rest),
    ))  # fmt: skip
    bed = next((b for b in schedule.blocks if b.asleep and b.start >= 12 * 60), None)
    questions.append(Question(
        "plans", "When do you go to bed tonight?",
        says_hour(bed.start // 60) if bed else None, f"{bed.start // 60:02d}:00" if bed else "",
    ))  # fmt: skip
    questions += [
        Question("reactions", "Your breakfast is burning! What would you do?"),
        Question("reactions", "The bathroom is occupied. What would you do?"),
        Question("reactions", "You need to cook dinner but your refrigerator is empty. "
                              "What would you do?"),
        Question("reactions", "You see your friend walking by the street. "
                              "What would you do or say to your friend?"),
        Question("reactions", "You see fire on the street. What would you do?"),
    ]  # fmt: skip

    def names_one(a: str) -> bool:
        return any(_first(n).lower() in a.lower() for n in known)

    questions += [
        Question("reflections",
                 "If you were to spend time with one person you met recently, who would it "
                 "be and why?", names_one if known else None, f"one of {', '.join(known)}"),
        Question("reflections", "What inspires you in life the most right now, and why?"),
        Question("reflections", f"What have you learned about {known[0]} recently?",
                 knows(known[0]), f"knows {known[0]}") if known
        else Question("reflections", "What have you learned about yourself recently?"),
        Question("reflections", "Who do you know best in town?",
                 names_one if known else denies, ", ".join(known[:3]) or "no one"),
        Question("reflections", "What do you think of your own work lately?"),
    ]  # fmt: skip
    return questions


_SPARE_MEMORIES = ("Who is your closest friend?", "Who did you see most recently?")
_SPARE_PLANS = (
    "What will you be doing tomorrow morning?",
    "What are you planning for this week?",
    "What will you do after what you are doing now?",
)
_HOME_WORDS = frozenset(
    ("house", "home", "family", "apartment", "apartments", "the", "of", "'s", "dorm", "room")
)


async def evaluate(
    model: Model,
    memory: TownMemory,
    sim: Sim,
    persona: Persona,
    condition: str,
    memories: Sequence[str],
    spent: BudgetSpent,
) -> Evaluation:
    """The persona's 25 answers under `condition`, checked where they can be."""
    now = sim.clock.at(sim.step)
    recall = recall_for(condition, sim.clock.at(0))
    evaluation = Evaluation(persona.name, condition)
    for q in questions_for(sim, persona, memories):
        answer = await interview(
            model, memory, sim.world, persona, q.text, now, spent, recall=recall
        )
        right = None if q.check is None else bool(q.check(answer))
        evaluation.answers.append(Answered(q.category, q.text, answer, q.expected, right))
    return evaluation
