import Foundation
import PrismCore

/// What a group of hook files renders for one input size and one OUTPUT size, as data: the passes in the
/// order they run (libplacebo's: by stage, then file order, then pass order), each with its target's size,
/// its GLSL and what it samples; the passes whose `//!WHEN` is false are left out. `HookKernel` turns the
/// steps into prepasses; nothing here touches GL, so a plan can be checked without a GPU.
///
/// ## Stages on Prism's frame path
/// The group's input is the R'G'B' image of the graph at that point.
/// - `LUMA`, `CHROMA`, `ALPHA`, `CHROMA_SCALED`, `NATIVE`: when any pass of the group hooks, binds or sizes
///   by one of them, the group first splits its input into Y'CbCr planes (BT.709, limited range, as the
///   video's own planes are; chroma at full resolution, since the frame path has already merged it), runs
///   the plane hooks, merges the planes at luma's size (chroma scaled bilinearly, each plane placed by its
///   `//!OFFSET`), runs NATIVE, and converts back to R'G'B' — so luma doublers (ravu, nnedi3) and chroma
///   hooks work on any input, RGB pictures included.
/// - `RGB`: the input itself, when the group uses no plane stage (an RGB input's plane).
/// - `MAIN` (= `MAINPRESUB`): the R'G'B' image.
/// - `LINEAR`, `SIGMOID`: MAIN in linear light (BT.1886, gamma 2.4) and then sigmoidised (libplacebo's
///   default curve, centre 0.75, slope 6.5); only made when some pass hooks them, and converted back after.
/// - `PREKERNEL`: before the resize to OUTPUT; `POSTKERNEL`, `SCALED`, `PREOUTPUT`, `OUTPUT`: after it, at
///   the OUTPUT size. The resize is bilinear (its triangle widened by the ratio on an axis that shrinks, as
///   libplacebo's) and only runs when the image is not already OUTPUT-sized.
package struct HookPlan: Sendable {
    /// What a step samples.
    package enum Texture: Hashable, Sendable {
        /// The group's input image (`$src0`).
        case input
        /// An earlier step's target (`$passN`).
        case step(Int)
        /// A `//!TEXTURE` of file `file` (`$lutN`, numbered over the group).
        case lookup(Int)
    }

    package struct Step: Sendable {
        package let label: String
        package let size: Size
        /// For a `//!COMPUTE` pass: work groups and their local size.
        package let compute: (groups: SIMD2<Int>, local: SIMD2<Int>)?
        /// The prepass's GLSL: declarations, the author's code and `void main()`, in the `$` convention of
        /// `FilterKernel` (`$src0`, `$passN`, `$lutN`, `$frame`, `$random`, `$p_NAME`).
        package let main: String
        /// Where the author's lines are in `main` (for compile errors at the hook file's lines).
        package let lineMap: ShaderLineMap
        /// The pass of the group it runs (file, pass), nil for Prism's own steps (planes, merge, resize).
        package let pass: (file: Int, index: Int)?
    }

    package var steps: [Step] = []
    /// The image the group ends with and where the picture lies in it (texels).
    package var output: (texture: Texture, size: Size, rect: Rect)
    /// The OUTPUT size.
    package let outputSize: Size
    /// True when no pass hooks ALPHA or ALPHA_SCALED: the group's output keeps its input's alpha, as
    /// libplacebo ignores the alpha MAIN hooks write (Anime4K's upscalers leave 1 + a residual there).
    package var alphaFromInput = true
    /// Passes left out, with why (`//!WHEN` false, a bound texture not made this time).
    package var skipped: [(file: Int, index: Int, reason: String)] = []

    /// Where the picture lies in a texture, in texels: libplacebo's `rect`, moved by `//!OFFSET`.
    package struct Rect: Hashable, Sendable {
        package var x0: Double, y0: Double, width: Double, height: Double
        package static func whole(_ size: Size) -> Rect { Rect(x0: 0, y0: 0, width: Double(size.width), height: Double(size.height)) }
    }
}

/// A texture a stage or a `//!SAVE` names while the plan is made.
private struct Named {
    var texture: HookPlan.Texture
    var size: Size
    var rect: HookPlan.Rect
}

