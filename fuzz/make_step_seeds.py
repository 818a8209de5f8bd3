#!/usr/bin/env python3
"""Writes the seed recipes of fuzz_step into fuzz/corpus/step/ and its reproducers into
fuzz/regressions/step/ (the files are committed; this script documents their bytes and remakes
them after a change of the format in fuzz_step.c, described in docs/fuzzing.md)."""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "step")
REGRESSIONS_DIR = os.path.join(HERE, "regressions", "step")

# Ops, as fuzz_step.c reads the byte that picks one (modulo 10). BODY makes a soft body from a mesh;
# RIGID makes and moves rigid bodies.
PARTICLES, CONSTRAINTS, COLLIDER, PARTICLE, RIGID, SETTINGS, BODY, MATERIAL, TRIANGLES, STEP = range(10)
# Constraint families (pbd_family_type), shapes (pbd_shape_type), methods (pbd_method), kernels (pbd_simd).
DISTANCE, TET_VOLUME, TET_NEOHOOKEAN, ATTACHMENT, LRA, CLUSTER, BEND_DIHEDRAL, BEND_ISOMETRIC, TRIANGLE, VOLUME = \
    range(10)
PLANE, SPHERE, CAPSULE, BOX, CONVEX, MESH, HEIGHTFIELD = range(7)
PBD, EXPLICIT_EULER, SYMPLECTIC_EULER, IMPLICIT_EULER, PROJECTIVE_DYNAMICS, VBD = range(6)
AUTO, SCALAR, AVX2, AVX512 = range(4)
# Body kinds of op_body.
GRID, ROPE, TRIANGLE_MESH, TET_BOX, TET_BALL = range(5)
# Rigid body types (pbd_body_type).
STATIC, KINEMATIC, DYNAMIC = range(3)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-30, 1e30, "FLT_MAX", "-FLT_MAX", 1e-6, 1e6, "FLT_MIN", "denormal", "inf", "-inf",
           "nan", 0.5]


def real(x):
    """A scalar as tag 0 (int16 / 1000) when it fits, else tag 6 (raw float bits)."""
    if isinstance(x, str):
        return bytes([5, SPECIAL.index(x)])
    if x == 0 and math.copysign(1, x) < 0:
        return bytes([5, 1])
    if abs(x) <= 32.767 and abs(round(x * 1000) - x * 1000) < 1e-6:
        return bytes([0]) + struct.pack("<h", round(x * 1000))
    return bytes([6]) + struct.pack("<f", x)


def vec(x, y, z):
    return real(x) + real(y) + real(z)


def u8(*values):
    return bytes(values)


def index(i):
    """An index as fuzz_step reads one: a byte below 254, then 16 bits (taken modulo the count)."""
    return bytes([0]) + struct.pack("<H", i)


def header(substeps=4, iterations=8, method=PBD, solver=0, formulation=0, collision=0, threads=1, simd=AUTO,
           blocks=0, gravity=None, dt=None, damping=None, jacobi=None, max_speed=None, diagnostics=True,
           chebyshev=None, hierarchy=None, damping_mode=None, divergence=None, force=None, hard=None, wind=None,
           profile=False, heap=None):
    """blocks: bits 0-1 the constraint block (256, 64, 16, 8), bits 2-3 the particle block (1024, 256,
    128, 64), bit 4 the default least number of blocks to share a stage (else 2). heap: each world's
    memory as 4096 << heap bytes (default 256 MiB)."""
    flags = (1 if gravity else 0) | (2 if dt is not None else 0) | (4 if damping is not None else 0) | \
        (8 if jacobi else 0) | (16 if max_speed is not None else 0) | (32 if diagnostics else 0) | \
        (64 if chebyshev else 0) | (128 if hierarchy else 0)
    more = (1 if damping_mode is not None else 0) | (2 if divergence is not None else 0) | (4 if force else 0) | \
        (8 if hard is not None else 0) | (16 if wind else 0) | (32 if profile else 0) | \
        (128 if heap is not None else 0)
    b = u8(flags, more)
    if gravity:
        b += vec(*gravity)
    if dt is not None:
        b += real(dt)
    b += u8(substeps - 1, iterations - 1, method, solver, formulation, collision, threads - 1, simd, blocks)
    if damping is not None:
        b += real(damping)
    if jacobi:
        b += real(jacobi[0]) + real(jacobi[1]) + u8(jacobi[2])
    if max_speed is not None:
        b += real(max_speed)
    if chebyshev:  # (rho, delay, gamma)
        b += real(chebyshev[0]) + u8(chebyshev[1] + 1) + real(chebyshev[2])
    if hierarchy:  # (levels, iterations)
        b += u8(hierarchy[0] + 1, hierarchy[1] + 1)
    if damping_mode is not None:
        b += u8(damping_mode)
    if divergence is not None:
        b += real(divergence)
    if force:  # (stiffness damping, linear tolerance)
        b += real(force[0]) + real(force[1])
    if hard is not None:
        b += real(hard)
    if wind:  # (wind, gust strength, gust frequency)
        b += vec(*wind[0]) + real(wind[1]) + real(wind[2])
    if heap is not None:
        b += u8(heap)
    return b


