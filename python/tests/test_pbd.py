"""Tests of the Python module against the library: the same bits as the C program, views that
are the world's memory, the library's messages on bad input, no leaks."""
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import pbd

PROGRAM = os.environ.get("PBD_PROGRAM")
SOURCE = pathlib.Path(os.environ.get("PBD_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def read_state(path):
    """state.txt of `pbd run`: the header as a dict and the (n, 8) table, parsed to the build's reals."""
    header, rows = {}, []
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("# "):
            key, _, value = line[2:].partition(" ")
            header[key] = value
        elif line:
            rows.append(line.split())
    table = np.array([[pbd.real_dtype.type(v) for v in r[1:]] for r in rows], dtype=pbd.real_dtype)
    return header, table


@pytest.mark.skipif(not PROGRAM, reason="PBD_PROGRAM (the pbd program) not given")
@pytest.mark.parametrize("scene,frames", [("hanging_cloth", 40), ("cloth_sphere", 30), ("kinematic_paddle", 40),
                                          ("double_pendulum", 200)])
def test_builtin_scene_matches_the_c_program(tmp_path, scene, frames):
    w = pbd.World.from_builtin(scene)
    w.step(frames)
    subprocess.run([PROGRAM, "run", scene, "-n", str(frames), "--format", "none", "-o", str(tmp_path), "-q"],
                   check=True)
    header, table = read_state(tmp_path / "state.txt")
    assert int(header["frame"]) == frames
    assert int(header["hash"], 16) == w.hash()
    # The same in every bit, particle by particle (%.9g / %.17g read back exactly).
    assert np.array_equal(table[:, 0:3], w.positions)
    assert np.array_equal(table[:, 3:6], w.velocities)
    assert np.array_equal(table[:, 6], w.inv_masses)


def test_scene_file_and_text_give_the_builtin():
    text = pbd.builtin_scene_text("rope")
    a = pbd.World.from_builtin("rope")
    b = pbd.World.from_json(text, source="rope.json")
    c = pbd.World.from_file(SOURCE / "scenes" / "rope.json")
    for w in (a, b, c):
        w.step(25)
    assert a.hash() == b.hash() == c.hash()
    assert a.name == "rope" and a.frames > 0
    (rope,) = a.objects
    assert rope["type"] == "rope" and rope["first_particle"] == 0 and rope["particle_count"] == a.particle_count
    assert pbd.World(dt=0.01).objects == []


def test_views_are_the_worlds_memory():
    w = pbd.World.from_builtin("hanging_cloth")
    x, v = w.positions, w.velocities
    assert x.shape == (w.particle_count, 3) and x.dtype == pbd.real_dtype
    assert not x.flags.writeable and not v.flags.writeable
    with pytest.raises(ValueError):
        x[0, 0] = 1
    before = x.copy()
    w.step()
    assert not np.array_equal(before, x)  # the same view sees the step
    moved = before + np.array([0, 1, 0], dtype=pbd.real_dtype)
    w.set_positions(moved)
    assert np.array_equal(x, moved)
    w.set_velocities(np.ones((3, 3)), first=100)
    assert np.array_equal(v[100:103], np.ones((3, 3)))
    # A pinned particle keeps no velocity of its own.
    pinned = int(np.flatnonzero(w.inv_masses == 0)[0])
    w.set_velocities(np.ones((1, 3)), first=pinned)
    assert np.array_equal(v[pinned], np.zeros(3))


def test_views_keep_the_world_and_block_growth():
    w = pbd.World.from_builtin("rope")
    x = w.positions
    with pytest.raises(pbd.Error, match="still alive"):
        w.add_particles([[0, 5, 0]])
    del w  # the view holds the world
    assert np.isfinite(x).all()
    w = x.base
    del x
    first = w.add_particles([[0, 5, 0]])
    assert first == w.particle_count - 1


def test_bad_input_raises_the_library_message(tmp_path):
    with pytest.raises(pbd.Error, match=r"bad\.json: world\.dt: must be in"):
        pbd.World.from_json('{"world": {"dt": -1}}', source="bad.json")
    with pytest.raises(pbd.Error, match="nope.json"):
        pbd.World.from_file(tmp_path / "nope.json")
    with pytest.raises(pbd.Error, match="no built-in scene"):
        pbd.builtin_scene_text("no_such_scene")
    with pytest.raises(pbd.Error):
        pbd.World.from_builtin("no_such_scene")
    with pytest.raises(pbd.Error, match=r"World: pbd_world_def\.dt: must be in"):
        pbd.World(dt=-1)
    with pytest.raises(pbd.Error, match=r"pbd_world_def\.max_substeps: must be in"):
        pbd.World(max_substeps=-1)
    w = pbd.World(dt=0.01)
    w.add_particles(np.zeros((2, 3)))
    with pytest.raises(pbd.Error, match="not finite"):
        w.set_positions(np.full((1, 3), np.nan))
    with pytest.raises(pbd.Error, match="exceeds the 2 particles"):
        w.set_positions(np.zeros((3, 3)))
    with pytest.raises(pbd.Error, match="add_distances"):
        w.add_distances([[0, 7]])
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        w.set_positions(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="unknown setting 'substep'"):
        pbd.World(substep=3)
    with pytest.raises(ValueError, match="gauss_seidel, jacobi"):
        pbd.World(solver="newton")
    # The failures went to the world's log as well.
    assert any("not finite" in line for line in w.take_warnings())
    assert w.take_warnings() == []


def test_indices_and_counts_are_range_checked():
    """An index or a count that is not an integer, is negative or passes 2**32 - 1 raises, naming the
    argument, instead of being truncated or wrapped onto another particle (2**32 is particle 0)."""
    w = pbd.World(dt=0.01)
    w.add_particles(np.zeros((3, 3)))
    w.add_distances([[0, 1], [1, 2]])
    before = w.positions.copy()
    for first in (2**32, 2**32 + 1, 2**64, -1, np.int64(-1), np.uint64(2**32)):
        with pytest.raises(OverflowError, match=r"set_positions: first: -?\d+ is out of range \[0, 4294967295\]"):
            w.set_positions(np.ones((1, 3)), first=first)
        with pytest.raises(OverflowError, match=r"set_velocities: first: .* out of range"):
            w.set_velocities(np.ones((1, 3)), first=first)
    for first in (1.9, 1.0, np.float64(1.0), "1", True, None):
        with pytest.raises(TypeError, match="set_positions: first: expected an integer"):
            w.set_positions(np.ones((1, 3)), first=first)
    assert np.array_equal(w.positions, before)
    w.set_positions(np.ones((1, 3)), first=np.uint32(2))  # NumPy integers are integers
    assert np.array_equal(w.positions[2], np.ones(3))

    # Index arrays: integers in range only.
    for pairs, error, text in (([[0, 2**32]], OverflowError, r"pairs: index 4294967296 \(entry 1\) is out of range"),
                               ([[0, -1]], OverflowError, r"index -1 \(entry 1\)"),
                               ([[0, 1.5]], TypeError, "expected integer indices, got an array of float64"),
                               ([[0.0, 1.0]], TypeError, "integer indices")):
        with pytest.raises(error, match=text):
            w.add_distances(pairs)
    assert w.add_distances(np.array([[0, 2]], dtype=np.uint64)) == 2
    with pytest.raises(OverflowError, match=r"add_cloth: nx: 4294967299 is out of range"):
        w.add_cloth(2**32 + 3, 3)
    with pytest.raises(TypeError, match="add_cloth: ny: expected an integer"):
        w.add_cloth(3, 3.5)
    with pytest.raises(TypeError, match="add_cloth: pinned: expected integer indices"):
        w.add_cloth(3, 3, pinned=[0.5])
    with pytest.raises(OverflowError, match="add_cloth: pinned: index -1"):
        w.add_cloth(3, 3, pinned=[-1])
    assert w.particle_count == 3
    assert w.add_cloth(3, 3, pinned=[])["particle_count"] == 9

    # set_distance_material(first=2**32) once changed constraint 0.
    with pytest.raises(OverflowError, match="set_distance_material: first"):
        w.set_distance_material(2**32, 1, compliance=1)
    with pytest.raises(OverflowError, match="set_distance_material: count"):
        w.set_distance_material(0, -1)
    with pytest.raises(TypeError, match="step: frames: expected an integer"):
        w.step(1.5)
    with pytest.raises(OverflowError, match="step: frames"):
        w.step(2**31)
    with pytest.raises(OverflowError, match="substeps"):
        pbd.World(substeps=2**40)
    with pytest.raises(TypeError, match="iterations: expected an integer, got float"):
        pbd.World(iterations=10.0)


def test_world_in_code_falls_and_hangs():
    w = pbd.World(dt=1 / 60, substeps=10, iterations=2, formulation="xpbd", gravity=(0, -9.81, 0))
    p = w.add_particles([[0, 0, 0]])
    w.step(60)
    # A free particle: v = g t after 1 s.
    assert w.velocities[p, 1] == pytest.approx(-9.81, rel=1e-5)
    cloth = w.add_cloth(12, 12, size=(1, 1), origin=(2, 0, 0), pinned=[0, 11], mass=0.1)
    x = w.positions
    assert cloth["particle_count"] == 144
    im = w.inv_masses
    assert im[cloth["first_particle"]] == 0 and im[cloth["first_particle"] + 11] == 0
    start = x[cloth["first_particle"] + 11].copy()
    lowest = 0
    for _ in range(60):
        w.step()
        lowest = min(lowest, x[cloth["first_particle"]:, 1].min())
    assert np.array_equal(x[cloth["first_particle"] + 11], start)  # pins hold
    s = w.stats()
    assert s["particles"] == 145 and s["time"] == pytest.approx(2.0)
    assert s["substeps"] == 10  # no max_substeps: every step runs `substeps`
    assert -1.05 < lowest < -0.8  # it swings down to hang about its 1 m length below the pins
    assert s["families"]["distance"]["count"] == s["distances"]


def test_contacts_keep_particles_outside():
    w = pbd.World(dt=1 / 60, substeps=8, iterations=4)
    w.add_cloth(16, 16, size=(1, 1), origin=(-0.5, 0.5, -0.5), mass=0.2)
    w.add_collider("sphere", center=(0, 0, 0), radius=0.3)
    w.add_collider("plane", normal=(0, 1, 0), offset=-1)
    w.step(90)
    c = w.contacts()
    assert c.dtype == pbd.contact_dtype and len(c) > 0
    assert np.allclose(np.linalg.norm(c["normal"], axis=1), 1, atol=1e-5)
    assert (c["distance"] > -1e-4).all()
    r = np.linalg.norm(w.positions, axis=1)
    assert r.min() > 0.3 - 1e-3


def test_threads_step_worlds_side_by_side():
    def run(out, i):
        w = pbd.World.from_builtin("hanging_cloth")
        w.step(30)
        out[i] = w.hash()
    alone = [None]
    run(alone, 0)
    out = [None, None]
    ts = [threading.Thread(target=run, args=(out, i)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out == [alone[0], alone[0]]


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_no_leak_over_1000_worlds():
    def cycle(n):
        for _ in range(n):
            w = pbd.World.from_builtin("hanging_cloth")
            w.step()
            x = w.positions
            w.stats()
            w.take_warnings()
            del x
            w.close()
            del w
            v = pbd.World(dt=0.01)
            v.add_cloth(8, 8)
    cycle(100)
    before = rss_bytes()
    cycle(1000)
    grown = rss_bytes() - before
    # One hanging_cloth world holds about 0.7 MiB: a leak of one per cycle would be 700 MiB.
    assert grown < 8 << 20, f"resident memory grew by {grown / 2**20:.1f} MiB over 1000 worlds"


def test_closed_world_refuses():
    w = pbd.World.from_builtin("rope")
    with pbd.World.from_builtin("rope") as v:
        v.step()
    assert v.closed and "closed" in repr(v)
    with pytest.raises(pbd.Error, match="closed"):
        v.step()
    x = w.positions
    with pytest.raises(pbd.Error, match="still alive"):
        w.close()
    del x
    w.close()


@pytest.mark.skipif(not pbd.have_render, reason="built without pbd_render")
def test_render_gives_an_image():
    w = pbd.World.from_builtin("cloth_sphere")
    try:
        img = w.render(96, 64)
    except pbd.Error as e:
        pytest.skip(f"no offscreen context: {e}")
    assert img.shape == (64, 96, 3) and img.dtype == np.uint8
    # The background is a vertical gradient: pixels unlike their row's first show the scene.
    drawn = (img != img[:, :1, :]).any(axis=2).mean()
    assert 0.02 < drawn < 0.98


def test_sweep_example_runs(tmp_path):
    pytest.importorskip("matplotlib")
    script = SOURCE / "examples" / "python" / "stiffness_sweep.py"
    out = tmp_path / "sweep.png"
    r = subprocess.run([sys.executable, str(script), "--frames", "120", "--out", str(out)], capture_output=True,
                       text=True, check=True)
    assert out.stat().st_size > 1000
    rows = [line.split() for line in r.stdout.splitlines() if line and line[0].isdigit()]
    strain = {(float(c), int(it)): float(s) for c, it, _, s in rows}
    cs = sorted({c for c, _ in strain})
    its = sorted({it for _, it in strain})
    assert len(cs) == 6 and its == [2, 8, 32]
    for it in its:  # softer edges stretch more
        assert all(strain[(b, it)] >= strain[(a, it)] for a, b in zip(cs, cs[1:]))
    # Soft: the compliance sets the strain, whatever the iterations (XPBD).
    assert strain[(cs[-1], 8)] == pytest.approx(strain[(cs[-1], 32)], rel=0.02)
    # Stiff: what is left is unconverged error, which iterations remove.
    assert strain[(cs[0], 2)] > 2 * strain[(cs[0], 8)] > 4 * strain[(cs[0], 32)]


# ---- rigid bodies ------------------------------------------------------------------------------

def test_body_falls_freely():
    """A dynamic body's frame falls as v += g h, x += v h each substep gives: z = z0 + g h^2 n (n + 1) / 2
    after n substeps, which is z0 + g t^2 / 2 to within g t h / 2; the poses view follows without
    being taken again, and holds what Body.position and Body.rotation say, in the same bits."""
    g, dt, substeps, steps = -9.81, 1 / 60, 8, 60
    w = pbd.World(dt=dt, substeps=substeps, gravity=(0, 0, g))
    b = w.add_body("dynamic", position=(1, 2, 30), rotation=(0, 0, 0.6, 0.8), mass=2.0)
    poses = w.body_poses
    assert poses.shape == (1, 7) and poses.dtype == pbd.real_dtype and not poses.flags.writeable
    assert b.index == 0 and np.allclose(poses[0], [1, 2, 30, 0, 0, 0.6, 0.8], rtol=0, atol=1e-7)
    before = poses.copy()
    w.step(steps)
    assert not np.array_equal(before, poses)  # the same view sees the steps
    h = pbd.real_dtype.type(dt) / substeps
    n = substeps * steps
    t = float(h) * n
    z = poses[b.index, 2]
    assert z == pytest.approx(30 + float(pbd.real_dtype.type(g)) * float(h) ** 2 * n * (n + 1) / 2, rel=1e-6)
    assert abs(z - (30 + g * t * t / 2)) <= abs(g) * t * float(h) / 2 * 1.01
    assert tuple(poses[0, :3]) == b.position and tuple(poses[0, 3:]) == b.rotation
    assert poses[0, 0] == 1 and poses[0, 1] == 2  # nothing pushes it sideways
    s = b.state()
    assert s["velocity"][2] == pytest.approx(g * t, rel=1e-5)
    assert s["type"] == "dynamic" and s["mass"] == 2.0
    assert s["momentum"][2] == pytest.approx(2.0 * s["velocity"][2], rel=1e-12)
    assert s["kinetic_energy"] == pytest.approx(0.5 * 2.0 * s["velocity"][2] ** 2, rel=1e-6)
    # The world's sums include the body.
    assert w.stats()["momentum"][2] == pytest.approx(s["momentum"][2], rel=1e-6)
    assert w.stats()["kinetic_energy"] == pytest.approx(s["kinetic_energy"], rel=1e-6)


def test_contact_events_and_pairs():
    """A cube dropped on a floor begins touching it once, with the impulse that stops it (its
    momentum and gravity's over the step); at rest its pair carries m g dt a step; lifted, it ends."""
    g, dt = 9.81, 1 / 60
    w = pbd.World(dt=dt, substeps=20, iterations=1, gravity=(0, -g, 0), sleep_time=0)
    floor = w.add_collider("plane")
    cube = w.add_body("dynamic", position=(0, 0.6, 0))
    box = w.add_collider("box", half_extents=(0.1, 0.1, 0.1), body=cube, density=1000)
    m = cube.mass
    events = []
    for _ in range(40):
        v0 = cube.state()["velocity"][1]
        w.step()
        events = w.contact_events()
        if events:
            break
    (ev,) = events
    assert ev["begin"] and ev["collider_a"] == floor and ev["collider_b"] == box
    assert ev["body_a"] is None and ev["body_b"] == cube.id
    assert ev["normal"] == pytest.approx((0, 1, 0), abs=1e-5)
    v1 = cube.state()["velocity"][1]
    assert ev["impulse"] == pytest.approx(m * (v1 - v0) + m * g * dt, rel=5e-3)
    w.step(30)
    assert w.contact_events() == []
    (pair,) = w.contact_pairs()
    assert pair["collider_b"] == box and pair["impulse"] == pytest.approx(m * g * dt, rel=1e-3)
    cube.set_velocity((0, 3, 0))
    w.step()
    (ev,) = w.contact_events()
    assert not ev["begin"] and ev["impulse"] == 0 and w.contact_pairs() == []


def test_soft_step_holds_a_cube_with_its_weight():
    """Under the soft step (body_solver="soft_step") a cube on a floor comes to rest on it, sunk by
    what its spring needs, and its pair carries m g dt a step; an unknown solver is refused."""
    g, dt = 9.81, 1 / 60
    w = pbd.World(dt=dt, substeps=4, iterations=1, gravity=(0, -g, 0), sleep_time=0, body_solver="soft_step",
                  contact_hertz=60)
    w.add_collider("plane")
    cube = w.add_body("dynamic", position=(0, 0.1, 0))
    w.add_collider("box", half_extents=(0.1, 0.1, 0.1), body=cube, density=1000)
    w.step(60)
    s = cube.state()
    assert abs(s["velocity"][1]) < 1e-4
    assert 0.1 - 1e-3 < s["position"][1] <= 0.1
    (pair,) = w.contact_pairs()
    assert pair["impulse"] == pytest.approx(cube.mass * g * dt, rel=1e-3)
    with pytest.raises(ValueError):
        pbd.World(body_solver="newton")


def test_avbd_holds_a_cube_with_its_weight():
    """Under AVBD (body_solver="avbd") a cube on a floor comes to rest on it, and its pair carries
    m g dt a step: the rows' multipliers are the contact forces."""
    g, dt = 9.81, 1 / 60
    w = pbd.World(dt=dt, substeps=4, iterations=4, gravity=(0, -g, 0), sleep_time=0, body_solver="avbd")
    w.add_collider("plane")
    cube = w.add_body("dynamic", position=(0, 0.1, 0))
    w.add_collider("box", half_extents=(0.1, 0.1, 0.1), body=cube, density=1000)
    w.step(60)
    s = cube.state()
    assert abs(s["velocity"][1]) < 1e-4
    assert 0.1 - 1e-3 < s["position"][1] <= 0.1 + 1e-6
    (pair,) = w.contact_pairs()
    assert pair["impulse"] == pytest.approx(cube.mass * g * dt, rel=1e-3)


def test_body_impulse_force_and_torque():
    """An impulse J at the centre gives v = J / m; at an arm r it also gives w = I^-1 (r x J). A
    force F for one step gives v = F dt / m, a torque T gives w = I^-1 T dt."""
    w = pbd.World(dt=0.01, substeps=4, gravity=(0, 0, 0))
    I = np.array([0.2, 0.3, 0.4])
    b = w.add_body("dynamic", mass=2.0, inertia=I)
    b.apply_impulse((3, -1, 0.5))
    assert b.velocity == pytest.approx((1.5, -0.5, 0.25), rel=1e-6)
    assert b.angular_velocity == (0, 0, 0)
    b.set_velocity((0, 0, 0), (0, 0, 0))
    r, J = np.array([0, 0.5, 0]), np.array([1.0, 0, 0])
    b.apply_impulse(J, point=r)
    assert b.velocity == pytest.approx(J / 2.0, rel=1e-6)
    assert b.angular_velocity == pytest.approx(np.cross(r, J) / I, rel=1e-6)
    c = w.add_body("dynamic", position=(5, 0, 0), mass=4.0, inertia=I)
    c.apply_force((8, 0, 0))
    c.apply_torque((0, 0, 0.04))
    w.step()
    assert c.velocity == pytest.approx((8 * 0.01 / 4, 0, 0), rel=1e-5)
    assert c.angular_velocity[2] == pytest.approx(0.04 * 0.01 / 0.4, rel=1e-5)
    w.step()  # a force lasts one step
    assert c.velocity == pytest.approx((8 * 0.01 / 4, 0, 0), rel=1e-5)
    # The statistics give the bodies' share: their momentum adds up over b and c.
    s = w.stats()
    assert s["bodies"] == 2
    p = np.array(b.velocity) * 2.0 + np.array(c.velocity) * 4.0
    assert s["body_momentum"] == pytest.approx(tuple(p), rel=1e-6, abs=1e-9)
    assert s["body_kinetic_energy"] == pytest.approx(b.kinetic_energy + c.kinetic_energy, rel=1e-6)
    assert len(s["body_angular_momentum"]) == 3
    # Kinematic bodies move by their velocities.
    k = w.add_body("kinematic", position=(0, 1, 0), velocity=(0, 2, 0))
    w.step(10)
    assert k.position[1] == pytest.approx(1 + 2 * 0.1, rel=1e-5)


def test_body_mass_from_shapes():
    """Shapes with a density give a dynamic body their mass (pbd_collider_mass_properties, combined)."""
    w = pbd.World(dt=0.01, gravity=(0, 0, 0))
    b = w.add_body("dynamic", position=(0, 1, 0))
    assert b.mass_properties["mass"] == 1.0  # until a shape with a density gives it matter
    w.add_collider("box", half_extents=(0.5, 0.1, 0.2), center=(0.5, 0, 0), body=b, density=1000)
    m = b.mass_properties
    assert m["mass"] == pytest.approx(1000 * 1.0 * 0.2 * 0.4) and m["center"] == pytest.approx((0.5, 0, 0))
    assert np.allclose(m["inertia"], np.diag([80 * (0.04 + 0.16) / 12, 80 * (1 + 0.16) / 12, 80 * (1 + 0.04) / 12]))
    w.add_collider("sphere", center=(-0.5, 0, 0), radius=0.1, body=b, density=1000)
    ball = 1000 * 4 / 3 * np.pi * 0.1**3
    m = b.mass_properties
    assert m["mass"] == pytest.approx(80 + ball)
    assert m["center"][0] == pytest.approx((80 * 0.5 - ball * 0.5) / (80 + ball))
    # A shape without a density rides along and adds nothing.
    w.add_collider("capsule", radius=0.05, half_height=0.2, body=b)
    assert b.mass_properties["mass"] == pytest.approx(80 + ball)
    assert b.mass == pytest.approx(80 + ball)
    b.apply_impulse((80 + ball, 0, 0), point=b.center)
    assert b.velocity[0] == pytest.approx(1, rel=1e-5)
    # A plane bounds no volume: refused, and the collider is not left behind.
    count = w.stats()["colliders"]
    with pytest.raises(pbd.Error, match="add_collider: pbd_collider_mass_properties"):
        w.add_collider("plane", body=b, density=10)
    assert w.stats()["colliders"] == count
    s = w.add_body("static")
    with pytest.raises(pbd.Error, match="not dynamic"):
        w.add_collider("box", half_extents=(1, 1, 1), body=s, density=10)
    assert s.mass_properties is None and s.mass == 0 and s.type == "static"


def test_body_poses_view_guard_and_lifetime():
    w = pbd.World(dt=0.01)
    a = w.add_body("dynamic", position=(0, 1, 0))
    poses = w.body_poses
    with pytest.raises(pbd.Error, match="body_poses are still alive"):
        w.add_body("static")
    with pytest.raises(pbd.Error, match="body_poses"):
        w.close()
    with pytest.raises(ValueError):
        poses[0, 0] = 1
    w.add_particles([[0, 0, 0]])  # particles do not move the frames
    del poses
    b = w.add_body("static", position=(3, 0, 0))
    assert w.body_poses.shape == (2, 7) and w.body_count == 2
    assert w.bodies == [a, b] and a != b and len({a, b, w.bodies[0]}) == 2
    assert w.bodies[1].position == (3, 0, 0) and a.world is w and a.id == (1, 1)
    a.destroy()
    assert not a.valid and w.bodies == [b] and w.body_count == 1
    assert w.body_poses.shape == (2, 7)  # the slot stays, with its last frame
    with pytest.raises(pbd.Error, match="body 1 was destroyed"):
        a.position
    with pytest.raises(pbd.Error, match="destroyed"):
        a.apply_impulse((1, 0, 0))
    with pytest.raises(pbd.Error, match="destroyed"):
        w.add_collider("sphere", radius=1, body=a)
    del w  # a body keeps its world
    assert b.position == (3, 0, 0)
    b.world.close()
    assert not b.valid and "closed" in repr(b)
    with pytest.raises(pbd.Error, match="closed"):
        b.state()


def test_body_bad_arguments_raise():
    w = pbd.World(dt=0.01)
    for args, kwargs, error, text in (
            (("floppy",), {}, ValueError, "type: expected one of static, kinematic, dynamic"),
            ((3,), {}, ValueError, "type"),
            (("dynamic",), {"position": (1, 2)}, TypeError, "position: expected 3 numbers"),
            (("dynamic",), {"rotation": (0, 0, 1)}, TypeError, "rotation: expected 4 numbers"),
            (("dynamic",), {"velocity": "abc"}, TypeError, "velocity: expected a number"),
            (("dynamic",), {"mass": "heavy"}, TypeError, "mass: expected a number"),
            (("dynamic",), {"mass": 1, "inertia": np.eye(2)}, ValueError, "inertia: expected 3 or 6"),
            (("dynamic",), {"mass": 1, "inertia": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]}, ValueError, "not symmetric"),
            (("static",), {"mass": 1.0}, ValueError, "for a dynamic body, not a static one"),
            (("dynamic",), {"mass": -1.0}, pbd.Error, "add_body: pbd_body_create: mass.mass must be in"),
            (("dynamic",), {"mass": 1.0, "inertia": (1, 1, 5)}, pbd.Error, "which no solid has"),
            (("dynamic",), {"position": (np.nan, 0, 0)}, pbd.Error, "not finite"),
            (("dynamic",), {"rotation": (0, 0, 0, 0)}, pbd.Error, "must not be zero"),
            (("static",), {"velocity": (1, 0, 0)}, pbd.Error, "a static body does not move"),
            (("dynamic",), {"linear_damping": -1}, pbd.Error, "damping"),
            (("dynamic",), {"gravity_scale": "x"}, TypeError, None),
            (("dynamic",), {"colour": 1}, TypeError, None)):
        with pytest.raises(error, match=text):
            w.add_body(*args, **kwargs)
    assert w.body_count == 0 and w.bodies == []
    b = w.add_body("dynamic", mass=1.0, inertia=(1, 2, 2.5, 0.1, 0, 0))
    s = w.add_body("static")
    with pytest.raises(TypeError, match="apply_force: force: expected 3 numbers"):
        b.apply_force("x")
    with pytest.raises(TypeError, match="apply_impulse: point: expected 3 numbers"):
        b.apply_impulse((1, 0, 0), point=(1, 2))
    with pytest.raises(pbd.Error, match="is not dynamic"):
        s.apply_impulse((1, 0, 0))
    with pytest.raises(pbd.Error, match="static and does not move"):
        s.set_velocity((1, 0, 0))
    with pytest.raises(pbd.Error, match="not finite"):
        b.set_velocity(angular_velocity=(0, np.inf, 0))
    with pytest.raises(pbd.Error, match="set_mass"):
        s.set_mass(2.0)
    with pytest.raises(TypeError, match="add_collider: body: expected a pbd.Body"):
        w.add_collider("sphere", radius=1, body=1)
    with pytest.raises(ValueError, match="only a shape on a body"):
        w.add_collider("sphere", radius=1, density=10)
    with pytest.raises(ValueError, match="density: must be finite and > 0"):
        w.add_collider("sphere", radius=1, body=b, density=-1)
    other = pbd.World(dt=0.01).add_body("static")
    with pytest.raises(ValueError, match="belongs to another world"):
        w.add_collider("sphere", radius=1, body=other)
    b.set_pose(position=(0, 5, 0))  # the rotation stays
    assert b.position == (0, 5, 0) and b.rotation == (0, 0, 0, 1)
    b.set_mass(3.0, center=(0, 0.1, 0), inertia=np.diag([1.0, 2.0, 2.5]))
    m = b.mass_properties
    assert m["mass"] == 3.0 and m["center"] == (0, 0.1, 0) and b.position == (0, 5, 0)
    assert b.mass == pytest.approx(3.0, rel=1e-6)  # the library keeps 1 / m as the scalar


def test_bodies_of_a_scene():
    if not any(name == "box_on_trampoline" for name, _ in pbd.builtin_scenes()):
        pytest.skip("no built-in scene with bodies")
    w = pbd.World.from_builtin("box_on_trampoline")
    (box,) = w.bodies
    assert box.name == "box" and box.mass_properties is None and box.type == "dynamic" and box.mass > 0
    start = box.position
    w.step(30)
    assert box.position[1] < start[1]
    assert np.array_equal(w.body_poses[box.index], box.position + box.rotation)
