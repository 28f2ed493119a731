/*{
    "DESCRIPTION": "Prism test: the waveform at x, channel 0 in red and channel 1 in green; the audio image's width in blue",
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "wave", "TYPE": "audio", "MAX": 64 }
    ]
}*/

void main() {
    float x = isf_FragNormCoord.x;
    // Row 0 is the first channel (ISF's y = 0); rows are sampled at their centres.
    float first = IMG_NORM_PIXEL(wave, vec2(x, 0.25)).r;
    float second = IMG_NORM_PIXEL(wave, vec2(x, 0.75)).r;
    gl_FragColor = vec4(first, second, IMG_SIZE(wave).x / 255.0, 1.0);
}