def particles(items, velocities=None, by_mass=False):
    """items: (position, inverse mass, or mass when by_mass); inverse mass 0 is written as the pinned choice."""
    b = u8(PARTICLES, (1 if by_mass else 0) | (2 if velocities else 0), len(items) - 1)
    for k, (x, w) in enumerate(items):
        b += vec(*x)
        if velocities:
            b += vec(*velocities[k])
        b += u8(0) if w == 0 and not by_mass else u8(1) + real(w)
    return b


def distances(pairs, rest=None, compliance=None):
    mode = (1 if rest is not None else 0) | (4 if compliance is not None else 0)
    b = u8(CONSTRAINTS, DISTANCE, len(pairs) - 1, mode)
    for a, c in pairs:
        b += index(a) + index(c)
        if rest is not None:
            b += real(rest)
        if compliance is not None:
            b += real(compliance) + real(compliance)
    return b


def tet_volumes(tets, compliance=None):
    b = u8(CONSTRAINTS, TET_VOLUME, len(tets) - 1, 4 if compliance is not None else 0)
    for t in tets:
        b += b"".join(index(p) for p in t) + (real(compliance) if compliance is not None else b"")
    return b


def tet_neohookeans(tets, youngs=None):
    b = u8(CONSTRAINTS, TET_NEOHOOKEAN, len(tets) - 1, 1 if youngs is not None else 0)
    for t in tets:
        b += b"".join(index(p) for p in t) + (real(youngs) if youngs is not None else b"")
    return b


def body_ref(slot):
    """A rigid body as fuzz_step reads one: the slot-th body the recipe made (while fewer than 128
    were made), None for the null id, or ("made up", index1, generation)."""
    if slot is None:
        return u8(0xC0)
    if isinstance(slot, tuple):
        return u8(0x80, slot[1], slot[2])
    return u8(slot)


def attachments(items, compliance=None, body=None):
    """items: (particle, target); with body, the targets are points of that rigid body."""
    mode = (4 if compliance is not None else 0) | (8 if body is not None else 0)
    b = u8(CONSTRAINTS, ATTACHMENT, len(items) - 1, mode)
    for p, target in items:
        b += index(p) + vec(*target) + (real(compliance) if compliance is not None else b"")
        b += body_ref(body) if body is not None else b""
    return b


def lras(first, count, mode=1, scale=1.0):
    return u8(CONSTRAINTS, LRA, 0, 1 | 2) + index(first) + struct.pack("<H", count) + u8(mode) + real(scale)


def cluster(first, count, stiffness=0.5):
    return u8(CONSTRAINTS, CLUSTER, 4, count) + index(first) + real(stiffness)


def bends(family, triangles, compliance=None):
    """One hinge per (triangle, fourth particle): the triangle's corners and the wing."""
    b = u8(CONSTRAINTS, family, len(triangles) - 1, 4 if compliance is not None else 0)
    for t, wing in triangles:
        b += u8(1) + struct.pack("<H", t) + index(wing) + (real(compliance) if compliance is not None else b"")
    return b


def surface_strains(first, count, compliance):
    return u8(CONSTRAINTS, TRIANGLE, 1 | 8) + real(compliance) + real(compliance) + index(first) + u8(count)


def volume(first_triangle, count, pressure):
    return u8(CONSTRAINTS, VOLUME, 4) + struct.pack("<H", count) + index(first_triangle) + real(pressure)


def collider(kind, shape, margin=None, kinematic=None, pose=None, friction=None, restitution=None, trigger=False,
             body=None):
    """A collider made by op_collider (kind byte 0: create). shape: the bytes of its fields (below);
    kinematic: (velocity, angular velocity); pose: (position, quaternion), in the body's frame with
    body (a body_ref slot: the shape rides on that rigid body, made by op_rigid)."""
    f = (1 if margin is not None else 0) | (2 if kinematic else 0) | (4 if pose else 0) | \
        (8 if friction else 0) | (16 if restitution is not None else 0) | (32 if trigger else 0)
    b = (u8(RIGID, 1) if body is not None else u8(COLLIDER, 0)) + u8(kind) + shape + u8(f)
    if margin is not None:
        b += real(margin)
    if kinematic:
        b += u8(1) + vec(*kinematic[0]) + vec(*kinematic[1])
    if pose:
        b += vec(*pose[0]) + b"".join(real(q) for q in pose[1])
    if friction:
        b += real(friction[0]) + real(friction[1])
    if restitution is not None:
        b += real(restitution)
    if body is not None:
        b += body_ref(body)
    return b


def plane(normal, offset, **kw):
    return collider(PLANE, vec(*normal) + real(offset), **kw)


def sphere(center, radius, **kw):
    return collider(SPHERE, vec(*center) + real(radius), **kw)


def capsule(half_height, radius, **kw):
    return collider(CAPSULE, real(half_height) + real(radius), **kw)


def box(half_extents, **kw):
    return collider(BOX, vec(*half_extents), **kw)


def convex_box(half_extents, **kw):
    """The hull of a box's corners (mode 1: corners from the extents)."""
    return collider(CONVEX, u8(1, 0) + vec(*half_extents), **kw)


def mesh_box(half_extents, closed, **kw):
    """A collider mesh of a box's 12 triangles (mode 1, and 16 when closed)."""
    return collider(MESH, u8(1 | (16 if closed else 0), 0) + vec(*half_extents), **kw)


