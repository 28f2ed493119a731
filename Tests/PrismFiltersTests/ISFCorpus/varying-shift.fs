/*{
    "DESCRIPTION": "Reads the input where the vertex shader says: two pixels right, one pixel up.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
varying vec2 shifted_coord;

void main() {
    gl_FragColor = IMG_NORM_PIXEL(inputImage, shifted_coord);
}
