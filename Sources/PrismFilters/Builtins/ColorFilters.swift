import PrismCore

/// Point-wise colour filters, written as ISF files in Shaders/: they fuse into any pass.
enum ColorFilters {
    static let definitions: [FilterDefinition] = [
        BundledShaders.definition(
            file: "invert", name: "invert", summary: "Inverts colours (CIColorInvert).",
            maths: "rgb' = 1 - rgb; alpha kept.",
            example: "invert"),
        BundledShaders.definition(
            file: "color", name: "color", summary: "Brightness, contrast and saturation (CIColorControls).",
            maths: """
                luma = 0.2126 r + 0.7152 g + 0.0722 b (BT.709 weights on R'G'B');
                rgb1 = mix(vec3(luma), rgb, saturation); rgb2 = (rgb1 - 0.5) * contrast + 0.5; rgb' = rgb2 + brightness; alpha kept.
                """,
            example: "color(brightness=0.05, contrast=1.2, saturation=0.8)"),
    ]
}
