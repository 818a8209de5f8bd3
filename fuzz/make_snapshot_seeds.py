#!/usr/bin/env python3
"""Writes the seed snapshots of fuzz_snapshot into fuzz/corpus/snapshot/: one real snapshot of
every built-in scene (scenes/*.json), each made small so that the corpus stays small (cloth grids
of at most 8 x 8 vertices, ropes of 10 segments, tetrahedral boxes of 2 cells a side, the pins
moved to the same corners), run a few frames by the `pbd` program and saved with --save-every;
and a few more under the force-based methods whose state a snapshot carries (vertex block
descent's multipliers and penalties, projective dynamics' weights). The files are committed; this
script remakes them after a change of the snapshot format.

    fuzz/make_snapshot_seeds.py [PBD]     PBD: the pbd program (default build/app/pbd)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus", "snapshot")
GRID_MAX = 8
ROPE_SEGMENTS = 10
TET_CELLS = 2
FRAMES = 4
# Scenes run again under these methods (their state blocks in the snapshot are not empty then).
EXTRA = [("cloth_sphere", "vbd"), ("hanging_cloth", "projective_dynamics"), ("rope", "implicit_euler")]


def remap_pin(k, nx, ny, mx, my):
    """Vertex k of an nx x ny grid, as the vertex at the same corner or edge of an mx x my grid."""
    row, col = divmod(k, nx)
    row = my - 1 if row == ny - 1 else min(row, my - 1)
    col = mx - 1 if col == nx - 1 else min(col, mx - 1)
    return row * mx + col


def shrink(scene, folder):
    for o in scene.get("objects", []):
        if o.get("type") == "grid_cloth":
            nx, ny = o["nx"], o["ny"]
            mx, my = min(nx, GRID_MAX), min(ny, GRID_MAX)
            # A pin by region needs the vertices the region was drawn around: the grid stays.
            if any(isinstance(k, dict) and "box" in k for k in o.get("pinned", []) if isinstance(o["pinned"], list)):
                mx, my = nx, ny
            o["nx"], o["ny"] = mx, my
            if isinstance(o.get("pinned"), list):
                o["pinned"] = [remap_pin(k, nx, ny, mx, my) if isinstance(k, int) else k for k in o["pinned"]]
        elif o.get("type") == "rope":
            segments = o["segments"]
            o["segments"] = min(segments, ROPE_SEGMENTS)
            if isinstance(o.get("pinned"), list):
                o["pinned"] = [min(k, o["segments"]) if isinstance(k, int) else k for k in o["pinned"]]
        elif o.get("type") == "tet_box":
            o["cells"] = [min(c, TET_CELLS) for c in o["cells"]]
    # Files named relative to the scene's folder, named from anywhere.
    for c in scene.get("colliders", []):
        for key in ("obj", "image"):
            if key in c and not os.path.isabs(c[key]):
                c[key] = os.path.join(folder, c[key])
    scene.pop("render", None)
    return scene


def main():
    pbd = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "app", "pbd")
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*.pbds")):
        os.remove(old)
    runs = [(path, None) for path in sorted(glob.glob(os.path.join(ROOT, "scenes", "*.json")))]
    runs += [(os.path.join(ROOT, "scenes", name + ".json"), method) for name, method in EXTRA]
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path, method in runs:
            with open(path) as f:
                scene = shrink(json.load(f), os.path.dirname(path))
            name = scene["name"] + ("_" + method if method else "")
            small = os.path.join(tmp, name + ".json")
            with open(small, "w") as f:
                json.dump(scene, f)
            out = os.path.join(tmp, name)
            cmd = [pbd, "run", small, "--frames", str(FRAMES), "--save-every", str(FRAMES), "--out", out,
                   "--format", "none", "-q"]
            if method:
                cmd += ["--method", method]
            subprocess.run(cmd, check=True)
            seed = os.path.join(OUT, name + ".pbds")
            shutil.copyfile(os.path.join(out, "snapshot.pbds"), seed)
            size = os.path.getsize(seed)
            total += size
            print("%-40s %8d bytes" % (name, size))
    print("%d seeds, %d bytes" % (len(runs), total))


if __name__ == "__main__":
    main()
