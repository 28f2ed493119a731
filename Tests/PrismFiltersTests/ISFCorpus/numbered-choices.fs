/*{
    "DESCRIPTION": "Longs whose labels read as numbers or sizes (as the published Video Snake's columns, Dither-Bayer's matrix): red is cols / 10, green grid / 10.",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "cols", "TYPE": "long", "VALUES": [1, 2, 5, 10], "LABELS": ["1", "2", "5", "10"], "DEFAULT": 2 },
        { "NAME": "grid", "TYPE": "long", "VALUES": [2, 4], "LABELS": ["2x2", "4x4"], "DEFAULT": 2 }
    ]
}*/
void main() {
    gl_FragColor = vec4(float(cols) / 10.0, float(grid) / 10.0, IMG_THIS_PIXEL(inputImage).g, 1.0);
}
