/*{
    "DESCRIPTION": "Prism test: FFT magnitudes at x in red, the 8-band FFT (MAX 8) in green, the full FFT's width / 2048 in blue",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "spectrum", "TYPE": "audioFFT" },
        { "NAME": "bands", "TYPE": "audioFFT", "MAX": 8 }
    ]
}*/

void main() {
    float x = isf_FragNormCoord.x;
    float magnitude = IMG_NORM_PIXEL(spectrum, vec2(x, 0.5)).r;
    // The centre of the band this pixel falls in.
    float band = IMG_NORM_PIXEL(bands, vec2((floor(x * IMG_SIZE(bands).x) + 0.5) / IMG_SIZE(bands).x, 0.5)).r;
    gl_FragColor = vec4(magnitude, band, IMG_SIZE(spectrum).x / 2048.0, 1.0);
}
