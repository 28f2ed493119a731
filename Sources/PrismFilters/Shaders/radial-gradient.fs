/*{
    "DESCRIPTION": "A radial gradient between two colours (like CIRadialGradient). d = distance(p, center·size) in pixels; t = clamp((d - radius0) / (radius1 - radius0), 0, 1); out = mix(color0, color1, t). The frame size is the graph input's.",
    "CREDIT": "Prism built-in",
    "ISFVSN": "2",
    "CATEGORIES": [ "Generator" ],
    "INPUTS": [
        { "NAME": "center", "LABEL": "0...1 of width and height, origin top left", "TYPE": "point2D", "DEFAULT": [0.5, 0.5] },
        { "NAME": "radius0", "LABEL": "pixels; color0 inside", "TYPE": "float", "MIN": 0.0, "MAX": 16384.0, "DEFAULT": 5.0 },
        { "NAME": "radius1", "LABEL": "pixels; color1 outside", "TYPE": "float", "MIN": 0.0, "MAX": 16384.0, "DEFAULT": 100.0 },
        { "NAME": "color0", "LABEL": "colour at radius0", "TYPE": "color", "DEFAULT": [1.0, 1.0, 1.0, 1.0] },
        { "NAME": "color1", "LABEL": "colour at radius1", "TYPE": "color", "DEFAULT": [0.0, 0.0, 0.0, 1.0] }
    ]
}*/

void main() {
    // ISF counts y from the bottom; Prism's centre is given from the top, like the rest of its filters.
    vec2 c = vec2(center.x, 1.0 - center.y) * RENDERSIZE;
    float d = distance(gl_FragCoord.xy, c);
    float t = clamp((d - radius0) / max(radius1 - radius0, 1e-6), 0.0, 1.0);
    gl_FragColor = mix(color0, color1, t);
}
