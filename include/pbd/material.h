/* pbd: physical cloth materials in SI units and their mapping to spring constants, XPBD
 * compliance and PBD stiffness. Pure functions: no world is needed. docs/methods.md, "Physical
 * materials", derives every formula and gives the source of every preset value. */
#ifndef PBD_MATERIAL_H
#define PBD_MATERIAL_H

#include "pbd/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A cloth (or any thin sheet) as a linear elastic membrane and plate. The moduli are per unit
/// width, so a sheet of thickness t and Young's modulus E has stretch = E t; they do not depend
/// on the mesh. A modulus may be +infinity: the sheet is then inextensible, unshearable or
/// unbendable and the mappings give an infinite spring constant (compliance 0, PBD stiffness 1).
///
/// There is no Poisson ratio: every mapping here is a network of central springs, whose Poisson
/// ratio follows from the other moduli (the Cauchy relation) and cannot be set. There is no
/// damping: the measured losses of cloth are rate-independent friction (hysteresis), not viscous
/// damping, and no constraint of the library has a damping term to receive one.
struct pbd_cloth_material {
	pbd_real density; ///< area density, kg/m^2: finite and > 0
	pbd_real stretch; ///< stretch modulus, N/m: uniaxial tension per unit width per unit strain (E t); > 0
	pbd_real shear;   ///< in-plane shear modulus, N/m: shear force per unit width per radian (G t); >= 0
	pbd_real bending; ///< flexural rigidity, N m: bending moment per unit width per unit curvature; >= 0
};

/// PBD_OK when every field is in its range; otherwise PBD_ERR_NOT_FINITE (a NaN, or an infinite
/// density) or PBD_ERR_OUT_OF_RANGE, with the offending field named in err. NULL material:
/// PBD_ERR_INVALID_ARGUMENT.
PBD_API pbd_status pbd_cloth_material_check(const pbd_cloth_material* material, pbd_error* err);

/// A measured material by name ("cotton", "cotton_polyester", "denim", "polyester", "rubber").
/// Unknown name: PBD_ERR_INVALID_ARGUMENT, and err lists the known names.
PBD_API pbd_status pbd_cloth_material_preset(const char* name, pbd_cloth_material* out, pbd_error* err);

/// Number of presets, and the name of preset `index` (NULL past the end).
PBD_API uint32_t pbd_cloth_material_preset_count(void);
PBD_API const char* pbd_cloth_material_preset_name(uint32_t index);

/* ---- spring constants --------------------------------------------------------------------
 * Every function below returns a spring constant k >= 0 (N/m for an edge, N m per radian^2 for a
 * hinge) and never NaN. k is the Hooke constant of a force-based spring, f = k (|x_a - x_b| - L);
 * pbd_material_compliance and pbd_material_pbd_stiffness turn it into the XPBD and PBD
 * parameters. A NULL material, a material that fails pbd_cloth_material_check, or a length or
 * area that is negative, NaN or infinite gives 0 ("no spring"); a result beyond the scalar's range
 * is +infinity. */

/// Spring constants of the edges of a rectangular grid (pbd_mesh_grid) whose cells are du x dv
/// metres, for `diagonals` shear edges per cell (0, 1 or 2). The values are for an edge with
/// cells on both sides; an edge along the border of the grid carries half the material and
/// takes half the constant. They make the spring network carry the material's stretch modulus
/// in uniaxial tension along u and along v, and its shear modulus in shear:
/// - two diagonals: shear = G (du^2 + dv^2) / (2 du dv) each; the diagonals also carry part of
///   a tension, so structural_u = (C - G du^2/dv^2) dv/du with C = (Y + sqrt(Y^2 + 4 G^2)) / 2
///   (and likewise along v), clamped at 0 for cells so elongated that the diagonals alone are
///   stiffer than the material (the grid is then too stiff along that axis);
/// - one diagonal: structural_u = Y dv/du, structural_v = Y du/dv, shear = G (du^2 + dv^2) /
///   (du dv); exact in tension along the axes, approximate in shear (docs/methods.md);
/// - no diagonal: structural as for one, shear 0 (the grid has no shear stiffness).
/// Flexion (bend) edges: pbd_cloth_flexion_stiffness. PBD_ERR_OUT_OF_RANGE for sizes that are
/// not > 0 or a diagonal count outside 0..2, PBD_ERR_NOT_FINITE for a NaN or infinite size; the
/// material is checked as by pbd_cloth_material_check. On failure *out is zeroed.
typedef struct pbd_grid_springs {
	pbd_real structural_u; ///< N/m, an edge along u (length du)
	pbd_real structural_v; ///< N/m, an edge along v (length dv)
	pbd_real shear;        ///< N/m, one diagonal (length sqrt(du^2 + dv^2)); 0 without diagonals
} pbd_grid_springs;

