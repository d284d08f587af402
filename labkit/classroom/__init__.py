"""The instructor's side of the course: student copies, grading, the sandbox, Gradescope.

The learner's modules never import this package.

- :mod:`.student` writes student copies (solutions replaced by stubs, nothing leaked,
  nbgrader metadata) with nbconvert's preprocessors;
- :mod:`.practice` keeps a self-learner's practice copies (``./run.sh lab``, ``labkit
  practice``): student copies made once and never overwritten, reset and reveal;
- :mod:`.grading` grades submissions: answers are collected in :mod:`.sandbox` by
  :mod:`.runner` and scored, outside the sandbox and outside the student's kernel, by
  :mod:`.scorer` with the checkers of :mod:`labkit.exercises`;
- :mod:`.gradescope` packages that grader as a Gradescope autograder;
- :mod:`.notebooks` executes notebooks in fresh kernels (``labkit execute`` and ``claims``).
"""
