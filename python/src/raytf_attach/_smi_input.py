"""Turning whatever was given as `nvidia-smi -q` output into text, or saying why it cannot be used.

Recorded outputs come from many shells: Windows PowerShell's `>` writes UTF-16 with a byte-order mark,
some editors add a UTF-8 one, and people paste the wrong command's output (`nvidia-smi` alone, or
`nvidia-smi -q -x`). Each of those must be read correctly or named, never taken as "no GPUs".
"""

from __future__ import annotations

import codecs

# Longest BOM first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

# Said after a recording that does not decode (not after nvidia-smi's own output: nobody saved that).
SAVE_AS_UTF8 = "save `nvidia-smi -q` output as UTF-8 (PowerShell: `nvidia-smi -q | Out-File -Encoding utf8 FILE`)"


class UnusableInput(Exception):
    """The bytes or text are not `nvidia-smi -q` output this tool can read; the message says what they are."""


def _encoding_without_bom(data: bytes) -> str:
    """UTF-16 without a BOM shows as a NUL beside every ASCII character; anything else must be UTF-8."""
    if b"\x00" not in data:
        return "utf-8"
    even_nuls, odd_nuls = data[0::2].count(0), data[1::2].count(0)
    if odd_nuls * 2 >= len(data) // 2 and even_nuls == 0:
        return "utf-16-le"
    if even_nuls * 2 >= len(data) // 2 and odd_nuls == 0:
        return "utf-16-be"
    raise UnusableInput("it holds NUL bytes but is not UTF-16 text (binary data?)")


def decode(data: bytes) -> str:
    """The text of UTF-8 or UTF-16/32 bytes (with or without a byte-order mark)."""
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None) or _encoding_without_bom(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise UnusableInput(f"it is not {encoding.upper()} text (undecodable byte at offset {e.start})") from e


def first_line(text: str, limit: int = 160) -> str:
    """The first non-blank line, cut to limit characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 3] + "..."


def not_query_output(text: str) -> str:
    """What text is when it has no `GPU <bus id>` section and no "No devices" line, said as a fix."""
    stripped = text.strip()
    if not stripped:
        return "it is empty: give the output of `nvidia-smi -q`"
    if stripped.startswith("<") or "<nvidia_smi_log" in stripped:
        return "it is XML (`nvidia-smi -q -x`); give the plain text of `nvidia-smi -q`, without -x"
    if "NVIDIA-SMI" in stripped and "|" in stripped:
        return "it is the summary table of `nvidia-smi` without -q; give the output of `nvidia-smi -q`"
    return (f"it has no `GPU <bus id>` section, so it is not `nvidia-smi -q` output (first line: "
            f"{first_line(text, 60)!r}); give the output of `nvidia-smi -q`")
