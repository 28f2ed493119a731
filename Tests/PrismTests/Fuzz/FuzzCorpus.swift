/// Seeds for the fuzzers: valid inputs of each parser, plus every input of issue 9 that crashed a
/// parser (trap, stack overflow) or took the machine down, kept as regressions.
enum FuzzCorpus {
    static let graphs = [
        "invert, mono",
        "invert",
        "pixellate(12)",
        "crop(x=10, y=20, width=64, height=32)",
        "rotate(angle=180)",
        "scale(size=320x240)",
        "blur(sigma=2.5), chrome",
        "color(color=#ff8800)",
        "[in]pixellate(scale=16)[px]; radial-gradient(center=0.5:0.4, radius0=60, radius1=90)[m]; [px][in][m]blend-mask",
        "mono, invert, mono, invert",
        "radial-gradient(center=(0.5, 0.5), color0=red, color1=#00000080)",
        // ShaderToy channels: words with ':' and paths from ./ or ../ (parsed, then refused by the binder: no such files).
        "'toy.frag'(iChannel1=previous, iChannel2=../img/noise.png, iChannel3=buffer:./bufA.frag, iMouse=10:20)",
        // Issue 9, items 9 and 14: integer parameters given huge floats, infinities, NaN; long chains.
        "crop(x=1e19)",
        "crop(x=-1e19, y=9223372036854775808)",
        "rotate(angle=1e309)",
        "rotate(angle=-1e309)",
        "pixellate(scale=1e300)",
        "scale(size=16384x16384)",
        "scale(size=99999999999999999999x2)",
        "crop(width=16384, height=16384)",
        Array(repeating: "invert", count: 400).joined(separator: ", "),
        String(repeating: "[", count: 20_000),
    ]

    static let graphDictionary = ["invert", "mono", "pixellate", "crop", "rotate", "scale", "blur", "chrome", "color",
                                  "radial-gradient", "blend-mask", "(", ")", "[in]", "[a]", "[px]", ";", ",", "=", ":",
                                  "x=", "scale=", "size=", "angle=", "sigma=", "width=", "center=", "#ffffff", "\"", "1280x720",
                                  "0x0", "-", "file=", "look.cube", "shader.fs"]

    static func isf(width: String = "$WIDTH/2.0", height: String = "$HEIGHT", inputs: String = "") -> String {
        """
        /*{ "ISFVSN": "2", "DESCRIPTION": "fuzz",
          "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" },
                      { "NAME": "scale", "TYPE": "float", "DEFAULT": 0.5 },
                      { "NAME": "taps", "TYPE": "long", "DEFAULT": 2, "MIN": 0, "MAX": 8, "VALUES": [0, 1, 2], "LABELS": ["a", "b", "c"] },
                      { "NAME": "on", "TYPE": "bool", "DEFAULT": true },
                      { "NAME": "tint", "TYPE": "color", "DEFAULT": [1.0, 0.5, 0.0, 1.0] },
                      { "NAME": "at", "TYPE": "point2D", "DEFAULT": [0.5, 0.5], "MIN": [0, 0], "MAX": [1, 1] }\(inputs) ],
          "PASSES": [ { "TARGET": "small", "WIDTH": "\(width)", "HEIGHT": "\(height)", "FLOAT": true },
                      { "TARGET": "trail", "PERSISTENT": true }, {} ] }*/
        void main() {
            if (PASSINDEX == 0) gl_FragColor = IMG_THIS_NORM_PIXEL(inputImage);
            else gl_FragColor = IMG_NORM_PIXEL(small, isf_FragNormCoord) * tint;
        }
        """
    }

