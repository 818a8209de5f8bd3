/* The Python module pbd._pbd: a World type over libpbd and libpbd_scene (and pbd_render when it
 * was built), with the particle arrays and the bodies' frames as read-only NumPy views of the
 * world's own memory, and a Body type for the rigid bodies.
 * python/pbd/__init__.py is the public face (docs/python.md). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "pbd/pbd.h"
#include "pbd/scene.h"
#ifdef PBD_PY_HAVE_RENDER
#include "pbd/render.h"
#endif

#ifdef PBD_DOUBLE
#define NPY_REAL NPY_FLOAT64
#else
#define NPY_REAL NPY_FLOAT32
#endif

/* The world's log lines since the last read, kept in C: the log callback runs inside a step,
 * with the GIL released, and must not touch Python objects. */
#define PY_LOG_MAX_LINES 256

typedef struct py_log {
	char* lines[PY_LOG_MAX_LINES];
	int count;
	unsigned long dropped; /* lines past PY_LOG_MAX_LINES, counted, not kept */
} py_log;

/* The matter a body was given from Python: pbd_body_state tells the mass, not the centre and
 * inertia. */
typedef struct py_body_mass {
	uint32_t generation; /* of the body it belongs to; 0: none known */
	pbd_mass_properties mass;
} py_body_mass;

typedef struct {
	PyObject_HEAD pbd_scene scene; /* a world loaded from a scene; zeroed for one built in code */
	pbd_world* world;              /* scene.world, or the world this object created */
	py_log* log;                   /* heap: its address is the log callback's user pointer */
	PyObject* views;               /* weak references to the NumPy views of the particle arrays */
	PyObject* body_views;          /* the same for the views of the bodies' frames */
	int busy;                      /* a step runs with the GIL released */
	PyObject* weakrefs;
	pbd_collider_id* colliders; /* those add_collider made, for render() and the bodies' mass */
	double* densities;          /* of each of those, kg/m^3; 0: the shape gives its body no mass */
	uint32_t collider_count;
	py_body_mass* body_mass; /* by body slot (index1 - 1) */
	uint32_t body_mass_slots;
} World;

/* A rigid body of a World: the world (held, so that it outlives its bodies) and the body's id. */
typedef struct {
	PyObject_HEAD World* world;
	pbd_body_id id;
} Body;

static PyTypeObject BodyType;

/* The frames view is the library's pbd_pose array read as (slots, 7) scalars. */
_Static_assert(sizeof(pbd_pose) == 7 * sizeof(pbd_real), "pbd_pose is not 7 packed scalars");

static PyObject* pbd_py_error; /* pbd.Error, set once at import */

static void log_line(const char* message, void* user) {
	py_log* log = user;
	if (log->count == PY_LOG_MAX_LINES) {
		++log->dropped;
		return;
	}
	size_t n = strlen(message);
	char* copy = malloc(n + 1);
	if (!copy) {
		++log->dropped;
		return;
	}
	memcpy(copy, message, n + 1);
	log->lines[log->count++] = copy;
}

static void log_clear(py_log* log) {
	for (int i = 0; i < log->count; ++i) free(log->lines[i]);
	log->count = 0;
	log->dropped = 0;
}

static PyObject* raise_world(World* self, const char* what) {
	PyErr_Format(pbd_py_error, "%s: %s", what, self->world ? pbd_world_last_error(self->world) : "no world");
	return NULL;
}

static int check_world(World* self) {
	if (!self->world) {
		PyErr_SetString(pbd_py_error, "the world is closed");
		return -1;
	}
	if (self->busy) {
		PyErr_SetString(pbd_py_error, "the world is being stepped in another thread");
		return -1;
	}
	return 0;
}

/* The views in `list` still alive; the dead ones' references are dropped. -1 on error. */
static Py_ssize_t views_alive(PyObject* list) {
	Py_ssize_t alive = 0;
	Py_ssize_t n = PyList_GET_SIZE(list);
	for (Py_ssize_t i = n - 1; i >= 0; --i) {
		PyObject* target = PyWeakref_GetObject(PyList_GET_ITEM(list, i));
		if (target == Py_None) {
			if (PySequence_DelItem(list, i) < 0) return -1;
		} else {
			++alive;
		}
	}
	return alive;
}

/* Views of the particle arrays point into memory that adding particles may move: refuse to
 * grow the world while one is alive, rather than leave it pointing at freed memory. */
static int check_no_views(World* self, const char* what) {
	const Py_ssize_t alive = views_alive(self->views);
	if (alive < 0) return -1;
	if (alive) {
		PyErr_Format(pbd_py_error,
		             "%s: %zd view(s) of the particle arrays (positions, velocities, inv_masses, triangles) are "
		             "still alive and would point at moved memory; copy what you keep (np.array(v)) and delete them",
		             what, alive);
		return -1;
	}
	return 0;
}

/* The same for body_poses, which pbd_body_create may move. */
static int check_no_body_views(World* self, const char* what) {
	const Py_ssize_t alive = views_alive(self->body_views);
	if (alive < 0) return -1;
	if (alive) {
		PyErr_Format(pbd_py_error,
		             "%s: %zd view(s) of body_poses are still alive and would point at moved memory; copy what you "
		             "keep (np.array(v)), delete them and take body_poses again afterwards",
		             what, alive);
		return -1;
	}
	return 0;
}

static World* world_alloc(PyTypeObject* type) {
	World* self = (World*)type->tp_alloc(type, 0);
	if (!self) return NULL;
	memset(&self->scene, 0, sizeof self->scene);
	self->world = NULL;
	self->busy = 0;
	self->weakrefs = NULL;
	self->colliders = NULL;
	self->densities = NULL;
	self->collider_count = 0;
	self->body_mass = NULL;
	self->body_mass_slots = 0;
	self->log = calloc(1, sizeof *self->log);
	self->views = PyList_New(0);
	self->body_views = PyList_New(0);
	if (!self->log || !self->views || !self->body_views) {
		Py_DECREF(self);
		PyErr_NoMemory();
		return NULL;
	}
	return self;
}

static void world_release(World* self) {
	if (self->scene.world) {
		pbd_scene_free(&self->scene);
	} else if (self->world) {
		pbd_world_destroy(self->world);
	}
	memset(&self->scene, 0, sizeof self->scene);
	self->world = NULL;
}

static void World_dealloc(World* self) {
	if (self->weakrefs) PyObject_ClearWeakRefs((PyObject*)self);
	world_release(self);
	if (self->log) {
		log_clear(self->log);
		free(self->log);
	}
	Py_XDECREF(self->views);
	Py_XDECREF(self->body_views);
	free(self->colliders);
	free(self->densities);
	free(self->body_mass);
	Py_TYPE(self)->tp_free((PyObject*)self);
}

/* ---- settings by name ---------------------------------------------------------------------- */

static int real_of(PyObject* o, const char* name, pbd_real* out) {
	double d = PyFloat_AsDouble(o);
	if (d == -1.0 && PyErr_Occurred()) {
		PyErr_Format(PyExc_TypeError, "%s: expected a number", name);
		return -1;
	}
	*out = (pbd_real)d;
	return 0;
}

static int vec3_of(PyObject* o, const char* name, pbd_vec3* out) {
	PyObject* seq = PySequence_Fast(o, "");
	if (!seq || PySequence_Fast_GET_SIZE(seq) != 3) {
		Py_XDECREF(seq);
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: expected 3 numbers", name);
		return -1;
	}
	pbd_real c[3];
	int rc = 0;
	for (int i = 0; i < 3 && rc == 0; ++i) rc = real_of(PySequence_Fast_GET_ITEM(seq, i), name, &c[i]);
	Py_DECREF(seq);
	if (rc == 0) *out = (pbd_vec3){c[0], c[1], c[2]};
	return rc;
}

/* An integer in [lo, hi] from any object with __index__ (an int, a NumPy integer): a float, even
 * a whole one, raises TypeError instead of being truncated, and a value out of range raises
 * OverflowError instead of wrapping. */
static int integer_in(PyObject* o, const char* name, long long lo, long long hi, long long* out) {
	if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: expected an integer, got %s", name, Py_TYPE(o)->tp_name);
		return -1;
	}
	PyObject* i = PyNumber_Index(o);
	if (!i) return -1;
	int overflow = 0;
	const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
	if (v == -1 && !overflow && PyErr_Occurred()) {
		Py_DECREF(i);
		return -1;
	}
	if (overflow || v < lo || v > hi) {
		PyErr_Format(PyExc_OverflowError, "%s: %S is out of range [%lld, %lld]", name, i, lo, hi);
		Py_DECREF(i);
		return -1;
	}
	Py_DECREF(i);
	*out = v;
	return 0;
}

static int int_of(PyObject* o, const char* name, int* out) {
	long long v = 0;
	if (integer_in(o, name, -2147483647LL, 2147483647LL, &v) < 0) return -1;
	*out = (int)v;
	return 0;
}

/* An argument converter ("O&") for an index or a count of particles, constraints or vertices: a
 * uint32_t, named in messages by `name`. */
typedef struct py_u32 {
	const char* name;
	uint32_t value;
} py_u32;

static int u32_converter(PyObject* o, void* p) {
	py_u32* u = (py_u32*)p;
	long long v = 0;
	if (integer_in(o, u->name, 0, (long long)UINT32_MAX, &v) < 0) return 0;
	u->value = (uint32_t)v;
	return 1;
}

/* The same for an int argument (frames, image sizes). */
typedef struct py_int {
	const char* name;
	int value;
} py_int;

static int int_converter(PyObject* o, void* p) {
	py_int* u = (py_int*)p;
	return int_of(o, u->name, &u->value) < 0 ? 0 : 1;
}

/* An array of indices as uint32_t, C-contiguous: integers only (a float array raises TypeError
 * instead of being truncated), each in [0, 2^32 - 1] (OverflowError instead of wrapping). An
 * empty sequence is accepted whatever its dtype (NumPy makes [] a float array). */
