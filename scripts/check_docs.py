#!/usr/bin/env python3
"""Checks the documentation (ctest runs each check as a test of its own):

    scripts/check_docs.py links         every relative link and #anchor in README.md and
                                        docs/*.md resolves (files exist; anchors are headings
                                        of the target, as GitHub makes them)
    scripts/check_docs.py quick-start   the README's quick-start commands are what .ci/run
                                        runs (its `make …` stages), and each is a Makefile target

Standard library only (python3 is in scripts/install-deps.sh). Exit 0 when it holds, 1 with
every problem listed otherwise.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(?<!\!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")


def documents():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def prose_lines(text):
    """The lines outside fenced code blocks, with their numbers."""
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: lower case; only letters, digits, _, - and spaces kept;
    spaces become hyphens."""
    text = re.sub(r"<[^>]+>", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file defines: its headings (duplicates get -1, -2, …)."""
    seen = {}
    out = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path):
    """(line number, target) of every Markdown link and image outside code, inline code
    spans removed first."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        line = re.sub(r"`[^`]*`", "", line)
        for m in LINK.finditer(line):
            yield number, m.group(1) or m.group(2)


def check_links():
    problems = []
    cache = {}
    for doc in documents():
        for number, target in links(doc):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{doc.relative_to(ROOT)}:{number}: {target}"
            dest = (doc.parent / file_part).resolve() if file_part else doc
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            try:
                dest.relative_to(ROOT)
            except ValueError:
                problems.append(f"{where}: points outside the repository")
                continue
            if anchor:
                if dest.suffix != ".md":
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                    continue
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if anchor not in cache[dest]:
                    problems.append(f"{where}: no heading makes the anchor #{anchor}")
    return problems


def quick_start_commands():
    """The commands in the README's quick-start code block (first word after `##
    Quick start`), comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Quick start.*?^```\w*\n(.*?)^```", text, re.S | re.M)
    if not m:
        return None
    commands = []
    for line in m.group(1).split("\n"):
        command = line.split("#", 1)[0].strip()
        if command:
            commands.append(command)
    return commands


def check_quick_start():
    commands = quick_start_commands()
    if not commands:
        return ["README.md: no code block under a '## Quick start' heading"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_commands = re.findall(r'^stage\s+"[^"]*"\s+(make\s+[\w-]+)\s*$', ci, re.M)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    problems = []
    for command in commands:
        if command not in ci_commands:
            problems.append(f"README quick start runs `{command}`, which .ci/run does not "
                            f"(it runs: {', '.join(ci_commands)})")
        words = command.split()
        if words[0] != "make" or len(words) != 2 or words[1] not in targets:
            problems.append(f"README quick start: `{command}` is not a Makefile target")
    demo = [c for c in ci_commands if c == "make demo"]
    if not demo or "make demo" not in commands:
        problems.append("the quick start must be `make demo` (the job end to end) as CI runs it")
    return problems


def main():
    checks = {"links": check_links, "quick-start": check_quick_start}
    names = sys.argv[1:] or list(checks)
    problems = []
    for name in names:
        if name not in checks:
            print(f"unknown check '{name}'; one of: {', '.join(checks)}", file=sys.stderr)
            return 2
        problems += checks[name]()
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"{', '.join(names)}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
