/*{
    "DESCRIPTION": "Paints the normalised coordinate; the vertex shader shrinks the quad to its middle half.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
void main() {
    gl_FragColor = vec4(isf_FragNormCoord, 0.0, 1.0) + 0.0 * IMG_THIS_PIXEL(inputImage);
}
