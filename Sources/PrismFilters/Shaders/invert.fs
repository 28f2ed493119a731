/*{
    "DESCRIPTION": "Inverts colours (like CIColorInvert): rgb' = 1 - rgb; alpha kept.",
    "CREDIT": "Prism built-in",
    "ISFVSN": "2",
    "CATEGORIES": [ "Color Effect" ],
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" }
    ]
}*/

void main() {
    vec4 c = IMG_THIS_PIXEL(inputImage);
    gl_FragColor = vec4(1.0 - c.rgb, c.a);
}
