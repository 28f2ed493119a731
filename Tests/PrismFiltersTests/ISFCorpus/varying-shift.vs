varying vec2 shifted_coord;

void main() {
    isf_vertShaderInit();
    shifted_coord = isf_FragNormCoord + vec2(2.0, 1.0) / RENDERSIZE;
}
