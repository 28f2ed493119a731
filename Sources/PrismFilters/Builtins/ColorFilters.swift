import PrismCore

/// Point-wise colour filters, written as ISF files in Shaders/: they fuse into any pass.
enum ColorFilters {
    static let definitions: [FilterDefinition] = [
        BundledShaders.definition(
            file: "invert", name: "invert", summary: "Inverts colours (like CIColorInvert).",
            maths: "rgb' = 1 - rgb; alpha kept.",
            example: "invert",
            colorForm: { _ in
                .affine(AffineColor(rows: [SIMD3(-1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, -1)], offset: SIMD3(1, 1, 1)))
            }),
        BundledShaders.definition(
            file: "color", name: "color", summary: "Brightness, contrast and saturation (like CIColorControls).",
            maths: """
                luma = 0.2126 r + 0.7152 g + 0.0722 b (BT.709 weights on R'G'B');
                rgb1 = mix(vec3(luma), rgb, saturation); rgb2 = (rgb1 - 0.5) * contrast + 0.5; rgb' = rgb2 + brightness; alpha kept.
                """,
            example: "color(brightness=0.05, contrast=1.2, saturation=0.8)",
            colorForm: { values in
                // rgb' = contrast · (mix(luma, rgb, saturation) - 0.5) + 0.5 + brightness, as color.fs; a form
                // only while no colour leaves the cube (else the clamp between steps matters).
                let luma = SIMD3<Double>(0.2126, 0.7152, 0.0722)
                let s = values.double("saturation"), c = values.double("contrast"), b = values.double("brightness")
                let rows = (0..<3).map { i -> SIMD3<Double> in
                    var row = luma * (1 - s)
                    row[i] += s
                    return row * c
                }
                let form = AffineColor(rows: rows, offset: SIMD3(repeating: 0.5 - 0.5 * c + b))
                return form.mapsUnitCubeIntoItself ? .affine(form) : nil
            }),
    ]
}
