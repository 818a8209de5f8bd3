"""Reads back what `pbd run --format usd|vtk|obj` writes and compares it with the run's numbers,
rigid bodies included (each format's frames of a body against the others' and the OBJ's), and
joints (the VTK joints files and the USD joint prims, against each other and the run's summary).

    python3 output_formats.py PBD WORK CASE      (CASE: usd, vtk or obj)

The .usda is read by a strict parser of the subset pbd writes (layer metadata, nested `def`
prims, attributes with scalar, array and tuple values, time samples, relationships to paths); the
.vtu and .pvd by
xml.etree, and also by VTK's own reader where the vtk module is installed. Positions are compared
exactly: every file prints the scalar with the digits that read back to the same bits, so the
same number parses to the same double in Python.
"""

import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

PBD, WORK, CASE = sys.argv[1], sys.argv[2], sys.argv[3]


def fail(msg):
    print("output_formats %s: %s" % (CASE, msg))
    sys.exit(1)


def run(*args, ok=True):
    p = subprocess.run([PBD] + list(args), cwd=WORK, capture_output=True, text=True, timeout=300)
    if ok and p.returncode != 0:
        fail("pbd %s: exit status %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def path(*parts):
    return os.path.join(WORK, *parts)


def read_state(folder):
    """state.txt: (frame, time, [(x, y, z)], [(vx, vy, vz)])."""
    head, xs, vs = {}, [], []
    with open(path(folder, "state.txt")) as f:
        for line in f:
            if line.startswith("#"):
                parts = line[1:].split()
                if len(parts) == 2:
                    head[parts[0]] = parts[1]
                continue
            cols = line.split()
            if int(cols[0]) != len(xs):
                fail("%s/state.txt: particle %s out of order" % (folder, cols[0]))
            xs.append(tuple(float(c) for c in cols[1:4]))
            vs.append(tuple(float(c) for c in cols[4:7]))
    if int(head["particles"]) != len(xs):
        fail("%s/state.txt: %s particles announced, %d listed" % (folder, head["particles"], len(xs)))
    return int(head["frame"]), float(head["time"]), xs, vs


def read_obj(file, bodies=None):
    """An OBJ frame: v, vt, vn lists, faces as lists of (v, vt, vn) 1-based (0 = absent), lines.
    With a dict `bodies`: the `# body <index1> pose` comments go there, index1 -> 7 numbers."""
    v, vt, vn, faces, lines = [], [], [], [], []
    with open(file) as f:
        for line in f:
            w = line.split()
            if len(w) == 11 and w[:2] == ["#", "body"] and w[3] == "pose" and bodies is not None:
                bodies[int(w[2])] = tuple(float(c) for c in w[4:])
            if not w or w[0] in ("#", "o"):
                continue
            if w[0] == "v":
                v.append(tuple(float(c) for c in w[1:4]))
            elif w[0] == "vt":
                vt.append(tuple(float(c) for c in w[1:3]))
            elif w[0] == "vn":
                vn.append(tuple(float(c) for c in w[1:4]))
            elif w[0] == "f":
                corners = []
                for c in w[1:]:
                    ids = (c.split("/") + ["", ""])[:3]
                    corners.append(tuple(int(i) if i else 0 for i in ids))
                faces.append(corners)
            elif w[0] == "l":
                lines.append(tuple(int(i) for i in w[1:]))
            else:
                fail("%s: unexpected line %r" % (file, line))
    return v, vt, vn, faces, lines


# ---- a strict reader of the USD ASCII that pbd writes ---------------------------------------

TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<path></[A-Za-z0-9_/]*>)'
    r"|(?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_:.]*)|(?P<punct>[()\[\]{}=,:]))"
)