PBD_API pbd_status pbd_cloth_grid_springs(const pbd_cloth_material* material, pbd_real du, pbd_real dv, int diagonals,
                                          pbd_grid_springs* out, pbd_error* err);

/// Spring constant of an edge of a general triangle mesh: k = stretch * area / rest^2, with
/// `area` the summed area of the triangles that share the edge (one triangle on the border).
/// The area-over-length-squared rule is van Gelder 1998's; with this constant an equilateral
/// mesh is exactly an isotropic membrane of stretch modulus Y and Poisson ratio 1/3. Such a mesh
/// has no separate shear modulus: the material's shear is not used. rest 0 with area > 0 gives
/// +infinity; area 0 gives 0.
PBD_API pbd_real pbd_cloth_mesh_edge_stiffness(const pbd_cloth_material* material, pbd_real rest, pbd_real area);

/// Stiffness of a dihedral-angle (hinge) constraint on an interior edge of length `length`
/// between triangles of areas area1 and area2, for the energy k (theta - theta0)^2 / 2:
/// k = B length^2 / (area1 + area2). With it, bending a mesh into a cylinder stores the plate
/// energy B kappa^2 / 2 per unit area on an equilateral mesh in any direction and on a grid bent
/// about u or v, where B is measured (tests/model/test_material.c; a grid bent about its diagonal
/// stores three times as much). The discrete-shells constant 3 B L^2 / (A1 + A2) is exact for a
/// sphere on an equilateral mesh instead and makes every cylinder three times too stiff; see
/// docs/methods.md. A zero length or total area gives 0 (no hinge).
PBD_API pbd_real pbd_cloth_hinge_stiffness(const pbd_cloth_material* material, pbd_real length, pbd_real area1,
                                           pbd_real area2);

/// Spring constant of a flexion (bend) edge of a grid, joining two vertices `spacing` apart
/// along a row of structural edges (the edge is 2 spacing long), in a row of width `width` (the
/// cell size across the row; half of it on the border rows). A flat row does not stretch such a
/// spring to first order, so it resists bending only through its energy at a fold: k makes its
/// energy equal to the plate's when the middle vertex is kinked by `angle` radians (0 < angle <=
/// pi), k = B width angle^2 / (16 spacing^3 sin^4(angle / 4)). Folds sharper than `angle` are
/// stiffer than the plate, gentler ones softer (the energy grows as angle^4, not angle^2): at half
/// the angle it stores a quarter of the plate's energy. An angle outside (0, pi] or a zero spacing
/// or width gives 0; an angle so small that angle / 4 underflows gives +infinity.
PBD_API pbd_real pbd_cloth_flexion_stiffness(const pbd_cloth_material* material, pbd_real spacing, pbd_real width,
                                             pbd_real angle);

/* ---- formulations ------------------------------------------------------------------------ */

/// XPBD compliance alpha = 1 / k (m/N for an edge). k = +infinity (rigid) gives 0, k = 0 gives
/// +infinity (no spring: leave the constraint out, a world refuses an infinite compliance); a
/// negative or NaN k also gives +infinity.
PBD_API pbd_real pbd_material_compliance(pbd_real k);

/// The PBD stiffness in [0, 1] that moves a constraint as one XPBD projection of spring constant
/// k does, in a substep of h seconds: s = W / (W + alpha / h^2) = W h^2 k / (1 + W h^2 k), where
/// W = sum_i w_i |grad_i C|^2 is the constraint's generalised inverse mass (w_a + w_b for a
/// distance constraint). Set it as the constraint's stiffness: the world already corrects it for
/// the iteration count. It depends on W and h, so it holds for one mass and substep length
/// only; XPBD's compliance does not. k = +infinity gives 1; k, W or h of 0 gives 0; a negative or
/// NaN argument gives 0; W or h = +infinity with k > 0 gives 1.
PBD_API pbd_real pbd_material_pbd_stiffness(pbd_real k, pbd_real inv_mass_sum, pbd_real h);

#ifdef __cplusplus
}
#endif

#endif
