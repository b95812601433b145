#!/usr/bin/env python3
"""Checks the documentation (ctest runs each check as a test of its own):

    scripts/check_docs.py links         every relative link and #anchor in README.md and
                                        docs/*.md resolves (files exist; anchors are headings
                                        of the target, as GitHub makes them)
    scripts/check_docs.py quick-start   the README's quick-start commands are what .ci/run
                                        runs (its `make …` stages), and each is a Makefile target
    scripts/check_docs.py drift         the names the docs share with the code agree: every
                                        site-file key the loaders accept is documented and every
                                        documented `section.key` or error code exists in the
                                        code; the metrics table lists exactly the families
                                        /metrics exports, in one table; doctor's check list
                                        names exactly the checks doctor makes; every
                                        `tuneplane` verb is named in `tuneplane --help`, in
                                        a guide and (server verbs) in the README's CLI row

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


SOURCES = ROOT / "src"
OPERATORS = ROOT / "docs" / "operators.md"
# The sections of the site file each of the loaders' parse functions reads (a checkMap whose
# section is a variable); a new parse function must be named here.
SECTION_OF_FUNCTION = {
    "parseSlurm": "slurm",
    "parseGpuSeries": "gpu_series[]",
    "parseMounts": "mounts[]",
    "parseStaging": "staging",
    "parseRay": "ray",
    "parseTokens": "server.tokens[]",
    # the job spec's (src/spec/spec_parser.cc): known names, not site-file keys
    "parseMetadata": "metadata",
    "parseFramework": "spec.framework",
    "parseResources": "spec.resources",
    "parsePool": "spec.resources.pools[]",
    "parseData": "spec.data",
    "parseRetry": "spec.retry",
    "parseScheduling": "spec.scheduling",
    "parseRuntime": "runtimes[]",  # the runtime registry's
}
SITE_LOADERS = ("catalog/site_loader.cc", "api/server_config.cc")
SPEC_LOADERS = ("spec/spec_parser.cc", "catalog/registry_loader.cc")
# File names and C++ expressions in backticks are not names of the formats.
NOT_A_NAME = re.compile(r"\.(h|cc|md|json|yaml|yml|py|sh|html|js|css|txt|cmake|conf|service)$")
# Dotted names in the docs with these first words are site-file keys or error codes.
NAME_PREFIXES = ("api", "auth", "server", "site", "staging", "store", "slurm", "spec", "launch",
                 "cli", "client", "config", "registry", "artifact", "control", "attempt", "logs",
                 "doctor", "pipeline", "serve", "partitions", "ray", "mounts", "gpu_series")
# Codes made as "<reader>.<kind>" by spec::YamlReader (r.report("kind", …)).
READER_DOMAINS = ("spec", "site", "server", "registry", "config")


def source_files(*globs):
    for pattern in globs:
        yield from sorted(SOURCES.glob(pattern))


def format_keys(loaders):
    """Every key the loaders in `loaders` accept, qualified by its section ("slurm.url",
    "server.tls.cert", "gpu_series[].name", "staging_root")."""
    keys = set()
    problems = []
    for path in (SOURCES / loader for loader in loaders):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"checkMap\(\s*[^,]+,\s*([^,]+),\s*\{([^}]*)\}", text):
            section_arg = m.group(1).strip()
            literal = re.fullmatch(r'"([^"]*)"', section_arg)
            if literal:
                section = literal.group(1)
            else:
                functions = re.findall(r"\b(parse\w+)\(", text[: m.start()])
                function = next((f for f in reversed(functions) if f in SECTION_OF_FUNCTION), None)
                if function is None:
                    problems.append(f"{path.relative_to(ROOT)}: a checkMap whose section "
                                    "scripts/check_docs.py does not know (SECTION_OF_FUNCTION)")
                    continue
                section = SECTION_OF_FUNCTION[function]
            for key in re.findall(r'"([^"]+)"', m.group(2)):
                keys.add(f"{section}.{key}" if section else key)
    # The root's own keys (server: is read by the API's loader, not catalog's list alone).
    return keys, problems


def string_literals():
    literals = set()
    kinds = set()
    for path in source_files("**/*.cc", "**/*.h"):
        text = path.read_text(encoding="utf-8")
        literals.update(re.findall(r'"((?:[^"\\\n]|\\.)*)"', text))
        kinds.update(re.findall(r'(?:report\(|Stop\{\{)\s*"([a-z_0-9]+)"', text))
    for domain in READER_DOMAINS:
        literals.update(f"{domain}.{kind}" for kind in kinds)
    return literals


def doc_names(path):
    """(line, name) of every backticked dotted name in prose and tables that starts with one of
    NAME_PREFIXES."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for span in re.findall(r"`([^`]+)`", line):
            if "::" in span or "(" in span:
                continue  # C++ or a command, not a name of the formats
            for m in re.finditer(r"(?<![\w./$-])([a-z_]+(?:\[\])?(?:\.[a-z_0-9]+(?:\[\])?)+)(?![\w/(])",
                                 span):
                name = m.group(1)
                if NOT_A_NAME.search(name):
                    continue
                if name.split(".")[0].rstrip("[]") in NAME_PREFIXES:
                    yield number, name


def check_names(keys, spec_keys, literals):
    problems = []
    key_set = set(keys) | set(spec_keys)
    leaves = {k.rsplit(".", 1)[-1] for k in key_set}
    sections = {k.rsplit(".", 1)[0] for k in key_set if "." in k}
    docs = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    for doc in docs:
        for number, name in doc_names(doc):
            plain = name.replace("[]", "")
            if name in key_set or plain in {k.replace("[]", "") for k in key_set}:
                continue
            if name in sections or plain in {s.replace("[]", "") for s in sections}:
                continue
            if any(lit == plain or lit.startswith(plain + " ") for lit in literals):
                continue
            # A key named by its leaf under a documented section (server.tokens[].admin).
            if plain.rsplit(".", 1)[-1] in leaves and plain.rsplit(".", 1)[0] in {
                    s.replace("[]", "") for s in sections}:
                continue
            problems.append(f"{doc.relative_to(ROOT)}:{number}: `{name}` is neither a site-file "
                            "key the loaders accept nor a code, name or field the code has")
    operators = OPERATORS.read_text(encoding="utf-8")
    for key in sorted(keys):
        leaf = key.rsplit(".", 1)[-1]
        if not re.search(r"(`[^`\n]*\b" + re.escape(leaf) + r"\b[^`\n]*`|^\s*-?\s*\{?" +
                         re.escape(leaf) + r":)", operators, re.M):
            problems.append(f"docs/operators.md: the site-file key {key} (accepted by the "
                            "loaders) is not documented")
    return problems


def check_metrics():
    problems = []
    code = set()
    for path in source_files("**/*.cc"):
        code.update(re.findall(r"# TYPE (tuneplane_\w+)", path.read_text(encoding="utf-8")))
    lines = OPERATORS.read_text(encoding="utf-8").split("\n")
    rows = [(i, re.match(r"^\| `(tuneplane_\w+)`", line)) for i, line in enumerate(lines)]
    rows = [(i, m.group(1)) for i, m in rows if m]
    documented = {name for _, name in rows}
    for name in sorted(code - documented):
        problems.append(f"docs/operators.md: /metrics exports {name}, which the metrics table "
                        "does not list")
    for name in sorted(documented - code):
        problems.append(f"docs/operators.md: the metrics table lists {name}, which no code "
                        "exports")
    if rows:
        first, last = rows[0][0], rows[-1][0]
        for i in range(first, last + 1):
            if not lines[i].startswith("|"):
                problems.append(f"docs/operators.md:{i + 1}: the metrics table is split (a line "
                                "that is not a table row between its rows)")
                break
    return problems


def check_doctor_names():
    code = set()
    for path in source_files("doctor/*.cc"):
        text = path.read_text(encoding="utf-8")
        code.update(re.findall(r'name = "([a-z_]+(?:/[a-z_]+)?)"', text))
        code.update(re.findall(r'(?:ok|warn|fail|skip)Check\(\s*"([a-z_]+(?:/[a-z_]+)?)"', text))
        code.update(p + "<" for p in re.findall(r'"([a-z_]+/)"\s*\+', text))
    text = OPERATORS.read_text(encoding="utf-8")
    section = text.split("## Checking a site: `tuneplane doctor`", 1)[-1].split("\n## ", 1)[0]
    table = set(re.findall(r"^\| `([a-z_]+(?:/[a-z_<>]+)?)` \|", section, re.M))
    stable = re.search(r"Check names are stable: (.*?)in that order", section, re.S)
    listed = set(re.findall(r"`([a-z_]+(?:/[a-z_<>]+)?)`", stable.group(1))) if stable else set()
    problems = []
    if not stable:
        problems.append("docs/operators.md: no 'Check names are stable: …' list in 'Checking a site'")

    def normal(names):
        return {n.split("<")[0] + ("<" if "<" in n else "") for n in names}

    for where, names in (("the check table", table), ("the stable list", listed)):
        for name in sorted(normal(code) - normal(names)):
            problems.append(f"docs/operators.md: doctor makes the check {name.replace('<', '<…>')}, "
                            f"which {where} does not name")
        for name in sorted(normal(names) - normal(code)):
            problems.append(f"docs/operators.md: {where} names the check "
                            f"{name.replace('<', '<…>')}, which doctor does not make")
    return problems


def check_pointers():
    """Every pointer of the form (README, "Heading") or (docs/x.md, "Heading") in the sources,
    the examples and the packaging names a heading that file has."""
    problems = []
    headings = {}
    files = [p for p in sorted(SOURCES.rglob("*")) if p.suffix in (".h", ".cc")]
    for folder in ("examples", "packaging", "cmake", "scripts"):
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.is_file()]
    for path in files:
        if path == pathlib.Path(__file__).resolve():
            continue  # its docstring shows the form
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        # Comments joined into one line, so a pointer may wrap.
        text = " ".join(re.sub(r"^\s*(//+|#+)\s?", "", line) for line in raw.split("\n"))
        for m in re.finditer(r'\((README(?:\.md)?|docs/[a-z]+\.md),? "([^"]+)"', text):
            target = ROOT / ("README.md" if m.group(1).startswith("README") else m.group(1))
            if not target.exists():
                problems.append(f"{path.relative_to(ROOT)}: points to {m.group(1)}, which does "
                                "not exist")
                continue
            if target not in headings:
                headings[target] = {
                    re.sub(r"[`*]", "", h).strip().lower()
                    for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", target.read_text(encoding="utf-8"), re.M)}
            heading = re.sub(r"\s+", " ", m.group(2)).replace("`", "").strip().lower()
            if not any(h == heading or h.startswith(heading) for h in headings[target]):
                problems.append(f"{path.relative_to(ROOT)}: points to {m.group(1)}, "
                                f"\"{m.group(2)}\", which has no such heading")
    return problems