static PyArrayObject* index_array(PyObject* o, const char* what) {
	PyArrayObject* a = (PyArrayObject*)PyArray_FROM_O(o);
	if (!a) return NULL;
	const char kind = PyArray_DESCR(a)->kind;
	if (PyArray_SIZE(a) > 0 && kind != 'i' && kind != 'u') {
		PyErr_Format(PyExc_TypeError, "%s: expected integer indices, got an array of %S", what,
		             (PyObject*)PyArray_DESCR(a));
		Py_DECREF(a);
		return NULL;
	}
	if (PyArray_SIZE(a) > 0) {
		/* Range-checked as 64-bit integers, which hold every NumPy integer type but uint64. */
		PyArrayObject* wide =
		    (PyArrayObject*)PyArray_FROM_OTF((PyObject*)a, kind == 'u' ? NPY_UINT64 : NPY_INT64, NPY_ARRAY_IN_ARRAY);
		if (!wide) {
			Py_DECREF(a);
			return NULL;
		}
		const npy_intp n = PyArray_SIZE(wide);
		for (npy_intp k = 0; k < n; ++k) {
			const bool bad = kind == 'u' ? ((const uint64_t*)PyArray_DATA(wide))[k] > UINT32_MAX
			                             : ((const int64_t*)PyArray_DATA(wide))[k] < 0 ||
			                                   ((const int64_t*)PyArray_DATA(wide))[k] > (int64_t)UINT32_MAX;
			if (bad) {
				if (kind == 'u')
					PyErr_Format(PyExc_OverflowError, "%s: index %llu (entry %zd) is out of range [0, %lu]", what,
					             (unsigned long long)((const uint64_t*)PyArray_DATA(wide))[k], (Py_ssize_t)k,
					             (unsigned long)UINT32_MAX);
				else
					PyErr_Format(PyExc_OverflowError, "%s: index %lld (entry %zd) is out of range [0, %lu]", what,
					             (long long)((const int64_t*)PyArray_DATA(wide))[k], (Py_ssize_t)k,
					             (unsigned long)UINT32_MAX);
				Py_DECREF(wide);
				Py_DECREF(a);
				return NULL;
			}
		}
		Py_DECREF(wide);
	}
	/* Every value fits now: the cast to uint32 changes none. */
	PyArrayObject* u =
	    (PyArrayObject*)PyArray_FROM_OTF((PyObject*)a, NPY_UINT32, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
	Py_DECREF(a);
	return u;
}

static int enum_of(PyObject* o, const char* name, const char* const* names, int count, int* out) {
	const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
	for (int i = 0; s && i < count; ++i) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	PyObject* msg = PyUnicode_FromFormat("%s: expected one of", name);
	for (int i = 0; msg && i < count; ++i) {
		PyObject* next = PyUnicode_FromFormat("%U %s%s", msg, names[i], i + 1 < count ? "," : "");
		Py_DECREF(msg);
		msg = next;
	}
	if (msg) {
		PyErr_SetObject(PyExc_ValueError, msg);
		Py_DECREF(msg);
	}
	return -1;
}

static const char* const solver_names[] = {"gauss_seidel", "jacobi"};
static const char* const formulation_names[] = {"pbd", "xpbd"};

/* Applies keyword settings to a world def; every key must be known. */
static int def_apply(pbd_world_def* d, PyObject* kwargs) {
	PyObject *key, *value;
	Py_ssize_t pos = 0;
	while (kwargs && PyDict_Next(kwargs, &pos, &key, &value)) {
		const char* k = PyUnicode_AsUTF8(key);
		if (!k) return -1;
		int rc = 0, i;
		if (strcmp(k, "dt") == 0) {
			rc = real_of(value, k, &d->dt);
		} else if (strcmp(k, "substeps") == 0) {
			rc = int_of(value, k, &d->substeps);
		} else if (strcmp(k, "max_substeps") == 0) {
			rc = int_of(value, k, &d->max_substeps);
		} else if (strcmp(k, "iterations") == 0) {
			rc = int_of(value, k, &d->iterations);
		} else if (strcmp(k, "gravity") == 0) {
			rc = vec3_of(value, k, &d->gravity);
		} else if (strcmp(k, "damping") == 0) {
			rc = real_of(value, k, &d->damping);
		} else if (strcmp(k, "max_speed") == 0) {
			rc = real_of(value, k, &d->max_speed);
		} else if (strcmp(k, "sleep_time") == 0) {
			rc = real_of(value, k, &d->sleep_time);
		} else if (strcmp(k, "sleep_speed") == 0) {
			rc = real_of(value, k, &d->sleep_speed);
		} else if (strcmp(k, "threads") == 0) {
			rc = int_of(value, k, &d->threads);
		} else if (strcmp(k, "body_solver") == 0) {
			const char* const body_solver_names[] = {pbd_body_solver_name(PBD_BODY_SOLVER_POSITION),
			                                         pbd_body_solver_name(PBD_BODY_SOLVER_SOFT_STEP),
			                                         pbd_body_solver_name(PBD_BODY_SOLVER_AVBD)};
			rc = enum_of(value, k, body_solver_names, 3, &i);
			if (rc == 0) d->body_solver = (pbd_body_solver)i;
		} else if (strcmp(k, "contact_hertz") == 0) {
			rc = real_of(value, k, &d->contact_hertz);
		} else if (strcmp(k, "solver") == 0) {
			rc = enum_of(value, k, solver_names, 2, &i);
			if (rc == 0) d->solver = (pbd_solver)i;
		} else if (strcmp(k, "formulation") == 0) {
			rc = enum_of(value, k, formulation_names, 2, &i);
			if (rc == 0) d->formulation = (pbd_formulation)i;
		} else if (strcmp(k, "method") == 0) {
			const char* s = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
			if (!s || !pbd_method_from_name(s, &d->method)) {
				PyErr_Format(PyExc_ValueError, "method: unknown method %R", value);
				rc = -1;
			}
		} else if (strcmp(k, "wind") == 0) {
			rc = vec3_of(value, k, &d->wind);
		} else if (strcmp(k, "diagnostics") == 0 || strcmp(k, "profile") == 0) {
			int on = PyObject_IsTrue(value);
			if (on < 0) return -1;
			if (k[0] == 'd')
				d->diagnostics = on != 0;
			else
				d->profile = on != 0;
		} else {
			PyErr_Format(
			    PyExc_TypeError,
			    "unknown setting '%s' (dt, substeps, max_substeps, iterations, gravity, damping, max_speed, "
			    "sleep_time, "
			    "sleep_speed, threads, body_solver, contact_hertz, solver, formulation, method, wind, diagnostics, "
			    "profile)",
			    k);
			rc = -1;
		}
		if (rc < 0) return -1;
	}
	return 0;
}

/* ---- construction -------------------------------------------------------------------------- */

static int World_init(World* self, PyObject* args, PyObject* kwargs) {
	if (PyTuple_GET_SIZE(args) != 0) {
		PyErr_SetString(PyExc_TypeError, "World() takes settings as keywords only (World(dt=1/60, substeps=8))");
		return -1;
	}
	if (self->world) return 0; /* made by a from_* constructor */
	pbd_world_def def = pbd_world_def_default();
	if (def_apply(&def, kwargs) < 0) return -1;
	def.log = log_line;
	def.log_user = self->log;
	pbd_status st = pbd_world_create(&def, &self->world);
	if (st != PBD_OK) {
		/* The world was not made, so its message is gone: the log heard it. */
		const char* why = self->log->count ? self->log->lines[self->log->count - 1] : pbd_status_string(st);
		PyErr_Format(pbd_py_error, "World: %s", why);
		log_clear(self->log);
		return -1;
	}
	return 0;
}

static PyObject* World_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
	(void)args;
	(void)kwargs;
	return (PyObject*)world_alloc(type);
}

static PyObject* world_from_scene(PyTypeObject* type, int kind, const char* text, Py_ssize_t size, const char* source,
                                  const char* base_dir) {
	World* self = world_alloc(type);
	if (!self) return NULL;
	pbd_scene_options opt = {0};
	opt.log = log_line;
	opt.log_user = self->log;
	pbd_scene_error err;
	bool ok;
	Py_BEGIN_ALLOW_THREADS;
	if (kind == 0)
		ok = pbd_scene_load_builtin(text, &opt, &self->scene, &err);
	else if (kind == 1)
		ok = pbd_scene_load_file(text, &opt, &self->scene, &err);
	else
		ok = pbd_scene_load_string(text, (size_t)size, source, base_dir, &opt, &self->scene, &err);
	Py_END_ALLOW_THREADS;
	if (!ok) {
		PyErr_SetString(pbd_py_error, err.message);
		Py_DECREF(self);
		return NULL;
	}
	self->world = self->scene.world;
	return (PyObject*)self;
}

static PyObject* World_from_builtin(PyObject* cls, PyObject* args) {
	const char* name;
	if (!PyArg_ParseTuple(args, "s:from_builtin", &name)) return NULL;
	return world_from_scene((PyTypeObject*)cls, 0, name, 0, NULL, NULL);
}

static PyObject* World_from_file(PyObject* cls, PyObject* args) {
	PyObject* path;
	if (!PyArg_ParseTuple(args, "O&:from_file", PyUnicode_FSConverter, &path)) return NULL;
	PyObject* r = world_from_scene((PyTypeObject*)cls, 1, PyBytes_AS_STRING(path), 0, NULL, NULL);
	Py_DECREF(path);
	return r;
}

static PyObject* World_from_json(PyObject* cls, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"text", "source", "base_dir", NULL};
	const char* text;
	Py_ssize_t size;
	const char* source = "<string>";
	const char* base_dir = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#|sz:from_json", keywords, &text, &size, &source, &base_dir))
		return NULL;
	return world_from_scene((PyTypeObject*)cls, 2, text, size, source, base_dir);
}

static PyObject* World_close(World* self, PyObject* unused) {
	(void)unused;
	if (self->busy) {
		PyErr_SetString(pbd_py_error, "the world is being stepped in another thread");
		return NULL;
	}
	if (self->world && (check_no_views(self, "close") < 0 || check_no_body_views(self, "close") < 0)) return NULL;
	world_release(self);
	Py_RETURN_NONE;
}

/* ---- stepping ------------------------------------------------------------------------------ */

static PyObject* World_step(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"frames", NULL};
	py_int frames_arg = {"step: frames", 1};
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O&:step", keywords, int_converter, &frames_arg)) return NULL;
	const int frames = frames_arg.value;
	if (check_world(self) < 0) return NULL;
	if (frames < 0) {
		PyErr_SetString(PyExc_ValueError, "step: frames must be >= 0");
		return NULL;
	}
	pbd_status st = PBD_OK;
	const bool scripted = self->scene.world != NULL;
	self->busy = 1;
	Py_BEGIN_ALLOW_THREADS;
	for (int f = 0; f < frames && st == PBD_OK; ++f)
		st = scripted ? pbd_scene_step(&self->scene) : pbd_world_step(self->world);
	Py_END_ALLOW_THREADS;
	self->busy = 0;
	if (st != PBD_OK) return raise_world(self, "step");
	Py_RETURN_NONE;
}

/* ---- particle arrays ----------------------------------------------------------------------- */

static PyObject* make_view(World* self, PyObject* list, const void* data, npy_intp rows, int cols, int type) {
	npy_intp dims[2] = {rows, cols};
	int nd = cols > 0 ? 2 : 1;
	if (rows == 0 || !data) return PyArray_ZEROS(nd, dims, type, 0);
	PyObject* a = PyArray_New(&PyArray_Type, nd, dims, type, NULL, (void*)data, 0, NPY_ARRAY_C_CONTIGUOUS, NULL);
	if (!a) return NULL;
	Py_INCREF(self);
	if (PyArray_SetBaseObject((PyArrayObject*)a, (PyObject*)self) < 0) {
		Py_DECREF(a);
		return NULL;
	}
	PyObject* ref = PyWeakref_NewRef(a, NULL);
	if (!ref || PyList_Append(list, ref) < 0) {
		Py_XDECREF(ref);
		Py_DECREF(a);
		return NULL;
	}
	Py_DECREF(ref);
	return a;
}

static PyObject* World_positions(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return make_view(self, self->views, pbd_world_positions(self->world), pbd_world_particle_count(self->world), 3,
	                 NPY_REAL);
}

static PyObject* World_velocities(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return make_view(self, self->views, pbd_world_velocities(self->world), pbd_world_particle_count(self->world), 3,
	                 NPY_REAL);
}

static PyObject* World_inv_masses(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return make_view(self, self->views, pbd_world_inv_masses(self->world), pbd_world_particle_count(self->world), 0,
	                 NPY_REAL);
}

static PyObject* World_triangles(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return make_view(self, self->views, pbd_world_triangles(self->world), pbd_world_triangle_count(self->world), 3,
	                 NPY_UINT32);
}

/* An (n, 3) array of pbd_real, C-contiguous, converted from anything array-like. */
static PyArrayObject* vec3_array(PyObject* o, const char* what) {
	PyArrayObject* a = (PyArrayObject*)PyArray_FROM_OTF(o, NPY_REAL, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
	if (!a) return NULL;
	if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 1) != 3) {
		PyErr_Format(PyExc_ValueError, "%s: expected an array of shape (n, 3)", what);
		Py_DECREF(a);
		return NULL;
	}
	return a;
}

static PyObject* set_vec3(World* self, PyObject* args, PyObject* kwargs, bool velocities) {
	static char* keywords[] = {"values", "first", NULL};
	PyObject* values;
	const char* what = velocities ? "set_velocities" : "set_positions";
	py_u32 first_arg = {velocities ? "set_velocities: first" : "set_positions: first", 0};
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, velocities ? "O|O&:set_velocities" : "O|O&:set_positions", keywords,
	                                 &values, u32_converter, &first_arg))
		return NULL;
	const uint32_t first = first_arg.value;
	if (check_world(self) < 0) return NULL;
	PyArrayObject* a = vec3_array(values, what);
	if (!a) return NULL;
	npy_intp n = PyArray_DIM(a, 0);
	if (n > (npy_intp)UINT32_MAX) {
		Py_DECREF(a);
		PyErr_Format(PyExc_ValueError, "%s: too many rows", what);
		return NULL;
	}
	const pbd_vec3* in = PyArray_DATA(a);
	pbd_status st = velocities ? pbd_world_set_velocities(self->world, first, (uint32_t)n, in)
	                           : pbd_world_set_positions(self->world, first, (uint32_t)n, in);
	Py_DECREF(a);
	if (st != PBD_OK) return raise_world(self, what);
	Py_RETURN_NONE;
}

static PyObject* World_set_positions(World* self, PyObject* args, PyObject* kwargs) {
	return set_vec3(self, args, kwargs, false);
}

static PyObject* World_set_velocities(World* self, PyObject* args, PyObject* kwargs) {
	return set_vec3(self, args, kwargs, true);
}

/* ---- building in code ---------------------------------------------------------------------- */

static PyObject* World_add_particles(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"positions", "velocities", "inv_masses", NULL};
	PyObject *xo, *vo = Py_None, *wo = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:add_particles", keywords, &xo, &vo, &wo)) return NULL;
	if (check_world(self) < 0 || check_no_views(self, "add_particles") < 0) return NULL;
	PyArrayObject *x = vec3_array(xo, "add_particles: positions"), *v = NULL, *w = NULL;
	PyObject* result = NULL;
	if (!x) return NULL;
	npy_intp n = PyArray_DIM(x, 0);
	if (vo != Py_None && !(v = vec3_array(vo, "add_particles: velocities"))) goto done;
	if (wo == Py_None) {
		/* Unit masses unless told otherwise. */
		npy_intp dims[1] = {n};
		w = (PyArrayObject*)PyArray_EMPTY(1, dims, NPY_REAL, 0);
		if (!w) goto done;
		pbd_real* ones = PyArray_DATA(w);
		for (npy_intp i = 0; i < n; ++i) ones[i] = 1;
	} else {
		w = (PyArrayObject*)PyArray_FROM_OTF(wo, NPY_REAL, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
		if (!w) goto done;
		if (PyArray_NDIM(w) != 1) {
			PyErr_SetString(PyExc_ValueError, "add_particles: inv_masses: expected an array of shape (n,)");
			goto done;
		}
	}
	if ((v && PyArray_DIM(v, 0) != n) || (w && PyArray_DIM(w, 0) != n)) {
		PyErr_SetString(PyExc_ValueError, "add_particles: positions, velocities and inv_masses differ in length");
		goto done;
	}
	if (n == 0 || n > (npy_intp)UINT32_MAX) {
		PyErr_SetString(PyExc_ValueError, "add_particles: expected at least one particle");
		goto done;
	}
	uint32_t first = 0;
	if (pbd_world_add_particles(self->world, (uint32_t)n, PyArray_DATA(x), v ? PyArray_DATA(v) : NULL,
	                            w ? PyArray_DATA(w) : NULL, &first) != PBD_OK) {
		raise_world(self, "add_particles");
		goto done;
	}
	result = PyLong_FromUnsignedLong(first);
done:
	Py_XDECREF(x);
	Py_XDECREF(v);
	Py_XDECREF(w);
	return result;
}