def heightfield(heights, cell, **kw):
    nz = len(heights)
    nx = len(heights[0])
    b = u8(nx, nz) + real(cell) + real(cell) + b"".join(real(v) for row in heights for v in row)
    return collider(HEIGHTFIELD, b, **kw)


def collider_velocity(slot, velocity, angular):
    return u8(COLLIDER, 4, slot) + vec(*velocity) + vec(*angular)


def collider_move(slot, position, rotation=(0, 0, 0, 1)):
    # 128: modulo 5 the pose change, and bit 7 asks for a move (pbd_collider_move_to), not a teleport
    return u8(COLLIDER, 128, slot) + vec(*position) + b"".join(real(q) for q in rotation)


def particle(kind, i, *rest):
    """kind: 0 pin, 1 unpin, 2 target (vec3), 3 force (vec3), 4 inverse mass (real), 6 impulse (vec3),
    7 explosion (centre, radius, impulse; i unused)."""
    b = u8(PARTICLE, kind) + index(i)
    for r in rest:
        b += vec(*r) if isinstance(r, tuple) else real(r)
    return b


def positions(first, items):
    """Overwrites the positions of particles first, first + 1, ... (3 at most)."""
    return u8(PARTICLE, 5) + index(first) + u8(len(items)) + b"".join(vec(*x) for x in items)


def settings(kind, *values):
    """kind: 0 dt, 1 substeps, 2 iterations, 3 solver, 4 formulation, 5 gravity, 6 damping, 7 jacobi (alpha,
    omega, split), 8 method, 9 collision mode, 10 chebyshev (on, rho, delay, gamma), 11 hierarchy (levels,
    iterations), 12 hard stiffness, 13 force settings, 14 wind (vec3, strength, frequency), 15 threads of the
    tested world, 16 its kernels, 17 its profile."""
    b = u8(SETTINGS, kind)
    if kind in (1, 2):
        return b + u8(values[0] + 1)
    if kind in (3, 4, 8, 9, 16, 17):
        return b + u8(values[0])
    if kind == 15:
        return b + u8(values[0] - 1)
    if kind == 5:
        return b + vec(*values[0])
    if kind == 7:
        return b + real(values[0]) + real(values[1]) + u8(values[2])
    if kind == 10:
        return b + u8(values[0]) + real(values[1]) + real(values[3]) + u8(values[2] + 1)
    if kind == 11:
        return b + u8(values[0] + 1, values[1] + 1)
    if kind == 13:
        return b + real(values[0]) + real(values[1])
    if kind == 14:
        return b + vec(*values[0]) + real(values[1]) + real(values[2])
    return b + real(values[0])


def soft(mass_mode=0, mass=1.0, pinned=(), translation=None, velocity=None, cloth=None, bend=None, tets=None,
         long_range=None, membrane=None, balloon=None, collision=None, drag=None):
    """The soft def of op_body after the mesh: a flags word, then each option whose bit is set.
    cloth: a preset index; bend: (model, stiffness, compliance); tets: (model, stiffness, compliance, E, nu);
    long_range: (mode, scale); membrane: (model, stiffness, compliance); balloon: (pressure, stiffness,
    compliance); collision: (mask, thickness, self, edges); drag: (normal, tangent, particle, wind)."""
    opts = [translation, velocity, None, cloth, bend, tets, long_range, membrane, balloon, collision, drag]
    f = sum(1 << k for k, o in enumerate(opts) if o is not None)
    b = struct.pack("<I", f)
    if translation is not None:
        b += vec(*translation)
    if velocity is not None:
        b += vec(*velocity)
    b += u8(mass_mode) + real(mass)
    if cloth is not None:
        b += u8(cloth)
    if bend is not None:
        b += u8(bend[0]) + real(bend[1]) + real(bend[2])
    if tets is not None:
        b += u8(tets[0]) + b"".join(real(v) for v in tets[1:])
    if long_range is not None:
        b += u8(long_range[0]) + real(long_range[1])
    if membrane is not None:
        b += u8(membrane[0]) + real(membrane[1]) + real(membrane[2])
    if balloon is not None:
        b += b"".join(real(v) for v in balloon)
    if collision is not None:
        b += struct.pack("<I", collision[0]) + real(collision[1]) + u8((1 if collision[2] else 0) |
                                                                         (2 if collision[3] else 0))
    if drag is not None:
        b += real(drag[0]) + real(drag[1]) + real(drag[2]) + vec(*drag[3])
    b += u8(len(pinned))
    for p in pinned:
        b += index(p)
    return b


def grid(nx, ny, size, origin, diagonals=2, bend=False, **kw):
    b = u8(BODY, GRID, 4 if bend else 0, nx, ny) + real(size) + real(size) + vec(*origin) + u8(diagonals)
    return b + soft(**kw)


def rope(segments, start, end, bend=False, **kw):
    return u8(BODY, ROPE, segments) + vec(*start) + vec(*end) + u8(1 if bend else 0) + soft(**kw)


def octahedron(size, **kw):
    """The closed octahedron of op_body, corners at +-size on the axes."""
    return u8(BODY, TRIANGLE_MESH, 1) + real(size) + soft(**kw)