class Usda:
    def __init__(self, text):
        if not text.startswith("#usda 1.0\n"):
            fail("animation.usda does not start with '#usda 1.0'")
        self.toks = []
        pos, body = 0, text[len("#usda 1.0\n") :]
        while True:
            m = TOKEN.match(body, pos)
            if not m:
                if body[pos:].strip():
                    fail("animation.usda: cannot read %r" % body[pos : pos + 40])
                break
            pos = m.end()
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind)))
        self.i = 0
        self.meta = self.metadata() if self.peek() == ("punct", "(") else {}
        self.prims = []
        while self.i < len(self.toks):
            self.prims.append(self.prim())

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, kind=None, text=None):
        t = self.peek()
        if t[0] is None or (kind and t[0] != kind) or (text is not None and t[1] != text):
            fail("animation.usda: expected %s %s, got %r" % (kind, text, t))
        self.i += 1
        return t[1]

    def value(self):
        kind, text = self.peek()
        if kind == "num":
            self.i += 1
            return float(text)
        if kind == "str":
            self.i += 1
            return text[1:-1]
        if kind == "path":
            self.i += 1
            return text
        if (kind, text) in (("punct", "["), ("punct", "(")):
            close = "]" if text == "[" else ")"
            self.i += 1
            items = []
            while self.peek() != ("punct", close):
                items.append(self.value())
                if self.peek() == ("punct", ","):
                    self.i += 1
                elif self.peek() != ("punct", close):
                    fail("animation.usda: expected ',' or '%s', got %r" % (close, self.peek()))
            self.i += 1
            return items if close == "]" else tuple(items)
        fail("animation.usda: expected a value, got %r" % (self.peek(),))

    def metadata(self):
        self.take("punct", "(")
        meta = {}
        while self.peek() != ("punct", ")"):
            key = self.take("name")
            self.take("punct", "=")
            meta[key] = self.value()
        self.take("punct", ")")
        return meta

    def prim(self):
        self.take("name", "def")
        prim = {"type": self.take("name"), "name": self.take("str"), "attrs": {}, "children": []}
        self.take("punct", "{")
        while self.peek() != ("punct", "}"):
            if self.peek() == ("name", "def"):
                prim["children"].append(self.prim())
                continue
            words = []
            while self.peek()[0] == "name" or self.peek() in (("punct", "["), ("punct", "]")):
                words.append(self.take())
            self.take("punct", "=")
            name = words[-1]
            if name.endswith(".timeSamples"):
                self.take("punct", "{")
                samples = {}
                while self.peek() != ("punct", "}"):
                    t = float(self.take("num"))
                    self.take("punct", ":")
                    if t in samples:
                        fail("animation.usda: time %g sampled twice" % t)
                    samples[t] = self.value()
                    self.take("punct", ",")
                self.take("punct", "}")
                prim["attrs"][name] = samples
            else:
                prim["attrs"][name] = self.value()
            prim["attrs"][name + "#type"] = " ".join(words[:-1])
        self.take("punct", "}")
        return prim


def check_usd_against(usd_folder, obj_folder, first, last):
    """Every time sample of every prim equals the OBJ frame of that number; the last one equals state.txt."""
    with open(path(usd_folder, "animation.usda")) as f:
        doc = Usda(f.read())
    frame, time, xs, _ = read_state(usd_folder)
    m = doc.meta
    if m.get("startTimeCode") != first or m.get("endTimeCode") != last or frame != last:
        fail("time codes %s to %s, state.txt frame %d; expected %d to %d" % (m.get("startTimeCode"),
             m.get("endTimeCode"), frame, first, last))
    if m.get("upAxis") != "Y" or m.get("metersPerUnit") != 1 or m.get("defaultPrim") != "World":
        fail("layer metadata: %s" % m)
    dt = time / last
    if abs(m["timeCodesPerSecond"] * dt - 1) > 1e-5:
        fail("timeCodesPerSecond %g, but frames are %g s apart" % (m["timeCodesPerSecond"], dt))
    if len(doc.prims) != 1 or doc.prims[0]["type"] != "Xform" or not doc.prims[0]["children"]:
        fail("expected one Xform World with the objects in it")
    objs = {f: read_obj(path(obj_folder, "frame_%05d.obj" % f)) for f in range(first, last + 1)}
    kinds = set()
    for prim in doc.prims[0]["children"]:
        a = prim["attrs"]
        if "pbd:body" in a or "pbd:joint" in a:
            continue  # a rigid body's Xform or a joint: check_usd_bodies, check_joints
        kinds.add(prim["type"])
        particles = [int(p) for p in a["pbd:particles"]]
        samples = a["points.timeSamples"]
        if sorted(samples) != [float(f) for f in range(first, last + 1)]:
            fail("%s: samples at %s" % (prim["name"], sorted(samples)))
        for f, pts in samples.items():
            want = [objs[int(f)][0][p] for p in particles]
            got = [tuple(p) for p in pts]
            if got != want:
                fail("%s: frame %d: the points differ from frame_%05d.obj" % (prim["name"], f, f))
        if [tuple(p) for p in samples[float(last)]] != [xs[p] for p in particles]:
            fail("%s: the last sample differs from state.txt" % prim["name"])
        v, _, _, faces, lines = objs[first]
        if prim["type"] == "Mesh":
            if particles != list(range(particles[0], particles[0] + len(particles))):
                fail("%s: a mesh's points are not its object's particles in order" % prim["name"])
            counts, idx = a["faceVertexCounts"], [int(i) for i in a["faceVertexIndices"]]
            if any(c != 3 for c in counts) or len(idx) != 3 * len(counts):
                fail("%s: faceVertexCounts and faceVertexIndices disagree" % prim["name"])
            tris = [tuple(particles[i] + 1 for i in idx[3 * k : 3 * k + 3]) for k in range(len(counts))]
            obj_tris = [tuple(c[0] for c in face) for face in faces]
            if not set(tris) <= set(obj_tris) or not tris:
                fail("%s: triangles that the OBJ frame does not have" % prim["name"])
        elif prim["type"] == "BasisCurves":
            if a.get("type") != "linear" or sum(a["curveVertexCounts"]) != len(particles):
                fail("%s: not linear curves over its points" % prim["name"])
            pieces, at = set(), 0
            for n in a["curveVertexCounts"]:
                chain = particles[at : at + int(n)]
                pieces |= {(chain[k] + 1, chain[k + 1] + 1) for k in range(len(chain) - 1)}
                at += int(n)
            if not pieces <= set(lines) or not pieces:
                fail("%s: curve pieces that are not the OBJ frame's lines" % prim["name"])
    return kinds


