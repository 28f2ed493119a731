import PrismCore

/// Pixellate's GLSL for the Y'CbCr routes (`YUVPlan`, `YUVBlendPlan`): a pass computing the mean Y'CbCr
/// of each block of the kernel's grid, and the reads a packing pass makes of that block-means target.
enum PixellateShaders {
    /// The grid's uniforms (the block origin in pixels, the block side), declared from this list by the block
    /// passes and reads and set per frame by the colour chain (`ChainValues.set`).
    static let grid = [PassUniform("prism_origin", .vec2), PassUniform("prism_scale", .float)]
    /// The box of blocks a masked block-means draw sums (x0, y0, x1, y1), set per draw by the renderer.
    static let blockBox = PassUniform("prism_blockBox", .ivec4)
    private static var gridDeclarations: String { grid.map(\.declaration).joined() }

    /// A block-means pass (pixellate at block resolution): each fragment is one block of the grid
    /// `prism_origin + k · prism_scale` and writes `prism_chain` of the block's mean Y'CbCr (chroma weighted
    /// by how many of the block's pixels each sample covers). Declare `prism_chain` before it.
    ///
    /// The block texels are laid out in rows of `blockRowTexels`, block i = by·BW + bx at (i mod 128, i / 128), not
    /// as the grid: a software rasteriser gives each 64×64 tile of a target to one thread, and a 80×45 grid
    /// would be one full tile and a sliver (one thread doing 80% of the work); rows of 128 split evenly.
    /// `boxed`: only the blocks inside `ivec4 prism_blockBox` (x0, y0, x1, y1) are summed, the others write 0.
    /// `aligned`: for grids whose edges, the frame's included, fall on multiples of 8 columns and 2 rows (see
    /// `BlockAveraging.blockEdgesAlign`): whole texels and chroma rows only, no weights, no clamps.
    static func blockMeansMain(source: PixelFormat, size: Size, grid: Size, boxed: Bool = false,
                               aligned: Bool = false) -> String {
        defines([("PRISM_MEANS_ALIGNED", aligned), ("PRISM_MEANS_BOXED", boxed), ("PRISM_MEANS_NV12", source == .nv12)])
            + """
            \(gridDeclarations)#ifdef PRISM_MEANS_BOXED
            \(blockBox.declaration)#endif
            out vec4 prism_out;
            void main() {
                ivec2 f = ivec2(gl_FragCoord.xy);
                int i = f.y * \(blockRowTexels) + f.x;
                if (i >= \(grid.width * grid.height)) { prism_out = vec4(0.0); return; }
                ivec2 t = ivec2(i % \(grid.width), i / \(grid.width));
            #ifdef PRISM_MEANS_BOXED
                if (any(lessThan(t, prism_blockBox.xy)) || any(greaterThanEqual(t, prism_blockBox.zw))) {
                    prism_out = vec4(0.0);
                    return;
                }
            #endif
                vec2 low = prism_origin + vec2(t) * prism_scale;
                ivec2 first = ivec2(max(ceil(low - 0.5), vec2(0.0)));
                ivec2 last = ivec2(min(ceil(low + prism_scale - 0.5), vec2(\(size.width), \(size.height))));
            #ifdef PRISM_MEANS_ALIGNED
                float luma = 0.0, cb = 0.0, cr = 0.0;
                for (int y = first.y; y < last.y; y++) {
                    for (int q = first.x >> 2; q < last.x >> 2; q++) luma += dot(texelFetch(prism_src0, ivec2(q, y), 0), vec4(1.0));
                }
                for (int cy = first.y >> 1; cy < last.y >> 1; cy++) {
            #ifdef PRISM_MEANS_NV12
                    for (int j = first.x >> 2; j < last.x >> 2; j++) {
                        vec4 pair = texelFetch(prism_src1, ivec2(j, cy), 0);
                        cb += pair.x + pair.z;
                        cr += pair.y + pair.w;
                    }
            #else
                    for (int k = first.x >> 3; k < last.x >> 3; k++) {
                        cb += dot(texelFetch(prism_src1, ivec2(k, cy), 0), vec4(1.0));
                        cr += dot(texelFetch(prism_src2, ivec2(k, cy), 0), vec4(1.0));
                    }
            #endif
                }
                // Each chroma sample stands for 2 × 2 pixels.
                cb *= 4.0;
                cr *= 4.0;
            #else
                float luma = 0.0;
                for (int y = first.y; y < last.y; y++) {
                    for (int q = first.x >> 2; q <= (last.x - 1) >> 2; q++) {
                        ivec4 x = ivec4(q * 4) + ivec4(0, 1, 2, 3);
                        vec4 inside = vec4(greaterThanEqual(x, ivec4(first.x))) * vec4(lessThan(x, ivec4(last.x)));
                        luma += dot(prism_yTexel(q, y), inside);
                    }
                }
                float cb = 0.0, cr = 0.0;
                for (int cy = first.y >> 1; cy <= (last.y - 1) >> 1; cy++) {
                    float wy = float(min(2 * cy + 2, last.y) - max(2 * cy, first.y));
            #ifdef PRISM_MEANS_NV12
                    for (int j = first.x >> 2; j <= (last.x - 1) >> 2; j++) {
                        ivec2 cx = ivec2(j * 2) + ivec2(0, 1);
                        vec2 wx = vec2(clamp(min(2 * cx + 2, ivec2(last.x)) - max(2 * cx, ivec2(first.x)), ivec2(0), ivec2(2)));
                        vec4 pair = prism_chromaPair(j, cy);
                        cb += dot(pair.xz, wx) * wy;
                        cr += dot(pair.yw, wx) * wy;
                    }
            #else
                    for (int k = first.x >> 3; k <= (last.x - 1) >> 3; k++) {
                        ivec4 cx = ivec4(k * 4) + ivec4(0, 1, 2, 3);
                        vec4 wx = vec4(clamp(min(2 * cx + 2, ivec4(last.x)) - max(2 * cx, ivec4(first.x)), ivec4(0), ivec4(2)));
                        vec4 b, r;
                        prism_chromaQuad(k, cy, b, r);
                        cb += dot(b, wx) * wy;
                        cr += dot(r, wx) * wy;
                    }
            #endif
                }
            #endif
                float count = float(max((last.x - first.x) * (last.y - first.y), 1));
                prism_out = vec4(prism_chain(vec3(luma, cb, cr) / count), 1.0);
            }

            """
    }