/// A plan failure at a hook file's line (an expression that cannot be evaluated, a size out of range).
package struct HookPlanError: PrismError {
    package let file: String
    package let line: Int
    package let message: String
    package var description: String { "\(file):\(line): \(message)" }
}

extension HookPlan {
    /// The largest target side a pass may ask for.
    package static let maxSide = 16384

    /// A target side from a WIDTH or HEIGHT: rounded, 1...`maxSide`; nil otherwise (NaN included).
    static func side(_ value: Double) -> Int? {
        let rounded = value.rounded()
        guard rounded >= 1, rounded <= Double(maxSide) else { return nil }
        return Int(rounded)
    }

    /// The plan for `files` on an `inputSize` image with OUTPUT `outputSize`, parameters at `values`.
    package static func make(files: [HookFile], inputSize: Size, outputSize: Size,
                             values: [String: Double]) throws -> HookPlan {
        var builder = HookPlanBuilder(files: files, values: values, inputSize: inputSize, outputSize: outputSize)
        return try builder.build()
    }

    /// Every pass of `files` as a step of its own, for compiling each once (`HookKernel.validate`).
    package static func validationSteps(files: [HookFile]) -> [Step] {
        var builder = HookPlanBuilder(files: files, values: [:], inputSize: Size(width: 64, height: 64),
                                      outputSize: Size(width: 64, height: 64))
        return builder.validationSteps()
    }

    /// True when the group works on Y'CbCr planes (some pass hooks, binds or sizes by a plane stage or NATIVE).
    package static func usesPlanes(_ files: [HookFile]) -> Bool {
        let planeNames: Set<String> = ["LUMA", "CHROMA", "ALPHA", "CHROMA_SCALED", "ALPHA_SCALED", "NATIVE"]
        return files.contains { file in
            file.passes.contains { pass in
                !planeNames.isDisjoint(with: pass.hooks + pass.binds.map(\.name))
                    || !planeNames.isDisjoint(with: pass.width.textureNames.union(pass.height.textureNames).union(pass.when.textureNames))
            }
        }
    }

    /// The stages the group hooks, in the order they run.
    package static func stages(_ files: [HookFile]) -> [HookStage] {
        Set(files.flatMap { $0.passes.flatMap { $0.hooks.compactMap(HookStage.init(name:)) } }).sorted()
    }
}

private struct HookPlanBuilder {
    let files: [HookFile]
    let values: [String: Double]
    let inputSize: Size
    let outputSize: Size
    var plan: HookPlan
    var saved: [String: Named] = [:]
    /// `//!TEXTURE` names per file, with their group-wide index.
    let lookups: [[String: (index: Int, texture: HookTexture)]]
    let parameters: [String: HookParameter]
    let hookedStages: Set<HookStage>

    init(files: [HookFile], values: [String: Double], inputSize: Size, outputSize: Size) {
        self.files = files
        self.inputSize = inputSize
        self.outputSize = outputSize
        var index = 0
        lookups = files.map { file in
            var table: [String: (Int, HookTexture)] = [:]
            for texture in file.textures {
                table[texture.name] = (index, texture)
                index += 1
            }
            return table
        }
        var parameters: [String: HookParameter] = [:]
        for file in files { for parameter in file.parameters { parameters[parameter.name] = parameter } }
        self.parameters = parameters
        self.values = values.reduce(into: [:]) { clamped, entry in
            clamped[entry.key] = parameters[entry.key]?.clamped(entry.value) ?? entry.value
        }
        hookedStages = Set(HookPlan.stages(files))
        plan = HookPlan(output: (.input, inputSize, .whole(inputSize)), outputSize: outputSize)
    }

