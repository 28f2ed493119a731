/*{
    "DESCRIPTION": "Adds a second image to the input; alpha carries the second image's width.",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "overlay", "TYPE": "image" }
    ]
}*/
void main() {
    vec4 a = IMG_THIS_PIXEL(inputImage);
    vec4 b = IMG_THIS_NORM_PIXEL(overlay);
    gl_FragColor = vec4(min(a.rgb + b.rgb, 1.0), IMG_SIZE(overlay).x / 255.0 + b.a * 0.0);
}