static PyObject* World_add_distances(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"pairs", "rest", "stiffness", "compliance", NULL};
	PyObject *po, *ro = Py_None;
	double stiffness = 1, compliance = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Odd:add_distances", keywords, &po, &ro, &stiffness, &compliance))
		return NULL;
	if (check_world(self) < 0) return NULL;
	PyArrayObject* p = index_array(po, "add_distances: pairs");
	PyArrayObject* r = NULL;
	pbd_distance_def* defs = NULL;
	PyObject* result = NULL;
	if (!p) return NULL;
	if (PyArray_NDIM(p) != 2 || PyArray_DIM(p, 1) != 2 || PyArray_DIM(p, 0) == 0 ||
	    PyArray_DIM(p, 0) > (npy_intp)UINT32_MAX) {
		PyErr_SetString(PyExc_ValueError, "add_distances: pairs: expected an array of shape (m, 2), m >= 1");
		goto done;
	}
	npy_intp m = PyArray_DIM(p, 0);
	if (ro != Py_None) {
		r = (PyArrayObject*)PyArray_FROM_OTF(ro, NPY_REAL, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
		if (!r) goto done;
		if (PyArray_NDIM(r) != 1 || PyArray_DIM(r, 0) != m) {
			PyErr_SetString(PyExc_ValueError, "add_distances: rest: expected one length per pair");
			goto done;
		}
	}
	defs = PyMem_Malloc((size_t)m * sizeof *defs);
	if (!defs) {
		PyErr_NoMemory();
		goto done;
	}
	const uint32_t* ab = PyArray_DATA(p);
	const pbd_real* rest = r ? PyArray_DATA(r) : NULL;
	for (npy_intp i = 0; i < m; ++i) {
		defs[i] = (pbd_distance_def){0};
		defs[i].a = ab[2 * i];
		defs[i].b = ab[2 * i + 1];
		defs[i].rest = rest ? rest[i] : -1; /* negative: the current distance */
		defs[i].stiffness_stretch = defs[i].stiffness_compress = (pbd_real)stiffness;
		defs[i].compliance_stretch = defs[i].compliance_compress = (pbd_real)compliance;
		defs[i].kind = PBD_EDGE_STRUCTURAL;
	}
	uint32_t first = 0;
	if (pbd_world_add_distances(self->world, (uint32_t)m, defs, &first) != PBD_OK) {
		raise_world(self, "add_distances");
		goto done;
	}
	result = PyLong_FromUnsignedLong(first);
done:
	PyMem_Free(defs);
	Py_XDECREF(p);
	Py_XDECREF(r);
	return result;
}

static PyObject* soft_info_dict(const pbd_soft_info* in) {
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:I}", "first_particle", in->first_particle, "particle_count",
	                     in->particle_count, "first_distance", in->first_distance, "distance_count", in->distance_count,
	                     "first_triangle", in->first_triangle, "triangle_count", in->triangle_count);
}

static PyObject* World_add_cloth(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"nx",     "ny",        "size", "origin",    "axis_u",     "axis_v", "mass",
	                           "pinned", "diagonals", "bend", "stiffness", "compliance", NULL};
	py_u32 nx = {"add_cloth: nx", 0}, ny = {"add_cloth: ny", 0};
	PyObject *size_o = NULL, *origin_o = NULL, *au_o = NULL, *av_o = NULL, *pinned_o = Py_None;
	double mass = 0.1, stiffness = 1, compliance = 0;
	py_int diagonals = {"add_cloth: diagonals", 2};
	int bend = 1;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O&|OOOOdOO&pdd:add_cloth", keywords, u32_converter, &nx,
	                                 u32_converter, &ny, &size_o, &origin_o, &au_o, &av_o, &mass, &pinned_o,
	                                 int_converter, &diagonals, &bend, &stiffness, &compliance))
		return NULL;
	if (check_world(self) < 0 || check_no_views(self, "add_cloth") < 0) return NULL;
	pbd_grid_def g = pbd_grid_def_default();
	g.nx = nx.value;
	g.ny = ny.value;
	g.diagonals = diagonals.value;
	g.bend = bend != 0;
	if (size_o) {
		pbd_real s[2];
		PyObject* seq = PySequence_Fast(size_o, "add_cloth: size: expected (width, height)");
		if (!seq) return NULL;
		int rc = PySequence_Fast_GET_SIZE(seq) == 2 ? 0 : -1;
		for (int i = 0; i < 2 && rc == 0; ++i) rc = real_of(PySequence_Fast_GET_ITEM(seq, i), "add_cloth: size", &s[i]);
		Py_DECREF(seq);
		if (rc < 0) {
			if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "add_cloth: size: expected (width, height)");
			return NULL;
		}
		g.size_u = s[0];
		g.size_v = s[1];
	}
	if ((origin_o && vec3_of(origin_o, "add_cloth: origin", &g.origin) < 0) ||
	    (au_o && vec3_of(au_o, "add_cloth: axis_u", &g.axis_u) < 0) ||
	    (av_o && vec3_of(av_o, "add_cloth: axis_v", &g.axis_v) < 0))
		return NULL;
	PyArrayObject* pins = NULL;
	if (pinned_o != Py_None) {
		pins = index_array(pinned_o, "add_cloth: pinned");
		if (!pins) return NULL;
		if (PyArray_NDIM(pins) != 1 || PyArray_DIM(pins, 0) > (npy_intp)UINT32_MAX) {
			Py_DECREF(pins);
			PyErr_SetString(PyExc_ValueError, "add_cloth: pinned: expected a list of vertex indices");
			return NULL;
		}
	}
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_grid(&g, &mesh, &err) != PBD_OK) {
		Py_XDECREF(pins);
		PyErr_Format(pbd_py_error, "add_cloth: %s", err.message);
		return NULL;
	}
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = &mesh;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = (pbd_real)mass;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		d.material[k].stiffness_stretch = d.material[k].stiffness_compress = (pbd_real)stiffness;
		d.material[k].compliance_stretch = d.material[k].compliance_compress = (pbd_real)compliance;
	}
	if (pins) {
		d.pinned = PyArray_DATA(pins);
		d.pinned_count = (uint32_t)PyArray_DIM(pins, 0);
	}
	pbd_soft_id id;
	pbd_status st = pbd_soft_create(self->world, &d, &id);
	pbd_mesh_free(&mesh);
	Py_XDECREF(pins);
	if (st != PBD_OK) return raise_world(self, "add_cloth");
	pbd_soft_info info;
	pbd_soft_get_info(self->world, id, &info);
	return soft_info_dict(&info);
}

static int quat_of(PyObject* o, const char* name, pbd_quat* out) {
	PyObject* seq = PySequence_Fast(o, "");
	if (!seq || PySequence_Fast_GET_SIZE(seq) != 4) {
		Py_XDECREF(seq);
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: expected 4 numbers (a quaternion x, y, z, w)", name);
		return -1;
	}
	pbd_real c[4];
	int rc = 0;
	for (int i = 0; i < 4 && rc == 0; ++i) rc = real_of(PySequence_Fast_GET_ITEM(seq, i), name, &c[i]);
	Py_DECREF(seq);
	if (rc == 0) *out = (pbd_quat){c[0], c[1], c[2], c[3]};
	return rc;
}

static int body_mass_from_shapes(World* self, pbd_body_id body, const char* what);

/* `o` as a body of this world, or NULL with TypeError or ValueError. */
static Body* body_arg(World* self, PyObject* o, const char* name) {
	if (!PyObject_TypeCheck(o, &BodyType)) {
		PyErr_Format(PyExc_TypeError, "%s: expected a pbd.Body (from add_body or bodies), got %s", name,
		             Py_TYPE(o)->tp_name);
		return NULL;
	}
	Body* b = (Body*)o;
	if (b->world != self) {
		PyErr_Format(PyExc_ValueError, "%s: the body belongs to another world", name);
		return NULL;
	}
	if (!pbd_body_is_valid(self->world, b->id)) {
		PyErr_Format(pbd_py_error, "%s: body %u was destroyed", name, b->id.index1);
		return NULL;
	}
	return b;
}

static PyObject* World_add_collider(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"shape",        "normal",      "offset",   "center", "radius",
	                           "half_extents", "margin",      "friction", "body",   "density",
	                           "rotation",     "half_height", NULL};
	const char* shape;
	PyObject *normal_o = NULL, *center_o = NULL, *half_o = NULL, *body_o = Py_None, *density_o = Py_None,
	         *rotation_o = NULL;
	double offset = 0, radius = 0, margin = 0, friction = -1, half_height = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OdOdOddOOOd:add_collider", keywords, &shape, &normal_o, &offset,
	                                 &center_o, &radius, &half_o, &margin, &friction, &body_o, &density_o, &rotation_o,
	                                 &half_height))
		return NULL;
	if (check_world(self) < 0) return NULL;
	pbd_collider_def d = pbd_collider_def_default();
	pbd_vec3 center = {0, 0, 0};
	if (center_o && vec3_of(center_o, "add_collider: center", &center) < 0) return NULL;
	if (rotation_o && quat_of(rotation_o, "add_collider: rotation", &d.pose.rotation) < 0) return NULL;
	if (strcmp(shape, "plane") == 0) {
		d.type = PBD_SHAPE_PLANE;
		d.shape.plane.normal = (pbd_vec3){0, 1, 0};
		if (normal_o && vec3_of(normal_o, "add_collider: normal", &d.shape.plane.normal) < 0) return NULL;
		d.shape.plane.offset = (pbd_real)offset;
	} else if (strcmp(shape, "sphere") == 0) {
		d.type = PBD_SHAPE_SPHERE;
		d.shape.sphere.center = center;
		d.shape.sphere.radius = (pbd_real)radius;
	} else if (strcmp(shape, "box") == 0) {
		d.type = PBD_SHAPE_BOX;
		if (!half_o) {
			PyErr_SetString(PyExc_TypeError, "add_collider: a box needs half_extents");
			return NULL;
		}
		if (vec3_of(half_o, "add_collider: half_extents", &d.shape.box.half_extents) < 0) return NULL;
		d.pose.position = center;
	} else if (strcmp(shape, "capsule") == 0) {
		d.type = PBD_SHAPE_CAPSULE;
		d.shape.capsule.radius = (pbd_real)radius;
		d.shape.capsule.half_height = (pbd_real)half_height;
		d.pose.position = center;
	} else {
		PyErr_Format(PyExc_ValueError, "add_collider: shape: expected plane, sphere, box or capsule, got '%s'", shape);
		return NULL;
	}
	d.margin = (pbd_real)margin;
	if (friction >= 0) d.static_friction = d.kinetic_friction = (pbd_real)friction;
	double density = 0;
	if (body_o != Py_None) {
		Body* b = body_arg(self, body_o, "add_collider: body");
		if (!b) return NULL;
		d.body = b->id;
	}
	if (density_o != Py_None) {
		density = PyFloat_AsDouble(density_o);
		if (density == -1.0 && PyErr_Occurred()) {
			PyErr_SetString(PyExc_TypeError, "add_collider: density: expected a number");
			return NULL;
		}
		if (body_o == Py_None) {
			PyErr_SetString(PyExc_ValueError, "add_collider: density: only a shape on a body (body=) gives matter");
			return NULL;
		}
		if (!(density > 0) || !(density <= 1e30)) {
			PyErr_Format(PyExc_ValueError, "add_collider: density: must be finite and > 0 kg/m^3 (got %R)", density_o);
			return NULL;
		}
	}
	pbd_collider_id* grown = realloc(self->colliders, (self->collider_count + 1) * sizeof *grown);
	if (!grown) return PyErr_NoMemory();
	self->colliders = grown;
	double* grown_d = realloc(self->densities, (self->collider_count + 1) * sizeof *grown_d);
	if (!grown_d) return PyErr_NoMemory();
	self->densities = grown_d;
	pbd_collider_id id = pbd_collider_create(self->world, &d);
	if (!pbd_collider_is_valid(self->world, id)) return raise_world(self, "add_collider");
	self->colliders[self->collider_count] = id;
	self->densities[self->collider_count] = density;
	self->collider_count++;
	/* The body's matter becomes that of its shapes with a density, this one included; a shape
	 * the body cannot take (a plane, a static body) is removed again. */
	if (density > 0 && body_mass_from_shapes(self, d.body, "add_collider") < 0) {
		pbd_collider_destroy(self->world, id);
		self->collider_count--;
		return NULL;
	}
	return PyLong_FromUnsignedLong(id.index1);
}

/* ---- reading the state --------------------------------------------------------------------- */

static PyObject* World_hash(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	return PyLong_FromUnsignedLongLong(pbd_world_hash(self->world));
}

static int dict_set(PyObject* d, const char* key, PyObject* value) {
	if (!value) return -1;
	int rc = PyDict_SetItemString(d, key, value);
	Py_DECREF(value);
	return rc;
}

static PyObject* vec3_tuple(pbd_vec3 v) { return Py_BuildValue("(ddd)", (double)v.x, (double)v.y, (double)v.z); }

