"""A run writer that keeps only the notes: for code that adds notes and nothing else."""

from __future__ import annotations

from perflab.records.model import Note


class NoteSink:
    def __init__(self) -> None:
        self.notes: list[Note] = []

    def add_note(self, note: Note) -> None:
        self.notes.append(note)