# Rigid bodies: a tumbling crate (a box and a ball), a static post (a capsule), over a chain of particles.
BODIES = """{"name": "bodies", "world": {"dt": 0.01, "gravity": [0, -9.8, 0]}, "bodies": [
 {"name": "crate", "type": "dynamic", "position": [0, 2, 0], "rotation": {"axis": [1, 1, 0], "angle_deg": 30},
  "velocity": [1, 3, 0.5], "angular_velocity": [1, 4, -2], "density": 500,
  "shapes": [{"type": "box", "half_extents": [0.2, 0.1, 0.3]}, {"type": "sphere", "radius": 0.1, "center": [0, 0.2, 0]}]},
 {"name": "post", "type": "static", "position": [2, 0, 0], "shapes": [{"type": "capsule", "radius": 0.05,
  "half_height": 0.5, "position": [0, 0.5, 0]}]}],
 "objects": [{"type": "particles", "name": "chain", "particles": [{"x": [0, 4, 0], "inv_mass": 0},
 {"x": [1, 4, 0], "inv_mass": 1}], "constraints": [{"type": "distance", "a": 0, "b": 1}]}]}"""
BODY_FRAMES = 10


def rotate(q, v):
    """v turned by the unit quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    t = (2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0]))
    return (v[0] + w * t[0] + y * t[2] - z * t[1], v[1] + w * t[1] + z * t[0] - x * t[2],
            v[2] + w * t[2] + x * t[1] - y * t[0])


def posed(pose, v):
    r = rotate(pose[3:], v)
    return tuple(pose[i] + r[i] for i in range(3))


def near(a, b, tol=1e-5):
    return all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b))


def run_bodies(folder, fmt):
    """The bodies scene, BODY_FRAMES frames in `fmt`; returns the OBJ frames of a run of it as
    {frame: (v, faces, {index1: pose})} (the OBJ run is made once)."""
    if not os.path.exists(path("bodies.json")):
        with open(path("bodies.json"), "w") as f:
            f.write(BODIES)
    if fmt != "obj":
        run("run", "bodies.json", "-n", str(BODY_FRAMES), "--format", fmt, "-o", folder, "-q")
    if not os.path.exists(path("bodies_obj")):
        run("run", "bodies.json", "-n", str(BODY_FRAMES), "-o", "bodies_obj", "-q")
    frames = {}
    for f in range(BODY_FRAMES + 1):
        poses = {}
        v, _, _, faces, _ = read_obj(path("bodies_obj", "frame_%05d.obj" % f), poses)
        frames[f] = (v, faces, poses)
    return frames


def check_obj_bodies():
    frames = run_bodies("bodies_obj", "obj")
    _, _, xs, _ = read_state("bodies_obj")
    v0, faces0, poses0 = frames[0]
    vn, _, posesn = frames[BODY_FRAMES]
    if sorted(poses0) != [1, 2] or sorted(posesn) != [1, 2]:
        fail("bodies: the OBJ frames list bodies %s" % sorted(posesn))
    if posesn[1] == poses0[1] or posesn[2] != poses0[2]:
        fail("bodies: the crate did not move, or the static post did")
    n = len(xs)
    if vn[:n] != xs:
        fail("bodies: the particles' v lines are not first")
    # 8 box corners and a ball of 16 x 8 for the crate; a capsule of 16 x 9 for the post.
    crate, post = 8 + 2 + 16 * 7, 2 + 16 * 8
    if len(v0) - n != crate + post:
        fail("bodies: %d shape vertices" % (len(v0) - n))
    if any(not (n < c[0] <= len(v0)) for face in faces0 for c in face):
        fail("bodies: a face names a particle or no vertex")
    # Rigid motion: every crate vertex is the frame-0 one carried by the change of pose.
    conj = lambda q: (-q[0], -q[1], -q[2], q[3])
    for k in range(n, n + crate):
        local = rotate(conj(poses0[1][3:]), tuple(v0[k][i] - poses0[1][i] for i in range(3)))
        if not near(vn[k], posed(posesn[1], local), 1e-4):
            fail("bodies: crate vertex %d is %s at frame %d, its pose puts it at %s" % (k + 1, vn[k], BODY_FRAMES,
                 posed(posesn[1], local)))
    if v0[n + crate:] != vn[n + crate:]:
        fail("bodies: the static post's vertices moved")


def check_usd_bodies():
    frames = run_bodies("bodies_usd", "usd")
    with open(path("bodies_usd", "animation.usda")) as f:
        doc = Usda(f.read())
    xforms = [p for p in doc.prims[0]["children"] if "pbd:body" in p["attrs"]]
    if [(p["type"], p["name"].strip('"'), int(p["attrs"]["pbd:body"])) for p in xforms] != [("Xform", "crate", 1),
                                                                                  ("Xform", "post", 2)]:
        fail("bodies: the body prims are %s" % [(p["type"], p["name"]) for p in xforms])
    v_start = len(read_state("bodies_usd")[2])
    for p in xforms:
        a, index1 = p["attrs"], int(p["attrs"]["pbd:body"])
        if a["xformOpOrder"] != ["xformOp:translate", "xformOp:orient"] or \
                a["xformOp:translate.timeSamples#type"] != "double3" or \
                a["xformOp:orient.timeSamples#type"] not in ("quatf", "quatd"):
            fail("bodies: %s: xformOpOrder %s" % (p["name"], a["xformOpOrder"]))
        (mesh,) = p["children"]
        m = mesh["attrs"]
        pts = [tuple(q) for q in m["points"]]
        idx = [int(i) for i in m["faceVertexIndices"]]
        if mesh["type"] != "Mesh" or any(c != 3 for c in m["faceVertexCounts"]) or len(idx) != 3 * len(m["faceVertexCounts"]):
            fail("bodies: %s: its shapes are not a triangle Mesh" % p["name"])
        for f, (v, faces, poses) in frames.items():
            t = a["xformOp:translate.timeSamples"][float(f)]
            w, x, y, z = a["xformOp:orient.timeSamples"][float(f)]
            if tuple(t) + (x, y, z, w) != poses[index1]:
                fail("bodies: %s frame %d: translate %s orient %s, the OBJ frame says %s" % (p["name"], f, t,
                     (w, x, y, z), poses[index1]))
            # The Mesh in the body's frame, placed by the samples, lies on the OBJ frame's vertices.
            world = [posed(poses[index1], q) for q in pts]
            mine = v[v_start:v_start + len(pts)]
            if len(mine) != len(pts) or not all(near(g, e, 1e-4) for g, e in zip(world, mine)):
                fail("bodies: %s frame %d: the shapes placed by the samples are not the OBJ frame's" % (p["name"], f))
        v_start += len(pts)


def check_vtk_bodies():
    frames = run_bodies("bodies_vtk", "vtk")
    sets = ET.parse(path("bodies_vtk", "animation.pvd")).getroot().findall("./Collection/DataSet")
    want = []
    for f in range(BODY_FRAMES + 1):
        want += [("0", "frame_%05d.vtu" % f), ("1", "bodies_%05d.vtp" % f)]
    if [(d.get("part"), d.get("file")) for d in sets] != want:
        fail("bodies: animation.pvd lists %s" % [d.get("file") for d in sets])
    n = len(read_state("bodies_vtk")[2])
    for f, (v, faces, poses) in frames.items():
        file = path("bodies_vtk", "bodies_%05d.vtp" % f)
        piece = ET.parse(file).getroot().find("./PolyData/Piece")

        def array(parent, name, width):
            for a in piece.find(parent).findall("DataArray"):
                if a.get("Name") == name:
                    t = [float(c) for c in a.text.split()]
                    return [tuple(t[i:i + width]) for i in range(0, len(t), width)]
            fail("%s: no %s array %s" % (file, parent, name))

        pts = array("Points", "Points", 3)
        body = [int(b[0]) for b in array("PointData", "body", 1)]
        orient = array("PointData", "orientation", 4)
        verts = [int(c[0]) for c in array("Verts", "connectivity", 1)]
        tris = array("Polys", "connectivity", 3)
        if int(piece.get("NumberOfPoints")) != len(pts) or verts != [0, 1] or body[:2] != [1, 2]:
            fail("%s: %d points, vertices %s, bodies %s" % (file, len(pts), verts, body[:2]))
        for k, index1 in enumerate((1, 2)):
            if pts[k] + orient[k] != poses[index1]:
                fail("%s: body %d at %s %s, the OBJ frame says %s" % (file, index1, pts[k], orient[k], poses[index1]))
        # The shapes: the OBJ frame's body vertices and faces, in the same bits.
        if pts[2:] != v[n:]:
            fail("%s: the shapes' points differ from the OBJ frame's" % file)
        if [tuple(int(c) - 2 + n + 1 for c in t) for t in tris] != [tuple(c[0] for c in face) for face in faces]:
            fail("%s: the shapes' triangles differ from the OBJ frame's" % file)
        if any(orient[2 + i] != orient[body[2 + i] - 1] for i in range(len(pts) - 2)):
            fail("%s: a shape's point does not carry its body's orientation" % file)


# Joints: an arm on a limited hinge from the world, and a ball on a ball joint too weak to hold it
# (break_force 1 mN), which breaks in the first step.
JOINTS = """{"name": "joints", "world": {"dt": 0.01, "gravity": [0, -9.8, 0]}, "bodies": [
 {"name": "arm", "type": "dynamic", "position": [0.5, 2, 0], "density": 500,
  "shapes": [{"type": "box", "half_extents": [0.5, 0.05, 0.05]}]},
 {"name": "bob", "type": "dynamic", "position": [1.2, 2, 0], "density": 500, "shapes": [{"type": "sphere", "radius": 0.1}]}],
 "joints": [{"name": "pivot", "type": "hinge", "b": "arm", "anchor": [0, 2, 0], "axis": [0, 0, 1], "limit": [-1, 1]},
 {"name": "weak", "type": "ball", "a": "arm", "b": "bob", "anchor": [1.1, 2, 0], "break_force": 0.001}]}"""
JOINT_FRAMES = 10


def qmul(a, b):
    """The product of two quaternions (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def check_joints(fmt):
    """The joints scene in `fmt`: the summary's joints line, then the joints file of every VTK
    frame or the USD joint prims, each against what the hinge holds together."""
    with open(path("joints.json"), "w") as f:
        f.write(JOINTS)
    folder = "joints_" + fmt
    p = run("run", "joints.json", "-n", str(JOINT_FRAMES), "--format", fmt, "-o", folder)
    m = re.search(r"\n  2 joints, 1 broken; largest error_distance (\S+) m \(unbroken joints\)\n", p.stdout)
    if not m or not float(m.group(1)) < 1e-4:
        fail("joints: no joints line in the summary, or a wrong one:\n" + p.stdout)
    if fmt == "usd":
        with open(path(folder, "animation.usda")) as f:
            doc = Usda(f.read())
        kids = doc.prims[0]["children"]
        joints = [c for c in kids if "pbd:joint" in c["attrs"]]
        if [(c["type"], c["name"].strip('"'), int(c["attrs"]["pbd:joint"])) for c in joints] != [
                ("PhysicsRevoluteJoint", "pivot", 0), ("PhysicsSphericalJoint", "weak", 1)]:
            fail("joints: the joint prims are %s" % [(c["type"], c["name"]) for c in joints])
        if kids.index(joints[0]) < max(kids.index(c) for c in kids if "pbd:body" in c["attrs"]):
            fail("joints: a joint prim comes before the bodies' Xforms")
        pivot, weak = joints[0]["attrs"], joints[1]["attrs"]
        arm = next(c["attrs"] for c in kids if c["name"].strip('"') == "arm")
        if "physics:body0" in pivot or pivot["physics:body1"] != "</World/arm>" or \
                weak["physics:body0"] != "</World/arm>" or weak["physics:body1"] != "</World/bob>":
            fail("joints: physics:body0 and body1 are %s" % [(a.get("physics:body0"), a.get("physics:body1"))
                                                             for a in (pivot, weak)])
        for a in (pivot, weak):
            types = [a[k + "#type"] for k in ("physics:localPos0", "physics:localRot0", "physics:localPos1",
                                               "physics:localRot1", "physics:axis")]
            if types != ["point3f", "quatf", "point3f", "quatf", "uniform token"] or a["physics:axis"] != "X":
                fail("joints: the frames and axis are declared %s" % types)
        if tuple(pivot["physics:localPos0"]) != (0, 2, 0) or \
                not all(abs(pivot[k] - s * math.degrees(1)) < 1e-4 for k, s in (("physics:lowerLimit", -1),
                                                                                   ("physics:upperLimit", 1))):
            fail("joints: pivot at %s, limits %s %s" % (pivot["physics:localPos0"], pivot.get("physics:lowerLimit"),
                                                        pivot.get("physics:upperLimit")))
        if "physics:jointEnabled" in pivot or "physics:jointEnabled.timeSamples" in pivot:
            fail("joints: the hinge that held has a physics:jointEnabled")
        if abs(weak["physics:breakForce"] - 0.001) > 1e-9 or \
                weak["physics:jointEnabled.timeSamples"] != {0.0: 1.0, 1.0: 0.0}:
            fail("joints: weak: breakForce %s, jointEnabled %s" % (weak.get("physics:breakForce"),
                                                                   weak.get("physics:jointEnabled.timeSamples")))
        # The arm's Xform carries the hinge's frame on it onto the world's: same origin, same axis.
        w0, x0, y0, z0 = pivot["physics:localRot0"]
        w1, x1, y1, z1 = pivot["physics:localRot1"]
        axis0 = rotate((x0, y0, z0, w0), (1, 0, 0))
        for f in range(JOINT_FRAMES + 1):
            t = arm["xformOp:translate.timeSamples"][float(f)]
            w, x, y, z = arm["xformOp:orient.timeSamples"][float(f)]
            pose = tuple(t) + (x, y, z, w)
            if not near(posed(pose, pivot["physics:localPos1"]), (0, 2, 0), 1e-4) or \
                    not near(rotate(qmul((x, y, z, w), (x1, y1, z1, w1)), (1, 0, 0)), axis0, 1e-4):
                fail("joints: frame %d: the arm's side of the hinge is off the world's" % f)
        return
    sets = ET.parse(path(folder, "animation.pvd")).getroot().findall("./Collection/DataSet")
    want = []
    for f in range(JOINT_FRAMES + 1):
        want += [("0", "frame_%05d.vtu" % f), ("1", "bodies_%05d.vtp" % f), ("2", "joints_%05d.vtp" % f)]
    if [(d.get("part"), d.get("file")) for d in sets] != want:
        fail("joints: animation.pvd lists %s" % [d.get("file") for d in sets])
    for f in range(JOINT_FRAMES + 1):

        def arrays(file, parent):
            piece = ET.parse(path(folder, file)).getroot().find("./PolyData/Piece")
            return piece, {a.get("Name"): [float(c) for c in a.text.split()] for a in piece.find(parent)}

        piece, cells = arrays("joints_%05d.vtp" % f, "CellData")
        _, pts = arrays("joints_%05d.vtp" % f, "Points")
        _, lines = arrays("joints_%05d.vtp" % f, "Lines")
        pts = [tuple(pts["Points"][3 * i:3 * i + 3]) for i in range(len(pts["Points"]) // 3)]
        if (piece.get("NumberOfPoints"), piece.get("NumberOfLines")) != ("4", "2") or len(pts) != 4 or \
                lines != {"connectivity": [0, 1, 2, 3], "offsets": [2, 4]}:
            fail("joints_%05d.vtp: not 2 lines over 4 points" % f)
        if sorted(cells) != ["broken", "error_distance", "force", "position", "torque", "type"] or \
                any(len(v) != 2 for v in cells.values()):
            fail("joints_%05d.vtp: cell arrays %s" % (f, sorted(cells)))
        if cells["type"] != [2, 1] or cells["broken"] != [0, 0 if f == 0 else 1]:
            fail("joints_%05d.vtp: types %s, broken %s" % (f, cells["type"], cells["broken"]))
        # The world's side where the file put it; the arm's where the arm's frame carries (-0.5, 0, 0).
        _, body = arrays("bodies_%05d.vtp" % f, "Points")
        _, data = arrays("bodies_%05d.vtp" % f, "PointData")
        arm = tuple(body["Points"][0:3]) + tuple(data["orientation"][0:4])
        if pts[0] != (0, 2, 0) or not near(pts[1], posed(arm, (-0.5, 0, 0)), 1e-5):
            fail("joints_%05d.vtp: the hinge's anchors are %s %s" % (f, pts[0], pts[1]))
        if abs(math.dist(pts[0], pts[1]) - cells["error_distance"][0]) > 1e-6:
            fail("joints_%05d.vtp: the hinge's anchors are %g apart, its error_distance %g" % (
                f, math.dist(pts[0], pts[1]), cells["error_distance"][0]))
        if f > 0 and not (cells["force"][0] > 1 and cells["force"][1] == 0):
            fail("joints_%05d.vtp: forces %s" % (f, cells["force"]))
    if abs(float(m.group(1)) - cells["error_distance"][0]) > 1e-3 * cells["error_distance"][0]:
        fail("joints: the summary's largest error %s is not the last frame's %g" % (m.group(1),
             cells["error_distance"][0]))


def case_usd():
    # A cloth (Mesh) and a pendulum (BasisCurves), against OBJ frames of the same runs.
    for scene, kind in (("cloth_sphere", "Mesh"), ("double_pendulum", "BasisCurves")):
        run("run", scene, "-n", "12", "--format", "usd", "-o", scene + "_usd", "-q")
        run("run", scene, "-n", "12", "-o", scene + "_obj", "-q")
        if os.path.exists(path(scene + "_usd", "animation.frames")):
            fail("the frame store outlived a run without --save-every")
        if kind not in check_usd_against(scene + "_usd", scene + "_obj", 0, 12):
            fail("%s: no %s prim" % (scene, kind))
    # Resumed: the store kept with --save-every gives the whole animation, equal to one run's.
    run("run", "rope", "-n", "6", "--format", "usd", "--save-every", "3", "-o", "res", "-q")
    if not os.path.exists(path("res", "animation.frames")):
        fail("--save-every did not keep the frame store")
    run("run", "rope", "-n", "15", "--format", "usd", "--resume", "res/snapshot.pbds", "-o", "res", "-q")
    run("run", "rope", "-n", "15", "-o", "rope_obj", "-q")
    check_usd_against("res", "rope_obj", 0, 15)
    # Without the store, the resumed animation starts at the snapshot's frame and says so.
    if os.path.exists(path("res", "animation.frames")):
        fail("a resumed run without --save-every kept the frame store")
    shutil.copytree(path("res"), path("bare"))
    run("run", "rope", "-n", "6", "--save-every", "6", "-o", "snap", "-q")
    p = run("run", "rope", "-n", "15", "--format", "usd", "--resume", "snap/snapshot.pbds", "-o", "bare")
    if "animation.usda starts at frame 6" not in p.stderr:
        fail("no word about the missing frame store:\n" + p.stderr)
    check_usd_against("bare", "rope_obj", 6, 15)
    # Nor is the store of another run used: a snapshot of a run with another dt.
    run("run", "rope", "-n", "6", "--dt", "0.005", "--format", "usd", "--save-every", "6", "-o", "other", "-q")
    shutil.copy(path("res", "snapshot.pbds"), path("other", "snapshot.pbds"))
    p = run("run", "rope", "-n", "15", "--format", "usd", "--resume", "other/snapshot.pbds", "-o", "other")
    if "animation.usda starts at frame 6" not in p.stderr:
        fail("the frame store of another run was taken:\n" + p.stderr)
    check_usd_against("other", "rope_obj", 6, 15)
    check_usd_bodies()
    check_joints("usd")


# Three particles, one pinned, two links of different rest lengths, released stretched.
CHAIN = """{"name": "chain", "world": {"dt": 0.01, "gravity": [0, -9.8, 0]}, "objects": [{"type": "particles",
 "name": "chain", "particles": [{"x": [0, 2, 0], "inv_mass": 0}, {"x": [1.5, 2, 0], "inv_mass": 1},
 {"x": [3, 2, 0.5], "inv_mass": 1}], "constraints": [{"type": "distance", "a": 0, "b": 1, "rest": 1.0},
 {"type": "distance", "a": 1, "b": 2, "rest": 2.0}]}]}"""


def case_vtk():
    with open(path("chain.json"), "w") as f:
        f.write(CHAIN)
    for scene in ("cloth_sphere", "chain.json"):
        run("run", scene, "-n", "8", "--format", "vtk", "-o", scene + "_vtk", "-q")
        run("run", scene, "-n", "8", "-o", scene + "_obj", "-q")
        last, time, xs, vs = read_state(scene + "_vtk")
        dt = time / last
        pvd = ET.parse(path(scene + "_vtk", "animation.pvd")).getroot()
        sets = pvd.findall("./Collection/DataSet")
        if pvd.get("type") != "Collection" or [d.get("file") for d in sets] != ["frame_%05d.vtu" % f for f in range(9)]:
            fail("animation.pvd does not list frames 0 to 8")
        for f, d in enumerate(sets):
            if abs(float(d.get("timestep")) - f * dt) > 1e-9 * (1 + f * dt):
                fail("animation.pvd: frame %d at %s s, expected %g" % (f, d.get("timestep"), f * dt))
        for f in range(9):
            file = path(scene + "_vtk", "frame_%05d.vtu" % f)
            piece = ET.parse(file).getroot().find("./UnstructuredGrid/Piece")

            def array(parent, name):
                for a in piece.find(parent).findall("DataArray"):
                    if a.get("Name") == name:
                        return [float(t) for t in a.text.split()]
                fail("%s: no %s array %s" % (file, parent, name))

            n, ncell = int(piece.get("NumberOfPoints")), int(piece.get("NumberOfCells"))
            pts = array("Points", "Points")
            pts = [tuple(pts[3 * i : 3 * i + 3]) for i in range(n)]
            vel = array("PointData", "velocity")
            vel = [tuple(vel[3 * i : 3 * i + 3]) for i in range(n)]
            strain = array("PointData", "strain")
            conn = [int(c) for c in array("Cells", "connectivity")]
            offs = [int(c) for c in array("Cells", "offsets")]
            types = [int(c) for c in array("Cells", "types")]
            v, _, _, faces, lines = read_obj(path(scene + "_obj", "frame_%05d.obj" % f))
            if pts != v:
                fail("%s: points differ from the OBJ frame" % file)
            if f == last and (pts != xs or vel != vs):
                fail("%s: points or velocities differ from state.txt" % file)
            if len(strain) != n or len(types) != ncell or len(offs) != ncell or offs[-1] != len(conn):
                fail("%s: array sizes disagree" % file)
            cells, start = [], 0
            for t, end in zip(types, offs):
                if (t, end - start) not in ((5, 3), (3, 2)):
                    fail("%s: a cell of type %d with %d points" % (file, t, end - start))
                cells.append(tuple(c + 1 for c in conn[start:end]))
                start = end
            want = [tuple(c[0] for c in face) for face in faces] + list(lines)
            if cells != want:
                fail("%s: cells differ from the OBJ frame's faces and lines" % file)
            if scene == "chain.json":
                # Each particle's strain is the mean over its links.
                e = [abs(math.dist(pts[0], pts[1]) / 1.0 - 1), abs(math.dist(pts[1], pts[2]) / 2.0 - 1)]
                for got, exp in zip(strain, (e[0], (e[0] + e[1]) / 2, e[1])):
                    if abs(got - exp) > 1e-6 * (1 + exp):
                        fail("%s: strain %r, expected %r" % (file, strain, e))
            elif f == 0 and any(s > 1e-6 for s in strain):
                fail("%s: a cloth at rest shows strain %g" % (file, max(strain)))
            elif f == last and not max(strain) > 0:
                fail("%s: a falling cloth shows no strain" % file)
        try:
            import vtk  # noqa: F401 (optional: Debian's python3-vtk9)
        except ImportError:
            continue
        r = vtk.vtkXMLUnstructuredGridReader()
        r.SetFileName(path(scene + "_vtk", "frame_%05d.vtu" % last))
        r.Update()
        g = r.GetOutput()
        if g.GetNumberOfPoints() != len(xs) or g.GetPointData().GetArray("velocity") is None:
            fail("VTK's reader sees %d points" % g.GetNumberOfPoints())
        for i in range(len(xs)):
            if any(abs(a - b) > 1e-6 * (1 + abs(b)) for a, b in zip(g.GetPoint(i), xs[i])):
                fail("VTK's reader: point %d is %s, state.txt %s" % (i, g.GetPoint(i), xs[i]))


    # A resumed run lists the frames it kept before the snapshot too.
    run("run", "rope", "-n", "6", "--format", "vtk", "--save-every", "3", "-o", "res", "-q")
    run("run", "rope", "-n", "10", "--format", "vtk", "--resume", "res/snapshot.pbds", "-o", "res", "-q")
    files = [d.get("file") for d in ET.parse(path("res", "animation.pvd")).getroot().findall("./Collection/DataSet")]
    if files != ["frame_%05d.vtu" % f for f in range(11)]:
        fail("the resumed run's animation.pvd lists %s" % files)
    check_vtk_bodies()
    check_joints("vtk")


def case_obj():
    # hanging_cloth: a 32x32 grid; cloth_sphere 21x21; rope: lines only, no vn or vt.
    for scene, nx in (("hanging_cloth", 32), ("cloth_sphere", 21), ("rope", 0)):
        run("run", scene, "-n", "5", "-o", scene, "-q")
        v, vt, vn, faces, lines = read_obj(path(scene, "frame_00005.obj"))
        _, _, xs, _ = read_state(scene)
        if v != xs:
            fail("%s: v lines differ from state.txt" % scene)
        if nx == 0:
            if vt or vn or not lines or faces:
                fail("%s: a rope frame has vt, vn or faces, or no lines" % scene)
            continue
        if len(vt) != nx * nx or len(vn) != len(v):
            fail("%s: %d vt and %d vn for %d vertices" % (scene, len(vt), len(vn), len(v)))
        for j in range(nx):
            for i in range(nx):
                if vt[j * nx + i] != (i / (nx - 1), j / (nx - 1)) and max(
                        abs(a - b) for a, b in zip(vt[j * nx + i], (i / (nx - 1), j / (nx - 1)))) > 1e-8:
                    fail("%s: vt of vertex (%d, %d) is %s" % (scene, i, j, vt[j * nx + i]))
        # Area-weighted normals recomputed from the positions and faces.
        acc = [[0.0, 0.0, 0.0] for _ in v]
        for face in faces:
            if len(face) != 3 or any(c[1] != c[0] or c[2] != c[0] for c in face):
                fail("%s: face %s does not use the vertex's own vt and vn" % (scene, face))
            a, b, c = (v[k[0] - 1] for k in face)
            u, w = [b[i] - a[i] for i in range(3)], [c[i] - a[i] for i in range(3)]
            cr = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
            for k in face:
                for i in range(3):
                    acc[k[0] - 1][i] += cr[i]
        for k, (got, s) in enumerate(zip(vn, acc)):
            length = math.sqrt(sum(x * x for x in s))
            if max(abs(g - x / length) for g, x in zip(got, s)) > 2e-5:
                fail("%s: vn %d is %s, expected %s" % (scene, k + 1, got, [x / length for x in s]))
    check_obj_bodies()


os.makedirs(WORK, exist_ok=True)
shutil.rmtree(WORK)
os.makedirs(WORK)
{"usd": case_usd, "vtk": case_vtk, "obj": case_obj}[CASE]()
print("output_formats %s: ok" % CASE)