static PyObject* World_stats(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	pbd_stats s;
	pbd_world_get_stats(self->world, &s);
	PyObject* d = PyDict_New();
	if (!d) return NULL;
	int rc = 0;
	rc |= dict_set(d, "time", PyFloat_FromDouble(s.time));
	rc |= dict_set(d, "steps", PyLong_FromUnsignedLongLong(s.steps));
	rc |= dict_set(d, "substeps", PyLong_FromLong(pbd_world_step_substeps(self->world)));
	rc |= dict_set(d, "kinetic_energy", PyFloat_FromDouble(s.kinetic_energy));
	rc |= dict_set(d, "potential_energy", PyFloat_FromDouble(s.potential_energy));
	rc |= dict_set(d, "elastic_energy",
	               s.energy_defined ? PyFloat_FromDouble(s.elastic_energy) : (Py_INCREF(Py_None), Py_None));
	rc |= dict_set(d, "momentum", vec3_tuple(s.momentum));
	rc |= dict_set(d, "max_strain", PyFloat_FromDouble(s.max_strain));
	rc |= dict_set(d, "mean_strain", PyFloat_FromDouble(s.mean_strain));
	rc |= dict_set(d, "max_violation", PyFloat_FromDouble(s.max_violation));
	rc |= dict_set(d, "linear_residual", PyFloat_FromDouble(s.linear_residual));
	rc |= dict_set(d, "linear_iterations", PyLong_FromUnsignedLong(s.linear_iterations));
	rc |= dict_set(d, "contacts", PyLong_FromUnsignedLong(s.contacts));
	rc |= dict_set(d, "particles", PyLong_FromUnsignedLong(s.particles));
	rc |= dict_set(d, "distances", PyLong_FromUnsignedLong(s.distances));
	rc |= dict_set(d, "colliders", PyLong_FromUnsignedLong(s.colliders));
	rc |= dict_set(d, "bodies", PyLong_FromUnsignedLong(s.bodies));
	rc |= dict_set(d, "body_kinetic_energy", PyFloat_FromDouble(s.body_kinetic_energy));
	rc |= dict_set(d, "body_momentum",
	               Py_BuildValue("(ddd)", s.body_momentum[0], s.body_momentum[1], s.body_momentum[2]));
	rc |= dict_set(
	    d, "body_angular_momentum",
	    Py_BuildValue("(ddd)", s.body_angular_momentum[0], s.body_angular_momentum[1], s.body_angular_momentum[2]));
	PyObject* fam = PyDict_New();
	rc |= fam ? 0 : -1;
	for (int f = 0; fam && rc == 0 && f < PBD_FAMILY_COUNT; ++f) {
		const pbd_family_stats* fs = &s.family[f];
		if (fs->count == 0) continue;
		PyObject* e = fs->energy_defined ? PyFloat_FromDouble(fs->elastic_energy) : (Py_INCREF(Py_None), Py_None);
		rc |=
		    dict_set(fam, pbd_family_name((pbd_family_type)f),
		             Py_BuildValue("{s:I,s:d,s:d,s:d,s:N}", "count", fs->count, "max_violation", fs->max_violation,
		                           "max_strain", fs->max_strain, "mean_strain", fs->mean_strain, "elastic_energy", e));
	}
	if (fam) rc |= dict_set(d, "families", fam);
	if (rc != 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject* World_contacts_raw(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	uint32_t n = pbd_world_get_contacts(self->world, NULL, 0);
	PyObject* b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n * (Py_ssize_t)sizeof(pbd_contact));
	if (!b || n == 0) return b;
	pbd_world_get_contacts(self->world, (pbd_contact*)PyBytes_AS_STRING(b), n);
	return b;
}

static PyObject* World_take_warnings(World* self, PyObject* unused) {
	(void)unused;
	if (self->busy) {
		PyErr_SetString(pbd_py_error, "the world is being stepped in another thread");
		return NULL;
	}
	PyObject* list = PyList_New(0);
	for (int i = 0; list && i < self->log->count; ++i) {
		PyObject* s = PyUnicode_DecodeUTF8(self->log->lines[i], (Py_ssize_t)strlen(self->log->lines[i]), "replace");
		if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
		Py_XDECREF(s);
	}
	if (list && self->log->dropped) {
		PyObject* s = PyUnicode_FromFormat("(%lu more lines dropped)", self->log->dropped);
		if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
		Py_XDECREF(s);
	}
	if (list) log_clear(self->log);
	return list;
}

static PyObject* World_get_particle_count(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return PyLong_FromUnsignedLong(pbd_world_particle_count(self->world));
}

static PyObject* World_get_time(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return PyFloat_FromDouble(pbd_world_time(self->world));
}

static PyObject* World_get_dt(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return PyFloat_FromDouble((double)pbd_world_get_def(self->world).dt);
}

static PyObject* World_get_name(World* self, void* closure) {
	(void)closure;
	if (!self->scene.world) Py_RETURN_NONE;
	return PyUnicode_FromString(self->scene.name);
}

static PyObject* World_get_frames(World* self, void* closure) {
	(void)closure;
	if (!self->scene.world) Py_RETURN_NONE;
	return PyLong_FromLong(self->scene.frames);
}

/* The scene's objects in file order, each with its ranges in the world; [] for a world built in code. */
static PyObject* World_get_objects(World* self, void* closure) {
	(void)closure;
	PyObject* list = PyList_New(0);
	for (uint32_t i = 0; list && self->scene.world && i < self->scene.object_count; ++i) {
		const pbd_scene_object* o = &self->scene.objects[i];
		PyObject* d = soft_info_dict(&o->range);
		if (!d || dict_set(d, "name", PyUnicode_FromString(o->name)) < 0 ||
		    dict_set(d, "type", PyUnicode_FromString(pbd_scene_object_type_name(o->type))) < 0 ||
		    PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	return list;
}

static PyObject* World_get_closed(World* self, void* closure) {
	(void)closure;
	return PyBool_FromLong(self->world == NULL);
}

/* ---- rigid bodies -------------------------------------------------------------------------- */

static const char* const body_type_names[] = {"static", "kinematic", "dynamic"};

static PyObject* body_new(World* w, pbd_body_id id) {
	Body* b = PyObject_New(Body, &BodyType);
	if (!b) return NULL;
	Py_INCREF(w);
	b->world = w;
	b->id = id;
	return (PyObject*)b;
}

static void Body_dealloc(Body* b) {
	Py_XDECREF(b->world);
	PyObject_Free(b);
}

/* 0 when the body's world is open and the body alive, else -1 with pbd.Error. */
static int body_live(Body* b, const char* what) {
	if (check_world(b->world) < 0) return -1;
	if (!pbd_body_is_valid(b->world->world, b->id)) {
		PyErr_Format(pbd_py_error, "%s: body %u was destroyed", what, b->id.index1);
		return -1;
	}
	return 0;
}

static int body_state(Body* b, const char* what, pbd_body_state* st) {
	if (body_live(b, what) < 0) return -1;
	if (pbd_body_get_state(b->world->world, b->id, st) != PBD_OK) {
		raise_world(b->world, what);
		return -1;
	}
	return 0;
}

static int doubles_of(PyObject* o, const char* name, int n, double* out) {
	PyObject* seq = PySequence_Fast(o, "");
	if (!seq || PySequence_Fast_GET_SIZE(seq) != n) {
		Py_XDECREF(seq);
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: expected %d numbers", name, n);
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n && rc == 0; ++i) {
		out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
		if (out[i] == -1.0 && PyErr_Occurred()) {
			PyErr_Format(PyExc_TypeError, "%s: expected %d numbers", name, n);
			rc = -1;
		}
	}
	Py_DECREF(seq);
	return rc;
}

/* Mass properties from Python: mass in kg; center (3 numbers, the body's frame, default the
 * origin); inertia about the centre as 3 numbers (a diagonal), 6 ({xx, yy, zz, xy, xz, yz}) or a
 * symmetric 3 x 3 matrix; None: a solid ball 1 m across, 0.1 m kg m^2 about every axis. The
 * library checks the values (pbd_body_def.mass). */
static int mass_of(PyObject* mass_o, PyObject* center_o, PyObject* inertia_o, const char* what,
                   pbd_mass_properties* out) {
	memset(out, 0, sizeof *out);
	out->mass = PyFloat_AsDouble(mass_o);
	if (out->mass == -1.0 && PyErr_Occurred()) {
		PyErr_Format(PyExc_TypeError, "%s: mass: expected a number", what);
		return -1;
	}
	char name[96];
	snprintf(name, sizeof name, "%s: center", what);
	if (center_o && center_o != Py_None && doubles_of(center_o, name, 3, out->center) < 0) return -1;
	if (!inertia_o || inertia_o == Py_None) {
		out->inertia[0] = out->inertia[1] = out->inertia[2] = 0.1 * out->mass;
		return 0;
	}
	PyArrayObject* a =
	    (PyArrayObject*)PyArray_FROM_OTF(inertia_o, NPY_FLOAT64, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
	if (!a) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: inertia: expected 3 or 6 numbers or a 3 x 3 matrix", what);
		return -1;
	}
	const double* v = PyArray_DATA(a);
	int rc = 0;
	if (PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == 3) {
		for (int k = 0; k < 3; ++k) out->inertia[k] = v[k];
	} else if (PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == 6) {
		for (int k = 0; k < 6; ++k) out->inertia[k] = v[k];
	} else if (PyArray_NDIM(a) == 2 && PyArray_DIM(a, 0) == 3 && PyArray_DIM(a, 1) == 3) {
		const double xy = v[1], xz = v[2], yz = v[5];
		const double scale = fabs(v[0]) + fabs(v[4]) + fabs(v[8]);
		if (!(fabs(xy - v[3]) <= 1e-9 * scale) || !(fabs(xz - v[6]) <= 1e-9 * scale) ||
		    !(fabs(yz - v[7]) <= 1e-9 * scale)) {
			PyErr_Format(PyExc_ValueError, "%s: inertia: the 3 x 3 matrix is not symmetric", what);
			rc = -1;
		}
		const double in[6] = {v[0], v[4], v[8], xy, xz, yz};
		memcpy(out->inertia, in, sizeof in);
	} else {
		PyErr_Format(PyExc_ValueError, "%s: inertia: expected 3 or 6 numbers or a 3 x 3 matrix", what);
		rc = -1;
	}
	Py_DECREF(a);
	return rc;
}

static int remember_mass(World* self, pbd_body_id id, const pbd_mass_properties* m) {
	const uint32_t slot = id.index1 - 1;
	if (slot >= self->body_mass_slots) {
		uint32_t n = self->body_mass_slots ? self->body_mass_slots : 8;
		while (n <= slot) n *= 2;
		py_body_mass* grown = realloc(self->body_mass, n * sizeof *grown);
		if (!grown) {
			PyErr_NoMemory();
			return -1;
		}
		memset(grown + self->body_mass_slots, 0, (n - self->body_mass_slots) * sizeof *grown);
		self->body_mass = grown;
		self->body_mass_slots = n;
	}
	self->body_mass[slot].generation = id.generation;
	self->body_mass[slot].mass = *m;
	return 0;
}

static int body_mass_from_shapes(World* self, pbd_body_id body, const char* what) {
	uint32_t n = 0;
	for (uint32_t k = 0; k < self->collider_count; ++k) n += self->densities[k] > 0;
	pbd_mass_properties* parts = PyMem_Malloc((n ? n : 1) * sizeof *parts);
	if (!parts) {
		PyErr_NoMemory();
		return -1;
	}
	uint32_t used = 0;
	int rc = 0;
	for (uint32_t k = 0; k < self->collider_count && rc == 0; ++k) {
		pbd_collider_def d;
		if (!(self->densities[k] > 0) || pbd_collider_get_def(self->world, self->colliders[k], &d) != PBD_OK ||
		    d.body.index1 != body.index1 || d.body.generation != body.generation)
			continue;
		if (pbd_collider_mass_properties(self->world, self->colliders[k], (pbd_real)self->densities[k], &parts[used]) !=
		    PBD_OK) {
			raise_world(self, what);
			rc = -1;
		}
		++used;
	}
	pbd_mass_properties m;
	if (rc == 0 && pbd_mass_properties_combine(parts, used, &m) != PBD_OK) {
		PyErr_Format(pbd_py_error, "%s: the shapes' masses do not combine (pbd_mass_properties_combine)", what);
		rc = -1;
	}
	PyMem_Free(parts);
	if (rc == 0 && pbd_body_set_mass(self->world, body, &m) != PBD_OK) {
		raise_world(self, what);
		rc = -1;
	}
	return rc == 0 ? remember_mass(self, body, &m) : -1;
}

static PyObject* World_add_body(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"type",   "position", "rotation",      "velocity",       "angular_velocity", "mass",
	                           "center", "inertia",  "gravity_scale", "linear_damping", "angular_damping",  NULL};
	PyObject *type_o, *position_o = NULL, *rotation_o = NULL, *velocity_o = NULL, *omega_o = NULL, *mass_o = Py_None,
	                  *center_o = Py_None, *inertia_o = Py_None;
	double gravity_scale = 1, linear_damping = 0, angular_damping = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOOOOOddd:add_body", keywords, &type_o, &position_o, &rotation_o,
	                                 &velocity_o, &omega_o, &mass_o, &center_o, &inertia_o, &gravity_scale,
	                                 &linear_damping, &angular_damping))
		return NULL;
	if (check_world(self) < 0) return NULL;
	pbd_body_def d = pbd_body_def_default();
	int type;
	if (enum_of(type_o, "add_body: type", body_type_names, 3, &type) < 0) return NULL;
	d.type = (pbd_body_type)type;
	if ((position_o && vec3_of(position_o, "add_body: position", &d.pose.position) < 0) ||
	    (rotation_o && quat_of(rotation_o, "add_body: rotation", &d.pose.rotation) < 0) ||
	    (velocity_o && vec3_of(velocity_o, "add_body: velocity", &d.velocity) < 0) ||
	    (omega_o && vec3_of(omega_o, "add_body: angular_velocity", &d.angular_velocity) < 0))
		return NULL;
	d.gravity_scale = (pbd_real)gravity_scale;
	d.linear_damping = (pbd_real)linear_damping;
	d.angular_damping = (pbd_real)angular_damping;
	if (d.type == PBD_BODY_DYNAMIC) {
		/* Without a mass, 1 kg until shapes with a density give it theirs. */
		PyObject* one = NULL;
		if (mass_o == Py_None && !(one = PyFloat_FromDouble(1.0))) return NULL;
		const int rc = mass_of(one ? one : mass_o, center_o, inertia_o, "add_body", &d.mass);
		Py_XDECREF(one);
		if (rc < 0) return NULL;
	} else if (mass_o != Py_None || center_o != Py_None || inertia_o != Py_None) {
		PyErr_Format(PyExc_ValueError, "add_body: mass, center and inertia are for a dynamic body, not a %s one",
		             body_type_names[type]);
		return NULL;
	}
	/* pbd_body_create may move the frames' array. */
	if (check_no_body_views(self, "add_body") < 0) return NULL;
	const pbd_body_id id = pbd_body_create(self->world, &d);
	if (!pbd_body_is_valid(self->world, id)) return raise_world(self, "add_body");
	if (d.type == PBD_BODY_DYNAMIC && remember_mass(self, id, &d.mass) < 0) {
		pbd_body_destroy(self->world, id);
		return NULL;
	}
	return body_new(self, id);
}