    /// A block-means target read back at pixels: `vec3 prism_blockAt(int bx, int by)`, the block columns
    /// of four pixels `ivec4 prism_blockColumns(int x)`, the block row `int prism_blockRow(int y)`, and
    /// `prism_blockQuad(int tx, int y, out vec3 b0, … b3)` for pixels 4tx ... 4tx+3 of row y (`wide`: blocks of
    /// 8 pixels or more, so a quad touches at most two block columns and only those are fetched; `aligned`:
    /// every block edge falls on a multiple of 8 columns and of 2 rows, so the pixels of a chroma texel and
    /// the two rows a packing fragment writes share one block, fetched once).
    static func blockReads(grid: Size, wide: Bool, aligned: Bool = false) -> String {
        defines([("PRISM_BLOCKS_ALIGNED", aligned), ("PRISM_BLOCKS_WIDE", wide)]) + """
            uniform sampler2D prism_blocks;
            \(gridDeclarations)vec3 prism_blockAt(int bx, int by) {
                ivec2 b = clamp(ivec2(bx, by), ivec2(0), ivec2(\(grid.width - 1), \(grid.height - 1)));
                int i = b.y * \(grid.width) + b.x;
                return texelFetch(prism_blocks, ivec2(i % \(blockRowTexels), i / \(blockRowTexels)), 0).rgb;
            }
            ivec4 prism_blockColumns(int x) {
                return ivec4(floor((vec4(float(x)) + vec4(0.5, 1.5, 2.5, 3.5) - prism_origin.x) / prism_scale));
            }
            int prism_blockRow(int y) { return int(floor((float(y) + 0.5 - prism_origin.y) / prism_scale)); }
            void prism_blockQuad(int tx, int y, out vec3 b0, out vec3 b1, out vec3 b2, out vec3 b3) {
            #if defined(PRISM_BLOCKS_ALIGNED)
                // Rows y and y + 1 (y even) read the same texel, which the compiler merges.
                vec3 a = prism_blockAt(prism_blockColumns(tx * 4).x, prism_blockRow(y & ~1));
                b0 = a;
                b1 = a;
                b2 = a;
                b3 = a;
            #elif defined(PRISM_BLOCKS_WIDE)
                ivec4 bx = prism_blockColumns(tx * 4);
                int by = prism_blockRow(y);
                vec3 a = prism_blockAt(bx.x, by), b = prism_blockAt(bx.w, by);
                b0 = a;
                b1 = bx.y == bx.x ? a : b;
                b2 = bx.z == bx.x ? a : b;
                b3 = b;
            #else
                ivec4 bx = prism_blockColumns(tx * 4);
                int by = prism_blockRow(y);
                b0 = prism_blockAt(bx.x, by);
                b1 = prism_blockAt(bx.y, by);
                b2 = prism_blockAt(bx.z, by);
                b3 = prism_blockAt(bx.w, by);
            #endif
            }

            """
    }

