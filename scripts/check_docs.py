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
    scripts/check_docs.py examples      every job spec in README.md, docs/*.md and examples/
                                        validates against the demo site (scripts/demo_site.py),
                                        and every `tuneplane …` command line shown names a
                                        command and flags its --help lists ($TUNEPLANE_BIN: the
                                        binary; docs/developers.md, "Examples in the docs are
                                        checked")

Standard library only (python3 is in scripts/install-deps.sh). Exit 0 when it holds, 1 with
every problem listed otherwise.
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

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


# ---- docs.examples: every job spec validates against the demo site; every command line exists

SPEC_KIND = re.compile(r"^kind:\s*(TrainingJob|Playground|ModelDeployment)\s*$", re.M)
TOP_SPEC = re.compile(r"^spec:\s*$", re.M)
MARKER = re.compile(r"^<!--\s*(invalid|cli-example|fragment:\s*(\S+))\s*-->\s*$")


def code_blocks(path):
    """(line, info string, body, marker) of every fenced block; marker is the HTML comment on
    the line before the fence, if any."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*(```|~~~)\s*(\S*)", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*" + re.escape(m.group(1)) + r"\s*$", lines[j]):
            j += 1
        marker = MARKER.match(lines[i - 1].strip()) if i > 0 else None
        yield i + 1, m.group(2), "\n".join(lines[i + 1:j]), marker
        i = j + 1


def yaml_entries(lines):
    """Split block-mapping lines into [(key, [lines])] at their least indentation."""
    body = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    if not body:
        return 0, []
    indent = min(len(l) - len(l.lstrip()) for l in body)
    entries = []
    for line in lines:
        m = re.match(r"^( *)([A-Za-z_][\w.-]*):(.*)$", line)
        if m and len(m.group(1)) == indent:
            entries.append([m.group(2), [line]])
        elif entries:
            entries[-1][1].append(line)
    return indent, entries


def merge_yaml(base_lines, frag_lines):
    """The fragment's keys replace or extend the base's, recursively through block mappings."""
    base_indent, base = yaml_entries(base_lines)
    frag_indent, frag = yaml_entries(frag_lines)
    shift = base_indent - frag_indent
    for key, lines in frag:
        lines = [(" " * shift + l) if shift >= 0 else l[-shift:] for l in lines]
        found = next((e for e in base if e[0] == key), None)
        nested = (len(lines) > 1 and lines[0].split(":", 1)[1].strip() in ("", ) and
                  not lines[1].lstrip().startswith("- "))
        if found and nested and len(found[1]) > 1 and not found[1][1].lstrip().startswith("- "):
            found[1] = [lines[0]] + merge_yaml(found[1][1:], lines[1:])
        elif found:
            found[1] = lines
        else:
            base.append([key, lines])
    return [l for _, ls in base for l in ls]


def validate_spec(tuneplane, site, text, suffix, want_valid, where, workdir):
    spec = pathlib.Path(workdir) / f"spec{suffix}"
    spec.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("TUNEPLANE_SERVER", "TUNEPLANE_TOKEN", "TUNEPLANE_RUNTIME_REGISTRY_FILE")}
    env["XDG_CONFIG_HOME"] = str(workdir)  # no config file: validate stays offline
    r = subprocess.run([tuneplane, "validate", "-f", str(spec), "--site", str(site), "-o", "json"],
                       capture_output=True, text=True, env=env)
    if want_valid and r.returncode != 0:
        return [f"{where}: does not validate against the demo site (exit {r.returncode}): "
                f"{(r.stdout + r.stderr).strip()[:600]}"]
    if not want_valid and r.returncode != 2:
        return [f"{where}: marked <!-- invalid --> but validate exits {r.returncode}, not 2"]
    return []


class Help:
    """`tuneplane [PATH…] --help`, parsed: its subcommands and its options."""

    def __init__(self, tuneplane):
        self.tuneplane = tuneplane
        self.cache = {}

    def get(self, path):
        if path not in self.cache:
            r = subprocess.run([self.tuneplane, *path, "--help"], capture_output=True, text=True)
            subs, opts, section = set(), set(), None
            for line in r.stdout.split("\n"):
                if re.match(r"^\S.*:$", line):
                    section = line[:-1]
                    continue
                if section == "Subcommands":
                    m = re.match(r"^  ([a-z][\w-]*)(\s|$)", line)
                    if m:
                        subs.add(m.group(1))
                elif section == "Options":
                    m = re.match(r"^  (-[^ ]+(?: [^ ]+)?)", line)
                    if m:
                        opts.update(re.findall(r"(--?[A-Za-z][\w-]*)", m.group(1).split(" ")[0]))
            self.cache[path] = (r.returncode == 0, subs, opts)
        return self.cache[path]


def command_problems(help_, command, where):
    """A `tuneplane …` command line names a command that exists and only flags it lists."""
    command = re.split(r"\s(?:\||;|&&|>|2>|#)\s?|\s(?:\||>)", " " + command + " ")[0]
    words = command.split()[1:]  # after "tuneplane"
    if not words:
        return []
    first = words[0]
    if "/" in first or "…" in first or first.isupper() or first.startswith("<"):
        return []  # a list of verbs or a placeholder: `tuneplane submit/get/…`, `tuneplane VERB`
    path = ()
    ok, subs, _ = help_.get(path)
    for w in words:
        if w.startswith("-"):
            break
        if w in subs:
            path += (w,)
            ok, subs, _ = help_.get(path)
        elif "|" in w:
            return []  # a synopsis of several commands: `tuneplane slurm ping|submit -f SPEC|…`
        elif not path:
            return [f"{where}: `tuneplane {first}`: no such command (tuneplane --help)"]
        else:
            break
    known = set()
    for n in range(len(path) + 1):
        known |= help_.get(path[:n])[2]
    problems = []
    for w in words:
        if w == "--":
            break
        flag = w.strip("[]()`,")
        flag = flag.split("=", 1)[0]
        if not re.match(r"^--?[A-Za-z][\w-]*$", flag):
            continue
        if flag not in known:
            problems.append(f"{where}: `tuneplane {' '.join(path)}` has no flag {flag} "
                            f"(tuneplane {' '.join(path)} --help)")
    return problems


def command_lines(path):
    """(line, command) of every `tuneplane …` line in code blocks (after `$ `, `\\` joined)
    and every inline `tuneplane …` span in prose and tables."""
    for number, info, body, marker in code_blocks(path):
        if marker and marker.group(1) == "invalid":
            continue
        if info not in ("", "sh", "bash", "console", "shell", "text"):
            continue
        joined = body.replace("\\\n", " ")
        transcript = re.search(r"^\$ ", joined, re.M)  # then only the `$ ` lines are commands
        for k, line in enumerate(joined.split("\n")):
            if transcript and not line.startswith("$ "):
                continue
            line = re.sub(r"^\s*(\$\s+|sudo\s+)", "", line)
            if re.match(r"^tuneplane(\s|$)", line):
                yield number + k + 1, line
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for span in re.findall(r"`([^`]+)`", line):
            if re.match(r"^tuneplane\s", span):
                yield number, span


def check_examples():
    tuneplane = os.environ.get("TUNEPLANE_BIN") or str(ROOT / "build" / "src" / "cli" / "tuneplane")
    if not os.access(tuneplane, os.X_OK):
        return [f"no tuneplane binary at {tuneplane}: set TUNEPLANE_BIN (ctest does)"]
    problems = []
    with tempfile.TemporaryDirectory(prefix="tp-docs-examples-") as tmp:
        demo = pathlib.Path(tmp) / "demo"
        site = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo_site.py"), str(demo)],
                              capture_output=True, text=True, check=True).stdout.strip()
        specs = 0
        for doc in documents():
            for number, info, body, marker in code_blocks(doc):
                where = f"{doc.relative_to(ROOT)}:{number}"
                kind = marker.group(1) if marker else ""
                is_spec = bool(SPEC_KIND.search(body) and TOP_SPEC.search(body))
                if info not in ("yaml", "yml", "json", ""):
                    continue
                if kind.startswith("fragment"):
                    base = ROOT / marker.group(2)
                    if not base.is_file():
                        problems.append(f"{where}: the fragment's base {marker.group(2)} does not exist")
                        continue
                    text = "\n".join(merge_yaml(base.read_text(encoding="utf-8").split("\n"),
                                                body.split("\n"))) + "\n"
                    problems += validate_spec(tuneplane, site, text, ".yaml", True, where, tmp)
                    specs += 1
                elif is_spec:
                    suffix = ".json" if info == "json" else ".yaml"
                    problems += validate_spec(tuneplane, site, body + "\n", suffix,
                                              kind != "invalid", where, tmp)
                    specs += 1
                elif TOP_SPEC.search(body) and info in ("yaml", "yml"):
                    problems.append(f"{where}: a part of a job spec (spec: without kind:): mark it "
                                    "<!-- fragment: examples/….yaml --> (docs/developers.md, "
                                    "\"Examples in the docs are checked\")")
        for path in sorted((ROOT / "examples").glob("demo/*.yaml")) + sorted(
                (ROOT / "examples").glob("jobs/*")):
            text = path.read_text(encoding="utf-8")
            problems += validate_spec(tuneplane, site, text, path.suffix, True,
                                      str(path.relative_to(ROOT)), tmp)
            specs += 1
        if specs < 10:
            problems.append(f"only {specs} job specs found in the docs and examples/")
    help_ = Help(tuneplane)
    for doc in documents():
        for number, command in command_lines(doc):
            problems += command_problems(help_, command, f"{doc.relative_to(ROOT)}:{number}")
    return problems


def main():
    checks = {"links": check_links, "quick-start": check_quick_start, "drift": check_drift,
              "examples": check_examples}
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
