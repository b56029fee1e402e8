"""`calculator`: arithmetic the model should not do in its head, evaluated without `eval`.

`simpleeval` walks the expression's syntax tree with a whitelist of operators and caps on
powers and lengths; here it gets only numbers and the math functions below, never names of
the program or attribute access.
"""

from __future__ import annotations

import math
from numbers import Number

import simpleeval

from autonoma.tools.base import Risk, tool

MATH = "sqrt exp log log10 log2 sin cos tan asin acos atan floor ceil hypot radians degrees"
FUNCTIONS = {name: getattr(math, name) for name in MATH.split()} | {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
}
NAMES = {"pi": math.pi, "e": math.e, "tau": math.tau}


def evaluate(expression: str) -> int | float:
    """The value of an arithmetic expression, or ValueError saying what is wrong with it."""
    if len(expression) > 1000:
        raise ValueError("the expression is longer than 1,000 characters")
    evaluator = simpleeval.SimpleEval(functions=FUNCTIONS, names=NAMES)
    try:
        value = evaluator.eval(expression.replace("^", "**"))
    except (simpleeval.InvalidExpression, SyntaxError) as err:
        raise ValueError(f"cannot evaluate {expression!r}: {err}") from None
    except (ArithmeticError, TypeError) as err:
        raise ValueError(f"{expression!r}: {err}") from None
    if isinstance(value, bool) or not isinstance(value, Number):
        raise ValueError(f"{expression!r} is not arithmetic: it gives {type(value).__name__}")
    assert isinstance(value, int | float)
    return value


@tool(risk=Risk.READ, timeout_s=5)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly: + - * / // % ** (or ^), parentheses,
    sqrt, log, exp, sin, cos, tan, floor, ceil, round, abs, min, max, pi and e.

    Args:
        expression: for example "(17 * 23) / 4" or "sqrt(2) * pi"
    """
    value = evaluate(expression)
    if isinstance(value, int) and value.bit_length() > 3000:  # str() of it would be refused
        digits = int(value.bit_length() * math.log10(2))
        return f"{expression} = an integer of about {digits} digits"
    shown = f"{value:.15g}" if isinstance(value, float) else str(value)
    if len(shown) > 200:
        shown = f"{shown[:60]}... ({len(shown)} digits)"
    return f"{expression} = {shown}"
