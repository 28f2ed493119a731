// The image pass: half of Buffer A as it is this frame.
// @iChannel0 buffer:bufA.frag
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    fragColor = 0.5 * texture(iChannel0, fragCoord / iResolution.xy);
}
