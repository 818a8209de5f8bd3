/* GLSL 3.30 sources of the renderer, one program per kind of thing drawn. Lighting happens in
 * view space with lights fixed to the camera (a key light above left, a fill light right, and
 * ambient), so whatever way the camera looks, what it sees is lit. Colors arrive as sRGB, are
 * lit in linear space and leave as sRGB. */
#ifndef PBD_RENDER_SHADERS_H
#define PBD_RENDER_SHADERS_H

#define RENDER_GLSL_LIGHTING                                                                                           \
	"vec3 to_linear(vec3 c) { return pow(max(c, vec3(0.0)), vec3(2.2)); }\n"                                           \
	"vec3 to_srgb(vec3 c) { return pow(clamp(c, 0.0, 1.0), vec3(1.0 / 2.2)); }\n"                                      \
	"vec3 light(vec3 base, vec3 n, vec3 view_pos, float spec, float shininess) {\n"                                    \
	"    vec3 v = normalize(-view_pos);\n"                                                                             \
	"    vec3 key = normalize(vec3(-0.50, 0.60, 0.62));\n"                                                             \
	"    vec3 fill = normalize(vec3(0.70, -0.10, 0.70));\n"                                                            \
	"    float d = 0.72 * max(dot(n, key), 0.0) + 0.25 * max(dot(n, fill), 0.0);\n"                                    \
	"    float up = 0.5 + 0.5 * n.y;\n"                                                                                \
	"    float ambient = mix(0.14, 0.24, up);\n"                                                                       \
	"    float s = spec * pow(max(dot(n, normalize(key + v)), 0.0), shininess);\n"                                     \
	"    return base * (ambient + d) + vec3(s);\n"                                                                     \
	"}\n"

/* ---- background: a vertical gradient from one triangle that covers the viewport ---- */
static const char* const render_bg_vs =
    "#version 330 core\n"
    "void main() {\n"
    "    vec2 p = vec2(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0);\n"
    "    gl_Position = vec4(p, 1.0, 1.0);\n"
    "}\n";
static const char* const render_bg_fs = "#version 330 core\n"
                                        "uniform vec3 u_top, u_bottom;\n"
                                        "uniform float u_height;\n"
                                        "out vec4 o_color;\n"
                                        "void main() {\n"
                                        "    float t = clamp(gl_FragCoord.y / u_height, 0.0, 1.0);\n"
                                        "    o_color = vec4(mix(u_bottom, u_top, t), 1.0);\n"
                                        "}\n";

/* ---- surfaces: cloth (two-sided), colliders (solid), planes (checkered, fading out) ----
 * A capsule is a unit sphere split at its equator: a_shift (-1 or +1 on its vertices, 0 where the
 * array is not enabled) moves each half along y by u_shift, its half height over its radius, before
 * the model matrix scales it by the radius. */
static const char* const render_surface_vs = "#version 330 core\n"
                                             "layout(location = 0) in vec3 a_pos;\n"
                                             "layout(location = 1) in vec3 a_normal;\n"
                                             "layout(location = 2) in float a_shift;\n"
                                             "uniform mat4 u_model, u_view, u_proj;\n"
                                             "uniform float u_shift;\n"
                                             "out vec3 v_view_pos;\n"
                                             "out vec3 v_view_normal;\n"
                                             "out vec3 v_world;\n"
                                             "void main() {\n"
                                             "    vec3 p = a_pos + vec3(0.0, a_shift * u_shift, 0.0);\n"
                                             "    vec4 w = u_model * vec4(p, 1.0);\n"
                                             "    vec4 v = u_view * w;\n"
                                             "    v_world = w.xyz;\n"
                                             "    v_view_pos = v.xyz;\n"
                                             "    v_view_normal = mat3(u_view) * (mat3(u_model) * a_normal);\n"
                                             "    gl_Position = u_proj * v;\n"
                                             "}\n";