static PyObject* World_get_bodies(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	uint32_t slots = 0;
	pbd_world_body_poses(self->world, &slots);
	PyObject* list = PyList_New(0);
	for (uint32_t i = 0; list && i < slots; ++i) {
		const pbd_body_id id = pbd_world_body_at(self->world, i);
		if (id.index1 == 0) continue;
		PyObject* b = body_new(self, id);
		if (!b || PyList_Append(list, b) < 0) Py_CLEAR(list);
		Py_XDECREF(b);
	}
	return list;
}

static PyObject* World_get_body_count(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return PyLong_FromUnsignedLong(pbd_world_body_count(self->world));
}

static PyObject* World_body_poses(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	uint32_t slots = 0;
	const pbd_pose* poses = pbd_world_body_poses(self->world, &slots);
	return make_view(self, self->body_views, poses, slots, 7, NPY_REAL);
}

static PyObject* quat_tuple(pbd_quat q) {
	return Py_BuildValue("(dddd)", (double)q.x, (double)q.y, (double)q.z, (double)q.w);
}

static PyObject* double3_tuple(const double v[3]) { return Py_BuildValue("(ddd)", v[0], v[1], v[2]); }

static PyObject* Body_state(Body* self, PyObject* unused) {
	(void)unused;
	pbd_body_state st;
	if (body_state(self, "Body.state", &st) < 0) return NULL;
	PyObject* d = PyDict_New();
	if (!d) return NULL;
	int rc = 0;
	rc |= dict_set(d, "type", PyUnicode_FromString(body_type_names[st.type]));
	rc |= dict_set(d, "mass", PyFloat_FromDouble(st.mass));
	rc |= dict_set(d, "position", vec3_tuple(st.pose.position));
	rc |= dict_set(d, "rotation", quat_tuple(st.pose.rotation));
	rc |= dict_set(d, "center", vec3_tuple(st.center));
	rc |= dict_set(d, "velocity", vec3_tuple(st.velocity));
	rc |= dict_set(d, "angular_velocity", vec3_tuple(st.angular_velocity));
	rc |= dict_set(d, "momentum", double3_tuple(st.momentum));
	rc |= dict_set(d, "angular_momentum", double3_tuple(st.angular_momentum));
	rc |= dict_set(d, "kinetic_energy", PyFloat_FromDouble(st.kinetic_energy));
	rc |= dict_set(d, "asleep", PyBool_FromLong(st.asleep));
	if (rc != 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

enum body_field {
	BODY_TYPE,
	BODY_MASS,
	BODY_POSITION,
	BODY_ROTATION,
	BODY_CENTER,
	BODY_VELOCITY,
	BODY_ANGULAR_VELOCITY,
	BODY_MOMENTUM,
	BODY_ANGULAR_MOMENTUM,
	BODY_KINETIC_ENERGY
};

static PyObject* Body_get_field(Body* self, void* closure) {
	pbd_body_state st;
	if (body_state(self, "Body", &st) < 0) return NULL;
	switch ((enum body_field)(intptr_t)closure) {
	case BODY_TYPE:
		return PyUnicode_FromString(body_type_names[st.type]);
	case BODY_MASS:
		return PyFloat_FromDouble(st.mass);
	case BODY_POSITION:
		return vec3_tuple(st.pose.position);
	case BODY_ROTATION:
		return quat_tuple(st.pose.rotation);
	case BODY_CENTER:
		return vec3_tuple(st.center);
	case BODY_VELOCITY:
		return vec3_tuple(st.velocity);
	case BODY_ANGULAR_VELOCITY:
		return vec3_tuple(st.angular_velocity);
	case BODY_MOMENTUM:
		return double3_tuple(st.momentum);
	case BODY_ANGULAR_MOMENTUM:
		return double3_tuple(st.angular_momentum);
	case BODY_KINETIC_ENERGY:
		break;
	}
	return PyFloat_FromDouble(st.kinetic_energy);
}

static PyObject* Body_get_mass_properties(Body* self, void* closure) {
	(void)closure;
	if (body_live(self, "Body.mass_properties") < 0) return NULL;
	const uint32_t slot = self->id.index1 - 1;
	World* w = self->world;
	if (slot >= w->body_mass_slots || w->body_mass[slot].generation != self->id.generation) Py_RETURN_NONE;
	const pbd_mass_properties* m = &w->body_mass[slot].mass;
	const double* I = m->inertia;
	return Py_BuildValue("{s:d,s:N,s:((ddd)(ddd)(ddd))}", "mass", m->mass, "center", double3_tuple(m->center),
	                     "inertia", I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]);
}

static PyObject* Body_get_id(Body* self, void* closure) {
	(void)closure;
	return Py_BuildValue("(II)", self->id.index1, self->id.generation);
}

static PyObject* Body_get_name(Body* self, void* closure) {
	(void)closure;
	const pbd_scene* sc = &self->world->scene;
	for (uint32_t k = 0; sc->world && k < sc->body_count; ++k)
		if (sc->bodies[k].id.index1 == self->id.index1 && sc->bodies[k].id.generation == self->id.generation)
			return PyUnicode_FromString(sc->bodies[k].name);
	Py_RETURN_NONE;
}

static PyObject* Body_get_index(Body* self, void* closure) {
	(void)closure;
	return PyLong_FromUnsignedLong(self->id.index1 - 1);
}

static PyObject* Body_get_valid(Body* self, void* closure) {
	(void)closure;
	World* w = self->world;
	return PyBool_FromLong(w->world && !w->busy && pbd_body_is_valid(w->world, self->id));
}

static PyObject* Body_get_world(Body* self, void* closure) {
	(void)closure;
	Py_INCREF(self->world);
	return (PyObject*)self->world;
}

static PyObject* Body_set_pose(Body* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"position", "rotation", NULL};
	PyObject *position_o = Py_None, *rotation_o = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:set_pose", keywords, &position_o, &rotation_o)) return NULL;
	pbd_body_state st;
	if (body_state(self, "set_pose", &st) < 0) return NULL;
	pbd_pose pose = st.pose;
	if ((position_o != Py_None && vec3_of(position_o, "set_pose: position", &pose.position) < 0) ||
	    (rotation_o != Py_None && quat_of(rotation_o, "set_pose: rotation", &pose.rotation) < 0))
		return NULL;
	if (pbd_body_set_pose(self->world->world, self->id, pose) != PBD_OK) return raise_world(self->world, "set_pose");
	Py_RETURN_NONE;
}

static PyObject* Body_set_velocity(Body* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"velocity", "angular_velocity", NULL};
	PyObject *velocity_o = Py_None, *omega_o = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:set_velocity", keywords, &velocity_o, &omega_o)) return NULL;
	pbd_body_state st;
	if (body_state(self, "set_velocity", &st) < 0) return NULL;
	pbd_vec3 v = st.velocity, om = st.angular_velocity;
	if ((velocity_o != Py_None && vec3_of(velocity_o, "set_velocity: velocity", &v) < 0) ||
	    (omega_o != Py_None && vec3_of(omega_o, "set_velocity: angular_velocity", &om) < 0))
		return NULL;
	if (pbd_body_set_velocity(self->world->world, self->id, v, om) != PBD_OK)
		return raise_world(self->world, "set_velocity");
	Py_RETURN_NONE;
}

static PyObject* Body_set_mass(Body* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"mass", "center", "inertia", NULL};
	PyObject *mass_o, *center_o = Py_None, *inertia_o = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:set_mass", keywords, &mass_o, &center_o, &inertia_o))
		return NULL;
	if (body_live(self, "set_mass") < 0) return NULL;
	pbd_mass_properties m;
	if (mass_of(mass_o, center_o, inertia_o, "set_mass", &m) < 0) return NULL;
	if (pbd_body_set_mass(self->world->world, self->id, &m) != PBD_OK) return raise_world(self->world, "set_mass");
	if (remember_mass(self->world, self->id, &m) < 0) return NULL;
	Py_RETURN_NONE;
}

/* apply_force and apply_impulse: a vector at a world point, the centre of mass by default. */
static PyObject* body_push(Body* self, PyObject* args, PyObject* kwargs, bool impulse) {
	static char* keywords_f[] = {"force", "point", NULL};
	static char* keywords_j[] = {"impulse", "point", NULL};
	const char* what = impulse ? "apply_impulse" : "apply_force";
	PyObject *vec_o, *point_o = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, impulse ? "O|O:apply_impulse" : "O|O:apply_force",
	                                 impulse ? keywords_j : keywords_f, &vec_o, &point_o))
		return NULL;
	pbd_body_state st;
	if (body_state(self, what, &st) < 0) return NULL;
	char name[64];
	pbd_vec3 vec, point = st.center;
	snprintf(name, sizeof name, "%s: %s", what, impulse ? "impulse" : "force");
	if (vec3_of(vec_o, name, &vec) < 0) return NULL;
	snprintf(name, sizeof name, "%s: point", what);
	if (point_o != Py_None && vec3_of(point_o, name, &point) < 0) return NULL;
	pbd_world* w = self->world->world;
	const pbd_status s =
	    impulse ? pbd_body_apply_impulse(w, self->id, vec, point) : pbd_body_apply_force(w, self->id, vec, point);
	if (s != PBD_OK) return raise_world(self->world, what);
	Py_RETURN_NONE;
}

static PyObject* Body_apply_force(Body* self, PyObject* args, PyObject* kwargs) {
	return body_push(self, args, kwargs, false);
}

static PyObject* Body_apply_impulse(Body* self, PyObject* args, PyObject* kwargs) {
	return body_push(self, args, kwargs, true);
}

static PyObject* Body_apply_torque(Body* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"torque", NULL};
	PyObject* torque_o;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:apply_torque", keywords, &torque_o)) return NULL;
	if (body_live(self, "apply_torque") < 0) return NULL;
	pbd_vec3 t;
	if (vec3_of(torque_o, "apply_torque: torque", &t) < 0) return NULL;
	if (pbd_body_apply_torque(self->world->world, self->id, t) != PBD_OK)
		return raise_world(self->world, "apply_torque");
	Py_RETURN_NONE;
}

static PyObject* Body_destroy(Body* self, PyObject* unused) {
	(void)unused;
	if (body_live(self, "destroy") < 0) return NULL;
	if (pbd_body_destroy(self->world->world, self->id) != PBD_OK) return raise_world(self->world, "destroy");
	Py_RETURN_NONE;
}

static PyObject* Body_repr(Body* self) {
	World* w = self->world;
	if (!w->world) return PyUnicode_FromFormat("<pbd.Body %u of a closed world>", self->id.index1);
	if (w->busy || !pbd_body_is_valid(w->world, self->id))
		return PyUnicode_FromFormat("<pbd.Body %u%s>", self->id.index1, w->busy ? "" : " (destroyed)");
	pbd_body_state st;
	pbd_body_get_state(w->world, self->id, &st);
	PyObject* p = vec3_tuple(st.pose.position);
	if (!p) return NULL;
	PyObject* r = PyUnicode_FromFormat("<pbd.Body %u at %R>", self->id.index1, p);
	Py_DECREF(p);
	return r;
}

