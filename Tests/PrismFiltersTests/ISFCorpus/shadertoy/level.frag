// A buffer with a parameter of its own: it keeps its default (0.5) when the image shader has none of that name.
uniform float level; // @param default=0.5 min=0 max=1
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    fragColor = vec4(level);
}