def tet_box(n, size, origin, tets_per_cell=5, **kw):
    return u8(BODY, TET_BOX, n[0], n[1], n[2]) + vec(*size) + vec(*origin) + u8(tets_per_cell - 5) + soft(**kw)


def tet_ball(center, radius, subdivisions, **kw):
    return u8(BODY, TET_BALL) + vec(*center) + real(radius) + u8(subdivisions) + soft(**kw)


def pose_bytes(position, rotation=(0, 0, 0, 1)):
    return vec(*position) + b"".join(real(q) for q in rotation)


def box_mass(mass, half, turn=None, center=None, far=False):
    """A dynamic body's matter as rd_mass reads it: a solid box of the half extents, turned by the
    quaternion `turn` (normalised by fuzz_step), its centre at `center`; far puts the centre at 1e300."""
    mode = (2 if turn else 0) | (4 if center else 0) | (8 if far else 0)
    b = u8(mode) + real(mass) + vec(*half)
    if turn:
        b += b"".join(real(q) for q in turn)
    if center:
        b += vec(*center)
    return b


def raw_mass(mass, center, inertia):
    """Any matter: mass, centre and the inertia {xx, yy, zz, xy, xz, yz} as given."""
    return u8(1) + real(mass) + vec(*center) + b"".join(real(v) for v in inertia)


def rigid(kind, pose=None, gravity_scale=None, damping=None, velocity=None, mass=None):
    """A rigid body (op_rigid 0): kind STATIC, KINEMATIC, DYNAMIC or 3 (refused). velocity:
    (linear, angular), for a kinematic body always written (zeros by default), for a static one it
    asks for a refusal; mass: the bytes of box_mass or raw_mass (dynamic only)."""
    moving = velocity is not None and kind != KINEMATIC
    f = (1 if pose else 0) | (2 if gravity_scale is not None else 0) | (4 if damping else 0) | (8 if moving else 0)
    b = u8(RIGID, 0, kind, f)
    if pose:
        b += pose_bytes(*pose)
    if gravity_scale is not None:
        b += real(gravity_scale)
    if damping:
        b += real(damping[0]) + real(damping[1])
    if kind == STATIC and moving:
        b += vec(*velocity[0])
    elif kind == KINEMATIC:
        v = velocity or ((0, 0, 0), (0, 0, 0))
        b += vec(*v[0]) + vec(*v[1])
    elif kind == DYNAMIC:
        if moving:
            b += vec(*velocity[0]) + vec(*velocity[1])
        b += mass
    return b


def measure(body, density, every=False, zeros=False):
    """The body's matter from its shapes at `density` (every: from every collider made; zeros: a
    refused combination's zeros are given to the body all the same)."""
    return u8(RIGID, 2) + body_ref(body) + real(density) + u8((1 if every else 0) | (2 if zeros else 0))


def set_mass(body, mass):
    return u8(RIGID, 3) + body_ref(body) + mass


def push(body, kind, value, point=(0, 0, 0), anywhere=False):
    """kind: 0 a force at a point, 1 a torque, 2 an impulse at a point; the point is from the body's
    centre, or with anywhere in world coordinates."""
    return u8(RIGID, 4) + body_ref(body) + u8(kind | (0x80 if anywhere else 0)) + vec(*value) + vec(*point)


def body_pose(body, position, rotation=(0, 0, 0, 1), move=False):
    """A teleport, or with move a keyframe the next step carries a kinematic body to."""
    return u8(RIGID, 5 | (0x80 if move else 0)) + body_ref(body) + pose_bytes(position, rotation)


def body_velocity(body, velocity, angular):
    return u8(RIGID, 6) + body_ref(body) + vec(*velocity) + vec(*angular)


def destroy_body(body):
    return u8(RIGID, 7) + body_ref(body)


def material(family, first, count, *values):
    """count < 16; for attachments and volumes an odd count asks for a new target or pressure of `first`."""
    return u8(MATERIAL, family) + index(first) + u8(count) + b"".join(vec(*v) if isinstance(v, tuple) else real(v)
                                                                      for v in values)


def triangles(items):
    b = u8(TRIANGLES, len(items) - 1)
    for t in items:
        b += b"".join(index(p) for p in t)
    return b


def step(n):
    return u8(STEP, n - 1)


CLOTH = dict(mass_mode=1, mass=0.2)

