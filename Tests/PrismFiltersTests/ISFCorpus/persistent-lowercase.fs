/*{
    "DESCRIPTION": "persistent-decay.fs with the pass keys in lower case: the spec's key is PERSISTENT, so the target is temporary and reads transparent black before its pass writes it each frame: h = input · (FRAMEINDEX + 1), shown as h / 16.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
    "PASSES": [ { "TARGET": "history", "persistent": true, "FLOAT": true }, { } ]
}*/
void main() {
    if (PASSINDEX == 0) {
        vec4 previous = IMG_THIS_PIXEL(history);
        gl_FragColor = previous * 0.5 + IMG_THIS_PIXEL(inputImage) * float(FRAMEINDEX + 1);
    } else {
        gl_FragColor = vec4(IMG_THIS_PIXEL(history).rgb / 16.0, 1.0);
    }
}
