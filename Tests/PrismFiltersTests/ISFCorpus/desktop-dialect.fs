/*{
    "DESCRIPTION": "Desktop GLSL that GLSL ES 3.00 rejects: a built-in's name overloaded, a global set from a uniform, int literals for floats.",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "level", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.5 }
    ]
}*/
float half_level = level * 0.5;

// Which side of the line from b to c the point a lies on.
float sign(vec2 a, vec2 b, vec2 c) {
    return (a.x - c.x) * (b.y - c.y) - (b.x - c.x) * (a.y - c.y);
}

void main() {
    vec4 c = IMG_THIS_PIXEL(inputImage);
    float zero = 0;
    float side = sign(isf_FragNormCoord, vec2(0.0), vec2(1.0));
    float red = side > 0 ? abs(sign(side)) : zero;
    gl_FragColor = vec4(red, level > 0 ? half_level : 1.0, c.b, 1.0);
}