SEEDS = {
    # Two particles, the first pinned, one stiff link: a pendulum released from horizontal.
    "pendulum": header() + particles([((0, 1, 0), 0), ((1, 1, 0), 1)]) + distances([(0, 1)]) + step(3) + step(3),
    # An XPBD cloth pinned at two corners over a sphere on 4 threads in AVX-512 lanes, small blocks; one
    # corner then moved by a target.
    "cloth_sphere_xpbd": header(substeps=4, iterations=4, formulation=1, threads=4, simd=AVX512, blocks=1 | 12) +
    grid(8, 8, 1, (-0.5, 1, -0.5), bend=True, pinned=[0, 7], **CLOTH) + sphere((0, 0, 0), 0.6) + step(3) +
    particle(2, 7, (1, 1.5, -0.5)) + step(2) + step(3),
    # A Jacobi rope on a plane with Chebyshev and the hierarchy, pushed by a force, with damping and a
    # speed clamp, on 2 threads in AVX2 lanes.
    "rope_jacobi_plane": header(substeps=2, iterations=16, solver=1, collision=1, damping=0.99,
                                jacobi=(0.2, 1.0, 1), max_speed=20, chebyshev=(0, 2, 0.9), hierarchy=(2, 4),
                                threads=2, simd=AVX2, blocks=2 | 12) +
    rope(30, (0, 1, 0), (3, 1, 0), bend=True, mass_mode=2, mass=0.1, pinned=[0]) +
    plane((0, 1, 0), 0, margin=0.01, friction=(0.5, 0.3)) + particle(3, 30, (5, 0, 0)) +
    step(3) + settings(3, 0) + settings(4, 1) + step(3),
    # Free particles with velocities and soft links, a changed gravity and time step, unpinning.
    "particles_soft": header(substeps=3, iterations=5, formulation=1, threads=3, blocks=3 | 12) +
    particles([((0, 0, 0), 0), ((0.5, 0, 0), 2), ((1, 0, 0), 1), ((1, 0.5, 0), 0.5)],
              velocities=[(0, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0)]) +
    distances([(0, 1), (1, 2), (2, 3), (3, 0)], rest=0.6, compliance=0.001) + step(2) + settings(5, (0, 0, -3)) +
    settings(0, 0.005) + particle(1, 0) + particle(4, 0, 3) + step(3),
    # Values at the edge: the longest step, the largest float in a position, a NaN mass (refused).
    "extremes": header(substeps=1, iterations=1, dt=1000) +
    particles([((0, 0, 0), 0), (("FLT_MAX", 0, 0), 1), ((1, 1, 1), "nan")]) +
    particles([((0, 0, 0), 1), ((1e-30, 0, 0), 1)]) + distances([(3, 4)]) + step(2) + settings(0, "denormal") +
    step(1),
    # A cloth falls on every shape at once, a kinematic capsule turning and a trigger among them, on 2
    # threads with small blocks.
    "colliders": header(substeps=4, iterations=6, formulation=1, threads=2, blocks=1 | 12) +
    grid(10, 10, 3, (-1.5, 1.2, -1.5), collision=(0xffffffff, 0.02, True, True), **CLOTH) +
    heightfield([[0, 0.1, 0], [0.1, 0.3, 0.1], [0, 0.1, 0]], 1.5, pose=((-1.5, -0.5, -1.5), (0, 0, 0, 1))) +
    box((0.3, 0.3, 0.3), margin=0.01, pose=((0.8, 0.3, 0.8), (0, 0.383, 0, 0.924))) +
    capsule(0.4, 0.2, kinematic=((0, 0, 0), (0, 1, 0)), pose=((-0.8, 0.4, 0.8), (0.707, 0, 0, 0.707)),
            friction=(0.4, 0.3)) +
    convex_box((0.25, 0.2, 0.25), pose=((0.8, 0.3, -0.8), (0, 0, 0, 1))) +
    mesh_box((0.3, 0.3, 0.3), True, pose=((-0.8, 0.3, -0.8), (0, 0, 0, 1))) +
    sphere((0, 0.5, 0), 0.8, trigger=True) + step(3) + collider_velocity(2, (0.5, 0, 0), (0, 2, 0)) +
    step(1) + collider_move(2, (-0.5, 0.5, 0.8)) + step(2),
    # A stable Neo-Hookean ball on 3 threads in AVX-512 lanes, then a tetrahedral box with volume
    # constraints after the first step, on a plane.
    "tets": header(substeps=4, iterations=4, formulation=1, threads=3, simd=AVX512, blocks=2 | 12) +
    plane((0, 1, 0), 0) + tet_ball((0, 0.6, 0), 0.5, 1, mass_mode=2, mass=100, tets=(2, 1, 0, 2e5, 0.4)) +
    step(2) + tet_box((2, 2, 2), (0.4, 0.4, 0.4), (0.8, 0.2, 0), tets=(1, 1, 1e-6, 1e6, 0.45), mass_mode=2,
                      mass=200) + step(3) + material(TET_NEOHOOKEAN, 0, 8, 5e4, 0.3, 1, 1) + step(2),
    # A balloon: a closed octahedron with triangle membranes, dihedral bends and an enclosed volume,
    # inflated between steps, against a box, on 4 threads.
    "balloon": header(substeps=4, iterations=8, formulation=1, threads=4, blocks=3 | 12) +
    box((1, 0.1, 1), pose=((0, -0.1, 0), (0, 0, 0, 1))) +
    octahedron(0.4, translation=(0, 0.6, 0), mass_mode=1, mass=0.1, bend=(1, 1, 0.01), membrane=(1, 1, 1e-4),
               balloon=(1.2, 1, 0)) + step(3) + material(VOLUME, 0, 1, 1.6) + step(3),
    # A cloth under every method in turn (the hierarchy on for PBD), on 2 threads with small blocks.
    "methods": header(substeps=2, iterations=8, formulation=1, threads=2, blocks=2 | 12, hierarchy=(3, 4),
                      force=(0.01, 1e-4)) +
    grid(6, 6, 1, (0, 1, 0), bend=True, pinned=[0, 5], **CLOTH) + step(2) +
    settings(8, EXPLICIT_EULER) + settings(1, 8) + step(1) + settings(8, SYMPLECTIC_EULER) + step(1) +
    settings(8, IMPLICIT_EULER) + step(2) + settings(8, PROJECTIVE_DYNAMICS) + step(2) + settings(8, VBD) +
    step(2) + settings(8, PBD) + settings(3, 1) + step(1),
    # One constraint of every family by its own add call on a cloth and free particles: attachments,
    # long-range attachments, a shape-matching cluster, both bends, triangle strains, tetrahedra, an
    # enclosed volume over an octahedron's triangles; materials changed between steps.
    "families": header(substeps=2, iterations=6, formulation=1, threads=2, blocks=2 | 12) +
    grid(5, 5, 1, (0, 1, 0), diagonals=0, pinned=[0], **CLOTH) +
    attachments([(4, (1, 1.2, 0)), (24, (1, 1, 1))], compliance=0.001) + lras(0, 25) +
    bends(BEND_DIHEDRAL, [(0, 5), (3, 9)], compliance=0.1) + bends(BEND_ISOMETRIC, [(5, 12)]) +
    surface_strains(0, 8, 1e-3) + step(2) +
    particles([((2, 0, 0), 1), ((3, 0, 0), 1), ((2, 1, 0), 1), ((2, 0, 1), 1), ((3, 1, 1), 1)]) +
    tet_volumes([(25, 26, 27, 28)], compliance=1e-6) + tet_neohookeans([(26, 29, 27, 28)]) +
    cluster(25, 5) + octahedron(0.3, translation=(-1, 1, 0)) + volume(32, 8, 1.1) + step(2) +
    material(ATTACHMENT, 0, 1, (0.5, 1.5, 0)) + material(LRA, 0, 12, 1, 0) + material(CLUSTER, 0, 1, 0.2, 0) +
    material(BEND_DIHEDRAL, 0, 2, 1, 0.5) + material(TRIANGLE, 0, 8, 1, 1, 0, 0) + step(2),
    # A cloth, a Neo-Hookean ball and a second cloth in worlds of 256 KiB each: the second cloth runs
    # out of memory and must leave the world as it was.
    "small_heap": header(substeps=2, iterations=4, formulation=1, threads=2, blocks=2 | 12, heap=6) +
    grid(10, 10, 1, (0, 1, 0), bend=True, pinned=[0, 9], **CLOTH) + step(2) +
    tet_ball((0, 0, 0), 0.5, 1, tets=(2, 1, 0, 1e5, 0.4), mass_mode=2, mass=100) + step(2) +
    grid(8, 8, 1, (0, 2, 0), **CLOTH) + step(2),
    # Edits between steps: threads and kernels switched, the profile on, pins, impulses, an explosion,
    # wind with gusts and drag, a new body after some steps.
    "edits": header(substeps=3, iterations=6, threads=1, blocks=1 | 12, wind=((2, 0, 0), 0.5, 1)) +
    grid(8, 8, 1, (0, 1, 0), pinned=[0, 7], drag=(0.5, 0.1, 0, (0, 0, 1)), **CLOTH) + step(1) +
    settings(15, 4) + settings(16, AVX2) + settings(17, 1) + step(2) + particle(0, 27) + particle(1, 0) +
    particle(6, 40, (0, 0.1, 0)) + particle(7, 0, (0.5, 1, 0.5), 1, 0.05) + step(1) + settings(15, 2) +
    settings(16, SCALAR) + rope(10, (2, 1, 0), (2, 0, 0), pinned=[0]) + settings(14, (0, 0, 3), 1, 2) +
    settings(16, AVX512) + step(3),
    # Rigid bodies of every type with shapes on them, on 2 threads in AVX2 lanes: a cloth pinned at its
    # corners over a static slab, a dynamic body of a sphere and a box whose matter is measured from them
    # falls on it, a kinematic capsule sweeps through; forces, a torque, an impulse, a keyframe for the
    # kinematic body, new velocities and a teleport between steps, the kinematic body destroyed, the
    # dynamic one given a turned box's matter.
    "rigid_bodies": header(substeps=3, iterations=6, formulation=1, threads=2, simd=AVX2, blocks=2 | 12) +
    grid(6, 6, 2, (-1, 0.5, -1), pinned=[0, 5, 30, 35], **CLOTH) +
    rigid(STATIC, pose=((0, -0.5, 0), (0, 0, 0, 1))) + box((2, 0.1, 2), body=0) +
    rigid(DYNAMIC, pose=((0.2, 0.85, 0.1), (0, 0.383, 0, 0.924)), velocity=((0, -2, 0), (0, 0, 0)),
          mass=box_mass(1, (0.25, 0.25, 0.25))) +
    sphere((0, 0, 0), 0.3, friction=(0.4, 0.3), body=1) +
    box((0.15, 0.15, 0.15), pose=((0, 0.3, 0), (0, 0, 0, 1)), body=1) + measure(1, 500) +
    rigid(KINEMATIC, pose=((-0.8, 0.45, 0), (0.707, 0, 0, 0.707)), velocity=((0.5, 0, 0), (0, 0, 1))) +
    capsule(0.4, 0.1, body=2) + step(3) +
    push(1, 0, (0, 5, 0), (0.1, 0, 0)) + push(1, 1, (0, 0, 0.5)) + push(1, 2, (0.2, 0, 0), (0, 0.1, 0)) + step(2) +
    body_pose(2, (-0.7, 0.5, 0), (0.5, 0.5, 0.5, 0.5), move=True) + step(1) +
    body_velocity(2, (0, 0.2, 0), (0, 1, 0)) + body_pose(1, (0, 0.85, 0)) + body_velocity(1, (0, -1, 0), (0, 0, 0)) +
    step(2) + destroy_body(2) + step(1) +
    set_mass(1, box_mass(2, (0.3, 0.2, 0.1), turn=(0, 0, 0.383, 0.924), center=(0.05, 0, 0))) + step(2),
    # Particles attached to points of rigid bodies under Jacobi on 4 threads in AVX-512 lanes: a damped
    # dynamic box hangs from the bottom corners of a cloth pinned at its top, a rope hangs between a
    # kinematic body turning over it and a static one; an impulse, a moved attachment point, then the
    # dynamic body and the kinematic one destroyed (their attachments hold on to the world points left).
    "rigid_attachments": header(substeps=4, iterations=8, solver=1, threads=4, simd=AVX512, blocks=1 | 12) +
    rigid(DYNAMIC, pose=((0, 0.6, 0), (0, 0, 0, 1)), damping=(0.1, 0.1),
          mass=box_mass(2, (0.3, 0.1, 0.3), turn=(0.1, 0, 0, 1), center=(0.02, 0, 0))) +
    box((0.3, 0.1, 0.3), body=0) + rigid(STATIC, pose=((2, -0.5, 0), (0, 0, 0, 1))) +
    rigid(KINEMATIC, pose=((2, 1, 0), (0, 0, 0, 1)), velocity=((0, 0, 0.5), (0, 0.5, 0))) +
    grid(6, 6, 1, (-0.5, 1, 0), pinned=[0, 5], **CLOTH) +
    attachments([(30, (-0.3, 0.1, 0)), (35, (0.3, 0.1, 0))], compliance=1e-6, body=0) +
    rope(8, (2, 0.8, 0), (2, -0.2, 0), mass_mode=2, mass=0.1) + attachments([(36, (0, -0.2, 0))], body=2) +
    attachments([(44, (0, 0, 0))], compliance=1e-3, body=1) + step(3) +
    push(0, 2, (0.5, 0, 0), (0, 0, 0.2)) + material(ATTACHMENT, 0, 1, (-0.25, 0.1, 0)) + step(3) +
    destroy_body(0) + step(2) + destroy_body(2) + step(1),
    # Every shape on a rigid body: a plane and a height field on a static body, a convex hull, a closed
    # mesh box and a sphere on a dynamic one (its matter measured from them, then from every collider,
    # which includes shapes that bound no volume), an open mesh box and a capsule on a kinematic body,
    # under a falling cloth on 3 threads.
    "rigid_shapes": header(substeps=3, iterations=6, formulation=1, threads=3, blocks=3 | 12) +
    rigid(STATIC, pose=((0, -1, 0), (0, 0, 0, 1))) + plane((0, 1, 0), 0, body=0) +
    heightfield([[0, 0.1, 0], [0.1, 0.2, 0.1], [0, 0.1, 0]], 1, pose=((-1, 0.2, -1), (0, 0, 0, 1)), body=0) +
    rigid(DYNAMIC, pose=((0, 0.6, 0), (0, 0, 0, 1)), mass=box_mass(1, (0.2, 0.2, 0.2))) +
    convex_box((0.2, 0.2, 0.2), body=1) + mesh_box((0.2, 0.1, 0.2), True, pose=((0, 0.3, 0), (0, 0, 0, 1)), body=1) +
    sphere((0, 0, 0), 0.15, pose=((0, -0.3, 0), (0, 0, 0, 1)), body=1) + measure(1, 800) +
    rigid(KINEMATIC, pose=((1, 0.5, 0), (0, 0, 0, 1)), velocity=((0, 0, 0), (0, 2, 0))) +
    mesh_box((0.3, 0.3, 0.3), False, body=2) + capsule(0.2, 0.1, pose=((0, 0.5, 0), (0, 0, 0, 1)), body=2) +
    measure(1, 800, every=True) + grid(6, 6, 2, (-1, 1.05, -1), **CLOTH) + step(3) +
    push(1, 2, (0, 1, 0), (0.2, 0, 0)) + step(3) + body_pose(2, (0.8, 0.6, 0)) + step(2),
    # What rigid bodies must refuse, each with a message and the world unchanged: a type past the last,
    # a static body that moves, matter no solid has (a moment past the sum of the others, NaN, a centre
    # at 1e300, no inertia, products that leave the tensor indefinite), speeds past the limits, a zero
    # rotation, an infinite gravity scale, shapes on made-up bodies or moving by themselves, matter from
    # a plane, the zeros of a refused combination, a NaN density, matter for a kinematic body, pushes on
    # a body that is not dynamic or too large, a keyframe for a dynamic body and one too far for a
    # kinematic one, an attachment to a made-up body; then the force-based
    # methods refuse the step while a dynamic body lives, and step once it is destroyed.
    "rigid_refusals": header(substeps=2, iterations=4, threads=2, blocks=2 | 12) +
    particles([((0, 1, 0), 1), ((0.5, 1, 0), 1)]) + distances([(0, 1)]) +
    rigid(3) + rigid(STATIC, velocity=((1, 0, 0), (0, 0, 0))) +
    rigid(DYNAMIC, mass=raw_mass(1, (0, 0, 0), (1, 1, 5, 0, 0, 0))) +
    rigid(DYNAMIC, mass=raw_mass("nan", (0, 0, 0), (1, 1, 1, 0, 0, 0))) +
    rigid(DYNAMIC, mass=box_mass(1, (0.1, 0.1, 0.1), far=True)) + rigid(DYNAMIC, mass=box_mass(1, (0, 0, 0))) +
    rigid(KINEMATIC, velocity=((1e6, 0, 0), (0, 0, 0))) +
    rigid(DYNAMIC, pose=((0, 0, 0), (0, 0, 0, 0)), mass=box_mass(1, (0.1, 0.1, 0.1))) +
    rigid(DYNAMIC, gravity_scale="inf", mass=box_mass(1, (0.1, 0.1, 0.1))) +
    sphere((0, 0, 0), 0.2, body=("made up", 1, 1)) +
    rigid(KINEMATIC) + rigid(DYNAMIC, pose=((0, 2, 0), (0, 0, 0, 1)), mass=box_mass(1, (0.1, 0.1, 0.1))) +
    sphere((0, 0, 0), 0.2, kinematic=((1, 0, 0), (0, 0, 0)), body=0) + plane((0, 1, 0), 0, body=1) +
    measure(1, 1000) + measure(1, 1000, zeros=True) + measure(1, "nan", every=True) +
    set_mass(0, box_mass(1, (0.1, 0.1, 0.1))) + set_mass(1, raw_mass(1, (0, 0, 0), (1, 1, 1, 2, 0, 0))) +
    push(0, 0, (1, 0, 0)) + push(1, 0, ("inf", 0, 0)) + push(1, 2, (1e30, 0, 0)) +
    body_velocity(1, (2e5, 0, 0), (0, 0, 0)) + body_pose(1, ("nan", 0, 0)) + body_pose(1, (0, 1, 0), move=True) +
    body_pose(0, (1e30, 0, 0), move=True) +
    attachments([(0, (0, 0, 0))], body=("made up", 5, 1)) + step(1) +
    settings(8, EXPLICIT_EULER) + step(1) + settings(8, VBD) + step(1) + destroy_body(1) + step(1) +
    destroy_body(1) + settings(8, PBD) + step(1),
}

