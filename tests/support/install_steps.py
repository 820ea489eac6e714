"""An install guide's steps, each with its shell commands: Markdown that puts a command right
after the line announcing it (hybrid's code-heavy route, markdown's lead-ins)."""

from __future__ import annotations

COMMANDS = (
    ("Clone the repository and enter it", "git clone https://example.org/acme/orion.git\ncd orion"),
    (
        "Create a virtual environment and install the requirements",
        "python -m venv .venv\n.venv/bin/pip install -r requirements.txt",
    ),
    (
        "Copy the sample settings and set the database address in them",
        "cp settings.sample.toml settings.toml\n$EDITOR settings.toml",
    ),
    ("Run the migrations, then start the server", ".venv/bin/python -m orion migrate\n.venv/bin/orion serve"),
)
