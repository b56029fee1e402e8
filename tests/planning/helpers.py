"""Helpers shared by tests (moved out of test modules: a test module is never imported
by another)."""

from __future__ import annotations

GOAL = "Blocks a, b and c: c is on a; a and b are on the table. Build the tower a on b on c."


PROBLEM = """(define (problem tower) (:domain blocksworld)
  (:objects a b c)
  (:init (on c a) (ontable a) (ontable b) (clear c) (clear b) (handempty))
  (:goal (and (on a b) (on b c))))"""
