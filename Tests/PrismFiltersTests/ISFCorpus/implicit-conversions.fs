/*{
    "DESCRIPTION": "Desktop GLSL's implicit int → float/uint conversions: an int argument for a float parameter, a uvec2 beside a vec2, int == float, a float input minus an int, int returned as float.",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "cells", "TYPE": "float", "DEFAULT": 4.0, "MIN": 2.0, "MAX": 8.0 }
    ]
}*/
uvec2 cellSize = uvec2(8, 4);

float halved(float v, bool keep) { return keep ? v : v / 2.0; }
float steps() { int n = 3; return n; }

void main() {
    ivec2 cell = ivec2(gl_FragCoord.xy / cellSize);
    vec2 inCell = mod(gl_FragCoord.xy, cellSize);
    float column = halved(cell.x, false);
    bool lastColumn = int(cells - 1) == cell.x;
    uint row = cell.y;
    gl_FragColor = vec4(fract(column) * 2.0, inCell.y / cellSize.y, lastColumn ? 1.0 : float(row % 2u) / steps(), 1.0);
}
