#!/usr/bin/env python3
"""Prints the deploy reference (deploy/README.md, then deploy/docs/*.md in its Contents order) as one
Markdown file, REFERENCE.md of the release tarball: links between the pieces become links within the
file (every heading's anchor is unique across the pieces), and links to the top-level README point
beside it."""
import re
import sys
from pathlib import Path

deploy = Path(sys.argv[1] if len(sys.argv) > 1 else "deploy")
index = (deploy / "README.md").read_text()
order = []
for name in re.findall(r"\]\(docs/([a-z0-9-]+\.md)\)", index):
    if name not in order:
        order.append(name)
missing = sorted(p.name for p in (deploy / "docs").glob("*.md") if p.name not in order)
if missing:
    sys.exit(f"deploy/README.md's Contents does not link {', '.join(missing)}")


def anchor(title):
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


titles = {name: anchor((deploy / "docs" / name).read_text().split("\n", 1)[0].lstrip("# ")) for name in order}


def local(target):
    name, _, fragment = target.partition("#")
    return "#" + (fragment or titles[name])


def link(match, in_docs):
    target = match.group(1)
    if re.match(r"^[a-z]+:|^#", target):
        return match.group(0)
    if in_docs:
        if target.startswith("../../README.md"):
            return "](README.md" + target[len("../../README.md"):] + ")"
        if target == "../README.md":
            return "](#deploy)"
        if re.match(r"^[a-z0-9-]+\.md(#|$)", target):
            return "](" + local(target) + ")"
        return "](" + target.removeprefix("../") + ")"
    if target.startswith("docs/"):
        return "](" + local(target[len("docs/"):]) + ")"
    if target.startswith("../README.md"):
        return "](README.md" + target[len("../README.md"):] + ")"
    return match.group(0)


pattern = re.compile(r"\]\(([^)\s]+)\)")
parts = [pattern.sub(lambda m: link(m, False), index)]
for name in order:
    parts.append(pattern.sub(lambda m: link(m, True), (deploy / "docs" / name).read_text()))
sys.stdout.write("\n".join(part.rstrip("\n") + "\n" for part in parts))
