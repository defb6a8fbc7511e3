#!/usr/bin/python3
"""Lists what `docker build .` sends as its context, from .dockerignore, for a checkout.

Docker's rules (moby/patternmatcher): each line is a pattern relative to the context root,
a trailing '/' is dropped, '*' and '?' do not cross '/', '**' matches any number of path
segments, a line starting with '!' re-includes, and the last matching line wins. A path is
excluded when it or one of its parent directories is excluded.

Usage: docker_context.py REPO [--check]
  without --check: print the files of the context, one a line.
  --check: exit 1 naming every tracked source file (*.cc, *.h, CMakeLists.txt, *.cmake,
  *.mustache, profiles/*.yaml) the context leaves out: the image build would fail without it.
"""
import fnmatch
import re
import subprocess
import sys


def pattern_regex(pattern):
    parts = [p for p in pattern.strip("/").split("/") if p]
    out = []
    for i, part in enumerate(parts):
        if part == "**":
            out.append("(?:[^/]+/)*" if i < len(parts) - 1 else ".*")
        else:
            regex = fnmatch.translate(part)  # '(?s:...)\Z'
            regex = regex[len("(?s:"):-len(")\\Z")].replace(".*", "[^/]*").replace(".", "[^/]")
            out.append(regex + ("/" if i < len(parts) - 1 else ""))
    return re.compile("^" + "".join(out) + "$")


def read_patterns(repo):
    patterns = []
    with open(f"{repo}/.dockerignore", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            patterns.append((negate, pattern_regex(line[1:] if negate else line)))
    return patterns


def excluded(path, patterns):
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        verdict = False
        for negate, regex in patterns:
            if regex.match(prefix):
                verdict = not negate
        if verdict:
            return True
    return False


def main():
    repo = sys.argv[1]
    check = "--check" in sys.argv[2:]
    files = subprocess.run(["git", "-C", repo, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split("\n")
    patterns = read_patterns(repo)
    kept = [f for f in files if f and not excluded(f, patterns)]
    if not check:
        print("\n".join(kept))
        return 0
    needed = re.compile(r"(\.cc|\.h|CMakeLists\.txt|\.cmake|\.mustache)$|^profiles/.*\.yaml$")
    missing = [f for f in files if f and needed.search(f) and f not in set(kept)]
    for f in missing:
        print(f"FAIL: the docker build context leaves out {f}")
    if not missing:
        print(f"PASS: {len(kept)} files in the context, every source among them")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