static PyObject* Body_richcompare(PyObject* a, PyObject* b, int op) {
	if (!PyObject_TypeCheck(b, &BodyType) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
	const Body *x = (const Body*)a, *y = (const Body*)b;
	const bool same = x->world == y->world && x->id.index1 == y->id.index1 && x->id.generation == y->id.generation;
	return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t Body_hash(Body* self) {
	const uint64_t key =
	    ((uint64_t)self->id.generation << 32 | self->id.index1) ^ ((uint64_t)(uintptr_t)self->world >> 4);
	const Py_hash_t h = (Py_hash_t)key;
	return h == -1 ? -2 : h;
}

static PyMethodDef Body_methods[] = {
    {"state", (PyCFunction)Body_state, METH_NOARGS,
     "state(): type, mass, position, rotation, center, velocity, angular_velocity, momentum, angular_momentum, "
     "kinetic_energy"},
    {"set_pose", (PyCFunction)(void (*)(void))Body_set_pose, METH_VARARGS | METH_KEYWORDS,
     "set_pose(position=None, rotation=None): move the body's frame at once (None keeps that part)"},
    {"set_velocity", (PyCFunction)(void (*)(void))Body_set_velocity, METH_VARARGS | METH_KEYWORDS,
     "set_velocity(velocity=None, angular_velocity=None): of the centre of mass, and rad/s in world axes"},
    {"set_mass", (PyCFunction)(void (*)(void))Body_set_mass, METH_VARARGS | METH_KEYWORDS,
     "set_mass(mass, center=None, inertia=None): a dynamic body's matter, in its frame"},
    {"apply_force", (PyCFunction)(void (*)(void))Body_apply_force, METH_VARARGS | METH_KEYWORDS,
     "apply_force(force, point=None): N at a world point (the centre of mass by default) during the next step"},
    {"apply_torque", (PyCFunction)(void (*)(void))Body_apply_torque, METH_VARARGS | METH_KEYWORDS,
     "apply_torque(torque): N m, world axes, during the next step"},
    {"apply_impulse", (PyCFunction)(void (*)(void))Body_apply_impulse, METH_VARARGS | METH_KEYWORDS,
     "apply_impulse(impulse, point=None): N s at a world point (the centre of mass by default), now"},
    {"destroy", (PyCFunction)Body_destroy, METH_NOARGS, "destroy(): remove the body and the shapes it carries"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Body_getset[] = {
    {"type", (getter)Body_get_field, NULL, "\"static\", \"kinematic\" or \"dynamic\"", (void*)(intptr_t)BODY_TYPE},
    {"mass", (getter)Body_get_field, NULL, "kg (0 for a static or kinematic body)", (void*)(intptr_t)BODY_MASS},
    {"position", (getter)Body_get_field, NULL, "the frame's origin", (void*)(intptr_t)BODY_POSITION},
    {"rotation", (getter)Body_get_field, NULL, "the frame's rotation, quaternion (x, y, z, w)",
     (void*)(intptr_t)BODY_ROTATION},
    {"center", (getter)Body_get_field, NULL, "the centre of mass in the world", (void*)(intptr_t)BODY_CENTER},
    {"velocity", (getter)Body_get_field, NULL, "m/s of the centre of mass", (void*)(intptr_t)BODY_VELOCITY},
    {"angular_velocity", (getter)Body_get_field, NULL, "rad/s, world axes", (void*)(intptr_t)BODY_ANGULAR_VELOCITY},
    {"momentum", (getter)Body_get_field, NULL, "m v, kg m/s (dynamic bodies; zero for the others)",
     (void*)(intptr_t)BODY_MOMENTUM},
    {"angular_momentum", (getter)Body_get_field, NULL, "I w about the centre of mass, kg m^2/s, world axes",
     (void*)(intptr_t)BODY_ANGULAR_MOMENTUM},
    {"kinetic_energy", (getter)Body_get_field, NULL, "J, m v^2 / 2 + w . I w / 2 (dynamic bodies)",
     (void*)(intptr_t)BODY_KINETIC_ENERGY},
    {"mass_properties", (getter)Body_get_mass_properties, NULL,
     "the matter given from Python (add_body, set_mass, shapes with a density): a dict of mass, center and the "
     "3 x 3 inertia in the body's frame; None when not known (a body of a scene, or not dynamic)",
     NULL},
    {"id", (getter)Body_get_id, NULL, "(index1, generation), pbd_body_id", NULL},
    {"name", (getter)Body_get_name, NULL, "the body's name in its scene's \"bodies\" (None for one added in code)",
     NULL},
    {"index", (getter)Body_get_index, NULL, "the body's slot: its row of World.body_poses", NULL},
    {"valid", (getter)Body_get_valid, NULL, "False once destroyed or its world closed", NULL},
    {"world", (getter)Body_get_world, NULL, "the World it belongs to", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject BodyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbd._pbd.Body",
    .tp_basicsize = sizeof(Body),
    .tp_dealloc = (destructor)Body_dealloc,
    .tp_repr = (reprfunc)Body_repr,
    .tp_hash = (hashfunc)Body_hash,
    .tp_richcompare = Body_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A rigid body of a World (World.add_body, World.bodies); it keeps its world alive",
    .tp_methods = Body_methods,
    .tp_getset = Body_getset,
};

/* ---- joints -------------------------------------------------------------------------------- */

/* Positions follow pbd_joint_type and pbd_joint_motor. */
static const char* const joint_type_names[] = {"fixed", "ball", "hinge", "prismatic", "distance"};
static const char* const motor_names[] = {"off", "velocity", "position"};

/* The keys of a joint, as the scene format spells them (docs/scene-format.md, "Joints"), with the
 * motor's flattened as the library's def names them. */
enum joint_key {
	JK_TYPE,
	JK_A,
	JK_B,
	JK_ANCHOR,
	JK_ANCHOR_A,
	JK_ANCHOR_B,
	JK_AXIS,
	JK_FRAME_A,
	JK_FRAME_B,
	JK_COMPLIANCE,
	JK_LIMIT,
	JK_SWING,
	JK_MOTOR,
	JK_MOTOR_TARGET,
	JK_MOTOR_MAX,
	JK_MOTOR_COMPLIANCE,
	JK_BREAK_FORCE,
	JK_BREAK_TORQUE,
	JK_COUNT
};
static const char* const joint_keys[JK_COUNT] = {
    "type",        "a",           "b",     "anchor", "anchor_a", "anchor_b",     "axis",      "frame_a",
    "frame_b",     "compliance",  "limit", "swing",  "motor",    "motor_target", "motor_max", "motor_compliance",
    "break_force", "break_torque"};

/* One side of a joint: a Body of this world, a scene body's name, or None for the world; *pose is
 * the body's frame now. */
static int joint_side_of(World* self, PyObject* o, const char* name, pbd_body_id* id, pbd_pose* pose) {
	*id = (pbd_body_id){0, 0};
	*pose = pbd_pose_identity();
	if (!o || o == Py_None) return 0;
	if (PyUnicode_Check(o)) {
		const char* s = PyUnicode_AsUTF8(o);
		if (!s) return -1;
		const pbd_scene* sc = &self->scene;
		uint32_t k = 0;
		while (sc->world && k < sc->body_count && strcmp(sc->bodies[k].name, s) != 0) ++k;
		if (!sc->world || k == sc->body_count) {
			PyErr_Format(PyExc_ValueError, "%s: the scene has no body named '%s'", name, s);
			return -1;
		}
		*id = sc->bodies[k].id;
		if (!pbd_body_is_valid(self->world, *id)) {
			PyErr_Format(pbd_py_error, "%s: body '%s' was destroyed", name, s);
			return -1;
		}
	} else {
		const Body* b = body_arg(self, o, name);
		if (!b) return -1;
		*id = b->id;
	}
	pbd_body_state st;
	if (pbd_body_get_state(self->world, *id, &st) != PBD_OK) {
		raise_world(self, name);
		return -1;
	}
	*pose = st.pose;
	return 0;
}

/* A frame in its side's frame: (position, rotation quaternion x y z w), or a position alone. */
static int frame_of(PyObject* o, const char* name, pbd_pose* out) {
	*out = pbd_pose_identity();
	const Py_ssize_t n = PySequence_Check(o) ? PySequence_Size(o) : -1;
	if (n == 3) return vec3_of(o, name, &out->position);
	if (n != 2) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: expected (position, rotation) or a position", name);
		return -1;
	}
	PyObject* p = PySequence_GetItem(o, 0);
	PyObject* q = p ? PySequence_GetItem(o, 1) : NULL;
	const int rc = q && vec3_of(p, name, &out->position) == 0 && quat_of(q, name, &out->rotation) == 0 ? 0 : -1;
	Py_XDECREF(p);
	Py_XDECREF(q);
	return rc;
}

/* The rotation that turns the x axis onto `axis` along the shortest arc, as the scene format's
 * anchors make it. -1 for a zero axis. */
static int x_onto(pbd_vec3 axis, const char* name, pbd_quat* out) {
	const double a[3] = {(double)axis.x, (double)axis.y, (double)axis.z};
	const double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
	if (!(len > 0) || !isfinite(len)) {
		PyErr_Format(PyExc_ValueError, "%s: must be a finite, non-zero direction", name);
		return -1;
	}
	const double u[3] = {a[0] / len, a[1] / len, a[2] / len}, w = 1 + u[0];
	if (w < 1e-12) {
		*out = (pbd_quat){0, 1, 0, 0}; /* opposite to x: half a turn about y */
		return 0;
	}
	const double n = sqrt(w * w + u[1] * u[1] + u[2] * u[2]);
	*out = (pbd_quat){0, (pbd_real)(-u[2] / n), (pbd_real)(u[1] / n), (pbd_real)(w / n)};
	return 0;
}

/* A joint def from a dict of the keys above; `what` starts every message. The library checks the
 * values when the joint is added. */
static int joint_def_of(World* self, PyObject* spec, const char* what, pbd_joint_def* d) {
	PyObject* v[JK_COUNT] = {NULL};
	PyObject *key, *value;
	Py_ssize_t pos = 0;
	while (PyDict_Next(spec, &pos, &key, &value)) {
		const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		int found = -1;
		for (int i = 0; k && i < JK_COUNT; ++i)
			if (strcmp(k, joint_keys[i]) == 0) found = i;
		if (found < 0) {
			PyErr_Format(PyExc_TypeError,
			             "%s: unknown key %R (type, a, b, anchor, anchor_a, anchor_b, axis, frame_a, frame_b, "
			             "compliance, limit, swing, motor, motor_target, motor_max, motor_compliance, break_force, "
			             "break_torque)",
			             what, key);
			return -1;
		}
		if (value != Py_None) v[found] = value;
	}
	char name[160];
#define JK_NAME(k) (snprintf(name, sizeof name, "%s: %s", what, joint_keys[k]), name)
	*d = pbd_joint_def_default();
	int type;
	if (!v[JK_TYPE]) {
		PyErr_Format(PyExc_TypeError, "%s: missing type (fixed, ball, hinge, prismatic or distance)", what);
		return -1;
	}
	if (enum_of(v[JK_TYPE], JK_NAME(JK_TYPE), joint_type_names, 5, &type) < 0) return -1;
	d->type = (pbd_joint_type)type;
	pbd_pose pose[2];
	if (joint_side_of(self, v[JK_A], JK_NAME(JK_A), &d->body_a, &pose[0]) < 0 ||
	    joint_side_of(self, v[JK_B], JK_NAME(JK_B), &d->body_b, &pose[1]) < 0)
		return -1;
	/* Each side's frame: given in its body's frame, or made from a world anchor and axis. */
	pbd_pose* frames[2] = {&d->frame_a, &d->frame_b};
	bool anchored = false;
	for (int s = 0; s < 2; ++s) {
		PyObject* frame = v[JK_FRAME_A + s];
		PyObject* own = v[JK_ANCHOR_A + s];
		if ((frame && own) || (own && v[JK_ANCHOR])) {
			PyErr_Format(PyExc_TypeError, "%s: side %c: give one of frame_%c, anchor_%c and anchor", what, 'a' + s,
			             'a' + s, 'a' + s);
			return -1;
		}
		if (frame) {
			if (frame_of(frame, JK_NAME(JK_FRAME_A + s), frames[s]) < 0) return -1;
			continue;
		}
		if (!own && !v[JK_ANCHOR]) {
			PyErr_Format(PyExc_TypeError, "%s: side %c needs a place: anchor, anchor_%c (world points) or frame_%c",
			             what, 'a' + s, 'a' + s, 'a' + s);
			return -1;
		}
		pbd_vec3 at;
		if (vec3_of(own ? own : v[JK_ANCHOR], JK_NAME(own ? JK_ANCHOR_A + s : JK_ANCHOR), &at) < 0) return -1;
		frames[s]->position = pbd_pose_apply_inverse(pose[s], at);
		anchored = true;
	}
	if (v[JK_ANCHOR] && !anchored) {
		PyErr_Format(PyExc_TypeError, "%s: anchor places neither side: both have a frame", what);
		return -1;
	}
	const bool turns = d->type == PBD_JOINT_HINGE || d->type == PBD_JOINT_PRISMATIC ||
	                   (d->type == PBD_JOINT_BALL && (v[JK_LIMIT] || v[JK_SWING]));
	if (v[JK_AXIS] && !anchored) {
		PyErr_Format(PyExc_TypeError, "%s: axis: only with an anchor (frame_a and frame_b carry their rotations)",
		             what);
		return -1;
	}
	if (anchored && turns && !v[JK_AXIS]) {
		PyErr_Format(PyExc_TypeError, "%s: a %s placed by an anchor needs axis (a world direction)", what,
		             joint_type_names[type]);
		return -1;
	}
	pbd_quat turn = pbd_quat_identity();
	pbd_vec3 axis;
	if (v[JK_AXIS] && (vec3_of(v[JK_AXIS], JK_NAME(JK_AXIS), &axis) < 0 || x_onto(axis, name, &turn) < 0)) return -1;
	for (int s = 0; s < 2; ++s)
		if (!v[JK_FRAME_A + s]) frames[s]->rotation = pbd_quat_mul(pbd_quat_conj(pose[s].rotation), turn);
	double lim[2];
	if (v[JK_LIMIT]) {
		if (doubles_of(v[JK_LIMIT], JK_NAME(JK_LIMIT), 2, lim) < 0) return -1;
		d->lower = (pbd_real)lim[0];
		d->upper = (pbd_real)lim[1];
		d->limit = d->type != PBD_JOINT_DISTANCE;
	} else if (d->type == PBD_JOINT_DISTANCE) {
		/* a rod: the length the two origins start apart */
		const pbd_vec3 pa = pbd_pose_apply(pose[0], d->frame_a.position);
		const pbd_vec3 pb = pbd_pose_apply(pose[1], d->frame_b.position);
		d->lower = d->upper = pbd_v3_length(pbd_v3_sub(pb, pa));
	}
	int motor = 0;
	if ((v[JK_SWING] && real_of(v[JK_SWING], JK_NAME(JK_SWING), &d->swing) < 0) ||
	    (v[JK_COMPLIANCE] && real_of(v[JK_COMPLIANCE], JK_NAME(JK_COMPLIANCE), &d->compliance) < 0) ||
	    (v[JK_MOTOR] && enum_of(v[JK_MOTOR], JK_NAME(JK_MOTOR), motor_names, 3, &motor) < 0) ||
	    (v[JK_MOTOR_TARGET] && real_of(v[JK_MOTOR_TARGET], JK_NAME(JK_MOTOR_TARGET), &d->motor_target) < 0) ||
	    (v[JK_MOTOR_MAX] && real_of(v[JK_MOTOR_MAX], JK_NAME(JK_MOTOR_MAX), &d->motor_max) < 0) ||
	    (v[JK_MOTOR_COMPLIANCE] &&
	     real_of(v[JK_MOTOR_COMPLIANCE], JK_NAME(JK_MOTOR_COMPLIANCE), &d->motor_compliance) < 0) ||
	    (v[JK_BREAK_FORCE] && real_of(v[JK_BREAK_FORCE], JK_NAME(JK_BREAK_FORCE), &d->break_force) < 0) ||
	    (v[JK_BREAK_TORQUE] && real_of(v[JK_BREAK_TORQUE], JK_NAME(JK_BREAK_TORQUE), &d->break_torque) < 0))
		return -1;
#undef JK_NAME
	d->motor = (pbd_joint_motor)motor;
	return 0;
}

/* Adds `n` defs at once (all checked before any is added); the index of the first. */
static PyObject* add_joint_defs(World* self, const pbd_joint_def* defs, uint32_t n, const char* what) {
	uint32_t first = 0;
	if (pbd_world_add_joints(self->world, n, defs, &first) != PBD_OK) return raise_world(self, what);
	return PyLong_FromUnsignedLong(first);
}

static PyObject* World_add_joint(World* self, PyObject* args, PyObject* kwargs) {
	PyObject* type_o;
	if (!PyArg_ParseTuple(args, "O:add_joint", &type_o)) return NULL;
	if (check_world(self) < 0) return NULL;
	PyObject* spec = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
	if (!spec) return NULL;
	if (PyDict_GetItemString(spec, "type")) {
		Py_DECREF(spec);
		PyErr_SetString(PyExc_TypeError, "add_joint: type given twice");
		return NULL;
	}
	pbd_joint_def d;
	const int rc = PyDict_SetItemString(spec, "type", type_o) < 0 ? -1 : joint_def_of(self, spec, "add_joint", &d);
	Py_DECREF(spec);
	return rc < 0 ? NULL : add_joint_defs(self, &d, 1, "add_joint");
}

static PyObject* World_add_joints(World* self, PyObject* args) {
	PyObject* list;
	if (!PyArg_ParseTuple(args, "O:add_joints", &list)) return NULL;
	if (check_world(self) < 0) return NULL;
	PyObject* seq = PySequence_Fast(list, "add_joints: expected a sequence of dicts (add_joint's keywords)");
	if (!seq) return NULL;
	const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	if (n == 0 || n > (Py_ssize_t)UINT32_MAX) {
		Py_DECREF(seq);
		PyErr_SetString(PyExc_ValueError, "add_joints: expected at least one joint");
		return NULL;
	}
	pbd_joint_def* defs = PyMem_Malloc((size_t)n * sizeof *defs);
	if (!defs) {
		Py_DECREF(seq);
		return PyErr_NoMemory();
	}
	PyObject* r = NULL;
	Py_ssize_t i = 0;
	for (; i < n; ++i) {
		PyObject* spec = PySequence_Fast_GET_ITEM(seq, i);
		char what[48];
		snprintf(what, sizeof what, "add_joints: joints[%zd]", i);
		if (!PyDict_Check(spec)) {
			PyErr_Format(PyExc_TypeError, "%s: expected a dict (add_joint's keywords and type)", what);
			break;
		}
		if (joint_def_of(self, spec, what, &defs[i]) < 0) break;
	}
	if (i == n) r = add_joint_defs(self, defs, (uint32_t)n, "add_joints");
	PyMem_Free(defs);
	Py_DECREF(seq);
	return r;
}

static PyObject* World_joint_state(World* self, PyObject* args) {
	py_u32 index = {"joint_state: index", 0};
	if (!PyArg_ParseTuple(args, "O&:joint_state", u32_converter, &index)) return NULL;
	if (check_world(self) < 0) return NULL;
	pbd_joint_state st;
	if (pbd_world_get_joint_state(self->world, index.value, &st) != PBD_OK) return raise_world(self, "joint_state");
	return Py_BuildValue("{s:O,s:d,s:d,s:d,s:N,s:N}", "broken", st.broken ? Py_True : Py_False, "position",
	                     (double)st.position, "error_distance", (double)st.error_distance, "error_angle",
	                     (double)st.error_angle, "force", vec3_tuple(st.force), "torque", vec3_tuple(st.torque));
}

static PyObject* World_joint_events(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	const uint32_t n = pbd_world_get_joint_events(self->world, NULL, 0);
	pbd_joint_event* ev = PyMem_Malloc((n ? n : 1) * sizeof *ev);
	if (!ev) return PyErr_NoMemory();
	pbd_world_get_joint_events(self->world, ev, n);
	PyObject* list = PyList_New(0);
	for (uint32_t k = 0; list && k < n; ++k) {
		PyObject* e = Py_BuildValue("{s:I,s:d,s:d}", "joint", ev[k].joint, "force", (double)ev[k].force, "torque",
		                            (double)ev[k].torque);
		if (!e || PyList_Append(list, e) < 0) Py_CLEAR(list);
		Py_XDECREF(e);
	}
	PyMem_Free(ev);
	return list;
}

/* A body id as (index1, generation), None for the null id. */
static PyObject* body_id_or_none(pbd_body_id id) {
	if (id.index1 == 0) Py_RETURN_NONE;
	return Py_BuildValue("(II)", id.index1, id.generation);
}

static PyObject* contact_pair_dict(const pbd_contact_pair* p) {
	return Py_BuildValue("{s:I,s:I,s:N,s:N,s:N,s:N,s:d}", "collider_a", p->collider_a.index1, "collider_b",
	                     p->collider_b.index1, "body_a", body_id_or_none(p->body_a), "body_b",
	                     body_id_or_none(p->body_b), "point", vec3_tuple(p->point), "normal", vec3_tuple(p->normal),
	                     "impulse", (double)p->impulse);
}

static PyObject* World_contact_pairs(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	const uint32_t n = pbd_world_get_contact_pairs(self->world, NULL, 0);
	pbd_contact_pair* p = PyMem_Malloc((n ? n : 1) * sizeof *p);
	if (!p) return PyErr_NoMemory();
	pbd_world_get_contact_pairs(self->world, p, n);
	PyObject* list = PyList_New(0);
	for (uint32_t k = 0; list && k < n; ++k) {
		PyObject* e = contact_pair_dict(&p[k]);
		if (!e || PyList_Append(list, e) < 0) Py_CLEAR(list);
		Py_XDECREF(e);
	}
	PyMem_Free(p);
	return list;
}

static PyObject* World_contact_events(World* self, PyObject* unused) {
	(void)unused;
	if (check_world(self) < 0) return NULL;
	const uint32_t n = pbd_world_get_contact_events(self->world, NULL, 0);
	pbd_contact_event* ev = PyMem_Malloc((n ? n : 1) * sizeof *ev);
	if (!ev) return PyErr_NoMemory();
	pbd_world_get_contact_events(self->world, ev, n);
	PyObject* list = PyList_New(0);
	for (uint32_t k = 0; list && k < n; ++k) {
		PyObject* e = contact_pair_dict(&ev[k].pair);
		if (!e || PyDict_SetItemString(e, "begin", ev[k].begin ? Py_True : Py_False) < 0 || PyList_Append(list, e) < 0)
			Py_CLEAR(list);
		Py_XDECREF(e);
	}
	PyMem_Free(ev);
	return list;
}

static PyObject* World_set_joint_motor(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"index", "motor", "target", "max", "compliance", NULL};
	py_u32 index = {"set_joint_motor: index", 0};
	PyObject* motor_o;
	double target = 0, max = 0, compliance = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O|ddd:set_joint_motor", keywords, u32_converter, &index, &motor_o,
	                                 &target, &max, &compliance))
		return NULL;
	if (check_world(self) < 0) return NULL;
	int motor;
	if (enum_of(motor_o, "set_joint_motor: motor", motor_names, 3, &motor) < 0) return NULL;
	if (pbd_world_set_joint_motor(self->world, index.value, (pbd_joint_motor)motor, (pbd_real)target, (pbd_real)max,
	                              (pbd_real)compliance) != PBD_OK)
		return raise_world(self, "set_joint_motor");
	Py_RETURN_NONE;
}

static PyObject* World_set_joint_broken(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"index", "broken", NULL};
	py_u32 index = {"set_joint_broken: index", 0};
	int broken = 1;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|p:set_joint_broken", keywords, u32_converter, &index, &broken))
		return NULL;
	if (check_world(self) < 0) return NULL;
	if (pbd_world_set_joint_broken(self->world, index.value, broken != 0) != PBD_OK)
		return raise_world(self, "set_joint_broken");
	Py_RETURN_NONE;
}

