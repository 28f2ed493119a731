// No channel lines: what iChannel1 reads comes from the graph.
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    vec2 uv = fragCoord / iResolution.xy;
    fragColor = 0.5 * texture(iChannel1, uv) + 0.5 * texture(iChannel0, uv);
}
