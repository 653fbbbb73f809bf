"""Exceptions and warnings that the core raises for the user to read.

Every ``MicroguiError`` carries a message meant for a person: it names the file, row or column and
says what to do. The command line prints it on one line and exits 2; the app shows it in a dialog.
"""

__all__ = [
    "MicroguiError",
    "InvalidInput",
    "InvalidRoles",
    "InvalidParameter",
    "ExportRefused",
    "MicroguiWarning",
]


class MicroguiError(Exception):
    """A problem the user can fix (bad file, bad column, bad parameter)."""


class InvalidInput(MicroguiError):
    """The input file or table cannot be used as it is (unreadable, non-numeric, missing values)."""


class InvalidRoles(MicroguiError):
    """The role/kind tagging of the columns does not allow the requested run."""


class InvalidParameter(MicroguiError):
    """A method parameter (k, --param NAME=VALUE, seed) is out of range or malformed."""


class ExportRefused(MicroguiError):
    """Writing the protected table was refused (it would overwrite the input, leak identifiers, ...)."""


class MicroguiWarning(UserWarning):
    """A warning from microgui itself (tests turn these into errors)."""
