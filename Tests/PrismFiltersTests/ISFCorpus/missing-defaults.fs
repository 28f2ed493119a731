/*{
    "DESCRIPTION": "Inputs without DEFAULT hold what the reference renderer leaves in them: zero (a float's range permitting).",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "centred", "TYPE": "float", "MIN": -1.0, "MAX": 1.0 },
        { "NAME": "lowest", "TYPE": "float", "MIN": 0.25, "MAX": 1.0 },
        { "NAME": "tint", "TYPE": "color" },
        { "NAME": "flag", "TYPE": "bool" },
        { "NAME": "spot", "TYPE": "point2D" },
        { "NAME": "mode", "TYPE": "long", "VALUES": [ 2, 3 ], "LABELS": [ "two", "three" ] }
    ]
}*/
void main() {
    gl_FragColor = vec4(centred + 0.5, lowest, tint.a + (flag ? 0.5 : 0.0) + spot.x + spot.y, float(mode) / 4.0);
}
