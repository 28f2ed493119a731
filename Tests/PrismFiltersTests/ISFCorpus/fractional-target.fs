/*{
    "DESCRIPTION": "A pass a third of the render size (50 × 31: 16.67 × 10.33). Pass 0 stores the fractions of its RENDERSIZE; pass 1 shows them (red, green) and the fraction of the target's IMG_SIZE width (blue).",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
    "PASSES": [ { "TARGET": "third", "WIDTH": "$WIDTH / 3.0", "HEIGHT": "$HEIGHT / 3.0" }, { } ]
}*/
void main() {
    if (PASSINDEX == 0) {
        gl_FragColor = vec4(fract(RENDERSIZE), 0.0, 1.0);
    } else {
        vec4 stored = IMG_THIS_NORM_PIXEL(third);
        gl_FragColor = vec4(stored.rg, fract(IMG_SIZE(third).x), 1.0);
    }
}
