/*
 * hook-ref: a small reference renderer for mpv/libplacebo user hook shaders
 * (//!HOOK files), written against libplacebo's public API (4.208, Debian 12).
 * It exists to check Prism's hook-shader output against libplacebo's own and
 * to time libplacebo on the same shaders; it is a measurement tool, not part
 * of Prism.
 *
 * Usage:
 *   hook-ref --in IN.raw --in-format rgb48|yuv444p16 --in-size WxH
 *            --out-size WxH --out OUT.rgb48 [--shader F.glsl]... [--frames N]
 *            [--raw-shaders] [--no-offset-fix] [--no-split] [--verbose]
 *
 *   --in        one raw frame: rgb48 = packed little-endian R,G,B 16-bit
 *               (ffmpeg -pix_fmt rgb48le); yuv444p16 = three planes Y, Cb, Cr
 *               of 16-bit little-endian samples (ffmpeg -pix_fmt yuv444p16le)
 *   rgb48       is tagged R'G'B' full range, BT.709 primaries, BT.1886
 *   yuv444p16   is tagged Y'CbCr BT.709 matrix, limited range, same primaries
 *               and transfer; the output is always R'G'B' full range with the
 *               same primaries and transfer as the input, so libplacebo does
 *               no colour-space conversion beyond the Y'CbCr -> R'G'B' matrix
 *   --out       the rendered frame, raw rgb48le at --out-size (omit with
 *               --frames to time only)
 *   --shader    a //!HOOK file, parsed with pl_mpv_user_shader_parse; repeat
 *               for several, applied in the order given
 *   --raw-shaders  do not apply the "//!SAVE MAIN" alias (see fix_save_main)
 *   --no-offset-fix  let libplacebo 4.208 drop a prescaler's sub-pixel
 *               offset at a 1:1 final scale (see force_main_scaler)
 *   --no-split  parse each file as one hook even where libplacebo 4.208
 *               would misplace its later passes (see split_hook_file)
 *   --verbose   libplacebo's debug log on stderr (HOOK_REF_TRACE=1: trace)
 *   --frames N  after 2 warm-up renders, render the same frame N times, wait
 *               for the GPU (pl_gpu_finish) and print "fps=... ms_per_frame=..."
 *
 * Rendering: pl_render_image with pl_render_default_params minus everything
 * that would make the comparison depend on libplacebo's extras: bilinear
 * upscaler / downscaler / plane scalers, no dithering, no debanding, no
 * sigmoidisation, no linear-light scaling, no peak detection, no ICC.
 *
 * Fidelity: Debian 12's libplacebo 4.208 has bugs that later versions (and
 * mpv) do not; hook-ref works around three, each with an option to turn it
 * off: "//!SAVE MAIN" dropped (fix_save_main), a prescaler's //!OFFSET lost
 * at a 1:1 final scale (force_main_scaler) and later passes of a file placed
 * from stale rects (split_hook_file). The target is opaque R'G'B': alpha a
 * hook writes is ignored, as a video output ignores it. The no-op hook adds
 * one full-frame pass; time with --no-offset-fix when that matters.
 *
 * Device: Vulkan (pl_vulkan, software devices such as lavapipe allowed).
 *
 * Exit status: 0 on success, 1 on a run-time failure, 2 on bad arguments.
 * Every failure prints one line starting "hook-ref: " on stderr.
 *
 * Build: cc -O2 -o hook-ref hook-ref.c $(pkg-config --cflags --libs libplacebo vulkan) -lm
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libplacebo/log.h>
#include <libplacebo/renderer.h>
#include <libplacebo/shaders/custom.h>
#include <libplacebo/utils/upload.h>
#include <libplacebo/vulkan.h>

#define MAX_SHADERS 64

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hook-ref: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static bool parse_size(const char *s, int *w, int *h)
{
    char tail;
    return sscanf(s, "%dx%d%c", w, h, &tail) == 2 && *w > 0 && *h > 0 && *w <= 16384 && *h <= 16384;
}

// Reads a whole file; NUL-terminated so shader text can be logged safely.
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(1, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    if (!buf)
        die(1, "out of memory reading '%s'", path);
    if (ferror(f))
        die(1, "cannot read '%s': %s", path, strerror(errno));
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

// libplacebo's own messages go to stderr; errors always, the rest on --verbose.
// Counts libplacebo's errors: a hook that fails at render time is only logged
// ("Failed executing hook, disabling") and pl_render_image still succeeds.
static int num_errors;

static void log_cb(void *priv, enum pl_log_level level, const char *msg)
{
    bool verbose = *(bool *) priv;
    if (level <= PL_LOG_ERR)
        num_errors++;
    if (!verbose && level > PL_LOG_ERR)
        return;
    static const char *names[] = {
        [PL_LOG_FATAL] = "fatal", [PL_LOG_ERR] = "error", [PL_LOG_WARN] = "warn",
        [PL_LOG_INFO] = "info", [PL_LOG_DEBUG] = "debug", [PL_LOG_TRACE] = "trace",
    };
    fprintf(stderr, "libplacebo %s: %s\n", level <= PL_LOG_TRACE ? names[level] : "?", msg);
}

// libplacebo 4.208 (Debian 12) treats "//!SAVE MAIN" as a new texture named
// MAIN instead of as the hooked MAIN image, so e.g. Anime4K's last pass is
// silently dropped; upstream fixed this in commit 33ded0c1 (v5.264) by
// aliasing it to MAINPRESUB. We apply the same alias to the text, which is
// what mpv and every later libplacebo do.
static char *fix_save_main(char *text, size_t *len, int *count)
{
    char *out = malloc(*len * 2 + 1), *o = out;
    if (!out)
        die(1, "out of memory");
    *count = 0;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t) (end - line + 1) : strlen(line);
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        char *q = p + 7, *t;
        if (!strncmp(p, "//!SAVE", 7) && (*q == ' ' || *q == '\t')) {
            while (*q == ' ' || *q == '\t')
                q++;
            t = q + 4;
            while (*t == ' ' || *t == '\t' || *t == '\r')
                t++;
            if (!strncmp(q, "MAIN", 4) && (t == line + n || *t == '\n')) {
                o += sprintf(o, "//!SAVE MAINPRESUB\n");
                (*count)++;
                line += n;
                continue;
            }
        }
        memcpy(o, line, n);
        o += n;
        line += n;
    }
    *o = '\0';
    free(text);
    *len = o - out;
    return out;
}

// libplacebo 4.208 computes every pass's output rect (and scale) from the
// rect and texture the whole file's hook was called with, not from what the
// file's earlier passes made of the hooked image: a file that replaces the
// hooked texture twice, like nnedi3 doubling height then width with an
// //!OFFSET each, loses the first pass's offset (upstream fixed this in
// commit f6a6f69f, v6.338). Splitting such a file into one hook per
// replacement of the hooked texture gives each part up-to-date values from
// the renderer. That is only safe when no part uses a texture SAVEd by an
// earlier part (each hook has its own saved textures); //!TEXTURE and
// //!PARAM blocks are copied into every part.
#define MAX_BLOCKS 512
#define MAX_PARTS 64

struct block {
    const char *start;
    size_t len;
    bool is_pass;
    bool writes_hooked;
    char save[64];
};

// Copies the first word after the directive into out ("" if none).
static void first_word(const char *p, char *out, size_t size)
{
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = 0;
    while (p[n] && !strchr(" \t\r\n", p[n]) && n + 1 < size)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

// Whether `name` appears as a whole word (or as name.w / name.h) in line.
static bool line_mentions(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; n && i + n <= len; i++) {
        if (strncmp(line + i, name, n))
            continue;
        char before = i ? line[i - 1] : ' ', after = i + n < len ? line[i + n] : ' ';
        bool word = !(before == '_' || (before >= '0' && before <= '9') ||
                      ((before | 32) >= 'a' && (before | 32) <= 'z'));
        bool end = !(after == '_' || (after >= '0' && after <= '9') ||
                     ((after | 32) >= 'a' && (after | 32) <= 'z'));
        if (word && end)
            return true;
    }
    return false;
}

static int split_blocks(const char *text, struct block *blocks)
{
    int num = 0;
    bool prev_header = false;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t) (end - line + 1) : strlen(line);
        bool header = !strncmp(line, "//!", 3);
        if (header && !prev_header) {
            if (num == MAX_BLOCKS)
                return -1;
            blocks[num++] = (struct block) { .start = line };
        }
        if (num) {
            struct block *b = &blocks[num - 1];
            b->len = line + n - b->start;
            if (header && !strncmp(line, "//!HOOK", 7))
                b->is_pass = true;
            if (header && !strncmp(line, "//!SAVE", 7))
                first_word(line + 7, b->save, sizeof(b->save));
        }
        prev_header = header;
        line += n;
    }
    for (int i = 0; i < num; i++) {
        struct block *b = &blocks[i];
        if (!b->is_pass)
            continue;
        // The hooked texture is replaced without a SAVE, with SAVE HOOKED,
        // or when saving under one of the hooked names (MAINPRESUB = MAIN).
        b->writes_hooked = !b->save[0] || !strcmp(b->save, "HOOKED");
        for (const char *l = b->start; l < b->start + b->len && !b->writes_hooked;) {
            const char *e = memchr(l, '\n', b->start + b->len - l);
            size_t n = e ? (size_t) (e - l + 1) : (size_t) (b->start + b->len - l);
            if (!strncmp(l, "//!HOOK", 7)) {
                char hooked[64];
                first_word(l + 7, hooked, sizeof(hooked));
                if (!strcmp(hooked, b->save) ||
                    (!strcmp(hooked, "MAIN") && !strcmp(b->save, "MAINPRESUB")))
                    b->writes_hooked = true;
            }
            l += n;
        }
    }
    return num;
}

// Splits text into parts (malloc'ed, NUL-terminated); returns the count, 1
// when the file is left whole.
static int split_hook_file(const char *path, const char *text, char **parts, bool verbose)
{
    static struct block blocks[MAX_BLOCKS];
    int num = split_blocks(text, blocks);
    int first_pass = -1, part_of[MAX_BLOCKS], num_parts = 0, writes = 0;
    for (int i = 0; i < num; i++) {
        part_of[i] = -1;
        if (!blocks[i].is_pass)
            continue;
        if (first_pass < 0)
            first_pass = i;
        part_of[i] = num_parts;
        if (blocks[i].writes_hooked) {
            writes++;
            num_parts++;
        }
    }
    // Passes after the last replacement belong to the last part.
    for (int i = 0; i < num; i++)
        if (part_of[i] == num_parts)
            part_of[i] = num_parts - 1;
    if (num < 0 || writes < 2 || num_parts > MAX_PARTS)
        goto whole;

    // Unsafe if a part uses a texture SAVEd in an earlier part.
    for (int i = 0; i < num; i++) {
        if (!blocks[i].is_pass || !blocks[i].save[0] || blocks[i].writes_hooked)
            continue;
        for (int j = i + 1; j < num; j++) {
            if (!blocks[j].is_pass || part_of[j] == part_of[i])
                continue;
            const char *l = blocks[j].start, *end = l + blocks[j].len;
            while (l < end) {
                const char *e = memchr(l, '\n', end - l);
                size_t n = e ? (size_t) (e - l + 1) : (size_t) (end - l);
                bool reads = !strncmp(l, "//!BIND", 7) || !strncmp(l, "//!WIDTH", 8) ||
                             !strncmp(l, "//!HEIGHT", 9) || !strncmp(l, "//!WHEN", 7);
                if (reads && line_mentions(l, n, blocks[i].save)) {
                    // The same name SAVEd again in this part first is fine.
                    bool resaved = false;
                    for (int k = i + 1; k < j; k++)
                        if (blocks[k].is_pass && part_of[k] == part_of[j] &&
                            !strcmp(blocks[k].save, blocks[i].save))
                            resaved = true;
                    if (!resaved) {
                        if (verbose)
                            fprintf(stderr, "hook-ref: %s: not split (a later part reads %s)\n",
                                    path, blocks[i].save);
                        goto whole;
                    }
                }
                l += n;
            }
        }
    }

    for (int p = 0; p < num_parts; p++) {
        size_t cap = strlen(text) + 1;
        char *out = malloc(cap), *o = out;
        if (!out)
            die(1, "out of memory");
        for (int i = 0; i < num; i++) {
            // Shared blocks (TEXTURE, PARAM) go into every part; the text
            // before the first //! line is ignored by the parser anyway.
            if (blocks[i].is_pass ? part_of[i] == p : true) {
                memcpy(o, blocks[i].start, blocks[i].len);
                o += blocks[i].len;
            }
        }
        *o = '\0';
        parts[p] = out;
    }
    if (verbose)
        fprintf(stderr, "hook-ref: %s: split into %d hooks (libplacebo 4.208 rect bug)\n", path, num_parts);
    return num_parts;

whole:
    parts[0] = strdup(text);
    return 1;
}

// A hook that does nothing, on the stage just before the main scaler. Any
// hook there makes libplacebo run its main scaling pass even at 1:1, and
// that pass is what applies the sub-pixel offset prescalers leave behind
// (nnedi3 and ravu declare //!OFFSET -0.5). Without it, libplacebo 4.208
// skips the "no-op" 1:1 scale and drops the offset, so the picture ends up
// half an output pixel off when --out-size is exactly the hooked size. mpv
// corrects the offset in its scale pass, and later libplacebo has
// pl_render_params.correct_subpixel_offsets for this; we emulate it.
static struct pl_hook_res noop_hook(void *priv, const struct pl_hook_params *params)
{
    (void) priv;
    (void) params;
    return (struct pl_hook_res) { .output = PL_HOOK_SIG_NONE };
}

static const struct pl_hook force_main_scaler = {
    .stages = PL_HOOK_PRE_KERNEL,
    .input = PL_HOOK_SIG_NONE,
    .hook = noop_hook,
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *in_format = NULL;
    const char *shader_paths[MAX_SHADERS];
    int num_shaders = 0, in_w = 0, in_h = 0, out_w = 0, out_h = 0, frames = 0;
    bool verbose = false, raw_shaders = false, offset_fix = true, split_fix = true;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--verbose")) {
            verbose = true;
        } else if (!strcmp(a, "--raw-shaders")) {
            raw_shaders = true;
        } else if (!strcmp(a, "--no-offset-fix")) {
            offset_fix = false;
        } else if (!strcmp(a, "--no-split")) {
            split_fix = false;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: hook-ref --in IN.raw --in-format rgb48|yuv444p16 --in-size WxH "
                   "--out-size WxH [--out OUT.rgb48] [--shader F.glsl]... [--frames N] [--raw-shaders] [--no-offset-fix] [--no-split] [--verbose]\n");
            return 0;
        } else if (!has_val) {
            die(2, "option '%s' needs a value (or is unknown)", a);
        } else if (!strcmp(a, "--in")) {
            in_path = argv[++i];
        } else if (!strcmp(a, "--out")) {
            out_path = argv[++i];
        } else if (!strcmp(a, "--in-format")) {
            in_format = argv[++i];
        } else if (!strcmp(a, "--in-size")) {
            if (!parse_size(argv[++i], &in_w, &in_h))
                die(2, "bad --in-size '%s' (want WxH)", argv[i]);
        } else if (!strcmp(a, "--out-size")) {
            if (!parse_size(argv[++i], &out_w, &out_h))
                die(2, "bad --out-size '%s' (want WxH)", argv[i]);
        } else if (!strcmp(a, "--shader")) {
            if (num_shaders == MAX_SHADERS)
                die(2, "at most %d shaders", MAX_SHADERS);
            shader_paths[num_shaders++] = argv[++i];
        } else if (!strcmp(a, "--frames")) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1000000)
                die(2, "bad --frames '%s' (want a positive integer)", argv[i]);
            frames = (int) n;
        } else {
            die(2, "unknown option '%s'", a);
        }
    }
    if (!in_path || !in_format || !in_w || !out_w)
        die(2, "need --in, --in-format, --in-size and --out-size (see --help)");
    if (!out_path && !frames)
        die(2, "need --out or --frames (nothing to do otherwise)");
    bool yuv;
    if (!strcmp(in_format, "rgb48"))
        yuv = false;
    else if (!strcmp(in_format, "yuv444p16"))
        yuv = true;
    else
        die(2, "unknown --in-format '%s' (rgb48 or yuv444p16)", in_format);

    // Input: check the size up front so a wrong --in-size is a clear error.
    size_t in_len;
    char *in_data = read_file(in_path, &in_len);
    size_t want = (size_t) in_w * in_h * 6; // 3 x 16 bits per pixel either way
    if (in_len != want)
        die(1, "'%s' is %zu bytes, expected %zu for one %s frame of %dx%d",
            in_path, in_len, want, in_format, in_w, in_h);

    // Shader files are read before any GPU work, so a missing file fails fast.
    char *shader_text[MAX_SHADERS];
    size_t shader_len[MAX_SHADERS];
    for (int i = 0; i < num_shaders; i++) {
        shader_text[i] = read_file(shader_paths[i], &shader_len[i]);
        int fixed = 0;
        if (!raw_shaders)
            shader_text[i] = fix_save_main(shader_text[i], &shader_len[i], &fixed);
        if (fixed && verbose)
            fprintf(stderr, "hook-ref: %s: %d \"//!SAVE MAIN\" read as MAINPRESUB\n", shader_paths[i], fixed);
    }

    pl_log log = pl_log_create(PL_API_VER, pl_log_params(
        .log_cb = log_cb,
        .log_priv = &verbose,
        .log_level = verbose ? (getenv("HOOK_REF_TRACE") ? PL_LOG_TRACE : PL_LOG_DEBUG) : PL_LOG_ERR,
    ));

    // lavapipe is a CPU "GPU"; without allow_software libplacebo skips it.
    pl_vulkan vk = pl_vulkan_create(log, pl_vulkan_params(
        .allow_software = true,
    ));
    if (!vk)
        die(1, "cannot create a Vulkan device (is mesa-vulkan-drivers installed?)");
    pl_gpu gpu = vk->gpu;

    static const struct pl_hook *hooks[MAX_SHADERS * MAX_PARTS + 1];
    int num_hooks = 0;
    for (int i = 0; i < num_shaders; i++) {
        char *parts[MAX_PARTS];
        int num_parts = 1;
        if (split_fix)
            num_parts = split_hook_file(shader_paths[i], shader_text[i], parts, verbose);
        else
            parts[0] = strdup(shader_text[i]);
        for (int p = 0; p < num_parts; p++) {
            hooks[num_hooks] = pl_mpv_user_shader_parse(gpu, parts[p], strlen(parts[p]));
            if (!hooks[num_hooks])
                die(1, "shader '%s' does not parse (libplacebo's message above)", shader_paths[i]);
            num_hooks++;
            free(parts[p]);
        }
        num_errors = 0; // parse-time warnings logged as errors would be fatal below
    }

    // Upload the source planes as 16-bit UNORM textures.
    struct pl_frame image = {
        .color = {
            .primaries = PL_COLOR_PRIM_BT_709,
            .transfer = PL_COLOR_TRC_BT_1886,
        },
        .crop = { 0, 0, in_w, in_h },
    };
    image.repr.alpha = PL_ALPHA_UNKNOWN;
    image.repr.bits = (struct pl_bit_encoding) { .sample_depth = 16, .color_depth = 16 };
    pl_tex in_tex[3] = {0};
    if (yuv) {
        image.repr.sys = PL_COLOR_SYSTEM_BT_709;
        image.repr.levels = PL_COLOR_LEVELS_LIMITED;
        image.num_planes = 3;
        for (int p = 0; p < 3; p++) {
            struct pl_plane_data pd = {
                .type = PL_FMT_UNORM,
                .width = in_w,
                .height = in_h,
                .component_size = { 16 },
                .component_map = { p },
                .pixel_stride = 2,
                .pixels = in_data + (size_t) p * in_w * in_h * 2,
            };
            if (!pl_upload_plane(gpu, &image.planes[p], &in_tex[p], &pd))
                die(1, "cannot upload plane %d of the input", p);
        }
    } else {
        image.repr.sys = PL_COLOR_SYSTEM_RGB;
        image.repr.levels = PL_COLOR_LEVELS_FULL;
        image.num_planes = 1;
        struct pl_plane_data pd = {
            .type = PL_FMT_UNORM,
            .width = in_w,
            .height = in_h,
            .component_size = { 16, 16, 16 },
            .component_map = { 0, 1, 2 },
            .pixel_stride = 6,
            .pixels = in_data,
        };
        if (!pl_upload_plane(gpu, &image.planes[0], &in_tex[0], &pd))
            die(1, "cannot upload the input (no 16-bit RGB texture format?)");
    }

    // Target: an rgba16 texture we can render into and read back. Same colour
    // space as the source, R'G'B' full range, so the only conversion is the
    // Y'CbCr matrix for YUV input.
    pl_fmt out_fmt = pl_find_named_fmt(gpu, "rgba16");
    if (!out_fmt || !(out_fmt->caps & PL_FMT_CAP_RENDERABLE) || !(out_fmt->caps & PL_FMT_CAP_HOST_READABLE))
        die(1, "the device has no renderable, host-readable rgba16 format");
    pl_tex out_tex = pl_tex_create(gpu, pl_tex_params(
        .w = out_w,
        .h = out_h,
        .format = out_fmt,
        .renderable = true,
        .host_readable = true,
        .storable = !!(out_fmt->caps & PL_FMT_CAP_STORABLE),
        .blit_dst = !!(out_fmt->caps & PL_FMT_CAP_BLITTABLE),
    ));
    if (!out_tex)
        die(1, "cannot create the %dx%d output texture", out_w, out_h);
    // Only R, G, B are mapped and alpha is left unknown: the output is opaque,
    // as a video output is. With an alpha component libplacebo premultiplies
    // by whatever alpha a hook wrote (Anime4K's upscalers write 1 + residual),
    // which no player shows.
    struct pl_frame target = {
        .num_planes = 1,
        .planes[0] = {
            .texture = out_tex,
            .components = 3,
            .component_mapping = { 0, 1, 2 },
        },
        .repr = {
            .sys = PL_COLOR_SYSTEM_RGB,
            .levels = PL_COLOR_LEVELS_FULL,
            .alpha = PL_ALPHA_UNKNOWN,
            .bits = { .sample_depth = 16, .color_depth = 16 },
        },
        .color = image.color,
        .crop = { 0, 0, out_w, out_h },
    };

    struct pl_render_params params = pl_render_default_params;
    params.upscaler = &pl_filter_bilinear;
    params.downscaler = &pl_filter_bilinear;
    params.plane_upscaler = &pl_filter_bilinear;
    params.plane_downscaler = &pl_filter_bilinear;
    params.antiringing_strength = 0;
    params.deband_params = NULL;
    params.sigmoid_params = NULL;
    params.peak_detect_params = NULL;
    params.dither_params = NULL;
    params.cone_params = NULL;
    params.blend_params = NULL;
    params.lut = NULL;
    params.disable_linear_scaling = true;
    params.ignore_icc_profiles = true;
    int num_user_hooks = num_hooks;
    if (offset_fix)
        hooks[num_hooks++] = &force_main_scaler;
    params.hooks = hooks;
    params.num_hooks = num_hooks;

    pl_renderer rr = pl_renderer_create(log, gpu);
    if (!rr)
        die(1, "cannot create a renderer");

    // One render for the output (and as the first warm-up: shader compiles).
    if (!pl_render_image(rr, &image, &target, &params))
        die(1, "rendering failed (libplacebo's message above)");
    if (num_errors)
        die(1, "libplacebo reported %d error(s) while rendering (above); a failing hook is skipped, "
               "so the output would not be the shader's", num_errors);

    if (out_path) {
        size_t n = (size_t) out_w * out_h * 4;
        uint16_t *rgba = malloc(n * sizeof(uint16_t));
        uint16_t *rgb = malloc((size_t) out_w * out_h * 3 * sizeof(uint16_t));
        if (!rgba || !rgb)
            die(1, "out of memory for the output");
        if (!pl_tex_download(gpu, pl_tex_transfer_params(
                .tex = out_tex,
                .ptr = rgba,
                .row_pitch = (size_t) out_w * 4 * sizeof(uint16_t),
            )))
            die(1, "cannot read the output texture back");
        // Host byte order is little-endian on every machine this runs on.
        for (size_t i = 0, j = 0; i < n; i += 4, j += 3) {
            rgb[j] = rgba[i];
            rgb[j + 1] = rgba[i + 1];
            rgb[j + 2] = rgba[i + 2];
        }
        FILE *f = fopen(out_path, "wb");
        if (!f)
            die(1, "cannot create '%s': %s", out_path, strerror(errno));
        size_t bytes = (size_t) out_w * out_h * 3 * sizeof(uint16_t);
        if (fwrite(rgb, 1, bytes, f) != bytes || fclose(f) != 0)
            die(1, "cannot write '%s': %s", out_path, strerror(errno));
        free(rgba);
        free(rgb);
    }

    if (frames) {
        // Second warm-up, then wait so the timed loop starts with an idle GPU.
        if (!pl_render_image(rr, &image, &target, &params))
            die(1, "rendering failed (libplacebo's message above)");
        pl_gpu_finish(gpu);
        double t0 = now_s();
        for (int i = 0; i < frames; i++) {
            if (!pl_render_image(rr, &image, &target, &params))
                die(1, "rendering failed at frame %d", i);
        }
        pl_gpu_finish(gpu);
        double dt = now_s() - t0;
        printf("fps=%.3f ms_per_frame=%.2f frames=%d in=%dx%d out=%dx%d shaders=%d\n",
               frames / dt, dt * 1000.0 / frames, frames, in_w, in_h, out_w, out_h, num_shaders);
    }

    pl_renderer_destroy(&rr);
    for (int i = 0; i < num_user_hooks; i++)
        pl_mpv_user_shader_destroy(&hooks[i]);
    for (int i = 0; i < num_shaders; i++)
        free(shader_text[i]);
    pl_tex_destroy(gpu, &out_tex);
    for (int p = 0; p < 3; p++)
        pl_tex_destroy(gpu, &in_tex[p]);
    pl_vulkan_destroy(&vk);
    pl_log_destroy(&log);
    free(in_data);
    return 0;
}
