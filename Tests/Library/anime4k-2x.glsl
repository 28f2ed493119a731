// An Anime4K-style 2x upscale, written for Prism's tests (not Anime4K's code): the picture's luma and its
// gradient in a first pass, then a bilinear 2x enlargement whose pixels are pushed towards the brighter or
// darker side of each edge by the gradient's strength, so lines come out thin and sharp instead of smeared.

//!PARAM strength
//!DESC how hard edges are pushed
//!TYPE float
//!MINIMUM 0.0
//!MAXIMUM 1.0
0.6

//!DESC anime4k-test luma and gradient
//!HOOK MAIN
//!BIND HOOKED
//!SAVE GRADIENT
//!COMPONENTS 4
float luma(vec2 at) { return dot(HOOKED_tex(at).rgb, vec3(0.299, 0.587, 0.114)); }
vec4 hook() {
    vec2 d = HOOKED_pt;
    float tl = luma(HOOKED_pos + vec2(-d.x, -d.y)), t = luma(HOOKED_pos + vec2(0.0, -d.y)), tr = luma(HOOKED_pos + vec2(d.x, -d.y));
    float l = luma(HOOKED_pos + vec2(-d.x, 0.0)), c = luma(HOOKED_pos), r = luma(HOOKED_pos + vec2(d.x, 0.0));
    float bl = luma(HOOKED_pos + vec2(-d.x, d.y)), b = luma(HOOKED_pos + vec2(0.0, d.y)), br = luma(HOOKED_pos + vec2(d.x, d.y));
    // Sobel: the direction and size of the luma's change.
    float gx = (tr + 2.0 * r + br) - (tl + 2.0 * l + bl);
    float gy = (bl + 2.0 * b + br) - (tl + 2.0 * t + tr);
    return vec4(c, gx, gy, clamp(length(vec2(gx, gy)), 0.0, 1.0));
}

//!DESC anime4k-test push 2x
//!HOOK MAIN
//!BIND HOOKED
//!BIND GRADIENT
//!WIDTH HOOKED.w 2 *
//!HEIGHT HOOKED.h 2 *
vec4 hook() {
    vec4 colour = HOOKED_tex(HOOKED_pos);
    vec4 g = GRADIENT_tex(HOOKED_pos);
    if (g.w < 0.02) return colour;
    // One source texel along the gradient, towards the brighter side and towards the darker side.
    vec2 along = normalize(vec2(g.y, g.z)) * HOOKED_pt;
    vec4 brighter = HOOKED_tex(HOOKED_pos + along * 0.5);
    vec4 darker = HOOKED_tex(HOOKED_pos - along * 0.5);
    // Pixels nearer the bright side become brighter, the others darker: the edge's ramp shrinks.
    float side = dot(colour.rgb, vec3(0.299, 0.587, 0.114)) - 0.5 * (GRADIENT_tex(HOOKED_pos + along * 0.5).x + GRADIENT_tex(HOOKED_pos - along * 0.5).x);
    vec4 target = side >= 0.0 ? brighter : darker;
    return mix(colour, target, strength * g.w);
}
