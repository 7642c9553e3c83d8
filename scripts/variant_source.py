"""What the probe-variant builders (results/v28-v30/scripts/make_variants.py) share: a library kernel file's
text made importable outside the package (its relative imports made absolute), a git object's text, and
edits that assert how often the text they replace occurs."""
import re
import subprocess


def absolute_imports(text: str) -> str:
    text = re.sub(r"^from \.\.(\w+)", r"from pagedattn.\1", text, flags=re.M)
    return re.sub(r"^from \.(\w+)", r"from pagedattn.ops.\1", text, flags=re.M)


def git_show(spec: str) -> str:
    """`git show SPEC` (e.g. COMMIT:PATH) from the current directory's repository."""
    return subprocess.run(["git", "show", spec], check=True, capture_output=True, text=True).stdout


def replaced(text: str, *edits) -> str:
    """edits: (old, new) pairs, each `old` occurring once, or (old, new, count); applied in order."""
    for old, new, *count in edits:
        assert text.count(old) == (count[0] if count else 1), old
        text = text.replace(old, new)
    return text
