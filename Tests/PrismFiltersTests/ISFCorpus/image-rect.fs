/*{
    "DESCRIPTION": "Writes the rectangle and flip hosts declare for inputImage.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
void main() {
    vec4 c = IMG_THIS_PIXEL(inputImage);
    gl_FragColor = vec4(_inputImage_imgRect.zw / 255.0, _inputImage_imgRect.x + c.a * 0.0,
                        _inputImage_flip ? 0.0 : 1.0 - _inputImage_imgRect.y);
}
