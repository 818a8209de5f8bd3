#!/usr/bin/env python3
"""Makes the data files of scenes/data/ (committed as made; run again only to change them):

terrain.pgm  64 x 64 8-bit binary PGM: rolling hills for scenes/cloth_on_terrain.json
rock.obj     a closed, outward-wound low-poly rock (an icosphere of 162 vertices with smooth
             radial noise, flattened a little) for scenes/cloth_on_mesh.json
and prints the point lists of scenes/convex_rocks.json.

Deterministic: no random numbers, only sines, so the files come out the same every time."""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def terrain(n=64):
    rows = []
    for j in range(n):
        z = j / (n - 1)
        row = []
        for i in range(n):
            x = i / (n - 1)
            # A hill left of centre, a lower one behind it, a ridge and some ripples.
            h = 0.75 * math.exp(-((x - 0.42) ** 2 + (z - 0.5) ** 2) / 0.03)
            h += 0.45 * math.exp(-((x - 0.75) ** 2 + (z - 0.28) ** 2) / 0.02)
            h += 0.20 * (0.5 + 0.5 * math.sin(6.0 * x + 2.0 * z))
            h += 0.06 * math.sin(17.0 * x) * math.sin(13.0 * z)
            row.append(h)
        rows.append(row)
    lo = min(min(r) for r in rows)
    hi = max(max(r) for r in rows)
    return [[round(255 * (h - lo) / (hi - lo)) for h in r] for r in rows]


def write_pgm(path, rows):
    h, w = len(rows), len(rows[0])
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(bytes(v for r in rows for v in r))


def icosphere(levels):
    t = (1 + 5 ** 0.5) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    v = [tuple(c / math.sqrt(sum(k * k for k in p)) for c in p) for p in v]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        mid = {}

        def m(a, b):
            key = (min(a, b), max(a, b))
            if key not in mid:
                p = [(v[a][k] + v[b][k]) / 2 for k in range(3)]
                n = math.sqrt(sum(c * c for c in p))
                v.append(tuple(c / n for c in p))
                mid[key] = len(v) - 1
            return mid[key]

        g = []
        for a, b, c in f:
            ab, bc, ca = m(a, b), m(b, c), m(c, a)
            g += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        f = g
    return v, f


def rock():
    v, f = icosphere(2)
    out = []
    for x, y, z in v:
        r = 1 + 0.14 * math.sin(3.1 * x + 1.3) * math.cos(2.3 * z - 0.4) + 0.08 * math.sin(5.0 * y + 2.1 * x)
        out.append((0.42 * r * x, 0.30 * r * y, 0.36 * r * z))
    vol = 0.0
    for a, b, c in f:
        pa, pb, pc = out[a], out[b], out[c]
        vol += (pa[0] * (pb[1] * pc[2] - pb[2] * pc[1]) - pa[1] * (pb[0] * pc[2] - pb[2] * pc[0]) +
                pa[2] * (pb[0] * pc[1] - pb[1] * pc[0])) / 6
    assert vol > 0, "the rock must be wound outward"
    return out, f


def write_obj(path, v, f, comment):
    with open(path, "w") as fp:
        fp.write("# %s\n" % comment)
        for p in v:
            fp.write("v %.4f %.4f %.4f\n" % p)
        for a, b, c in f:
            fp.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


def convex_points(seed, sx, sy, sz, n=14):
    pts = []
    for k in range(n):
        # Points spread over a squashed ball, pushed in and out a little.
        y = 1 - 2 * (k + 0.5) / n
        r = math.sqrt(1 - y * y)
        a = k * 2.39996 + seed
        w = 1 + 0.18 * math.sin(7.3 * k + 3.1 * seed)
        pts.append([round(sx * w * r * math.cos(a), 3), round(sy * w * y, 3), round(sz * w * r * math.sin(a), 3)])
    return pts


if __name__ == "__main__":
    write_pgm(os.path.join(HERE, "terrain.pgm"), terrain())
    v, f = rock()
    write_obj(os.path.join(HERE, "rock.obj"), v, f, "A low-poly rock: closed, wound outward (scenes/data/generate.py)")
    for seed, s in enumerate([(0.30, 0.22, 0.26), (0.22, 0.18, 0.25), (0.26, 0.30, 0.22)]):
        print(convex_points(seed, *s))