static PyObject* World_get_joint_count(World* self, void* closure) {
	(void)closure;
	if (check_world(self) < 0) return NULL;
	return PyLong_FromUnsignedLong(pbd_world_joint_count(self->world));
}

/* The scene's joints in file order, each its name and index in the world; [] for a world built in code. */
static PyObject* World_get_joints(World* self, void* closure) {
	(void)closure;
	PyObject* list = PyList_New(0);
	for (uint32_t i = 0; list && self->scene.world && i < self->scene.joint_count; ++i) {
		PyObject* d =
		    Py_BuildValue("{s:s,s:I}", "name", self->scene.joints[i].name, "index", self->scene.joints[i].index);
		if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
		Py_XDECREF(d);
	}
	return list;
}

/* ---- settings after creation --------------------------------------------------------------- */

static PyObject* World_configure(World* self, PyObject* args, PyObject* kwargs) {
	if (PyTuple_GET_SIZE(args) != 0) {
		PyErr_SetString(PyExc_TypeError, "configure() takes keywords only");
		return NULL;
	}
	if (check_world(self) < 0) return NULL;
	pbd_world_def d = pbd_world_get_def(self->world);
	if (def_apply(&d, kwargs) < 0) return NULL;
	pbd_world* w = self->world;
	if (pbd_world_set_dt(w, d.dt) != PBD_OK || pbd_world_set_substeps(w, d.substeps) != PBD_OK ||
	    pbd_world_set_iterations(w, d.iterations) != PBD_OK || pbd_world_set_gravity(w, d.gravity) != PBD_OK ||
	    pbd_world_set_damping(w, d.damping) != PBD_OK || pbd_world_set_solver(w, d.solver) != PBD_OK ||
	    pbd_world_set_formulation(w, d.formulation) != PBD_OK || pbd_world_set_method(w, d.method) != PBD_OK ||
	    pbd_world_set_threads(w, d.threads) != PBD_OK || pbd_world_set_profile(w, d.profile) != PBD_OK ||
	    pbd_world_set_wind(w, d.wind, d.gust_strength, d.gust_frequency) != PBD_OK)
		return raise_world(self, "configure");
	Py_RETURN_NONE;
}

static PyObject* World_set_distance_material(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"first", "count", "stiffness", "compliance", NULL};
	py_u32 first = {"set_distance_material: first", 0}, count = {"set_distance_material: count", 0};
	double stiffness = 1, compliance = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O&|dd:set_distance_material", keywords, u32_converter, &first,
	                                 u32_converter, &count, &stiffness, &compliance))
		return NULL;
	if (check_world(self) < 0) return NULL;
	pbd_edge_material m = {true, (pbd_real)stiffness, (pbd_real)stiffness, (pbd_real)compliance, (pbd_real)compliance};
	if (pbd_world_set_distance_material(self->world, first.value, count.value, &m) != PBD_OK)
		return raise_world(self, "set_distance_material");
	Py_RETURN_NONE;
}