static const char* const render_surface_fs =
    "#version 330 core\n" RENDER_GLSL_LIGHTING "in vec3 v_view_pos;\n"
    "in vec3 v_view_normal;\n"
    "in vec3 v_world;\n"
    "uniform int u_mode;\n" /* 0 cloth, 1 solid, 2 checkered plane */
    "uniform vec3 u_front, u_back;\n"
    "uniform vec3 u_plane_origin, u_plane_u, u_plane_v, u_plane_center;\n"
    "uniform float u_plane_tile, u_plane_half;\n"
    "uniform float u_alpha;\n" /* 1, or less for a translucent trigger */
    "out vec4 o_color;\n"
    "void main() {\n"
    /* The face normal, towards the viewer, where the smooth one is missing. */
    "    vec3 face = normalize(cross(dFdx(v_view_pos), dFdy(v_view_pos)));\n"
    "    if (dot(face, v_view_pos) > 0.0) face = -face;\n"
    "    vec3 n = face;\n"
    "    if (dot(v_view_normal, v_view_normal) > 1e-12) {\n"
    "        n = normalize(v_view_normal);\n"
    "        if (u_mode == 0 && !gl_FrontFacing) n = -n;\n" /* normals are the front side's */
    "    }\n"
    /* On a tight fold the interpolated normal can turn away from a face that is seen: keep it
     * at most side-on, or the visible side would go black. */
    "    vec3 v = normalize(-v_view_pos);\n"
    "    float nv = dot(n, v);\n"
    "    if (nv < 0.0) n = normalize(n - 1.05 * nv * v);\n"
    "    vec3 base = to_linear(u_mode == 0 && !gl_FrontFacing ? u_back : u_front);\n"
    "    float alpha = 1.0;\n"
    "    float spec = u_mode == 0 ? 0.04 : 0.25;\n"
    "    float shininess = u_mode == 0 ? 16.0 : 48.0;\n"
    "    if (u_mode == 2) {\n"
    "        vec3 r = v_world - u_plane_origin;\n"
    "        vec2 q = vec2(dot(r, u_plane_u), dot(r, u_plane_v)) / u_plane_tile;\n"
    "        float odd = mod(floor(q.x) + floor(q.y), 2.0);\n"
    "        base *= mix(1.0, 0.72, odd);\n"
    "        vec3 c = v_world - u_plane_center;\n"
    "        float edge = max(abs(dot(c, u_plane_u)), abs(dot(c, u_plane_v))) / u_plane_half;\n"
    "        alpha = 1.0 - smoothstep(0.55, 1.0, edge);\n"
    "        spec = 0.05;\n"
    "    }\n"
    "    o_color = vec4(to_srgb(light(base, n, v_view_pos, spec, shininess)), alpha * u_alpha);\n"
    "}\n";

/* ---- lines: screen-facing ribbons from a geometry shader (core profiles have no wide
 * lines). World-width ribbons are shaded as tubes; pixel-width ones carry the strain color. */
static const char* const render_line_vs = "#version 330 core\n"
                                          "layout(location = 0) in vec3 a_pos;\n"
                                          "uniform mat4 u_view;\n"
                                          "out vec3 g_view;\n"
                                          "void main() {\n"
                                          "    g_view = (u_view * vec4(a_pos, 1.0)).xyz;\n"
                                          "    gl_Position = vec4(g_view, 1.0);\n"
                                          "}\n";
