// Writes ShaderToy's uniforms into four column bands, scaled into 0…1.
// @iChannel1 previous
void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    float band = floor(fragCoord.x / iResolution.x * 4.0);
    if (band < 1.0) {
        fragColor = vec4(iChannelResolution[0].x / 1000.0, iChannelResolution[0].y / 1000.0,
                         iChannelResolution[1].x / 1000.0, iChannelResolution[3].x + 0.5);
    } else if (band < 2.0) {
        fragColor = vec4(iFrameRate / 100.0, float(iFrame) / 10.0, iDate.y / 12.0, iDate.z / 31.0);
    } else if (band < 3.0) {
        fragColor = vec4(iMouse.x / 100.0, iMouse.y / 100.0, iMouse.z / 100.0, -iMouse.w / 100.0);
    } else {
        fragColor = vec4((iDate.x - 2000.0) / 100.0, iDate.w / 86400.0, iTimeDelta * 10.0, iChannelTime[0] / 10.0);
    }
}
