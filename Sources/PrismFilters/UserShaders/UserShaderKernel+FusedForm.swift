import Foundation
import PrismCore
import PrismGPU

/// The expression a point-wise ISF filter becomes, so that it fuses with its neighbours.
extension UserShaderKernel {
    /// The expression form of a single-pass ISF filter that reads its input only at the pixel it
    /// computes; nil for any other shader.
    static func fusedForm(of shader: UserShader) -> (library: String, expression: String, output: String)? {
        // Generators (no input image) fuse too: they compute from the pixel position alone.
        // Only the default vertex shader: an author's .vs moves corners and writes varyings.
        guard shader.kind == .isf, shader.passes.count == 1, shader.passes[0].target == nil, shader.vertexPath == nil,
              shader.importedImages.isEmpty, shader.extraImageInputs.isEmpty, shader.audioInputs.isEmpty else { return nil }
        let input = shader.inputImage
        let program = shader.passes[0].program
        // The author's lines (the preamble is ours, rebuilt below).
        let origins = program.lineMap.origins
        let lines = splitLines(program.source)
        var body: [String] = []
        var output = "isf_FragColor"
        var declaresOutput = false
        for (number, text) in lines.enumerated() where number < origins.count && origins[number] != nil {
            if let (kind, name) = declaration(text), kind == "out" {
                output = name
                declaresOutput = true
                body.append("vec4 \(name);")
            } else {
                body.append(text)
            }
        }
        var prefixer = GLSLPrefixer(prefix: "$U", replacements: ["gl_FragCoord": "$isf_FragCoord"])
        let pieces = prefixer.pieces(body.joined(separator: "\n"))
        // texture(inputImage, isf_FragNormCoord) → $in0($isf_p); any other use of the input: not point-wise.
        var code = ""
        var i = 0
        func significant(_ from: Int) -> Int {
            var j = from
            while j < pieces.count, case .text(let s) = pieces[j], s.allSatisfy(\.isWhitespace) { j += 1 }
            return j
        }
        while i < pieces.count {
            let piece = pieces[i]
            if case .identifier(let word, _) = piece {
                if word == "discard" || word == "gl_FragData" || word == "dFdx" || word == "dFdy" || word == "fwidth" { return nil }
                if word == "texture" {
                    var j = significant(i + 1)
                    var names: [String] = []
                    var symbols: [Character] = []
                    // texture ( input , isf_FragNormCoord )
                    for expected in ["(", "name", ",", "name", ")"] {
                        guard j < pieces.count else { break }
                        switch (expected, pieces[j]) {
                        case ("name", .identifier(let name, _)): names.append(name)
                        case (_, .symbol(let c)) where expected != "name": symbols.append(c)
                        default: break
                        }
                        j = significant(j + 1)
                    }
                    if let input, names == [input, "isf_FragNormCoord"], symbols == ["(", ",", ")"] {
                        code += "$in0($isf_p)"
                        i = j
                        continue
                    }
                }
                if let input, word == input { return nil }
                // The normalised coordinate in arithmetic: only the varying of the reference's quad gives the
                // reference's bits (hash noise magnifies the last ones), so the shader runs as its own pass.
                if word == "isf_FragNormCoord" { return nil }
            }
            code += piece.output
            i += 1
        }
        // The inputs, TIME and the rest are declared by the planner from `uniforms`.
        var library = """
            \(input.map { UserShader.imageAliases($0, prefix: "$U").joined(separator: "\n") + "\n" } ?? "")
            const int $UPASSINDEX = 0;
            vec2 $isf_p;
            #define $isf_FragCoord vec4($isf_p.x, $URENDERSIZE.y - $isf_p.y, 0.5, 1.0)

            """
        if !declaresOutput { library += "vec4 $U\(output);\n" }
        let expression = code + """

            vec4 $main(vec2 p) {
                $isf_p = p;
                $U\(output) = vec4(0.0);
                $Umain();
                return $U\(output);
            }

            """
        return (library, expression, output)
    }
}
