"""Kernel Lab's course: lessons in ``notebooks/`` (text in ``tutorials/``), graded here.

Each lesson has versions of a kernel recorded on an H100 (``lessons/<NN_name>/``), diagnosis exercises
graded against the recorded profile and the conductor, and a fix exercise checked by the judge and, on a
GPU, against the roof::

    from kernel_lab import course
    course.start("~/kernel-lab-course")                    # the lessons copied there: work on the copy
    course.lessons()                                       # the course
    course.facts("01_roofline", "naive")                   # numbers from a recorded report
    course.answer("02_coalescing.diagnose", kind="uncoalesced_global", line=15, metric="dram__bytes_read")
    course.solution("02_coalescing.diagnose")              # the answer, hidden until clicked
    course.check("02_coalescing.fix", "fix_02.py")         # your version: correct? fast? at the roof?
    course.solution("02_coalescing.fix")                   # the reference, hidden until clicked
    course.progress()                                      # what is done, kept on disk

Nothing here imports torch, IPython or widgets at import time.
"""

from __future__ import annotations

from kernel_lab.course.answer_key import AnswerKey, solution
from kernel_lab.course.catalog import cell, exercise, exercise_ids, report
from kernel_lab.course.catalog import lesson as lesson
from kernel_lab.course.checking import CheckResult, Solution, check, roofline, starter
from kernel_lab.course.facts import Facts, facts
from kernel_lab.course.feedback import Feedback
from kernel_lab.course.grading import answer
from kernel_lab.course.lessons_view import lessons, table
from kernel_lab.course.progress import progress
from kernel_lab.course.workspace import Workspace, start

__all__ = [
    "AnswerKey",
    "CheckResult",
    "Facts",
    "Feedback",
    "Solution",
    "Workspace",
    "answer",
    "cell",
    "check",
    "exercise",
    "exercise_ids",
    "facts",
    "lesson",
    "lessons",
    "progress",
    "report",
    "roofline",
    "solution",
    "start",
    "starter",
    "table",
]