# The reproducers of fuzz/regressions/step/, each the recipe of a finding of an earlier format of
# fuzz_step, written again in this one (docs/fuzzing.md, "Findings").
REGRESSIONS = {
    # A denormal inverse mass (1.4e-45) on a grid particle, which made (w_a + w_b) |d| underflow to 0 in the
    # Gauss-Seidel PBD projection: now refused by pbd_particle_set_inv_mass.
    "distance-divide-by-zero": header(substeps=1, iterations=1, collision=1, gravity=(0, 8.224, 8.224)) +
    grid(2, 3, 1, (0, 0, 0), pinned=[0, 1, 2, 3]) + particle(4, 5, "denormal") + step(1),
    # Particles 1e20 m apart joined by a distance that measures its rest length: it would be infinite,
    # and is refused.
    "measured-rest-inf": header(substeps=1, iterations=1) + particles([((0, 0, 0), 1), ((1e20, 0, 0), 1)]) +
    distances([(0, 1)], rest=-1) + step(2),
    # A pinned particle at a coordinate of -0 in a distance constraint must keep its sign bit.
    "pinned-negative-zero": header(substeps=6, iterations=2, damping=0.004) +
    particles([((6.912, 0, 0.002), 0.001), ((-0.0, 0.8, 0.468), 0), ((8.485, 0, -9.81), 0)]) +
    distances([(1, 0)], rest=0.002) + step(1),
    # A cloth triangle with an edge of zero length (one corner moved onto another) resting on a box
    # corner, which lies on the triangle's other edge: the closest point on it divided 0 by 0.
    "triangle-zero-length-edge": header(substeps=4, iterations=4, solver=1, formulation=1) +
    grid(3, 3, 1, (-0.5, 0.3, -0.5), collision=(0xffffffff, 0.01, True, True)) +
    box((0.3, 0.3, 0.3)) + positions(1, [(-0.5, 0.3, -0.5)]) + step(3),
    # Vertex block descent on a world with particles and no constraint rows.
    "vbd-no-rows": header(substeps=4, iterations=8, method=VBD) + particles([((0, 1, 0), 0), ((1, 1, 0), 1)]) +
    step(3) + step(3) + particles([((1, 0, 2), 0)]) + step(1),
}

if __name__ == "__main__":
    for out, recipes in ((CORPUS, SEEDS), (REGRESSIONS_DIR, REGRESSIONS)):
        os.makedirs(out, exist_ok=True)
        for name, data in recipes.items():
            with open(os.path.join(out, name + ".bin"), "wb") as f:
                f.write(data)
            print(f"{os.path.relpath(out, HERE)}/{name}.bin: {len(data)} bytes")