    static let shaders = [
        isf(),
        isf(width: "max(floor($WIDTH*$scale), 1.0)", height: "$HEIGHT * ($taps + 1) - 2"),
        "/*{ \"INPUTS\": [] }*/\nvoid main() { gl_FragColor = vec4(1.0); }",
        "void mainImage(out vec4 c, in vec2 p) { c = vec4(p / iResolution.xy, 0.0, 1.0); }",
        "// @param amount float 0.5 0 1\nuniform float amount;\nvoid main() { gl_FragColor = vec4(amount); }",
        // Issue 9: items 2 and 10 (sizes beyond Int), 12 (20,000 nested parentheses), 14 (huge arrays).
        isf(width: "$WIDTH*1e20"),
        isf(width: "pow(2.0,1000.0)"),
        isf(width: "-$WIDTH*1e300", height: "$HEIGHT*$scale*1e300"),
        isf(width: String(repeating: "(", count: 20_000) + "1" + String(repeating: ")", count: 20_000)),
        isf(width: String(repeating: "-", count: 20_000) + "1"),
        isf(width: Array(repeating: "1", count: 20_000).joined(separator: "+")),
        isf(inputs: ", { \"NAME\": \"big\", \"TYPE\": \"long\", \"DEFAULT\": 1e19, \"MIN\": -1e300, \"MAX\": 1e300 }"),
        isf(inputs: ", { \"NAME\": \"inf\", \"TYPE\": \"float\", \"DEFAULT\": 1e309 }"),
        "/*{ \"INPUTS\": [] }*/\nfloat a[100000000];\nvoid main() { gl_FragColor = vec4(a[0]); }",
        "/*" + String(repeating: "[", count: 20_000) + "*/\nvoid main() {}",
        "/*{ \"IMPORTED\": { \"img\": { \"PATH\": \"huge.ppm\" } } }*/\nvoid main() { gl_FragColor = IMG_NORM_PIXEL(img, vec2(0.5)); }",
        // Found by this fuzzer: an image argument spanning lines made a two-line error.
        "/*{ \"INPUTS\": [] }*/\nvoid main() { gl_FragColor = IMG_NORM_PIXEL(no\nsuch, vec2(0.5)); }",
    ]

    static let shaderDictionary = ["{", "}", "[", "]", ",", ":", "\"", "\"NAME\"", "\"TYPE\"", "\"float\"", "\"long\"", "\"image\"",
                                   "\"PASSES\"", "\"WIDTH\"", "\"HEIGHT\"", "\"TARGET\"", "\"PERSISTENT\"", "\"INPUTS\"", "\"MIN\"",
                                   "\"MAX\"", "\"DEFAULT\"", "\"VALUES\"", "\"LABELS\"", "\"IMPORTED\"", "\"PATH\"", "$WIDTH",
                                   "$HEIGHT", "$scale", "$taps", "pow(", "max(", "floor(", "sqrt(", "*", "/", "(", ")", "-", "1e20",
                                   "/*", "*/", "#include \"x.glsl\"", "uniform float", "[100000000]", "true", "null"]

    static let sizeExpressions = ["$WIDTH/4.0", "max(floor($HEIGHT*$scale), 1.0)", "$WIDTH * ($taps + 1) - 2", "320",
                                  "pow(2, 10)", "sqrt($WIDTH*$HEIGHT)", "-($WIDTH)", "round(abs(-$HEIGHT/3))",
                                  "$WIDTH*1e20", "pow(2,1000)", "$WIDTH*$scale", "1/0", "0/0", "-1/0", "ceil(1e300)",
                                  String(repeating: "(", count: 20_000) + "1", String(repeating: "-", count: 5000) + "$WIDTH"]

    static let sizeDictionary = ["$WIDTH", "$HEIGHT", "$scale", "$taps", "scale", "(", ")", "+", "-", "*", "/", ",", "max(",
                                 "min(", "pow(", "floor(", "ceil(", "round(", "abs(", "sqrt(", "1e20", "1e308", "0.5", " "]

