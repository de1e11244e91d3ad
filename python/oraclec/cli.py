"""oraclec.cli -- what the Python tools (oraclec.launch, oraclec.probe)
share on their command line, as oraclec does it in C: values shown
escaped and cut (util/escape.c, docs/limits.md), one-line messages, and
signals that stop the run cleanly.  No torch here.

    escaped(b"a\\x1b]0;x", 64)  -> 'a\\\\x1b]0;x'   (util/escape.c's esc_text_cut)
    line_safe(text)            -> text, its control characters as \\\\xNN
    usage_message(msg, argv)   -> argparse's message, each argument escaped and cut
    with signals_raise():      -> SIGINT, SIGTERM, SIGHUP raise Interrupted
"""
import contextlib
import signal

# util/escape.h's NAME_SHOWN: an option value is quoted up to its 64th byte
SHOWN = 64
# a path is shown whole up to PATH_MAX (linux/limits.h): any path the
# system can open is
PATH_SHOWN = 4096
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(BaseException):
    """A signal to this process, raised where it arrives (a BaseException,
    as KeyboardInterrupt is, so that no `except Exception` swallows it and
    every `finally` on the way out removes its temporaries)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum

    def name(self):
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return "signal %d" % self.signum


def _bytes(value):
    """A str (from argv: non-UTF-8 bytes as surrogateescape's U+DC80..DCFF;
    from JSON: any lone surrogate) or bytes, as the bytes it stands for."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    out = bytearray()
    for ch in value:
        o = ord(ch)
        if 0xdc80 <= o <= 0xdcff:
            out.append(o - 0xdc00)
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)


def _utf8_length(lead):
    if 0xc2 <= lead <= 0xdf:
        return 2
    if 0xe0 <= lead <= 0xef:
        return 3
    if 0xf0 <= lead <= 0xf4:
        return 4
    return 0


def escaped(value, cut=None):
    """`value` as oraclec's text escaper shows it (util/escape.c,
    esc_text_dup; docs/limits.md, "Names in outputs"): printable ASCII and
    valid UTF-8 as they are, `\\\\` as `\\\\\\\\`, newline, CR and tab as
    `\\\\n`, `\\\\r`, `\\\\t`, any other control byte (C0, DEL), C1 control
    (as its two bytes) or byte of invalid UTF-8 as `\\\\xNN`.  With `cut`,
    its first `cut` bytes, then `...` where it was longer (esc_text_cut)."""
    b = _bytes(value)
    more = cut is not None and len(b) > cut
    if more:
        b = b[:cut]
    out, i = [], 0
    while i < len(b):
        c = b[i]
        if c < 0x80:
            out.append({0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"}.get(
                c, "\\x%02x" % c if c < 0x20 or c == 0x7f else chr(c)))
            i += 1
            continue
        n = _utf8_length(c)
        try:
            ch = b[i:i + n].decode("utf-8") if n and i + n <= len(b) else None
        except UnicodeDecodeError:
            ch = None
        if ch is None:
            out.append("\\x%02x" % c)
            i += 1
        elif 0x80 <= ord(ch) <= 0x9f:
            out.append("".join("\\x%02x" % x for x in b[i:i + n]))
            i += n
        else:
            out.append(ch)
            i += n
    return "".join(out) + ("..." if more else "")


def shown(value):
    """An option value in a message: escaped, cut at SHOWN bytes."""
    return escaped(value, SHOWN)


def path_shown(path):
    """A file's path in a message: escaped, whole up to PATH_SHOWN bytes."""
    return escaped(path, PATH_SHOWN)


def line_safe(text):
    """Text that stays on its line and starts no terminal sequence: every
    control character (C0, DEL, C1) and lone surrogate as \\\\xNN of its
    bytes; the rest, backslashes included, as it is (so that a value
    escaped inside it is not escaped twice)."""
    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or o == 0x7f or 0x80 <= o <= 0x9f or 0xd800 <= o <= 0xdfff:
            out.append("".join("\\x%02x" % c for c in _bytes(ch)))
        else:
            out.append(ch)
    return "".join(out)


def usage_message(message, argv):
    """argparse's `message` with every command-line value in it shown as
    shown() shows it: its repr() (argparse quotes choices and values with
    %r) as '...' escaped and cut, a value longer than SHOWN bytes written
    bare (its list of unrecognized arguments) cut; then the rest made
    line-safe."""
    values = set()
    for a in argv:
        values.add(a)
        if a.startswith("-") and "=" in a:
            values.add(a.split("=", 1)[1])
    marks = {}
    # longest first, so that a value inside another is not taken first;
    # marks are private-use characters, which nothing escapes
    for k, v in enumerate(sorted(values, key=lambda v: (-len(v), v))):
        if not v:
            continue
        quoted, bare = chr(0xe000 + 2 * k), chr(0xe001 + 2 * k)
        if repr(v) in message:
            message = message.replace(repr(v), quoted)
            marks[quoted] = "'%s'" % shown(v)
        if len(_bytes(v)) > SHOWN and v in message:
            message = message.replace(v, bare)
            marks[bare] = shown(v)
    message = line_safe(message)
    for m, text in marks.items():
        message = message.replace(m, text)
    return message


def _raise(signum, frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise():
    """SIGINT, SIGTERM and SIGHUP raise Interrupted while inside (in the
    main thread; elsewhere, where Python lets no handler be set, nothing
    changes); the handlers before are put back after."""
    old = {}
    try:
        for name in SIGNALS:
            s = getattr(signal, name, None)
            if s is not None:
                old[s] = signal.signal(s, _raise)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_held():
    """The signals above held off (blocked, then delivered on leaving):
    for the renames that put a run's outputs in place, all or none."""
    sigs = {getattr(signal, n) for n in SIGNALS if hasattr(signal, n)}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    except (AttributeError, ValueError, OSError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
