/*{
    "DESCRIPTION": "Asks for medium precision, as desktop ISF files often do, and needs more than 16 bits.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
precision mediump float;

mediump float tenths(mediump float x) {
    // 2049.3: a 16-bit float holds 2049 or 2050 only, so the fraction is lost.
    return fract(x + 2049.3);
}

void main() {
    lowp vec4 c = IMG_THIS_PIXEL(inputImage);
    gl_FragColor = vec4(tenths(0.0), c.g, c.b, 1.0);
}
