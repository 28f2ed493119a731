// Buffer A: adds a quarter of the input to its own last frame (float: no clamping below 1).
// @iChannel0 input
// @iChannel1 previous
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    vec2 uv = fragCoord / iResolution.xy;
    fragColor = texture(iChannel1, uv) + 0.25 * texture(iChannel0, uv);
}
