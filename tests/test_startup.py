"""The start-up speed-ups (submissions/checking/startup.py) and the copy of the ingest command's options they keep."""

from submissions.checking import early_split
from submissions.management.commands.ingest import Command as Ingest


def options_taking_a_value(parser) -> set[str]:
    """Every option string of `parser` whose value may be the next argument (not a flag like --wait)."""
    return {
        name
        for action in parser._actions
        if action.option_strings and action.nargs != 0
        for name in action.option_strings
    }


def test_the_early_split_knows_every_option_of_ingest_that_takes_a_value():
    # manage.py reads `ingest`'s arguments before Django can build its parser: an option missing from the copy
    # would make the split take that option's value for the archive, one extra there would skip the archive.
    parser = Ingest().create_parser("manage.py", "ingest")
    assert options_taking_a_value(parser) == early_split._VALUE_OPTIONS


def test_the_comparison_sees_a_flag_apart_from_an_option_with_a_value():
    parser = Ingest().create_parser("manage.py", "ingest")
    found = options_taking_a_value(parser)
    assert {"--round", "--timeout", "-v", "--verbosity"} <= found
    assert not {"--wait", "--publish", "--traceback", "-h", "--help"} & found
