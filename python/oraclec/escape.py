"""oraclec.escape -- text from the user shown in a message as oraclec's C
side shows it (util/escape.c, docs/limits.md "Names quoted in
diagnostics"): printable ASCII and valid UTF-8 as they are, a backslash as
\\\\, newline, CR and tab as \\n, \\r, \\t, every other control byte (C0,
DEL, a C1 control's two bytes) and every byte of invalid UTF-8 as \\xNN;
cut after its first 64 bytes, with "...".
"""

NAME_SHOWN = 64


def shown(s, limit=NAME_SHOWN):
    """s (str, its undecodable bytes as surrogates, or bytes) escaped and
    cut for a one-line message."""
    b = s if isinstance(s, (bytes, bytearray)) else s.encode("utf-8", "surrogateescape")
    cut = len(b) > limit
    b = bytes(b[:limit])
    out, i = [], 0
    while i < len(b):
        c = b[i]
        n = 1 if c < 0x80 else 2 if 0xc2 <= c <= 0xdf else 3 if 0xe0 <= c <= 0xef else \
            4 if 0xf0 <= c <= 0xf4 else 0
        ch = None
        if n > 1:
            try:
                ch = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                ch = None
        if c < 0x80:
            out.append({0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"}.get(
                c, chr(c) if 0x20 <= c < 0x7f else "\\x%02x" % c))
            i += 1
        elif ch is not None and len(ch) == 1 and not 0x80 <= ord(ch) <= 0x9f:
            out.append(ch)
            i += n
        else:
            out.extend("\\x%02x" % x for x in b[i:i + (n if ch is not None else 1)])
            i += n if ch is not None else 1
    return "".join(out) + ("..." if cut else "")
