/*{
    "DESCRIPTION": "A long whose labels are numbers (as the published Video Snake's columns): red is the value / 10.",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "cols", "TYPE": "long", "VALUES": [1, 2, 5, 10], "LABELS": ["1", "2", "5", "10"], "DEFAULT": 2 }
    ]
}*/
void main() {
    gl_FragColor = vec4(float(cols) / 10.0, IMG_THIS_PIXEL(inputImage).g, 0.0, 1.0);
}
