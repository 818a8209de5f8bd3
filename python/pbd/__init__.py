"""pbd: position based dynamics (PBD/XPBD) cloth, ropes, soft bodies and rigid bodies, from Python.

A World is made from a scene (a built-in one, a file or a JSON text) or in code, stepped, and
read through NumPy arrays that are views of the library's own memory (no copies)::

    import pbd
    w = pbd.World.from_builtin("hanging_cloth")
    w.step(60)
    x = w.positions            # (n, 3) float32 view, read-only, updated by every step
    w.set_positions(x + [0, 1, 0])
    print(w.stats()["max_strain"], hex(w.hash()))
    box = w.add_body("dynamic", position=(0, 2, 0))   # a pbd.Body
    w.add_collider("box", half_extents=(0.1, 0.1, 0.1), body=box, density=500)
    poses = w.body_poses       # (slots, 7) view: position, rotation quaternion x y z w

Errors of the library raise pbd.Error with its message (the file and field of a bad scene, the
argument of a bad call). See docs/python.md.
"""

import numpy as _np

from ._pbd import Body, Error, builtin_scene_text, builtin_scenes, have_render, precision, version
from . import _pbd

__all__ = ["Body", "Error", "World", "builtin_scenes", "builtin_scene_text", "contact_dtype", "load", "precision",
           "real_dtype", "version", "have_render"]

#: The dtype of every position, velocity and inverse mass: float32, or float64 in a double build.
real_dtype = _np.dtype(_np.float64 if precision == "double" else _np.float32)


def _contact_dtype():
    lay = _pbd._contact_layout
    vec = (real_dtype, (3,))
    return _np.dtype({
        "names": ["particle", "collider", "point", "normal", "distance", "normal_correction"],
        "formats": [_np.uint32, _np.uint32, vec, vec, real_dtype, real_dtype],
        "offsets": [lay["particle"], lay["collider"], lay["point"], lay["normal"], lay["distance"],
                    lay["normal_correction"]],
        "itemsize": lay["itemsize"],
    })


#: One contact of World.contacts(): the particle, the collider's index, the closest surface point,
#: its outward normal, the signed distance (m) and the last substep's push along the normal.
contact_dtype = _contact_dtype()


class World(_pbd.World):
    __doc__ = _pbd.World.__doc__

    def contacts(self):
        """The contacts after the last step, as a structured array of contact_dtype (a copy)."""
        return _np.frombuffer(self._contacts_raw(), dtype=contact_dtype).copy()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<pbd.World closed>"
        what = f"scene {self.name!r}" if self.name is not None else "built in code"
        bodies = f", {self.body_count} bodies" if self.body_count else ""
        return f"<pbd.World {what}: {self.particle_count} particles{bodies}, t = {self.time:.4g} s>"


def load(scene):
    """A World from a built-in scene's name, or else from the path of a scene file."""
    if isinstance(scene, str) and any(name == scene for name, _ in builtin_scenes()):
        return World.from_builtin(scene)
    return World.from_file(scene)
