"""The base of errors whose message tells a user what was wrong and what to do.

Commands catch `WmrlError` and print its message instead of a traceback; anything
else escaping is a bug in wmrl and keeps its traceback.
"""

__all__ = ["WmrlError"]


class WmrlError(Exception):
    """A problem with the user's input, data or machine, explained in the message."""
