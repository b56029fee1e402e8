"""Agent-style prompts and a 7-command tool set, shared by the LLM tests and benchmarks.

Each prompt is a situation an AutoGPT-style agent meets mid-run: a goal and what it has seen.
"""

from __future__ import annotations

from typing import Any

from autonoma.llm import ToolSpec


def _tool(name: str, description: str, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        },
    )


_STR = {"type": "string"}
AGENT_TOOLS: list[ToolSpec] = [
    _tool("write_file", "Write text to a file in the workspace", path=_STR, text=_STR),
    _tool("read_file", "Read a file from the workspace", path=_STR),
    _tool("list_files", "List the files in a workspace directory", directory=_STR),
    _tool(
        "web_search",
        "Search the web",
        query=_STR,
        max_results={"type": "integer", "minimum": 1, "maximum": 10},
    ),
    _tool(
        "browse_website", "Read a web page and answer a question about it", url=_STR, question=_STR
    ),
    _tool("execute_python", "Run Python code in a sandbox and return its output", code=_STR),
    _tool("task_complete", "Say that the goal is achieved", reason=_STR),
]

AGENT_PROMPTS: list[str] = [
    "Goal: write a haiku about autumn to haiku.txt. Nothing has been done yet.",
    "Goal: summarise notes.md into summary.md. Last result: list_files returned notes.md, todo.txt.",
    "Goal: find the population of Lyon. Nothing has been done yet.",
    "Goal: compute the 30th Fibonacci number and save it to fib.txt. Nothing has been done yet.",
    "Goal: write a haiku about autumn to haiku.txt. Last result: wrote 3 lines to haiku.txt.",
    "Goal: check what files the workspace holds. Nothing has been done yet.",
    "Goal: read config.yaml and report the port. Last result: list_files returned config.yaml.",
    "Goal: find the latest Python release. Last result: web_search returned python.org/downloads.",
    "Goal: count the words in essay.txt. Last result: read_file returned 'The quick brown fox'.",
    "Goal: create a shopping list with eggs, milk and bread in list.txt. Nothing has been done yet.",
    "Goal: sort the numbers 5, 3, 9, 1 and save them to sorted.txt. Nothing has been done yet.",
    "Goal: write a limerick about a cat to cat.txt. Last result: error: cat.txt is read-only.",
    "Goal: learn what the Eiffel Tower is made of. Nothing has been done yet.",
    "Goal: translate 'good morning' into French and save it to fr.txt. Nothing has been done yet.",
    "Goal: tell whether 97 is prime. Nothing has been done yet.",
    "Goal: collect three facts about Mars in mars.md. Last result: web_search returned nasa.gov/mars.",
    "Goal: back up data.csv to data_backup.csv. Last result: read_file returned 'a,b\\n1,2'.",
    "Goal: write a short poem about the sea to sea.txt. Last result: wrote sea.txt. Goal met.",
    "Goal: find the boiling point of water at sea level. Nothing has been done yet.",
    "Goal: list the TODO items in todo.txt. Last result: list_files returned todo.txt.",
    "Goal: compute 17 * 23 and record it in math.txt. Nothing has been done yet.",
    "Goal: write a README for a tiny calculator project. Nothing has been done yet.",
    "Goal: find who wrote 'Pride and Prejudice'. Last result: web_search returned a page on Jane Austen.",
    "Goal: check whether report.txt mentions 'deadline'. Last result: list_files returned report.txt.",
    "Goal: make a file greetings.txt saying hello in three languages. Nothing has been done yet.",
    "Goal: get the current weather in Oslo. Nothing has been done yet.",
    "Goal: reverse the string 'autonoma' using code. Nothing has been done yet.",
    "Goal: write a haiku about winter to winter.txt. Last result: error: disk quota exceeded.",
    "Goal: read the first line of poem.txt. Nothing has been done yet.",
    "Goal: draft an email inviting the team to lunch in invite.txt. Nothing has been done yet.",
    "Goal: find the capital of Australia. Last result: web_search said Canberra.",
    "Goal: count the files in the workspace. Nothing has been done yet.",
    "Goal: write the numbers 1 to 10 to numbers.txt. Last result: wrote numbers.txt with 1..10.",
    "Goal: find a recipe for pancakes. Nothing has been done yet.",
    "Goal: check the syntax of script.py by running it. Last result: read_file returned 'print(1)'.",
    "Goal: write a two-line motto for a bakery to motto.txt. Nothing has been done yet.",
    "Goal: find when the Berlin Wall fell. Nothing has been done yet.",
    "Goal: compute the mean of 4, 8, 15, 16, 23, 42. Nothing has been done yet.",
    "Goal: summarise https://example.com/article about solar panels. Nothing has been done yet.",
    "Goal: rename draft.txt to final.txt. Last result: read_file returned 'final text'.",
    "Goal: write a haiku about rain to rain.txt. Last result: wrote rain.txt; user said it is good.",
    "Goal: list the Python files in src. Nothing has been done yet.",
    "Goal: find the tallest mountain in Africa. Nothing has been done yet.",
    "Goal: save today's plan (write, review, send) to plan.txt. Nothing has been done yet.",
    "Goal: convert 100 Fahrenheit to Celsius. Nothing has been done yet.",
    "Goal: read notes.md and then write its length to length.txt. Last result: read notes.md (812 chars).",
    "Goal: find a good name for a coffee shop and save it to name.txt. Nothing has been done yet.",
    "Goal: check if the file secrets.txt exists. Nothing has been done yet.",
    "Goal: write a thank-you note to a teacher in thanks.txt. Nothing has been done yet.",
    "Goal: find the speed of light. Last result: web_search returned 299,792 km/s.",
    "Goal: generate 5 random numbers with code. Nothing has been done yet.",
    "Goal: write a packing list for a beach trip to packing.txt. Nothing has been done yet.",
    "Goal: find out what HTTP status 418 means. Nothing has been done yet.",
    "Goal: read the error log errors.log. Last result: list_files returned errors.log, app.py.",
    "Goal: write a tweet-length summary of the goal list to tweet.txt. Nothing has been done yet.",
    "Goal: find the chemical symbol for gold. Nothing has been done yet.",
    "Goal: compute 2 to the power of 20 with code. Nothing has been done yet.",
    "Goal: write a haiku about the moon to moon.txt. Last result: wrote moon.txt with 3 lines.",
    "Goal: look up the opening hours of the Louvre. Nothing has been done yet.",
    "Goal: write a one-paragraph bio of Ada Lovelace to ada.md. Nothing has been done yet.",
]

SYSTEM_PROMPT = (
    "You are WorkerGPT, an autonomous agent. You pursue your goal alone, one command at a time. "
    "Choose the single best next command for the situation the user describes."
)


def agent_messages(situation: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": situation + "\nWhat is the next command?"},
    ]
