"""A job's code folder as POST /v1/workdirs takes it, built as `tuneplane submit --workdir`
builds it (src/common/workdir_tree.{h,cc}): the folder read into a tree of plain files and
folders, checked against the same rules, named by the same tree hash, written as the same
ustar archive (modes 0755/0644, times and owners zero: the same folder gives the same bytes).

The rules (each refusal a WorkdirError naming the path and the server's code):
  links      a symbolic link to a regular file inside the folder is sent as that file; any
             other link (out of the folder, to a folder, dangling) is workdir.symlink
  kinds      devices, FIFOs and sockets are workdir.special_file
  paths      at most 255 bytes, no control character, and ustar must be able to split a long
             one into its prefix (155) and name (100): workdir.invalid_path
  limits     the files' sizes summed <= max_bytes (workdir.too_large), files and folders
             <= max_files (workdir.too_many_files)
The server checks all of this again and recomputes the hash; the client refuses first, so
nothing is sent that would be refused, and checks that the server named the same hash."""

import hashlib
import os
import stat

from .errors import TunePlaneError

MAX_PATH_BYTES = 255
# What is read when the site's limits are not known: the largest folder a site may take (the
# CLI's bound, src/client_cli/submit_command.cc); the server applies its own.
READ_BOUND_BYTES = 1024 * 1024 * 1024
READ_BOUND_FILES = 100_000
_BLOCK = 512


class WorkdirError(TunePlaneError):
    """A folder the server would refuse, found before anything was sent (status None,
    field "workdir", the server's code: workdir.symlink, workdir.special_file,
    workdir.invalid_path, workdir.too_large, workdir.too_many_files, workdir.unreadable)."""

    def __init__(self, code, message):
        super().__init__(None, code, "workdir", message)

    @property
    def transient(self):
        return False


def _shown(path):
    text = os.fsdecode(path) if isinstance(path, bytes) else path
    text = "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in text[:120])
    return text + ("…" if len(path) > 120 else "")


def _path_problem(path):
    """Why `path` (bytes, relative) may not be in a tree, or None."""
    if len(path) > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES} bytes"
    if any(b < 0x20 or b == 0x7f for b in path):
        return "has a control character"
    return None


def _ustar_split(path):
    """(prefix, name) of a path as ustar holds it, or None when it cannot."""
    if len(path) <= 100:
        return b"", path
    slash = path.find(b"/")
    while slash != -1:
        if slash <= 155 and len(path) - slash - 1 <= 100:
            return path[:slash], path[slash + 1:]
        slash = path.find(b"/", slash + 1)
    return None


class Tree:
    """A folder read: `entries` as (path bytes, is_dir, executable, content bytes) sorted
    bytewise by path, every parent listed; `files` and `bytes` as the API's WorkdirUpload
    counts them; `sha256` the tree hash, `reference` "sha256:<hex>" (what spec.workdir
    holds)."""

    def __init__(self, entries, files, size):
        self.entries = sorted(entries, key=lambda e: e[0])
        self.files = files
        self.bytes = size
        self.sha256 = tree_sha256(self.entries)
        self.reference = "sha256:" + self.sha256

    @property
    def folders(self):
        return len(self.entries) - self.files


def tree_sha256(entries):
    """workdirTreeSha256: each entry as 'd'/'f', ' ', "755"/"644", ' ', path, NUL, and for a
    file its decimal size, NUL, content; in path order."""
    digest = hashlib.sha256()
    for path, is_dir, executable, content in entries:
        digest.update(b"d 755 " if is_dir else (b"f 755 " if executable else b"f 644 "))
        digest.update(path + b"\0")
        if not is_dir:
            digest.update(str(len(content)).encode() + b"\0")
            digest.update(content)
    return digest.hexdigest()