    static let cubes = [
        "LUT_3D_SIZE 2\n1 1 1\n0 1 1\n1 0 1\n0 0 1\n1 1 0\n0 1 0\n1 0 0\n0 0 0\n",
        "TITLE \"ramp\"\nLUT_1D_SIZE 3\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n0 0 0\n0.5 0.5 0.5\n1 1 1\n",
        "# comment\nLUT_3D_SIZE 2\nLUT_3D_INPUT_RANGE 0 1\n" + String(repeating: "0.5 0.5 0.5\n", count: 8),
        "LUT_3D_SIZE 256\n0 0 0\n",
        "LUT_3D_SIZE 99999999999999999999\n",
        "LUT_1D_SIZE -1\n",
        "LUT_3D_SIZE 2\nDOMAIN_MIN -3e38 -3e38 -3e38\nDOMAIN_MAX 3e38 3e38 3e38\n" + String(repeating: "1e39 0 nan\n", count: 8),
        "LUT_3D_SIZE 2\r\n" + String(repeating: "1 0 0\r\n", count: 8),
    ]

    static let cubeDictionary = ["LUT_3D_SIZE", "LUT_1D_SIZE", "DOMAIN_MIN", "DOMAIN_MAX", "TITLE", "LUT_3D_INPUT_RANGE", " ", "\n",
                                 "\r\n", "#", "0", "1", "0.5", "-0.5", "1e39", "65", "2", "\"", "0 0 0\n", "1 1 1\n"]

    static let rawFormats = ["1280x720:yuv420p:30", "640x480:rgba:30000/1001", "2x2:nv12:29.97", "1920x1080:yuyv422:60",
                             "720p:yuv420p:25", "16384x16384:rgba:1", "0x0:yuv420p:30", "1x1:yuyv422:30",
                             "1280x720:yuv420p:0", "1280x720:yuv420p:1e-300", "1280x720:yuv420p:nan", "1280x720:yuv420p:inf",
                             "1280x720:yuv420p:2147483648/1", "1280x720:yuv420p:30/0", "99999999999999999999x2:rgba:30", "::", ""]

    static let rawDictionary = ["x", ":", "/", "yuv420p", "nv12", "rgba", "bgra", "yuyv422", "p010", "30", "1001", "720p", "4k",
                                "16384", "-", ".", "e"]

    static let requests = [
        "GET /state HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
        "GET /stream?view=input HTTP/1.1\r\nHost: localhost:PORT\r\n\r\n",
        "POST /param HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Type: application/json\r\nContent-Length: 32\r\n\r\n{\"name\":\"amount\",\"value\":1e300}",
        "POST /record HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\n{\"action\":\"start\"}",
        "GET /../../etc/passwd HTTP/1.1\r\nHost: rebind.example:PORT\r\n\r\n",
        "GET / HTTP/1.0\r\n\r\n",
        "POST /param HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n",
        "GET /state HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n" + String(repeating: "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 3000) + "\r\n",
    ]

    static let requestDictionary = ["\r\n", ": ", "GET ", "POST ", "HEAD ", "PUT ", " HTTP/1.1", "Host: ", "Origin: ", "Content-Type: ",
                                    "Content-Length: ", "application/json", "text/plain", "/state", "/param", "/stream", "/record",
                                    "?view=", "%00", "%2e%2e/", "127.0.0.1:PORT", "[::1]:PORT", "Sec-Fetch-Site: cross-site",
                                    "Transfer-Encoding: chunked", "{", "}", "\"value\":", "1e309", "\0"]

    static let parameterBodies = ["{\"name\":\"amount\",\"value\":0.5}", "{\"node\":0,\"name\":\"taps\",\"value\":3}",
                                  "{\"name\":\"tint\",\"value\":[1,0,0,1]}", "{\"name\":\"tint\",\"value\":\"#ff0000\"}",
                                  "{\"name\":\"at\",\"value\":[0.5,0.5]}", "{\"name\":\"on\",\"value\":true}",
                                  "{\"name\":\"mode\",\"value\":\"b\"}", "{\"name\":\"amount\",\"value\":1e300}",
                                  "{\"name\":\"taps\",\"value\":1e19}", "{\"name\":\"taps\",\"value\":-9223372036854775809}"]
}