    mutating func build() throws -> HookPlan {
        let input = Named(texture: .input, size: inputSize, rect: .whole(inputSize))
        var main: Named
        if HookPlan.usesPlanes(files) {
            var luma = own("planes: luma", size: inputSize, reads: [("IMG", input)], body: """
                vec4 c = IMG_tex(IMG_pos);
                return vec4(dot(c.rgb, vec3(0.2126, 0.7152, 0.0722)) * (219.0 / 255.0) + 16.0 / 255.0, 0.0, 0.0, 1.0);
                """)
            var chroma = own("planes: chroma", size: inputSize, reads: [("IMG", input)], body: """
                vec4 c = IMG_tex(IMG_pos);
                float y = dot(c.rgb, vec3(0.2126, 0.7152, 0.0722));
                return vec4((c.b - y) / 1.8556 * (224.0 / 255.0) + 0.5, (c.r - y) / 1.5748 * (224.0 / 255.0) + 0.5, 0.0, 1.0);
                """)
            var alpha = own("planes: alpha", size: inputSize, reads: [("IMG", input)], body: "return vec4(IMG_tex(IMG_pos).a, 0.0, 0.0, 1.0);")
            try run(.luma, &luma)
            try run(.chroma, &chroma)
            try run(.alpha, &alpha)
            let reference = Size(width: max(1, Int(luma.rect.width.rounded())), height: max(1, Int(luma.rect.height.rounded())))
            if hookedStages.contains(.chromaScaled) || chroma.size != reference || chroma.rect != .whole(chroma.size) {
                chroma = own("chroma scaled", size: reference, reads: [("IMG", chroma)], body: "return IMG_tex(prism_image_IMG);")
                try run(.chromaScaled, &chroma)
            }
            if hookedStages.contains(.alphaScaled) || alpha.size != reference || alpha.rect != .whole(alpha.size) {
                alpha = own("alpha scaled", size: reference, reads: [("IMG", alpha)], body: "return IMG_tex(prism_image_IMG);")
                try run(.alphaScaled, &alpha)
            }
            var native = own("planes merged", size: reference, reads: [("Y", luma), ("C", chroma), ("A", alpha)], body: """
                return vec4(Y_tex(prism_image_Y).x, C_tex(prism_image_C).xy, A_tex(prism_image_A).x);
                """)
            try run(.native, &native)
            main = own("to R'G'B'", size: native.size, reads: [("IMG", native)], body: """
                vec4 n = IMG_tex(prism_image_IMG);
                float y = (n.x - 16.0 / 255.0) * (255.0 / 219.0);
                vec2 c = (n.yz - 0.5) * (255.0 / 224.0);
                float r = y + 1.5748 * c.y, b = y + 1.8556 * c.x;
                float g = (y - 0.2126 * r - 0.0722 * b) / 0.7152;
                return vec4(r, g, b, n.w);
                """)
        } else {
            main = input
            try run(.rgb, &main)
        }
        try run(.main, &main)
        if hookedStages.contains(.linear) || hookedStages.contains(.sigmoid) {
            var linear = own("linearise", size: main.size, reads: [("IMG", main)], body: """
                vec4 c = IMG_tex(prism_image_IMG);
                return vec4(pow(clamp(c.rgb, 0.0, 1.0), vec3(2.4)), c.a);
                """)
            try run(.linear, &linear)
            if hookedStages.contains(.sigmoid) {
                var sigmoid = own("sigmoidise", size: linear.size, reads: [("IMG", linear)], body: """
                    vec4 c = IMG_tex(prism_image_IMG);
                    const float center = 0.75, slope = 6.5;
                    float offset = 1.0 / (1.0 + exp(slope * center)), scale = 1.0 / (1.0 + exp(slope * (center - 1.0))) - offset;
                    return vec4(center - log(1.0 / (clamp(c.rgb, 0.0, 1.0) * scale + offset) - 1.0) / slope, c.a);
                    """)
                try run(.sigmoid, &sigmoid)
                linear = own("desigmoidise", size: sigmoid.size, reads: [("IMG", sigmoid)], body: """
                    vec4 c = IMG_tex(prism_image_IMG);
                    const float center = 0.75, slope = 6.5;
                    float offset = 1.0 / (1.0 + exp(slope * center)), scale = 1.0 / (1.0 + exp(slope * (center - 1.0))) - offset;
                    return vec4((1.0 / (1.0 + exp(slope * (center - c.rgb))) - offset) / scale, c.a);
                    """)
            }
            main = own("delinearise", size: linear.size, reads: [("IMG", linear)], body: """
                vec4 c = IMG_tex(prism_image_IMG);
                return vec4(pow(clamp(c.rgb, 0.0, 1.0), vec3(1.0 / 2.4)), c.a);
                """)
        }
        try run(.preKernel, &main)
        var scaled = main
        if main.size != outputSize || main.rect != .whole(main.size) {
            scaled = resize(main, to: outputSize)
        }
        for stage in [HookStage.postKernel, .scaled, .preOutput, .output] { try run(stage, &scaled) }
        plan.output = (scaled.texture, scaled.size, scaled.rect)
        plan.alphaFromInput = !hookedStages.contains(.alpha) && !hookedStages.contains(.alphaScaled)
        return plan
    }

