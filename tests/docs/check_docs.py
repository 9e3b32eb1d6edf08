#!/usr/bin/env python3
"""tests/docs/check_docs.py: the documentation's promises, checked.

  check_docs.py ROOT links             every relative link of docs/ and README.md
                                       resolves: the file, and for #anchor a
                                       heading of the file it points to
  check_docs.py ROOT images CMD...     every image a page shows exists and is
                                       one that a plot command draws: each CMD
                                       (e.g. "scripts/plots --list") prints the
                                       images it draws, one path a line
  check_docs.py ROOT pages             docs/index.md links every page of docs/;
                                       no page is 600 lines or longer; no
                                       heading carries a date

Prints each failure as FILE:LINE: what, and exits 1 if there was one.
"""

import os
import re
import shlex
import subprocess
import sys

MAX_LINES = 600
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_IMG = re.compile(r"<img\s[^>]*src=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
DATED = re.compile(r"\d{4}-\d{2}-\d{2}")


def pages(root):
    """The Markdown files checked: docs/**/*.md and README.md, relative to root."""
    out = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    for d, _, files in os.walk(os.path.join(root, "docs")):
        out += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files) if f.endswith(".md")]
    return sorted(out)


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code blanked out."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda c: " " * len(c.group(0)), line)


def slug(heading, seen):
    """GitHub's anchor for a heading: lower case, markup and punctuation
    dropped (letters, digits, '-', '_' and spaces kept), spaces to '-';
    the n-th repeat of a slug gets "-n"."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).lower()
    s = "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")
    if s in seen:
        seen[s] += 1
        return f"{s}-{seen[s]}"
    seen[s] = 0
    return s


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read()):
                m = HEADING.match(line)
                if m:
                    out.add(slug(m.group(2), seen))
        cache[path] = out
    return cache[path]


def links(root, page):
    """(line, is_image, target) of every link and image of a page."""
    with open(os.path.join(root, page), encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            yield n, m.group(1) == "!", m.group(3)
        for m in HTML_IMG.finditer(line):
            yield n, True, m.group(1)
        m = REFDEF.match(line)
        if m:
            yield n, False, m.group(1)


def external(target):
    return re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) is not None


def resolve(root, page, target):
    """The repository-relative path and anchor a relative link points to."""
    path, _, anchor = target.partition("#")
    if not path:
        return page, anchor
    full = os.path.normpath(os.path.join(os.path.dirname(os.path.join(root, page)), path))
    return os.path.relpath(full, root), anchor


def check_links(root):
    errors = []
    for page in pages(root):
        for n, _, target in links(root, page):
            if external(target):
                continue
            path, anchor = resolve(root, page, target)
            full = os.path.join(root, path)
            if path.startswith(".."):
                errors.append(f"{page}:{n}: '{target}' points outside the repository")
            elif not os.path.exists(full):
                errors.append(f"{page}:{n}: '{target}': no file {path}")
            elif anchor:
                if not path.endswith(".md"):
                    errors.append(f"{page}:{n}: '{target}': an anchor into a file that is not Markdown")
                elif anchor not in anchors(full):
                    errors.append(f"{page}:{n}: '{target}': {path} has no heading whose anchor is #{anchor}")
    return errors


def check_images(root, commands):
    drawn, errors = set(), []
    for cmd in commands:
        proc = subprocess.run(shlex.split(cmd), cwd=root, capture_output=True, text=True)
        if proc.returncode != 0:
            errors.append(f"{cmd}: exit {proc.returncode} listing its plots: {proc.stderr.strip()}")
            continue
        drawn |= {os.path.normpath(p.strip()) for p in proc.stdout.splitlines() if p.strip()}
    if not commands:
        errors.append("no plot command given")
    for page in pages(root):
        for n, image, target in links(root, page):
            if not image or external(target):
                continue
            path, _ = resolve(root, page, target)
            if not os.path.exists(os.path.join(root, path)):
                errors.append(f"{page}:{n}: image {path} does not exist")
            if path not in drawn:
                errors.append(f"{page}:{n}: image {path} is drawn by none of: {', '.join(commands)}")
    return errors


def check_pages(root):
    errors = []
    index = "docs/index.md"
    linked = {resolve(root, index, t)[0] for _, _, t in links(root, index) if not external(t)}
    for page in pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        count = text.count("\n") + (0 if text.endswith("\n") else 1)
        if count >= MAX_LINES:
            errors.append(f"{page}:1: {count} lines; a page stays under {MAX_LINES} (split it)")
        if page.startswith("docs/") and page != index and page not in linked:
            errors.append(f"{page}:1: not linked from {index}")
        for n, line in prose_lines(text):
            m = HEADING.match(line)
            if m and DATED.search(m.group(2)):
                errors.append(f"{page}:{n}: a dated heading ('{m.group(2)}'): the docs are references, "
                              "the history is in git")
    return errors


def main(argv):
    if len(argv) < 2 or argv[1] not in ("links", "images", "pages"):
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[0])
    errors = {"links": lambda: check_links(root), "pages": lambda: check_pages(root),
              "images": lambda: check_images(root, argv[2:])}[argv[1]]()
    for e in errors:
        print(e)
    print(f"{argv[1]}: {len(errors)} problem(s) in {len(pages(root))} pages")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
