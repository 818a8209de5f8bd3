#!/usr/bin/env python3
"""Checks the layering of src/: the folders, in the order below, may include only folders listed
before them (and themselves), so that no include cycle between folders can form; the programs,
bindings and harnesses outside src/ include only the public headers (include/pbd/). Prints the
folder graph; exits 1 naming each include that breaks the rule.

    scripts/check_layers.py [REPO]
"""
import os
import re
import sys

# Lowest first. simd/ holds the lane kernels of constraints/ and methods/, chosen at run time.
LAYERS = ["core", "mesh", "model", "constraints", "collision", "methods", "simd", "world"]
# Outside src/, only the tests may look at internals, as the library's own code does.
PUBLIC_ONLY = ["app", "ui", "bench", "soak", "python", "viewer", "render", "scene", "examples"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".c", ".h", ".cpp")):
                yield os.path.join(d, f)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(repo, "src")
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    edges = {}
    for path in sources(src):
        rel = os.path.relpath(path, src)
        folder = rel.split(os.sep)[0]
        if folder not in rank:
            bad.append(f"src/{rel}: folder '{folder}' is not a layer of scripts/check_layers.py")
            continue
        text = open(path, encoding="utf-8").read()
        for inc in INCLUDE.findall(text):
            if inc.startswith("pbd/"):
                continue
            target = inc.split("/")[0]
            if "/" not in inc or target not in rank:
                bad.append(f"src/{rel}: #include \"{inc}\" names no layer (write \"folder/file.h\")")
                continue
            if not os.path.exists(os.path.join(src, inc)):
                bad.append(f"src/{rel}: #include \"{inc}\" does not exist")
            if target != folder:
                edges.setdefault(folder, set()).add(target)
                if rank[target] > rank[folder]:
                    bad.append(f"src/{rel}: #include \"{inc}\": {folder}/ may not include {target}/ (a layer above it)")
    for d in PUBLIC_ONLY:
        root = os.path.join(repo, d)
        if not os.path.isdir(root):
            continue
        for path in sources(root):
            for inc in INCLUDE.findall(open(path, encoding="utf-8").read()):
                if inc.split("/")[0] in rank:
                    bad.append(f"{os.path.relpath(path, repo)}: #include \"{inc}\": only include/pbd/ headers outside src/ and tests/")
    for folder in LAYERS:
        print(f"{folder:12} -> {', '.join(sorted(edges.get(folder, ()), key=rank.get)) or '(nothing)'}")
    for line in bad:
        print(line, file=sys.stderr)
    if bad:
        print(f"check_layers: {len(bad)} include(s) break the layering", file=sys.stderr)
        return 1
    print("check_layers: every include follows the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