    // MARK: Steps

    /// The resize to OUTPUT: bilinear, as libplacebo's bilinear scaler. Shrinking, libplacebo widens the
    /// triangle kernel by the ratio (so a 3x picture shrunk to 2x does not alias); a single bilinear tap would
    /// skip texels, so an axis that shrinks gets the same widened triangle over every texel under it.
    private mutating func resize(_ image: Named, to size: Size) -> Named {
        let texelsPerPixel = SIMD2(image.rect.width / Double(size.width), image.rect.height / Double(size.height))
        guard texelsPerPixel.x > 1 || texelsPerPixel.y > 1 else {
            return own("resize to OUTPUT (bilinear)", size: size, reads: [("IMG", image)], body: "return IMG_tex(prism_image_IMG);")
        }
        // The triangle's half-width in source texels: 1 (plain bilinear) on an axis that grows.
        let radius = "vec2(\(max(1, texelsPerPixel.x)), \(max(1, texelsPerPixel.y)))"
        return own("resize to OUTPUT (bilinear, widened to shrink)", size: size, reads: [("IMG", image)], body: """
            vec2 centre = prism_image_IMG * IMG_size - 0.5;
            vec2 radius = \(radius);
            ivec2 last = ivec2(IMG_size) - 1;
            ivec2 lo = ivec2(floor(centre - radius)) + 1, hi = ivec2(ceil(centre + radius)) - 1;
            vec4 sum = vec4(0.0);
            float total = 0.0;
            for (int y = lo.y; y <= hi.y; y++) {
                float wy = max(0.0, 1.0 - abs(float(y) - centre.y) / radius.y);
                for (int x = lo.x; x <= hi.x; x++) {
                    float w = wy * max(0.0, 1.0 - abs(float(x) - centre.x) / radius.x);
                    sum += w * texelFetch(IMG_raw, clamp(ivec2(x, y), ivec2(0), last), 0);
                    total += w;
                }
            }
            return sum / total;
            """)
    }

    /// A step of Prism's own (planes, merge, resize): `body` returns the colour; each read `NAME` has the
    /// hook environment, and `prism_image_NAME` is the position of this pixel in it, placed by its rect.
    private mutating func own(_ label: String, size: Size, reads: [(String, Named)], body: String) -> Named {
        let source = environment(binds: reads, outputSize: size, compute: nil, hooked: nil)
            + "vec4 hook() {\n" + body + "\n}\n" + hookMain(reads.map(\.0), compute: false)
        plan.steps.append(.init(label: label, size: size, compute: nil, main: source, lineMap: ShaderLineMap(origins: []), pass: nil))
        return Named(texture: .step(plan.steps.count - 1), size: size, rect: .whole(size))
    }

    /// Runs every pass of the group that hooks `stage`, in file and pass order, on `current`.
    private mutating func run(_ stage: HookStage, _ current: inout Named) throws {
        saved[stage.name] = current
        for (fileIndex, file) in files.enumerated() {
            for (passIndex, pass) in file.passes.enumerated() where pass.hooks.contains(where: { HookStage(name: $0) == stage }) {
                try runPass(pass, file: fileIndex, index: passIndex, stage: stage, current: &current)
            }
        }
    }

    private func evaluate(_ expression: HookExpression, _ what: String, pass: HookPass, file: Int, hooked: Named) throws -> Double {
        do {
            return try expression.evaluate(size: { name in
                let texture: Named?
                switch name {
                case "HOOKED": texture = hooked
                case "OUTPUT": return (Double(outputSize.width), Double(outputSize.height))
                case "NATIVE_CROPPED": return (Double(inputSize.width), Double(inputSize.height))
                case "MAINPRESUB": texture = saved["MAIN"]
                default: texture = saved[name]
                }
                return texture.map { (Double($0.size.width), Double($0.size.height)) }
            }, variable: { name in
                if let value = values[name] { return value }
                for parameter in parameters.values { if let i = parameter.names.firstIndex(of: name) { return Double(i) } }
                return nil
            })
        } catch {
            throw HookPlanError(file: files[file].path, line: pass.expressionLines[what] ?? pass.line, message: "//!\(what): \(error)")
        }
    }

