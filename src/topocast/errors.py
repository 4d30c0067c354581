"""The one exception type topocast raises for bad input or impossible requests."""


class TopocastError(ValueError):
    """Bad input: names the parameter and the rule it breaks.

    The CLI turns it into a one-line message on stderr and exit status 2.
    """


class VerificationError(AssertionError):
    """A schedule broke a delivery rule; the message names the first violation."""



class TopocastWarning(UserWarning):
    """Something the user should know about a result that is still produced (rows skipped, a statistic
    of little meaning); the CLI prints it as one ``topocast: warning:`` line on stderr."""
