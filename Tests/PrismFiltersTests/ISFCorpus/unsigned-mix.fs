/*{
    "DESCRIPTION": "Mixes uint variables with int literals and an int variable, as desktop GLSL allows: 8-pixel stripes.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
uint twice(uint n) {
    return n * 2;
}

void main() {
    vec4 c = IMG_THIS_PIXEL(inputImage);
    uvec2 cell = uvec2(gl_FragCoord.xy / 8.0);
    uint column = 0;
    column = cell.x;
    int signedRow = int(cell.y);
    uint row = 0;
    row = signedRow;
    float odd = (column % 2 == 1) ? 1.0 : 0.0;
    float right = twice(column) > 4 ? 1.0 : 0.0;
    gl_FragColor = vec4(odd, float(row % 2), right, c.a * 0.0 + 1.0);
}
