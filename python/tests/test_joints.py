"""Joints from Python: added in code at a world anchor and axis (or with frames), all of a batch or
none, their state and break events, motors changed on a live world, a scene's joints by name, and
bad arguments refused."""
import math

import pytest

import pbd


def rod(w, position, half=(0.02, 0.25, 0.02), density=1000):
    """A dynamic box body, its matter from the box."""
    b = w.add_body("dynamic", position=position)
    w.add_collider("box", half_extents=half, body=b, density=density)
    return b


def test_hinge_holds_its_pivot_and_reads_its_angle():
    """A rod on a hinge about z at its top end, released 0.3 rad out: it swings through the bottom
    to the other side, its pivot held, the joint's angle reading the swing from where it started."""
    w = pbd.World(dt=1 / 60, substeps=20, gravity=(0, -9.81, 0))
    a = 0.3
    r = rod(w, (0.25 * math.sin(a), 2 - 0.25 * math.cos(a), 0))
    r.set_pose(rotation=(0, 0, math.sin(a / 2), math.cos(a / 2)))
    j = w.add_joint("hinge", b=r, anchor=(0, 2, 0), axis=(0, 0, 1))
    assert j == 0 and w.joint_count == 1 and w.joints == []
    lowest, worst = 0.0, 0.0
    for _ in range(40):
        w.step()
        s = w.joint_state(j)
        lowest = min(lowest, s["position"])
        worst = max(worst, s["error_distance"], s["error_angle"])
    assert not s["broken"]
    # swung from 0 (its start) past the bottom (-0.3) to about the other side (-0.6)
    assert lowest == pytest.approx(-2 * a, abs=0.02)
    assert worst < 1e-4


def test_add_joints_adds_all_or_none():
    """A chain of five links in one call; a batch with one bad entry adds nothing."""
    w = pbd.World(dt=1 / 60, substeps=20, gravity=(0, -9.81, 0))
    links = [rod(w, (0.1 * k + 0.05, 2, 0), half=(0.05, 0.02, 0.02)) for k in range(5)]
    specs = [{"type": "ball", "a": links[k - 1] if k else None, "b": links[k], "anchor": (0.1 * k, 2, 0)}
             for k in range(5)]
    assert w.add_joints(specs) == 0 and w.joint_count == 5
    bad = [dict(specs[1], anchor=(1, 2, 0)), {"type": "hinge", "b": links[0], "anchor": (0, 2, 0), "axis": (0, 0, 1),
                                               "limit": (1, 0)}]
    with pytest.raises(pbd.Error, match="lower"):
        w.add_joints(bad)
    assert w.joint_count == 5
    w.step(60)
    assert max(w.joint_state(k)["error_distance"] for k in range(5)) < 5e-3
    assert links[4].center[1] < 1.8  # it swung down


def test_break_events_and_mending():
    """A joint that holds half the weight breaks in the first step, once; mended, it breaks again."""
    w = pbd.World(dt=1 / 60, substeps=10, gravity=(0, -9.81, 0))
    box = rod(w, (0, 1, 0), half=(0.1, 0.1, 0.1))
    weight = box.mass * 9.81
    j = w.add_joint("ball", b=box, frame_a=((0, 1.1, 0), (0, 0, 0, 1)), frame_b=(0, 0.1, 0),
                    break_force=0.5 * weight)
    w.step()
    (ev,) = w.joint_events()
    assert ev["joint"] == j and ev["force"] > 0.5 * weight
    assert w.joint_state(j)["broken"]
    w.step()
    assert w.joint_events() == []
    # mended where the box has fallen to, it holds until the threshold again: the next step
    w.set_joint_broken(j, False)
    assert not w.joint_state(j)["broken"]
    w.step()
    assert [e["joint"] for e in w.joint_events()] == [j]


def test_scene_joints_by_name_and_motor():
    """The door of door_motor opens to its limit; its motor turned round closes it again."""
    w = pbd.World.from_builtin("door_motor")
    assert w.joints == [{"name": "hinge", "index": 0}] and w.joint_count == 1
    w.step(180)
    assert w.joint_state(0)["position"] == pytest.approx(1.6, abs=0.02)
    w.set_joint_motor(0, "velocity", target=-1, max=30)
    w.step(120)
    assert w.joint_state(0)["position"] < 0.5
    # a scene's bodies by name
    door = next(b for b in w.bodies if b.name == "door")
    assert w.add_joint("distance", a="post", b=door, anchor_a=(0, 2.5, 0), anchor_b=door.position) == 1
    assert w.joint_count == 2


def test_bad_joint_arguments():
    w = pbd.World()
    b = rod(w, (0, 1, 0))
    other = rod(pbd.World(), (0, 1, 0))
    with pytest.raises(ValueError, match="type: expected one of fixed, ball, hinge, prismatic, distance"):
        w.add_joint("hinj", b=b, anchor=(0, 1, 0), axis=(0, 0, 1))
    with pytest.raises(TypeError, match="a hinge placed by an anchor needs axis"):
        w.add_joint("hinge", b=b, anchor=(0, 1, 0))
    with pytest.raises(TypeError, match="unknown key 'axes'"):
        w.add_joint("hinge", b=b, anchor=(0, 1, 0), axes=(0, 0, 1))
    with pytest.raises(TypeError, match="side a needs a place"):
        w.add_joint("ball", b=b)
    with pytest.raises(ValueError, match="axis: must be a finite, non-zero direction"):
        w.add_joint("hinge", b=b, anchor=(0, 1, 0), axis=(0, 0, 0))
    with pytest.raises(ValueError, match="the body belongs to another world"):
        w.add_joint("ball", b=other, anchor=(0, 1, 0))
    with pytest.raises(ValueError, match="the scene has no body named 'door'"):
        w.add_joint("ball", b="door", anchor=(0, 1, 0))
    with pytest.raises(pbd.Error, match="only hinge and prismatic joints have a motor"):
        w.add_joint("ball", b=b, anchor=(0, 1, 0), motor="velocity", motor_max=1)
    with pytest.raises(pbd.Error, match="neither body_a nor body_b"):
        w.add_joint("ball", anchor=(0, 1, 0))
    with pytest.raises(TypeError, match=r"add_joints: joints\[1\]: expected a dict"):
        w.add_joints([{"type": "ball", "b": b, "anchor": (0, 1, 0)}, 3])
    with pytest.raises(OverflowError):
        w.joint_state(-1)
    with pytest.raises(pbd.Error, match="out of range"):
        w.joint_state(0)
    assert w.joint_count == 0
