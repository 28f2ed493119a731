void main() {
    vv_vertShaderInit();
    gl_Position.xy = gl_Position.xy * 0.5;
}
