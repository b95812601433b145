"""The server and token, found where the `tuneplane` CLI finds them
(src/client/client_config.cc): the arguments, else TUNEPLANE_SERVER / TUNEPLANE_TOKEN, else the
config file $XDG_CONFIG_HOME/tuneplane/config.yaml (when XDG_CONFIG_HOME is absolute) or
~/.config/tuneplane/config.yaml with `server:`, and `token:` or `token_file:` (a path relative
to the config file's folder, or ~/...). As the CLI, a config file others may write is refused,
and so is a token in a file its group or others may read (chmod 600)."""

import os
import stat

from .errors import TunePlaneError

SERVER_ENV = "TUNEPLANE_SERVER"
TOKEN_ENV = "TUNEPLANE_TOKEN"
CA_FILE_ENV = "TUNEPLANE_CA_FILE"
CONFIG_RELATIVE = os.path.join("tuneplane", "config.yaml")


def config_file_path(environ=None):
    """Where the config file is looked for, or None (no HOME, no XDG_CONFIG_HOME)."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME") or ""
    if xdg.startswith("/"):
        return os.path.join(xdg, CONFIG_RELATIVE)
    home = env.get("HOME") or ""
    if home:
        return os.path.join(home, ".config", CONFIG_RELATIVE)
    return None


def _config_error(code, field, message):
    return TunePlaneError(None, code, field, message)


def _unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner
    if " #" in value:  # a trailing comment
        value = value.split(" #", 1)[0].rstrip()
    return value


def _parse_config(path, text):
    """The three flat keys of the config file (`key: value` lines; comments allowed)."""
    settings = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        key, sep, value = stripped.partition(":")
        key = key.strip()
        if not sep or line[0].isspace():
            raise _config_error("config.invalid", "config",
                                f"line {number}: expected 'key: value' (in {path})")
        if key not in ("server", "token", "token_file"):
            raise _config_error("config.unknown_field", key,
                                f"unknown field '{key}'; expected server, token or token_file"
                                f" (in {path})")
        settings[key] = _unquote(value)
    if "token" in settings and "token_file" in settings:
        raise _config_error("config.conflicting_fields", "token_file",
                            f"give at most one of token and token_file, not both (in {path})")
    return settings


def _private(path, st, what, field):
    if st.st_uid not in (os.geteuid(), 0):
        raise _config_error("config.insecure_permissions", field,
                            f"the {what} '{path}' holds a token but is owned by uid {st.st_uid},"
                            " not by you: refusing to use it")
    if st.st_mode & 0o077:
        raise _config_error("config.insecure_permissions", field,
                            f"the {what} '{path}' holds a token but its group or others can "
                            f"access it (mode {stat.S_IMODE(st.st_mode):04o}): refusing to use "
                            f"it; run: chmod 600 '{path}'")


def _read(path, code, field):
    """(os.stat_result, text) of a regular file, or None when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise _config_error(code, field, f"cannot read '{path}': {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _config_error(code, field, f"'{path}' is not a regular file")
        data = f.read(1 << 20)
    return st, data.decode("utf-8", errors="replace")


def resolve(server=None, token=None, environ=None):
    """(server URL without trailing '/', token, CA file or None), as the CLI resolves them."""
    env = os.environ if environ is None else environ
    path = config_file_path(env)
    settings = {}
    read = _read(path, "config.unreadable", "config") if path else None
    if read:
        st, text = read
        settings = _parse_config(path, text)
        if st.st_mode & 0o022:
            raise _config_error("config.insecure_permissions", "config",
                                f"the config file '{path}' can be written by its group or others"
                                f" (mode {stat.S_IMODE(st.st_mode):04o}): refusing to use it;"
                                f" run: chmod 600 '{path}'")
        if "token" in settings:
            _private(path, st, "config file", "token")

    server = server or env.get(SERVER_ENV) or settings.get("server") or ""
    server = server.rstrip("/") if len(server) > 1 else server
    if not server:
        raise _config_error("cli.no_server", "server",
                            f"no server: pass server=URL, set {SERVER_ENV}, or write 'server: URL'"
                            f" in {path or '~/.config/' + CONFIG_RELATIVE}")
    lower = server.lower()
    authority = lower.split("://", 1)[-1].split("/", 1)[0]
    if not (lower.startswith("unix:///") or
            (lower.startswith(("http://", "https://")) and authority and "@" not in authority)):
        raise _config_error("cli.invalid_server", "server",
                            f"the server URL '{server}' must start with http://, https:// or "
                            "unix:///, and carry no user:password@")

    if not token:
        token = env.get(TOKEN_ENV) or ""
    if not token and "token" in settings:
        token = settings["token"].strip()
        if not token:
            raise _config_error("config.empty_token", "token", f"'token:' in {path} is empty")
    if not token and "token_file" in settings:
        file = settings["token_file"]
        if file.startswith("~/") and env.get("HOME"):
            file = env["HOME"] + file[1:]
        elif not file.startswith("/"):
            file = os.path.join(os.path.dirname(path), file)
        read = _read(file, "config.token_file_unreadable", "token_file")
        if read is None:
            raise _config_error("config.token_file_unreadable", "token_file",
                                f"the token file '{file}' (token_file in {path}) does not exist")
        _private(file, read[0], "token file", "token_file")
        token = read[1].strip()
        if not token:
            raise _config_error("config.empty_token", "token_file",
                                f"the token file '{file}' is empty")
    if not token:
        raise _config_error("client.no_token", "token",
                            f"no token: pass token=..., set {TOKEN_ENV}, or write 'token_file: PATH'"
                            f" in {path or '~/.config/' + CONFIG_RELATIVE}")
    return server, token, env.get(CA_FILE_ENV) or None