static const char* const render_line_gs =
    "#version 330 core\n"
    "layout(lines) in;\n"
    "layout(triangle_strip, max_vertices = 4) out;\n"
    "in vec3 g_view[];\n"
    "uniform mat4 u_proj;\n"
    "uniform vec2 u_viewport;\n"
    "uniform float u_near;\n"
    "uniform float u_radius_world;\n" /* > 0: ribbon half-width in world units */
    "uniform float u_radius_px;\n"    /* otherwise in pixels */
    "uniform float u_depth_bias;\n"
    "uniform int u_strain;\n"
    "uniform samplerBuffer u_rest;\n"
    "uniform float u_strain_red;\n"
    "uniform vec3 u_color;\n"
    "out vec3 f_color;\n"
    "out float f_across;\n"
    "flat out vec2 f_side;\n"
    "out vec3 f_view;\n"
    "void emit(vec4 c, vec2 s, vec3 view, float across) {\n"
    "    gl_Position = vec4(s / (0.5 * u_viewport) * c.w, c.z - u_depth_bias * c.w, c.w);\n"
    "    f_across = across;\n"
    "    f_view = view;\n"
    "    EmitVertex();\n"
    "}\n"
    "void main() {\n"
    "    vec3 a = g_view[0], b = g_view[1];\n"
    "    float zn = -u_near;\n"
    "    if (a.z > zn && b.z > zn) return;\n"
    "    if (a.z > zn) a = mix(a, b, (a.z - zn) / (a.z - b.z));\n"
    "    if (b.z > zn) b = mix(b, a, (b.z - zn) / (b.z - a.z));\n"
    "    vec3 color = u_color;\n"
    "    if (u_strain != 0) {\n"
    "        float rest = texelFetch(u_rest, gl_PrimitiveIDIn).r;\n"
    "        float len = length(g_view[1] - g_view[0]);\n"
    "        float strain = rest > 0.0 ? abs(len - rest) / rest : 0.0;\n"
    "        color = mix(vec3(0.15, 0.35, 1.0), vec3(1.0, 0.12, 0.08), clamp(strain / u_strain_red, 0.0, 1.0));\n"
    "    }\n"
    "    f_color = color;\n"
    "    vec4 ca = u_proj * vec4(a, 1.0), cb = u_proj * vec4(b, 1.0);\n"
    "    vec2 sa = ca.xy / ca.w * 0.5 * u_viewport, sb = cb.xy / cb.w * 0.5 * u_viewport;\n"
    "    vec2 d = sb - sa;\n"
    "    float len = length(d);\n"
    "    vec2 dir = len > 1e-4 ? d / len : vec2(1.0, 0.0);\n"
    "    vec2 side = vec2(-dir.y, dir.x);\n"
    "    float k = u_proj[1][1] * 0.5 * u_viewport.y;\n"
    "    float ra = u_radius_world > 0.0 ? u_radius_world * k / ca.w : u_radius_px;\n"
    "    float rb = u_radius_world > 0.0 ? u_radius_world * k / cb.w : u_radius_px;\n"
    "    f_side = side;\n"
    "    emit(ca, sa + side * ra, a, 1.0);\n"
    "    emit(ca, sa - side * ra, a, -1.0);\n"
    "    emit(cb, sb + side * rb, b, 1.0);\n"
    "    emit(cb, sb - side * rb, b, -1.0);\n"
    "    EndPrimitive();\n"
    "}\n";
static const char* const render_line_fs =
    "#version 330 core\n" RENDER_GLSL_LIGHTING "in vec3 f_color;\n"
    "in float f_across;\n"
    "flat in vec2 f_side;\n"
    "in vec3 f_view;\n"
    "uniform int u_shaded;\n"
    "out vec4 o_color;\n"
    "void main() {\n"
    "    if (u_shaded == 0) { o_color = vec4(f_color, 1.0); return; }\n"
    /* Across the ribbon the normal of a tube turns from one side to the other. */
    "    float a = clamp(f_across, -1.0, 1.0);\n"
    "    vec3 n = normalize(vec3(f_side * a, sqrt(max(1.0 - a * a, 0.0))));\n"
    "    o_color = vec4(to_srgb(light(to_linear(f_color), n, f_view, 0.3, 32.0)), 1.0);\n"
    "}\n";

/* ---- points: sphere impostors of a world radius, drawn at the sphere's front so that they
 * stay on top of the surface they mark ---- */
static const char* const render_point_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "uniform mat4 u_view, u_proj;\n"
    "uniform vec2 u_viewport;\n"
    "uniform float u_radius;\n"
    "uniform float u_max_size;\n"
    "out vec3 p_view;\n"
    "void main() {\n"
    "    vec4 v = u_view * vec4(a_pos, 1.0);\n"
    "    v.z += u_radius;\n"
    "    p_view = v.xyz;\n"
    "    gl_Position = u_proj * v;\n"
    "    float size = 2.0 * u_radius * u_proj[1][1] * 0.5 * u_viewport.y / max(gl_Position.w, 1e-6);\n"
    "    gl_PointSize = clamp(size, 2.0, u_max_size);\n"
    "}\n";
static const char* const render_point_fs = "#version 330 core\n" RENDER_GLSL_LIGHTING "in vec3 p_view;\n"
                                           "uniform vec3 u_color;\n"
                                           "out vec4 o_color;\n"
                                           "void main() {\n"
                                           "    vec2 c = gl_PointCoord * 2.0 - 1.0;\n"
                                           "    float r2 = dot(c, c);\n"
                                           "    if (r2 > 1.0) discard;\n"
                                           "    vec3 n = vec3(c.x, -c.y, sqrt(1.0 - r2));\n"
                                           "    o_color = vec4(to_srgb(light(to_linear(u_color), n, p_view, 0.35, "
                                           "40.0)), 1.0);\n"
                                           "}\n";

#endif