    /// Block texels per row of a block-means target (see `blockMeansMain`).
    static let blockRowTexels = 128

    /// The block-means target for a grid of `grid` blocks.
    static func blockTargetSize(grid: Size) -> Size {
        Size(width: blockRowTexels, height: max((grid.width * grid.height + blockRowTexels - 1) / blockRowTexels, 1))
    }

    /// `prism_valueQuad` and `prism_chromaSamples` from a block-means target, through `prism_chain`, for
    /// `YUVNativeShaders.packPlan` (`.declared`): `wide`: blocks at least 8 pixels across (fewer fetches);
    /// `aligned`: block edges on multiples of 8 columns and 2 rows (one fetch per fragment; right only for
    /// such grids, see `BlockAveraging.blockEdgesAlign`).
    static func blockValues(grid: Size, wide: Bool, aligned: Bool = false) -> String {
        // The variants are `blockReads`' (its #defines hold here too).
        blockReads(grid: grid, wide: wide, aligned: aligned) + """
            void prism_valueQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                prism_blockQuad(tx, y, v0, v1, v2, v3);
                v0 = prism_chain(v0);
                v1 = prism_chain(v1);
                v2 = prism_chain(v2);
                v3 = prism_chain(v3);
            }
            #if defined(PRISM_BLOCKS_ALIGNED)
            void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                vec3 v = prism_chain(prism_blockAt(prism_blockColumns(k * 8).x, prism_blockRow(cy * 2)));
                s0 = v;
                s1 = v;
                s2 = v;
                s3 = v;
            }
            #elif defined(PRISM_BLOCKS_WIDE)
            // The 8 pixels of a chroma texel touch at most two block columns: the end blocks are all that is
            // fetched.
            void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                ivec4 l = prism_blockColumns(k * 8), r = prism_blockColumns(k * 8 + 4);
                int y0 = prism_blockRow(cy * 2), y1 = prism_blockRow(cy * 2 + 1);
                vec3 left = prism_chain(prism_blockAt(l.x, y0) + prism_blockAt(l.x, y1));
                vec3 right = prism_chain(prism_blockAt(r.w, y0) + prism_blockAt(r.w, y1));
                // Per pixel column: the left block or the right one, both rows added (the chain is affine
                // and the weights add up to 1 after the 0.25).
                bvec4 a = equal(l, ivec4(l.x)), b = equal(r, ivec4(l.x));
                s0 = ((a.x ? left : right) + (a.y ? left : right)) * 0.25;
                s1 = ((a.z ? left : right) + (a.w ? left : right)) * 0.25;
                s2 = ((b.x ? left : right) + (b.y ? left : right)) * 0.25;
                s3 = ((b.z ? left : right) + (b.w ? left : right)) * 0.25;
            }
            #else
            vec3 prism_chromaSample(ivec2 columns, int y0, int y1) {
                return prism_chain((prism_blockAt(columns.x, y0) + prism_blockAt(columns.y, y0)
                    + prism_blockAt(columns.x, y1) + prism_blockAt(columns.y, y1)) * 0.25);
            }
            void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                ivec4 l = prism_blockColumns(k * 8), r = prism_blockColumns(k * 8 + 4);
                int y0 = prism_blockRow(cy * 2), y1 = prism_blockRow(cy * 2 + 1);
                s0 = prism_chromaSample(l.xy, y0, y1);
                s1 = prism_chromaSample(l.zw, y0, y1);
                s2 = prism_chromaSample(r.xy, y0, y1);
                s3 = prism_chromaSample(r.zw, y0, y1);
            }
            #endif

            """
    }

    /// `#define NAME 1` for each variant that is on: the templates pick their code with `#ifdef`.
    private static func defines(_ variants: [(name: String, on: Bool)]) -> String {
        variants.filter(\.on).map { "#define \($0.name) 1\n" }.joined()
    }
}