def cli_verbs():
    """The `tuneplane` verbs: every app.add_subcommand("NAME" in src/cli and src/client_cli."""
    verbs = set()
    for path in source_files("cli/*.cc", "client_cli/*.cc"):
        text = path.read_text(encoding="utf-8")
        verbs.update(re.findall(r'\bapp\.add_subcommand\(\s*"([a-z-]+)"', text))
    return verbs


def check_cli_help():
    """Every verb is named in `tuneplane --help`'s description (src/cli/app.cc), in the user
    or operator guide as `tuneplane VERB`, and each server verb in the README's CLI row."""
    problems = []
    verbs = cli_verbs()
    app = (SOURCES / "cli" / "app.cc").read_text(encoding="utf-8")
    described = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', app))
    guides = "".join((ROOT / "docs" / name).read_text(encoding="utf-8")
                     for name in ("users.md", "operators.md"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = re.search(r"`tuneplane ([a-z]+(?:/[a-z]+)+)`", readme)
    readme_verbs = set(row.group(1).split("/")) if row else set()
    server_verbs = set()
    for path in source_files("client_cli/*.cc"):
        server_verbs.update(
            re.findall(r'\bapp\.add_subcommand\(\s*"([a-z-]+)"', path.read_text(encoding="utf-8")))
    for verb in sorted(verbs):
        if verb == "completion":
            continue  # `tuneplane completion bash` is the packaging's, documented there
        if not re.search(rf"\b{verb}\b", described):
            problems.append(f"src/cli/app.cc: `tuneplane --help` does not name the verb '{verb}'")
        if f"tuneplane {verb}" not in guides:
            problems.append(f"docs/users.md, docs/operators.md: no `tuneplane {verb}`")
    for verb in sorted(server_verbs - readme_verbs):
        problems.append(f"README.md: the CLI row `tuneplane …/…` does not name '{verb}'")
    return problems


def check_drift():
    keys, problems = format_keys(SITE_LOADERS)
    spec_keys, more = format_keys(SPEC_LOADERS)
    return (problems + more + check_names(keys, spec_keys, string_literals()) + check_metrics() +
            check_doctor_names() + check_pointers() + check_cli_help())


def main():
    checks = {"links": check_links, "quick-start": check_quick_start, "drift": check_drift}
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
