#!/usr/bin/env python3
"""Writes the seed recipes of fuzz_step into fuzz/corpus/step/ (the files are committed; this
script documents their bytes and remakes them after a change of the format in fuzz_step.c)."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "step")

# Ops, as fuzz_step.c reads the byte that picks one (modulo 10).
ADD_PARTICLES, ADD_MASSES, ADD_DISTANCES, COLLIDER, PARTICLE, _, SETTINGS, BODY, MATERIAL_OR_TRIANGLES, STEP = range(10)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-30, 1e30, "FLT_MAX", "-FLT_MAX", 1e-6, 1e6, "FLT_MIN", "denormal", "inf", "-inf",
           "nan", 0.5]


def real(x):
    """A scalar as tag 0 (int16 / 1000) when it fits, else tag 6 (raw float bits)."""
    if isinstance(x, str):
        return bytes([5, SPECIAL.index(x)])
    if abs(x) <= 32.767 and abs(round(x * 1000) - x * 1000) < 1e-6:
        return bytes([0]) + struct.pack("<h", round(x * 1000))
    return bytes([6]) + struct.pack("<f", x)


def vec(x, y, z):
    return real(x) + real(y) + real(z)


def header(substeps=4, iterations=8, solver=0, formulation=0, collision=0, gravity=None, dt=None, damping=None,
           jacobi=None, max_speed=None, diagnostics=True):
    flags = (1 if gravity else 0) | (2 if dt is not None else 0) | (4 if damping is not None else 0) | \
        (8 if jacobi else 0) | (16 if max_speed is not None else 0) | (32 if diagnostics else 0)
    b = bytes([flags])
    if gravity:
        b += vec(*gravity)
    if dt is not None:
        b += real(dt)
    b += bytes([substeps - 1, iterations - 1, solver, formulation])
    if damping is not None:
        b += real(damping)
    if jacobi:
        b += real(jacobi[0]) + real(jacobi[1]) + bytes([jacobi[2]])
    b += bytes([collision])
    if max_speed is not None:
        b += real(max_speed)
    return b


def particles(items, velocities=None):
    """items: (position, inverse mass); inverse mass 0 is written as the pinned choice."""
    b = bytes([ADD_PARTICLES, len(items) - 1, 1 if velocities else 0])
    for k, (x, w) in enumerate(items):
        b += vec(*x)
        if velocities:
            b += vec(*velocities[k])
        b += bytes([0]) if w == 0 else bytes([1]) + real(w)
    return b + bytes([0])


def distances(pairs, rest=None, compliance=None):
    mode = (1 if rest is not None else 0) | (4 if compliance is not None else 0)
    b = bytes([ADD_DISTANCES, len(pairs) - 1, mode])
    for a, c in pairs:
        b += bytes([0]) + struct.pack("<H", a) + bytes([0]) + struct.pack("<H", c)
        if rest is not None:
            b += real(rest)
        if compliance is not None:
            b += real(compliance) + real(compliance)
    return b


def plane(normal, offset, margin=None):
    # The kind byte: bit 0x40 reads a margin, the byte modulo 3 is the shape (0 plane).
    return bytes([COLLIDER, 0x42 if margin is not None else 0]) + vec(*normal) + real(offset) + \
        (real(margin) if margin is not None else b"")


def sphere(center, radius):
    return bytes([COLLIDER, 1]) + vec(*center) + real(radius)


def particle(kind, index, *rest):
    """kind: 0 pin, 1 unpin, 2 target (vec3), 3 force (vec3), 4 inverse mass (real)."""
    b = bytes([PARTICLE, kind, 0]) + struct.pack("<H", index)
    for r in rest:
        b += vec(*r) if isinstance(r, tuple) else real(r)
    return b


def settings(kind, *values):
    """kind: 0 dt, 1 substeps, 2 iterations, 3 solver, 4 formulation, 5 gravity, 6 damping,
    7 jacobi (alpha, omega, split), 8 collision mode."""
    b = bytes([SETTINGS, kind])
    if kind in (1, 2):
        return b + bytes([values[0] + 1])
    if kind in (3, 4, 8):
        return b + bytes([values[0]])
    if kind == 5:
        return b + vec(*values[0])
    if kind == 7:
        return b + real(values[0]) + real(values[1]) + bytes([values[2]])
    return b + real(values[0])


def grid(nx, ny, size, origin, diagonals, bend, mass_mode, mass, pinned):
    k = 1 | (8 if bend else 0)
    b = bytes([BODY, k, nx, ny]) + real(size) + real(size) + vec(*origin) + bytes([diagonals])
    b += bytes([mass_mode]) + real(mass) + bytes([len(pinned)])
    for p in pinned:
        b += bytes([0]) + struct.pack("<H", p)
    return b


def rope(segments, start, end, bend, mass_mode, mass, pinned):
    b = bytes([BODY, 8 if bend else 0, segments]) + vec(*start) + vec(*end)
    b += bytes([mass_mode]) + real(mass) + bytes([len(pinned)])
    for p in pinned:
        b += bytes([0]) + struct.pack("<H", p)
    return b


def step(n):
    return bytes([STEP, n - 1])


SEEDS = {
    # Two particles, the first pinned, one stiff link: a pendulum released from horizontal.
    "pendulum": header() + particles([((0, 1, 0), 0), ((1, 1, 0), 1)]) + distances([(0, 1)]) + step(3) + step(3),
    # An XPBD cloth pinned at two corners over a sphere; one corner then moved by a target.
    "cloth_sphere_xpbd": header(substeps=4, iterations=4, formulation=1, gravity=(0, -9.81, 0)) +
    grid(5, 5, 1, (-0.5, 1, -0.5), 2, True, 1, 0.2, [0, 4]) + sphere((0, 0, 0), 0.6) + step(3) +
    particle(2, 4, (1, 1.5, -0.5)) + step(2) + step(3),
    # A Jacobi rope on a plane, pushed by a force, with damping and a speed clamp.
    "rope_jacobi_plane": header(substeps=2, iterations=16, solver=1, collision=1, damping=0.99,
                                jacobi=(0.2, 1.0, 1), max_speed=20) +
    rope(10, (0, 1, 0), (2, 1, 0), True, 2, 0.1, [0]) + plane((0, 1, 0), 0, 0.01) + particle(3, 10, (5, 0, 0)) +
    step(3) + settings(3, 0) + settings(4, 1) + step(3),
    # Free particles with velocities and soft links, a changed gravity and time step, unpinning.
    "particles_soft": header(substeps=3, iterations=5, formulation=1) +
    particles([((0, 0, 0), 0), ((0.5, 0, 0), 2), ((1, 0, 0), 1), ((1, 0.5, 0), 0.5)],
              velocities=[(0, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0)]) +
    distances([(0, 1), (1, 2), (2, 3), (3, 0)], rest=0.6, compliance=0.001) + step(2) + settings(5, (0, 0, -3)) +
    settings(0, 0.005) + particle(1, 0) + particle(4, 0, 3) + step(3),
    # Values at the edge: a huge time step (the world accepts up to about 9e18 s), the largest float in a position, a NaN mass (refused).
    "extremes": header(substeps=1, iterations=1, dt=1e15) +
    particles([((0, 0, 0), 0), (("FLT_MAX", 0, 0), 1), ((1, 1, 1), "nan")]) +
    particles([((0, 0, 0), 1), ((1e-30, 0, 0), 1)]) + distances([(0, 1)]) + step(2) + settings(0, "denormal") + step(1),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(data)
        print(f"{name}.bin: {len(data)} bytes")
