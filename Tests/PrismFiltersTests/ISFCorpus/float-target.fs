/*{
    "DESCRIPTION": "A FLOAT target keeps values an 8-bit or 16-bit float buffer cannot: 1000 + x / 100, read back and reduced to its fraction.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
    "PASSES": [ { "TARGET": "wide", "FLOAT": true }, { } ]
}*/
void main() {
    if (PASSINDEX == 0) {
        gl_FragColor = vec4(1000.0 + gl_FragCoord.x / 100.0, -2.0, 0.0, 1.0);
    } else {
        vec4 v = IMG_THIS_PIXEL(wide);
        gl_FragColor = vec4(fract(v.r), -v.g / 4.0, IMG_THIS_PIXEL(inputImage).b, 1.0);
    }
}
