#!/usr/bin/python3
"""Validates JSON files against a JSON Schema with a real validator (Debian's python3-jsonschema).

Usage: validate_json.py SCHEMA FILE...

Prints one line per violation, "FILE: $.path.to[0].field: message", in document order. Exit
status: 0 when every file is valid, 1 when any is not, 2 on bad usage, an unreadable file, or a
schema that is itself invalid (so a broken setup never passes as "valid").
"""
import json
import sys

import jsonschema


def json_path(error):
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def is_type_mismatch(errors):
    """A branch that failed only because the value has another type altogether."""
    return len(errors) == 1 and errors[0].validator == "type" and not errors[0].relative_path


def is_other_kind(errors):
    """A branch for another "kind" (the discriminator of llm-d's stack components)."""
    return any(e.validator == "const" and list(e.relative_path) == ["kind"] for e in errors)


def violations(error):
    """(path, message) pairs for one error. An anyOf/oneOf error ("not valid under any of the
    given schemas") says little: when one branch fits the value's type, its own errors are
    reported instead; when none does, the types they accept are named."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [(json_path(error), error.message)]
    branches = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    plausible = [subs for subs in branches.values()
                 if not is_type_mismatch(subs) and not is_other_kind(subs)]
    if len(plausible) == 1:
        return [v for sub in plausible[0] for v in violations(sub)]
    if not plausible:
        types = []
        for (sub,) in branches.values():
            accepted = sub.validator_value
            types += accepted if isinstance(accepted, list) else [accepted]
        accepted = ", ".join(repr(t) for t in types)
        return [(json_path(error), f"{error.instance!r} is not of type {accepted}")]
    return [(json_path(error), error.message)]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        schema = load(argv[1])
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 2
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    status = 0
    for path in argv[2:]:
        try:
            doc = load(path)
        except (OSError, ValueError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        for error in errors:
            for where, message in violations(error):
                print(f"{path}: {where}: {message}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