def read_workdir(folder, max_bytes=READ_BOUND_BYTES, max_files=READ_BOUND_FILES):
    """The Tree of `folder` on this host, refusing (WorkdirError) what the server would."""
    root = os.fsencode(os.path.realpath(folder))
    if not os.path.isdir(root):
        raise WorkdirError("workdir.unreadable", f"'{folder}' is not a folder")
    entries = {}
    totals = [0, 0]  # bytes, files

    def too_large():
        return WorkdirError(
            "workdir.too_large",
            f"the folder's files hold more than {max_bytes} bytes, the site's limit "
            "(server.workdir_max_bytes); send only the code the job needs")

    def too_many():
        return WorkdirError(
            "workdir.too_many_files",
            f"the folder has more than {max_files} files and folders, the site's limit "
            "(server.workdir_max_files); send only the code the job needs")

    def admit(rel):
        problem = _path_problem(rel)
        if problem is None and _ustar_split(rel) is None:
            problem = ("cannot be written to a ustar archive (a name over 100 bytes, or a "
                       "folder path over 155)")
        if problem:
            raise WorkdirError("workdir.invalid_path", f"'{_shown(rel)}' {problem}")

    def count():
        if len(entries) > max_files:
            raise too_many()

    def add_file(path, rel, st):
        admit(rel)
        if st.st_size > max_bytes or totals[0] + st.st_size > max_bytes:
            raise too_large()
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                content = f.read()
        except OSError as e:
            raise WorkdirError("workdir.unreadable",
                               f"cannot read '{os.fsdecode(path)}': {e.strerror}") from None
        if totals[0] + len(content) > max_bytes:
            raise too_large()
        totals[0] += len(content)
        totals[1] += 1
        entries[rel] = (rel, False, bool(st.st_mode & stat.S_IXUSR), content)
        count()

    def follow(path, rel):
        target = os.fsdecode(os.readlink(path))
        resolved = os.path.realpath(path)
        if not os.path.exists(resolved):
            raise WorkdirError("workdir.symlink",
                               f"'{_shown(rel)}' is a link to '{_shown(target)}', which does "
                               "not exist; links are not sent")
        if os.path.commonpath([root, resolved]) != root:
            raise WorkdirError("workdir.symlink",
                               f"'{_shown(rel)}' is a link to '{_shown(target)}', outside the "
                               "folder; copy what the job needs into the folder")
        st = os.stat(resolved)
        if not stat.S_ISREG(st.st_mode):
            raise WorkdirError("workdir.symlink",
                               f"'{_shown(rel)}' is a link to '{_shown(target)}', which is not "
                               "a regular file; only links to files are sent (as the file)")
        add_file(resolved, rel, st)

    def walk(directory, relative):
        try:
            names = sorted(os.listdir(directory))
        except OSError as e:
            raise WorkdirError("workdir.unreadable",
                               f"cannot read '{os.fsdecode(directory)}': {e.strerror}") from None
        if len(names) > max_files:
            raise too_many()
        for name in names:
            path = os.path.join(directory, name)
            rel = relative + b"/" + name if relative else name
            try:
                st = os.lstat(path)
            except OSError as e:
                raise WorkdirError("workdir.unreadable",
                                   f"cannot read '{os.fsdecode(path)}': {e.strerror}") from None
            if stat.S_ISLNK(st.st_mode):
                follow(path, rel)
            elif stat.S_ISDIR(st.st_mode):
                admit(rel)
                entries[rel] = (rel, True, False, b"")
                count()
                walk(path, rel)
            elif stat.S_ISREG(st.st_mode):
                add_file(path, rel, st)
            else:
                raise WorkdirError("workdir.special_file",
                                   f"'{_shown(rel)}' is a device, FIFO or socket; only files "
                                   "and folders are sent")

    walk(root, b"")
    return Tree(entries.values(), totals[1], totals[0])


def _octal(value, size):
    return b"%0*o\0" % (size - 1, value)


def write_tar(tree):
    """writeWorkdirTar: the tree as ustar, in path order, modes 0755/0644, times and owners
    zero, then two zero blocks."""
    out = bytearray()
    for path, is_dir, executable, content in tree.entries:
        prefix, name = _ustar_split(path)
        header = bytearray(_BLOCK)
        header[0:len(name)] = name
        header[100:108] = _octal(0o755 if is_dir or executable else 0o644, 8)
        header[108:116] = _octal(0, 8)
        header[116:124] = _octal(0, 8)
        header[124:136] = _octal(0 if is_dir else len(content), 12)
        header[136:148] = _octal(0, 12)
        header[156:157] = b"5" if is_dir else b"0"
        header[257:263] = b"ustar\0"
        header[263:265] = b"00"
        header[345:345 + len(prefix)] = prefix
        header[148:156] = b" " * 8
        header[148:155] = _octal(sum(header), 7)
        header[155:156] = b" "
        out += header
        if not is_dir:
            out += content
            out += b"\0" * ((_BLOCK - len(content) % _BLOCK) % _BLOCK)
    out += b"\0" * (2 * _BLOCK)
    return bytes(out)