    private mutating func runPass(_ pass: HookPass, file fileIndex: Int, index passIndex: Int, stage: HookStage, current: inout Named) throws {
        let file = files[fileIndex]
        if try evaluate(pass.when, "WHEN", pass: pass, file: fileIndex, hooked: current) == 0 {
            plan.skipped.append((fileIndex, passIndex, "//!WHEN \(pass.when) is false"))
            return
        }
        let saved = self.saved
        let resolved = resolveBinds(pass, file: fileIndex, stage: stage) { name in name == stage.name ? current : saved[name] }
        guard case .success(let (binds, lookupBinds, hookedName)) = resolved else {
            // Made by a pass that did not run (its WHEN was false): libplacebo skips this pass too.
            if case .failure(let missing) = resolved { plan.skipped.append((fileIndex, passIndex, "//!BIND \(missing.name): not made in this run")) }
            return
        }
        let width = try evaluate(pass.width, "WIDTH", pass: pass, file: fileIndex, hooked: current)
        let height = try evaluate(pass.height, "HEIGHT", pass: pass, file: fileIndex, hooked: current)
        // Checked as numbers before they become integers: 1e19 or a parameter set to 1e20 is refused here.
        guard let pixelsWide = HookPlan.side(width), let pixelsHigh = HookPlan.side(height) else {
            let what = HookPlan.side(width) == nil ? "WIDTH" : "HEIGHT"
            throw HookPlanError(file: file.path, line: pass.expressionLines[what] ?? pass.line,
                                message: "the pass's size \(String(format: "%gx%g", width, height)) is outside 1...\(HookPlan.maxSide)")
        }
        let size = Size(width: pixelsWide, height: pixelsHigh)
        // Where the output's picture lies: libplacebo's rect arithmetic.
        let sx = Double(size.width) / Double(current.size.width), sy = Double(size.height) / Double(current.size.height)
        var rect = HookPlan.Rect(x0: sx * current.rect.x0 + pass.offset.x, y0: sy * current.rect.y0 + pass.offset.y,
                                 width: sx * current.rect.width, height: sy * current.rect.height)
        if pass.alignOffset { rect.x0 = pass.offset.x; rect.y0 = pass.offset.y }

        emit(pass, file: fileIndex, index: passIndex, stage: stage, binds: binds, lookupBinds: lookupBinds, size: size,
             rect: rect, hookedName: hookedName, current: &current)
    }

    /// Every pass of the group alone, each BIND a stand-in 64x64 image (lookups as themselves), whatever
    /// its WHEN: what `HookKernel.validate` compiles so errors come back at the hook file's lines.
    mutating func validationSteps() -> [HookPlan.Step] {
        let standIn = Named(texture: .input, size: Size(width: 64, height: 64), rect: .whole(Size(width: 64, height: 64)))
        for (fileIndex, file) in files.enumerated() {
            for (passIndex, pass) in file.passes.enumerated() {
                let stage = pass.hooks.compactMap(HookStage.init(name:)).first ?? .main
                guard case .success(let (binds, lookupBinds, hookedName)) = resolveBinds(pass, file: fileIndex, stage: stage, texture: { _ in standIn })
                else { continue }
                var current = standIn
                emit(pass, file: fileIndex, index: passIndex, stage: stage, binds: binds, lookupBinds: lookupBinds,
                     size: standIn.size, rect: standIn.rect, hookedName: hookedName, current: &current)
            }
        }
        return plan.steps
    }

    private struct MissingBind: Error { let name: String }

    /// What each BIND of `pass` names: the hooked image, MAIN, a stage or saved texture (`texture` looks it up
    /// by its resolved name), or the file's //!TEXTURE; each texture once.
    private func resolveBinds(_ pass: HookPass, file fileIndex: Int, stage: HookStage, texture: (String) -> Named?)
        -> Result<(binds: [(String, Named)], lookups: [(String, Int, HookTexture)], hookedName: String?), MissingBind> {
        var binds: [(String, Named)] = [], lookupBinds: [(String, Int, HookTexture)] = [], seen = Set<String>()
        var hookedName: String?
        for (name, _) in pass.binds {
            var resolved = name
            if name == "HOOKED" { resolved = stage.name; hookedName = stage.name }
            if resolved == "MAINPRESUB" { resolved = "MAIN" }
            guard seen.insert(resolved).inserted else { continue }
            if let lookup = lookups[fileIndex][resolved] {
                lookupBinds.append((resolved, lookup.index, lookup.texture))
            } else if let named = texture(resolved) {
                binds.append((resolved, named))
            } else {
                return .failure(MissingBind(name: name))
            }
        }
        return .success((binds, lookupBinds, hookedName))
    }

