"""Test repositories built with real git: a command with a fixed identity, a commit of files."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    """Writes `files` (None: deletes it), commits all and returns the commit."""
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def data_repo(folder: Path, texts: tuple[str, ...] = ("one",)) -> Path:
    """`folder/repo`: a git repository on main with one commit of data.txt per text, the
    first tagged `base`."""
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for text in texts:
        commit(repo, text, {"data.txt": text + "\n"})
        if text == texts[0]:
            git(repo, "tag", "base")
    return repo