#ifdef PBD_PY_HAVE_RENDER
/* One image of the current state, framed automatically, in a context made for this call. */
static PyObject* World_render(World* self, PyObject* args, PyObject* kwargs) {
	static char* keywords[] = {"width", "height", NULL};
	py_int width_arg = {"render: width", 640}, height_arg = {"render: height", 360};
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O&O&:render", keywords, int_converter, &width_arg, int_converter,
	                                 &height_arg))
		return NULL;
	const int width = width_arg.value, height = height_arg.value;
	if (check_world(self) < 0) return NULL;
	if (width < 16 || height < 16 || width > 8192 || height > 8192) {
		PyErr_SetString(PyExc_ValueError, "render: width and height must be in [16, 8192]");
		return NULL;
	}
	npy_intp dims[3] = {height, width, 3};
	PyObject* img = PyArray_ZEROS(3, dims, NPY_UINT8, 0);
	if (!img) return NULL;
	pbd_render_scene sc = {self->world, self->scene.world ? self->scene.colliders : self->colliders,
	                       self->scene.world ? self->scene.collider_count : self->collider_count, NULL, 0};
	pbd_error err = {{0}};
	bool ok = false;
	pbd_render_offscreen* off = NULL;
	pbd_renderer* r = NULL;
	Py_BEGIN_ALLOW_THREADS;
	if (pbd_render_offscreen_create(width, height, 4, &off, &err) && pbd_renderer_create(&r, &err)) {
		pbd_render_camera cam = pbd_render_camera_frame(&sc, (float)width / (float)height);
		pbd_render_style style = pbd_render_style_default();
		if (pbd_renderer_update(r, &sc)) {
			pbd_render_offscreen_bind(off);
			ok = pbd_renderer_draw(r, &cam, &style, width, height) &&
			     pbd_render_offscreen_read(off, PyArray_DATA((PyArrayObject*)img), &err);
		}
		if (!ok && !err.message[0]) snprintf(err.message, sizeof err.message, "%s", pbd_renderer_last_error(r));
	}
	if (r) pbd_renderer_destroy(r);
	if (off) pbd_render_offscreen_destroy(off);
	Py_END_ALLOW_THREADS;
	if (!ok) {
		Py_DECREF(img);
		PyErr_Format(pbd_py_error, "render: %s", err.message);
		return NULL;
	}
	return img;
}
#endif

/* ---- module -------------------------------------------------------------------------------- */

static PyMethodDef World_methods[] = {
    {"from_builtin", (PyCFunction)World_from_builtin, METH_VARARGS | METH_CLASS,
     "from_builtin(name): a world from a built-in scene (pbd.builtin_scenes())"},
    {"from_file", (PyCFunction)World_from_file, METH_VARARGS | METH_CLASS,
     "from_file(path): a world from a scene file (docs/scene-format.md)"},
    {"from_json", (PyCFunction)(void (*)(void))World_from_json, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_json(text, source='<string>', base_dir=None): a world from the text of a scene"},
    {"step", (PyCFunction)(void (*)(void))World_step, METH_VARARGS | METH_KEYWORDS,
     "step(frames=1): advance by frames steps of dt (a scene's keyframed colliders move first)"},
    {"set_positions", (PyCFunction)(void (*)(void))World_set_positions, METH_VARARGS | METH_KEYWORDS,
     "set_positions(values, first=0): copy an (n, 3) array into particles first .. first + n - 1"},
    {"set_velocities", (PyCFunction)(void (*)(void))World_set_velocities, METH_VARARGS | METH_KEYWORDS,
     "set_velocities(values, first=0): likewise for velocities (pinned particles keep 0)"},
    {"add_particles", (PyCFunction)(void (*)(void))World_add_particles, METH_VARARGS | METH_KEYWORDS,
     "add_particles(positions, velocities=None, inv_masses=None (1 kg each)) -> index of the first"},
    {"add_distances", (PyCFunction)(void (*)(void))World_add_distances, METH_VARARGS | METH_KEYWORDS,
     "add_distances(pairs, rest=None, stiffness=1, compliance=0) -> index of the first"},
    {"add_cloth", (PyCFunction)(void (*)(void))World_add_cloth, METH_VARARGS | METH_KEYWORDS,
     "add_cloth(nx, ny, size=(1, 1), origin=(0, 0, 0), axis_u=(1, 0, 0), axis_v=(0, 0, 1), mass=0.1, pinned=None, "
     "diagonals=2, bend=True, stiffness=1, compliance=0) -> dict of its ranges"},
    {"add_collider", (PyCFunction)(void (*)(void))World_add_collider, METH_VARARGS | METH_KEYWORDS,
     "add_collider(shape, normal=, offset=, center=, radius=, half_extents=, half_height=, rotation=, margin=0, "
     "friction=None, body=None, density=None) -> the collider's index1"},
    {"add_body", (PyCFunction)(void (*)(void))World_add_body, METH_VARARGS | METH_KEYWORDS,
     "add_body(type, position=, rotation=, velocity=, angular_velocity=, mass=None, center=None, inertia=None, "
     "gravity_scale=1, linear_damping=0, angular_damping=0) -> Body"},
    {"add_joint", (PyCFunction)(void (*)(void))World_add_joint, METH_VARARGS | METH_KEYWORDS,
     "add_joint(type, a=None, b=None, anchor=, anchor_a=, anchor_b=, axis=, frame_a=, frame_b=, compliance=0, "
     "limit=None, swing=None, motor=None, motor_target=0, motor_max=0, motor_compliance=0, break_force=0, "
     "break_torque=0) -> the joint's index"},
    {"add_joints", (PyCFunction)World_add_joints, METH_VARARGS,
     "add_joints(joints): a sequence of dicts of add_joint's keywords and type, all checked before any is added "
     "-> the first one's index"},
    {"joint_state", (PyCFunction)World_joint_state, METH_VARARGS,
     "joint_state(index): broken, position, error_distance, error_angle, force, torque after the last step"},
    {"joint_events", (PyCFunction)World_joint_events, METH_NOARGS,
     "joint_events(): the joints that broke during the last step, as dicts of joint, force and torque"},
    {"contact_events", (PyCFunction)World_contact_events, METH_NOARGS,
     "contact_events(): the bodies' pairs of colliders that began (begin True) or stopped touching during the last "
     "step, as dicts of begin, collider_a, collider_b, body_a, body_b, point, normal and impulse (N s)"},
    {"contact_pairs", (PyCFunction)World_contact_pairs, METH_NOARGS,
     "contact_pairs(): the bodies' pairs of colliders touching during the last step, as dicts of collider_a, "
     "collider_b, body_a, body_b, point, normal and impulse (N s over the step)"},
    {"set_joint_motor", (PyCFunction)(void (*)(void))World_set_joint_motor, METH_VARARGS | METH_KEYWORDS,
     "set_joint_motor(index, motor, target=0, max=0, compliance=0): motor 'off', 'velocity' or 'position'"},
    {"set_joint_broken", (PyCFunction)(void (*)(void))World_set_joint_broken, METH_VARARGS | METH_KEYWORDS,
     "set_joint_broken(index, broken=True): break a joint now, or mend it"},
    {"configure", (PyCFunction)(void (*)(void))World_configure, METH_VARARGS | METH_KEYWORDS,
     "configure(**settings): change settings of a live world (as World() takes them)"},
    {"set_distance_material", (PyCFunction)(void (*)(void))World_set_distance_material, METH_VARARGS | METH_KEYWORDS,
     "set_distance_material(first, count, stiffness=1, compliance=0)"},
    {"hash", (PyCFunction)World_hash, METH_NOARGS, "hash(): pbd_world_hash, equal for bit-identical states"},
    {"stats", (PyCFunction)World_stats, METH_NOARGS, "stats(): energies, momentum, strains, contacts, per family"},
    {"_contacts_raw", (PyCFunction)World_contacts_raw, METH_NOARGS, NULL},
    {"take_warnings", (PyCFunction)World_take_warnings, METH_NOARGS,
     "take_warnings(): the library's log lines since the last call"},
    {"close", (PyCFunction)World_close, METH_NOARGS, "close(): release the world now"},
#ifdef PBD_PY_HAVE_RENDER
    {"render", (PyCFunction)(void (*)(void))World_render, METH_VARARGS | METH_KEYWORDS,
     "render(width=640, height=360): an (height, width, 3) uint8 image of the current state"},
#endif
    {NULL, NULL, 0, NULL}};

static PyGetSetDef World_getset[] = {
    {"positions", (getter)World_positions, NULL, "(n, 3) read-only view of the positions", NULL},
    {"velocities", (getter)World_velocities, NULL, "(n, 3) read-only view of the velocities", NULL},
    {"inv_masses", (getter)World_inv_masses, NULL, "(n,) read-only view of the inverse masses (0 = pinned)", NULL},
    {"triangles", (getter)World_triangles, NULL, "(m, 3) read-only view of the triangles' particle indices", NULL},
    {"particle_count", (getter)World_get_particle_count, NULL, "particles in the world", NULL},
    {"time", (getter)World_get_time, NULL, "simulated seconds", NULL},
    {"dt", (getter)World_get_dt, NULL, "seconds per step", NULL},
    {"name", (getter)World_get_name, NULL, "the scene's name (None for a world built in code)", NULL},
    {"frames", (getter)World_get_frames, NULL, "the scene's frame count (None for a world built in code)", NULL},
    {"closed", (getter)World_get_closed, NULL, "True after close()", NULL},
    {"bodies", (getter)World_get_bodies, NULL, "the live rigid bodies, in slot order", NULL},
    {"body_count", (getter)World_get_body_count, NULL, "live rigid bodies", NULL},
    {"body_poses", (getter)World_body_poses, NULL,
     "(slots, 7) read-only view of every body slot's frame: position x y z, rotation x y z w; take it again "
     "after add_body",
     NULL},
    {"joint_count", (getter)World_get_joint_count, NULL, "joints in the world, broken ones included", NULL},
    {"joints", (getter)World_get_joints, NULL,
     "the scene's joints: dicts of name and index (for joint_state); [] for a world built in code", NULL},
    {"objects", (getter)World_get_objects, NULL,
     "the scene's objects: dicts of name, type and their particle, distance and triangle ranges", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject WorldType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbd._pbd.World",
    .tp_basicsize = sizeof(World),
    .tp_dealloc = (destructor)World_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A pbd world: World(**settings) for one built in code, or World.from_builtin / from_file / "
              "from_json for a scene",
    .tp_methods = World_methods,
    .tp_getset = World_getset,
    .tp_init = (initproc)World_init,
    .tp_new = World_new,
    .tp_weaklistoffset = offsetof(World, weakrefs),
};

static PyObject* builtin_scenes(PyObject* module, PyObject* unused) {
	(void)module;
	(void)unused;
	size_t n = pbd_scene_builtin_count();
	PyObject* list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; ++i) {
		const pbd_scene_builtin* b = pbd_scene_builtin_at(i);
		char description[256];
		pbd_scene_builtin_description(b, description, sizeof description);
		PyObject* t = Py_BuildValue("(ss)", b->name, description);
		if (!t)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

static PyObject* builtin_scene_text(PyObject* module, PyObject* args) {
	(void)module;
	const char* name;
	if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
	const pbd_scene_builtin* b = pbd_scene_builtin_find(name);
	if (!b) {
		PyErr_Format(pbd_py_error, "no built-in scene named '%s' (pbd.builtin_scenes() lists them)", name);
		return NULL;
	}
	return PyUnicode_DecodeUTF8((const char*)b->json, (Py_ssize_t)b->size, "strict");
}

static PyMethodDef module_methods[] = {
    {"builtin_scenes", builtin_scenes, METH_NOARGS, "[(name, description)] of the built-in scenes"},
    {"builtin_scene_text", builtin_scene_text, METH_VARARGS, "the JSON text of a built-in scene"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_pbd", "pbd's C core (use the pbd package)", -1,
                                        module_methods};

PyMODINIT_FUNC PyInit__pbd(void);

PyMODINIT_FUNC PyInit__pbd(void) {
	import_array();
	if (PyType_Ready(&WorldType) < 0 || PyType_Ready(&BodyType) < 0) return NULL;
	PyObject* m = PyModule_Create(&module_def);
	if (!m) return NULL;
	pbd_py_error = PyErr_NewExceptionWithDoc("pbd.Error", "A failure reported by the pbd library, with its message",
	                                         PyExc_Exception, NULL);
	Py_INCREF(&WorldType);
	Py_INCREF(&BodyType);
	if (!pbd_py_error || PyModule_AddObject(m, "Error", pbd_py_error) < 0 ||
	    PyModule_AddObject(m, "World", (PyObject*)&WorldType) < 0 ||
	    PyModule_AddObject(m, "Body", (PyObject*)&BodyType) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	Py_INCREF(pbd_py_error);
#ifdef PBD_DOUBLE
	const char* precision = "double";
#else
	const char* precision = "float";
#endif
#ifdef PBD_PY_HAVE_RENDER
	const int have_render = 1;
#else
	const int have_render = 0;
#endif
	PyObject* layout = Py_BuildValue(
	    "{s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "itemsize", (Py_ssize_t)sizeof(pbd_contact), "particle",
	    (Py_ssize_t)offsetof(pbd_contact, particle), "collider", (Py_ssize_t)offsetof(pbd_contact, collider_index1),
	    "point", (Py_ssize_t)offsetof(pbd_contact, point), "normal", (Py_ssize_t)offsetof(pbd_contact, normal),
	    "distance", (Py_ssize_t)offsetof(pbd_contact, distance), "normal_correction",
	    (Py_ssize_t)offsetof(pbd_contact, normal_correction));
	if (PyModule_AddStringConstant(m, "version", pbd_version()) < 0 ||
	    PyModule_AddStringConstant(m, "precision", precision) < 0 ||
	    PyModule_AddIntConstant(m, "have_render", have_render) < 0 || !layout ||
	    PyModule_AddObject(m, "_contact_layout", layout) < 0) {
		Py_XDECREF(layout);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