    private mutating func emit(_ pass: HookPass, file fileIndex: Int, index passIndex: Int, stage: HookStage,
                               binds: [(String, Named)], lookupBinds: [(String, Int, HookTexture)], size: Size,
                               rect: HookPlan.Rect, hookedName: String?, current: inout Named) {
        let file = files[fileIndex]
        var compute: (groups: SIMD2<Int>, local: SIMD2<Int>)?
        if let shape = pass.compute {
            compute = (SIMD2((size.width + shape.blockWidth - 1) / shape.blockWidth, (size.height + shape.blockHeight - 1) / shape.blockHeight),
                       SIMD2(shape.threadsWidth, shape.threadsHeight))
        }
        // ALIGN shifts the hooked image's sampling by its own offset so the two grids stay aligned.
        var shifted = binds
        if pass.alignOffset, let index = shifted.firstIndex(where: { $0.0 == stage.name }) {
            shifted[index].1.rect.x0 = current.rect.x0
            shifted[index].1.rect.y0 = current.rect.y0
        }
        var text = environment(binds: shifted, outputSize: size, compute: compute?.local, hooked: hookedName,
                               alignHooked: pass.alignOffset ? stage.name : nil)
        for (name, index, texture) in lookupBinds {
            text += "#define \(name) $lut\(index)\n#define \(name)_tex(pos) (textureLod($lut\(index), pos, 0.0))\n"
            _ = texture
        }
        text += parameterDefinitions(usedBy: pass.body)
        // Lines before the author's body (the text ends in a newline).
        var origins = [ShaderLineMap.Origin?](repeating: nil, count: text.utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) })
        for (offset, _) in splitLines(pass.body).enumerated() {
            origins.append(.init(file: file.path, line: pass.bodyLine + offset, columnsExact: true))
        }
        text += pass.body + "\n"
        text += hookMain(binds.map(\.0), compute: compute != nil)
        let label = "\((file.path as NSString).lastPathComponent):\(pass.line) \(pass.description)"
        plan.steps.append(.init(label: label, size: size, compute: compute, main: text, lineMap: ShaderLineMap(origins: origins),
                                pass: (fileIndex, passIndex)))
        let output = Named(texture: .step(plan.steps.count - 1), size: size, rect: rect)
        let name = pass.save ?? stage.name
        saved[name == "MAINPRESUB" ? "MAIN" : name] = output
        if name == stage.name || (name == "MAINPRESUB" && stage == .main) { current = output }
    }

    // MARK: GLSL

    /// libplacebo's bindings of a texture `NAME` (`NAME_raw`, `_pos`, `_size`, `_pt`, `_off`, `_map`, `_mul`,
    /// `_rot`, `_tex`, `_texOff`, `_gather`), HOOKED's aliases, `frame`, `random`, `input_size`,
    /// `target_size`, `tex_offset`; `prism_image_NAME` is the pixel's position in the picture, by the rect.
    private func environment(binds: [(String, Named)], outputSize: Size, compute: SIMD2<Int>?, hooked: String?,
                             alignHooked: String? = nil) -> String {
        let f = BlurKernel.glsl
        var text = ""
        if let local = compute {
            text += "layout(local_size_x = \(local.x), local_size_y = \(local.y)) in;\n"
            text += "layout(rgba16f, binding = 0) writeonly uniform highp image2D $out_image;\n#define out_image $out_image\n"
        }
        text += """
            #define frame $frame
            #define random $random
            #define input_size vec2(\(f(Double(inputSize.width))), \(f(Double(inputSize.height))))
            #define target_size vec2(\(f(Double(self.outputSize.width))), \(f(Double(self.outputSize.height))))
            #define tex_offset vec2(0.0)
            const vec2 prism_target = vec2(\(f(Double(outputSize.width))), \(f(Double(outputSize.height))));

            """
        for (name, texture) in binds {
            let sampler: String
            switch texture.texture {
            case .input: sampler = "$src0"
            case .step(let index): sampler = "$pass\(index)"
            case .lookup(let index): sampler = "$lut\(index)"
            }
            let w = Double(texture.size.width), h = Double(texture.size.height)
            // Bound whole (libplacebo binds the whole texture, not the hooked rect), except ALIGN's shift.
            let shift = name == alignHooked ? SIMD2(texture.rect.x0, texture.rect.y0) : SIMD2<Double>(0, 0)
            text += """
                vec2 \(name)_pos;
                vec2 prism_image_\(name);
                #define \(name)_raw \(sampler)
                #define \(name)_size vec2(textureSize(\(sampler), 0))
                #define \(name)_pt vec2(\(f(1 / w)), \(f(1 / h)))
                #define \(name)_off vec2(\(f(texture.rect.x0)), \(f(texture.rect.y0)))
                #define \(name)_mul 1.0
                #define \(name)_rot mat2(1.0, 0.0, 0.0, 1.0)
                #define \(name)_map(id) ((vec2(id) + 0.5) / prism_target + vec2(\(f(shift.x / w)), \(f(shift.y / h))))
                #define \(name)_tex(pos) (textureLod(\(sampler), pos, 0.0))
                #define \(name)_texOff(off) (\(name)_tex(\(name)_pos + \(name)_pt * vec2(off)))
                #define \(name)_gather(pos, c) (textureGather(\(sampler), pos, c))
                const vec2 prism_shift_\(name) = vec2(\(f(shift.x / w)), \(f(shift.y / h)));
                const vec4 prism_rect_\(name) = vec4(\(f(texture.rect.x0 / w)), \(f(texture.rect.y0 / h)), \(f(texture.rect.width / w)), \(f(texture.rect.height / h)));

                """
            for alias in (name == hooked ? ["HOOKED"] : []) + (name == "MAIN" ? ["MAINPRESUB"] : []) {
                for suffix in ["raw", "pos", "size", "pt", "off", "mul", "rot", "map", "tex", "texOff", "gather"] {
                    text += "#define \(alias)_\(suffix) \(name)_\(suffix)\n"
                }
            }
        }
        return text
    }

    /// `void main()`: the position of the pixel (or invocation) in each bound texture, then the author's `hook()`.
    private func hookMain(_ names: [String], compute: Bool) -> String {
        let position = compute ? "(vec2(gl_GlobalInvocationID.xy) + 0.5) / prism_target" : "gl_FragCoord.xy / prism_target"
        return "void main() {\n    vec2 prism_p = \(position);\n"
            + names.map { "    \($0)_pos = prism_p + prism_shift_\($0);\n    prism_image_\($0) = prism_rect_\($0).xy + prism_p * prism_rect_\($0).zw;\n" }.joined()
            + (compute ? "    hook();\n}\n" : "    prism_out = hook();\n}\n")
    }

    /// The group's parameters as the author's GLSL reads them: uniforms (VARIABLE, DYNAMIC), literals
    /// (CONSTANT, DEFINE: changing them recompiles) and ENUM names.
    private func parameterDefinitions(usedBy body: String) -> String {
        var text = ""
        for parameter in parameters.values.sorted(by: { $0.name < $1.name }) {
            let value = values[parameter.name] ?? parameter.initial
            switch parameter.mode {
            case .variable, .dynamic:
                let cast = parameter.type == .uint ? "uint($p_\(parameter.name))" : "$p_\(parameter.name)"
                text += "#define \(parameter.name) \(cast)\n"
            case .constant:
                let literal = parameter.type == .float ? BlurKernel.glsl(value) : parameter.type == .uint ? "\(Int(value))u" : "\(Int(value))"
                text += "#define \(parameter.name) \(literal)\n"
            case .define:
                text += "#define \(parameter.name) \(Int(value))\n"
            }
            for (index, name) in parameter.names.enumerated() { text += "#define \(name) \(index)\n" }
        }
        // libplacebo defines no PI; shaders written for mpv's older environment sometimes use it.
        if body.range(of: "\\bPI\\b", options: .regularExpression) != nil, !body.contains("#define PI") {
            text += "#define PI 3.1415926535897932384626433832795\n"
        }
        return text
    }
}
