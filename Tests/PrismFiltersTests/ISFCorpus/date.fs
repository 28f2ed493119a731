/*{
    "DESCRIPTION": "DATE: year, month, day and whole seconds since midnight.",
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
}*/
void main() {
    gl_FragColor = vec4(fract(DATE.w), DATE.y / 12.0, DATE.z / 31.0, DATE.x > 2000.0 ? 1.0 : 0.0);
}
