// Each quadrant shows one texel of the image on iChannel2, fetched one period to the right (the
// texture repeats, as ShaderToy's do); alpha is iChannelResolution[2].x / 10.
// @iChannel2 quad.png
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    vec2 cell = floor(fragCoord / iResolution.xy * 2.0);
    vec2 uv = (cell + 0.5) / iChannelResolution[2].xy + vec2(1.0, 0.0);
    fragColor = vec4(texture(iChannel2, uv).rgb, iChannelResolution[2].x / 10.0);
}
