/*{
    "DESCRIPTION": "Brightness, contrast and saturation (like CIColorControls). luma = 0.2126 r + 0.7152 g + 0.0722 b (BT.709 weights on R'G'B'); rgb1 = mix(vec3(luma), rgb, saturation); rgb2 = (rgb1 - 0.5) * contrast + 0.5; rgb' = rgb2 + brightness; alpha kept.",
    "CREDIT": "Prism built-in",
    "ISFVSN": "2",
    "CATEGORIES": [ "Color Adjustment" ],
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "brightness", "LABEL": "added to every channel", "TYPE": "float", "MIN": -1.0, "MAX": 1.0, "DEFAULT": 0.0, "IDENTITY": 0.0 },
        { "NAME": "contrast", "LABEL": "scales the distance from mid-grey", "TYPE": "float", "MIN": 0.0, "MAX": 4.0, "DEFAULT": 1.0, "IDENTITY": 1.0 },
        { "NAME": "saturation", "LABEL": "0 grey, 1 unchanged, >1 stronger", "TYPE": "float", "MIN": 0.0, "MAX": 4.0, "DEFAULT": 1.0, "IDENTITY": 1.0 }
    ]
}*/

void main() {
    vec4 c = IMG_THIS_PIXEL(inputImage);
    float luma = dot(c.rgb, vec3(0.2126, 0.7152, 0.0722));
    vec3 rgb = mix(vec3(luma), c.rgb, saturation);
    rgb = (rgb - 0.5) * contrast + 0.5 + brightness;
    gl_FragColor = vec4(rgb, c.a);
}
