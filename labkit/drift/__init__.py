"""``labkit drift``: which lessons of the course still hold on another MuJoCo release.

- :mod:`.environments`: a cached side environment per MuJoCo version (the course's other
  pins unchanged);
- :mod:`.record`: runs chapters there with claims in record mode;
- :mod:`.compare`: matches two claims logs claim by claim (holds / changed / error);
- :mod:`.report`: writes the Markdown course page, with the maintainers' explanations;
- :mod:`.command`: the ``labkit drift`` command that ties them together.
"""
