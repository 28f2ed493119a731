// FakeV4L2: an emulated V4L2 capture device (and video output device: a virtual camera's loopback) for
// tests and CI, where no camera and no kernel module (v4l2loopback, CUSE) is available. Built as libFakeV4L2.so and injected with LD_PRELOAD into the
// `prism` process; Prism's capture code then makes exactly the system calls it makes against a real
// camera, and this library answers those that name a configured device path.
//
// What is intercepted (everything else, and every other fd, goes to the next definition: dlsym RTLD_NEXT):
//   open/open64/openat/openat64/__open_2/__open64_2  on a configured path: a new emulated device fd
//   close                                             frees the device's state, then the real close
//   ioctl                                             the VIDIOC_* calls a capture client makes
//   mmap/mmap64                                       on a device fd: maps that buffer's pages of a memfd
//   munmap                                            forgets the mapping (REQBUFS 0 is EBUSY while mapped)
//   write                                             on an output device fd: one frame (see "Output devices")
//
// The device fd is a real kernel object, a timerfd on CLOCK_MONOTONIC, so fcntl, close, poll, select and
// epoll need no emulation: the library arms the timer for the instant the next frame is due (or for "now"
// while a filled buffer waits to be dequeued) and disarms it when nothing will come, so the kernel itself
// reports POLLIN exactly when VIDIOC_DQBUF would succeed. Buffer memory is one memfd, so the client's
// mmap is a real shared mapping of pages the library writes frames into.
//
// Frames are generated lazily, at the configured rate on CLOCK_MONOTONIC: frame k is due at
// STREAMON + (k+1)/rate and is written into the oldest queued buffer when any DQBUF (or QBUF, STREAMON)
// notices it is due; a frame that finds no queued buffer is dropped, as a real driver drops it, and its
// sequence number is skipped. Timestamps are the due instants (V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, end of
// frame). The picture, BT.601 limited range: a background (blue for device 0, green for device 1, grey
// after), a red bar 1/20 of the width sliding 4 pixels per frame (x = 4k mod (width - bar width)), and
// frame k's number as 16 blocks of 16x16 pixels at (8 + 16 i, 8), bit i white when set, black otherwise.
// MJPG frames are that picture drawn as full-range 4:2:2 (what UVC webcams send) and compressed by
// libavcodec's MJPEG encoder at a fine quantiser, one JPEG per buffer, `bytesused` its length.
//
// Output devices (<prefix>_CAPS output or loopback) answer what a v4l2loopback writer asks for the
// video output buffer type: VIDIOC_ENUM_FMT lists <prefix>_FORMATS, VIDIOC_S_FMT/TRY_FMT/G_FMT take the
// nearest offered size and the layout as for capture (bytesperline padded per <prefix>_STRIDE_ALIGN) but
// keep the colour tags the writer sets, VIDIOC_S_PARM/G_PARM keep its rate. With `loopback` each write()
// is one frame, appended as it came to the file <prefix>_RECORD; at close (and after every frame) the
// file <prefix>_RECORD.txt says, one `key value` a line: fourcc, width, height, bytesperline, sizeimage,
// colorspace, ycbcr_enc, quantization, xfer_func, fps, frames (writes taken), bytes (their total),
// refused (writes answered EAGAIN). `output` devices have no read/write I/O: write() is EINVAL.
//
// Configuration, for device slot 0 with prefix PRISM_FAKE_V4L2 and slots 1-3 with PRISM_FAKE_V4L2_<n>:
//   <prefix>                the device path (required), e.g. /dev/video60
//   <prefix>_FORMATS        fourccs offered, in order: YUYV, NV12, YU12, MJPG, H264, RGB3, BGR3 (default
//                           YUYV,NV12; H264 is only listed, its buffers stay empty; RGB3 and BGR3 (24-bit
//                           RGB) are for output devices: a capture device draws nothing into them)
//   <prefix>_SIZES          discrete frame sizes, WxH,... (default 640x480,320x240,1280x720)
//   <prefix>_FPS            discrete rates in frames per second, N,... (default 30,15)
//   <prefix>_CAPS           capture (default) | output (video output, streaming only: not a capture
//                           device) | loopback (video output with read/write I/O and streaming, as
//                           v4l2loopback) | readwrite (capture, no streaming)
//   <prefix>_RECORD         output devices: the file write()s are appended to (and <prefix>_RECORD.txt)
//   <prefix>_REFUSE_EVERY   output devices: every Nth write() fails with EAGAIN (a loopback nobody reads)
//   <prefix>_STALL_AFTER    deliver this many frames, then none (a camera that hangs)
//   <prefix>_START_DELAY_MS the first frame comes this much later than one period after STREAMON (a camera
//                           slow to start)
//   <prefix>_CARD           the card name (default "Prism Fake Camera <n>")
//   <prefix>_STRIDE_ALIGN   pad bytesperline to a multiple of this (default 1: tight rows)
//   <prefix>_MJPG_CHROMA    420: MJPG frames are 4:2:0 (some webcams); default 422
//   <prefix>_CLIP           WxH:PATH, raw yuv420p frames of that size: at that size the device shows them
//                           (frame k is clip frame k mod count) instead of the picture above (face tests)
//   PRISM_FAKE_V4L2_TRACE   1: one stderr line per device call, and a summary at close
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>

#define FAKE_SLOTS 4
#define FAKE_MAX_FORMATS 8
#define FAKE_MAX_SIZES 16
#define FAKE_MAX_RATES 8
#define FAKE_MAX_BUFFERS 32
#define FAKE_MAX_FD 65536

enum caps_mode { CAPS_CAPTURE, CAPS_OUTPUT, CAPS_LOOPBACK, CAPS_READWRITE };

struct fake_config {
    char path[256];
    uint32_t formats[FAKE_MAX_FORMATS];
    int format_count;
    uint32_t widths[FAKE_MAX_SIZES], heights[FAKE_MAX_SIZES];
    int size_count;
    uint32_t rates[FAKE_MAX_RATES];
    int rate_count;
    enum caps_mode caps;
    long stall_after; // -1: never
    long start_delay_ms;
    char card[32];
    uint32_t stride_align;
    int mjpeg_420;
    // <prefix>_CLIP: yuv420p frames shown at clip_width x clip_height (NULL: the synthetic picture).
    uint8_t *clip;
    uint32_t clip_width, clip_height;
    uint64_t clip_frames;
    // Output devices: where written frames go (empty: nowhere), and every how many writes one is refused.
    char record[512];
    long refuse_every;
};

enum buffer_state { BUF_USER, BUF_QUEUED, BUF_DONE };

struct fake_buffer {
    enum buffer_state state;
    uint64_t order; // QBUF order (queued) or fill order (done): oldest first
    uint32_t sequence;
    uint32_t bytesused;
    struct timeval timestamp;
};

struct fake_mapping {
    void *address;
    size_t length;
    uint32_t index; // the buffer mapped
};

struct fake_device {
    int fd; // the timerfd handed to the client
    int slot;
    const struct fake_config *config;
    struct v4l2_pix_format pix;
    uint32_t rate; // frames per second
    // Buffers: one memfd, buffer i at i * stride.
    int memfd;
    uint8_t *memory; // the library's own mapping, for writing frames
    size_t stride, memory_length;
    uint32_t buffer_count;
    struct fake_buffer buffers[FAKE_MAX_BUFFERS];
    struct fake_mapping mappings[FAKE_MAX_BUFFERS * 4];
    int mapping_count;
    uint64_t order_counter;
    // Streaming.
    int streaming;
    struct timespec start;
    uint64_t frames_due;    // frames whose time has come (delivered or dropped)
    uint64_t frames_filled; // delivered into buffers
    int stream_ons;
    // MJPG: the encoder and the picture it compresses, made at the first frame of a format.
    AVCodecContext *jpeg;
    AVFrame *jpeg_picture;
    AVPacket *jpeg_packet;
    // Output: the format the writer set (its colour tags kept), its rate, and what write() took.
    struct v4l2_pix_format out_pix;
    struct v4l2_fract out_interval;
    int record_fd;
    uint64_t writes, frames_written, bytes_written, writes_refused;
};

static struct fake_config configs[FAKE_SLOTS];
static int config_count;
static int trace;
static struct fake_device *devices[FAKE_MAX_FD];
/// The open devices, so munmap (called often by everything) looks at a handful, not the fd table.
static struct fake_device *open_devices[64];
static int open_count;
// Recursive: the MJPEG encoder runs with the lock held and may itself reach an intercepted call.
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_open_2)(const char *, int);
static int (*real_open64_2)(const char *, int);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_munmap)(void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);

// MARK: configuration

static uint32_t fourcc_named(const char *name, size_t length) {
    if (length != 4) return 0;
    if (!strncmp(name, "YUYV", 4)) return V4L2_PIX_FMT_YUYV;
    if (!strncmp(name, "NV12", 4)) return V4L2_PIX_FMT_NV12;
    if (!strncmp(name, "YU12", 4)) return V4L2_PIX_FMT_YUV420;
    if (!strncmp(name, "MJPG", 4)) return V4L2_PIX_FMT_MJPEG;
    if (!strncmp(name, "H264", 4)) return V4L2_PIX_FMT_H264; // offered, never streamed: a format Prism does not take
    if (!strncmp(name, "RGB3", 4)) return V4L2_PIX_FMT_RGB24;
    if (!strncmp(name, "BGR3", 4)) return V4L2_PIX_FMT_BGR24;
    return 0;
}

static const char *variable(const char *prefix, const char *suffix) {
    char name[96];
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    return getenv(name);
}

/// Reads a whole `WxH:PATH` clip of yuv420p frames into memory (kept for the life of the process).
static void load_clip(struct fake_config *config, const char *prefix, const char *text) {
    unsigned w = 0, h = 0;
    int offset = 0;
    if (sscanf(text, "%ux%u:%n", &w, &h, &offset) != 2 || offset == 0 || w % 2 || h % 2) {
        fprintf(stderr, "fake-v4l2: %s_CLIP: expected WxH:PATH (even sizes), not '%s'\n", prefix, text);
        return;
    }
    FILE *file = fopen(text + offset, "rb");
    if (!file) { fprintf(stderr, "fake-v4l2: %s_CLIP: cannot open %s\n", prefix, text + offset); return; }
    size_t frame = (size_t)w * h * 3 / 2;
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint64_t count = length > 0 ? (uint64_t)length / frame : 0;
    uint8_t *data = count ? malloc(count * frame) : NULL;
    if (!data || fread(data, frame, count, file) != count) {
        fprintf(stderr, "fake-v4l2: %s_CLIP: %s holds no whole %ux%u yuv420p frame\n", prefix, text + offset, w, h);
        free(data);
        fclose(file);
        return;
    }
    fclose(file);
    config->clip = data;
    config->clip_width = w;
    config->clip_height = h;
    config->clip_frames = count;
}

static void load_slot(int slot) {
    char prefix[64];
    if (slot == 0) snprintf(prefix, sizeof prefix, "PRISM_FAKE_V4L2");
    else snprintf(prefix, sizeof prefix, "PRISM_FAKE_V4L2_%d", slot);
    const char *path = getenv(prefix);
    if (!path || !*path) return;
    struct fake_config *config = &configs[config_count++];
    memset(config, 0, sizeof *config);
    snprintf(config->path, sizeof config->path, "%s", path);

    const char *text = variable(prefix, "_FORMATS");
    if (!text) text = "YUYV,NV12";
    for (const char *p = text; *p && config->format_count < FAKE_MAX_FORMATS;) {
        size_t length = strcspn(p, ",");
        uint32_t fourcc = fourcc_named(p, length);
        if (fourcc) config->formats[config->format_count++] = fourcc;
        else fprintf(stderr, "fake-v4l2: %s_FORMATS: unknown format '%.*s'\n", prefix, (int)length, p);
        p += length + (p[length] == ',');
    }

    text = variable(prefix, "_SIZES");
    if (!text) text = "640x480,320x240,1280x720";
    for (const char *p = text; *p && config->size_count < FAKE_MAX_SIZES;) {
        unsigned w = 0, h = 0;
        if (sscanf(p, "%ux%u", &w, &h) == 2 && w >= 64 && h >= 32 && w % 4 == 0 && h % 2 == 0) {
            config->widths[config->size_count] = w;
            config->heights[config->size_count++] = h;
        } else {
            fprintf(stderr, "fake-v4l2: %s_SIZES: bad size near '%s' (widths multiple of 4, heights even)\n", prefix, p);
        }
        p += strcspn(p, ",");
        p += (*p == ',');
    }

    text = variable(prefix, "_FPS");
    if (!text) text = "30,15";
    for (const char *p = text; *p && config->rate_count < FAKE_MAX_RATES;) {
        unsigned rate = (unsigned)strtoul(p, NULL, 10);
        if (rate >= 1 && rate <= 240) config->rates[config->rate_count++] = rate;
        p += strcspn(p, ",");
        p += (*p == ',');
    }
    if (config->rate_count == 0) config->rates[config->rate_count++] = 30;

    text = variable(prefix, "_CAPS");
    config->caps = !text ? CAPS_CAPTURE : !strcmp(text, "output") ? CAPS_OUTPUT
                 : !strcmp(text, "loopback") ? CAPS_LOOPBACK
                 : !strcmp(text, "readwrite") ? CAPS_READWRITE : CAPS_CAPTURE;
    text = variable(prefix, "_RECORD");
    snprintf(config->record, sizeof config->record, "%s", text ? text : "");
    text = variable(prefix, "_REFUSE_EVERY");
    config->refuse_every = text ? strtol(text, NULL, 10) : 0;
    text = variable(prefix, "_STALL_AFTER");
    config->stall_after = text ? strtol(text, NULL, 10) : -1;
    text = variable(prefix, "_START_DELAY_MS");
    config->start_delay_ms = text ? strtol(text, NULL, 10) : 0;
    text = variable(prefix, "_CARD");
    snprintf(config->card, sizeof config->card, "%s", text ? text : "");
    if (!text) snprintf(config->card, sizeof config->card, "Prism Fake Camera %d", slot);
    text = variable(prefix, "_STRIDE_ALIGN");
    config->stride_align = text ? (uint32_t)strtoul(text, NULL, 10) : 1;
    if (config->stride_align == 0) config->stride_align = 1;
    text = variable(prefix, "_MJPG_CHROMA");
    config->mjpeg_420 = text && !strcmp(text, "420");
    text = variable(prefix, "_CLIP");
    if (text) load_clip(config, prefix, text);
}

static void initialise(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_openat64 = dlsym(RTLD_NEXT, "openat64");
    real_open_2 = dlsym(RTLD_NEXT, "__open_2");
    real_open64_2 = dlsym(RTLD_NEXT, "__open64_2");
    real_close = dlsym(RTLD_NEXT, "close");
    real_ioctl = dlsym(RTLD_NEXT, "ioctl");
    real_mmap = dlsym(RTLD_NEXT, "mmap");
    real_mmap64 = dlsym(RTLD_NEXT, "mmap64");
    real_munmap = dlsym(RTLD_NEXT, "munmap");
    real_write = dlsym(RTLD_NEXT, "write");
    const char *text = getenv("PRISM_FAKE_V4L2_TRACE");
    trace = text && *text == '1';
    for (int slot = 0; slot < FAKE_SLOTS; slot++) load_slot(slot);
}

static void ensure_initialised(void) { pthread_once(&once, initialise); }

__attribute__((constructor)) static void fake_v4l2_constructor(void) { ensure_initialised(); }

static const struct fake_config *config_for(const char *path, int *slot) {
    if (!path) return NULL;
    for (int i = 0; i < config_count; i++) {
        if (!strcmp(configs[i].path, path)) {
            *slot = i;
            return &configs[i];
        }
    }
    return NULL;
}

static struct fake_device *device_for(int fd) {
    if (fd < 0 || fd >= FAKE_MAX_FD) return NULL;
    return devices[fd];
}

#define TRACE(...) do { if (trace) { fprintf(stderr, "fake-v4l2: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

// MARK: formats

static int offers_format(const struct fake_config *config, uint32_t fourcc) {
    for (int i = 0; i < config->format_count; i++) if (config->formats[i] == fourcc) return 1;
    return 0;
}

/// Fills bytesperline and sizeimage for a format and size (single-planar layouts).
static void fill_layout(struct v4l2_pix_format *pix, uint32_t align) {
    int rgb = pix->pixelformat == V4L2_PIX_FMT_RGB24 || pix->pixelformat == V4L2_PIX_FMT_BGR24;
    uint32_t luma = pix->pixelformat == V4L2_PIX_FMT_YUYV ? pix->width * 2 : rgb ? pix->width * 3 : pix->width;
    uint32_t line = (luma + align - 1) / align * align;
    if (pix->pixelformat == V4L2_PIX_FMT_YUV420 && line % 2) line += 1; // chroma lines are half of it
    pix->bytesperline = line;
    switch (pix->pixelformat) {
    case V4L2_PIX_FMT_YUYV: case V4L2_PIX_FMT_RGB24: case V4L2_PIX_FMT_BGR24: pix->sizeimage = line * pix->height; break;
    case V4L2_PIX_FMT_NV12: pix->sizeimage = line * pix->height + line * (pix->height / 2); break;
    case V4L2_PIX_FMT_YUV420: pix->sizeimage = line * pix->height + 2 * (line / 2) * (pix->height / 2); break;
    default: pix->bytesperline = 0; pix->sizeimage = pix->width * pix->height * 2 + 65536; break; // compressed: an upper bound
    }
}

/// What the driver does with a requested format: the fourcc if offered (else its first), the nearest
/// discrete size, the layout for it, progressive, BT.601 limited range.
static void adjust_format(const struct fake_config *config, struct v4l2_pix_format *pix) {
    if (!offers_format(config, pix->pixelformat)) pix->pixelformat = config->formats[0];
    int best = 0;
    long best_distance = -1;
    for (int i = 0; i < config->size_count; i++) {
        long distance = labs((long)config->widths[i] - (long)pix->width) + labs((long)config->heights[i] - (long)pix->height);
        if (best_distance < 0 || distance < best_distance) { best = i; best_distance = distance; }
    }
    pix->width = config->widths[best];
    pix->height = config->heights[best];
    pix->field = V4L2_FIELD_NONE;
    fill_layout(pix, config->stride_align);
    pix->colorspace = V4L2_COLORSPACE_SMPTE170M;
    pix->priv = 0;
    pix->flags = 0;
    pix->ycbcr_enc = V4L2_YCBCR_ENC_601;
    pix->quantization = V4L2_QUANTIZATION_LIM_RANGE;
    pix->xfer_func = V4L2_XFER_FUNC_709;
}

static uint32_t nearest_rate(const struct fake_config *config, struct v4l2_fract interval) {
    if (interval.numerator == 0 || interval.denominator == 0) return config->rates[0];
    double wanted = (double)interval.denominator / interval.numerator;
    uint32_t best = config->rates[0];
    for (int i = 1; i < config->rate_count; i++) {
        double a = config->rates[i] - wanted, b = (double)best - wanted;
        if ((a < 0 ? -a : a) < (b < 0 ? -b : b)) best = config->rates[i];
    }
    return best;
}

// MARK: frames

struct yuv { uint8_t y, u, v; };

static struct yuv background_for(int slot) {
    switch (slot) {
    case 0: return (struct yuv){41, 240, 110};  // blue
    case 1: return (struct yuv){145, 54, 34};   // green
    default: return (struct yuv){126, 128, 128}; // grey
    }
}
static const struct yuv bar_colour = {81, 90, 240}; // red
static const struct yuv white = {235, 128, 128}, black = {16, 128, 128};

/// The colour of column x in a row of the picture (`counter_row`: a row through the frame counter).
static struct yuv pixel_at(uint32_t x, int counter_row, uint64_t k, uint32_t bar_x, uint32_t bar_width, struct yuv bg) {
    if (counter_row && x >= 8 && x < 8 + 16 * 16) {
        uint32_t bit = (x - 8) / 16;
        return (k >> bit) & 1 ? white : black;
    }
    if (x >= bar_x && x < bar_x + bar_width) return bar_colour;
    return bg;
}

/// Clip frame k mod count, converted to the negotiated layout.
static void draw_clip_frame(struct fake_device *device, uint8_t *out, uint64_t k) {
    const struct v4l2_pix_format *pix = &device->pix;
    const struct fake_config *config = device->config;
    uint32_t width = pix->width, height = pix->height, line = pix->bytesperline;
    const uint8_t *y = config->clip + (k % config->clip_frames) * ((size_t)width * height * 3 / 2);
    const uint8_t *u = y + (size_t)width * height, *v = u + (size_t)width * height / 4;
    for (uint32_t row = 0; row < height; row++) {
        const uint8_t *ys = y + (size_t)row * width, *us = u + (size_t)(row / 2) * (width / 2), *vs = v + (size_t)(row / 2) * (width / 2);
        if (pix->pixelformat == V4L2_PIX_FMT_YUYV) {
            uint8_t *p = out + (size_t)row * line;
            for (uint32_t x = 0; x < width; x += 2) {
                p[2 * x] = ys[x]; p[2 * x + 1] = us[x / 2]; p[2 * x + 2] = ys[x + 1]; p[2 * x + 3] = vs[x / 2];
            }
            continue;
        }
        memcpy(out + (size_t)row * line, ys, width);
        if (row % 2) continue;
        uint8_t *chroma = out + (size_t)line * height;
        if (pix->pixelformat == V4L2_PIX_FMT_NV12) {
            uint8_t *p = chroma + (size_t)(row / 2) * line;
            for (uint32_t x = 0; x < width / 2; x++) { p[2 * x] = us[x]; p[2 * x + 1] = vs[x]; }
        } else {
            uint32_t half = line / 2;
            memcpy(chroma + (size_t)(row / 2) * half, us, width / 2);
            memcpy(chroma + (size_t)half * (height / 2) + (size_t)(row / 2) * half, vs, width / 2);
        }
    }
}

static void free_jpeg(struct fake_device *device) {
    avcodec_free_context(&device->jpeg);
    av_frame_free(&device->jpeg_picture);
    av_packet_free(&device->jpeg_packet);
}

/// Limited-range BT.601 → full range (JPEG's): Y' 16…235 → 0…255, Cb/Cr 16…240 → 0…255 about 128.
static uint8_t full_luma(uint8_t y) { int v = ((int)y - 16) * 255 / 219; return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }
static uint8_t full_chroma(uint8_t c) { int v = 128 + ((int)c - 128) * 255 / 224; return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/// Draws frame k as full-range 4:2:2 (or 4:2:0) and compresses it into `out` (at most sizeimage bytes); returns its
/// length, 0 when the encoder fails (the buffer then reaches the client flagged as an error).
static uint32_t encode_jpeg(struct fake_device *device, uint8_t *out, uint64_t k, uint32_t bar_x, uint32_t bar_width,
                            struct yuv bg) {
    const struct v4l2_pix_format *pix = &device->pix;
    if (!device->jpeg || device->jpeg->width != (int)pix->width || device->jpeg->height != (int)pix->height) {
        free_jpeg(device);
        const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
        if (!codec || !(device->jpeg = avcodec_alloc_context3(codec))) return 0;
        device->jpeg->width = (int)pix->width;
        device->jpeg->height = (int)pix->height;
        enum AVPixelFormat format = device->config->mjpeg_420 ? AV_PIX_FMT_YUVJ420P : AV_PIX_FMT_YUVJ422P;
        device->jpeg->pix_fmt = format;
        device->jpeg->color_range = AVCOL_RANGE_JPEG;
        device->jpeg->time_base = (AVRational){1, (int)device->rate};
        device->jpeg->thread_count = 1;
        device->jpeg->flags |= AV_CODEC_FLAG_QSCALE;
        device->jpeg->global_quality = 2 * FF_QP2LAMBDA;
        device->jpeg_picture = av_frame_alloc();
        device->jpeg_packet = av_packet_alloc();
        if (!device->jpeg_picture || !device->jpeg_packet || avcodec_open2(device->jpeg, codec, NULL) < 0) { free_jpeg(device); return 0; }
        device->jpeg_picture->format = format;
        device->jpeg_picture->width = (int)pix->width;
        device->jpeg_picture->height = (int)pix->height;
        if (av_frame_get_buffer(device->jpeg_picture, 0) < 0) { free_jpeg(device); return 0; }
    }
    AVFrame *picture = device->jpeg_picture;
    if (av_frame_make_writable(picture) < 0) return 0;
    for (uint32_t row = 0; row < pix->height; row++) {
        int counter = row >= 8 && row < 24;
        uint8_t *luma = picture->data[0] + (size_t)row * picture->linesize[0];
        uint32_t chroma_row = device->config->mjpeg_420 ? row / 2 : row;
        int chroma = !device->config->mjpeg_420 || row % 2 == 0;
        uint8_t *cb = picture->data[1] + (size_t)chroma_row * picture->linesize[1];
        uint8_t *cr = picture->data[2] + (size_t)chroma_row * picture->linesize[2];
        for (uint32_t x = 0; x < pix->width; x++) {
            struct yuv c = pixel_at(x, counter, k, bar_x, bar_width, bg);
            luma[x] = full_luma(c.y);
            if (chroma && x % 2 == 0) { cb[x / 2] = full_chroma(c.u); cr[x / 2] = full_chroma(c.v); }
        }
    }
    picture->pts = (int64_t)k;
    uint32_t length = 0;
    if (avcodec_send_frame(device->jpeg, picture) >= 0 && avcodec_receive_packet(device->jpeg, device->jpeg_packet) >= 0) {
        if ((uint32_t)device->jpeg_packet->size <= pix->sizeimage) {
            memcpy(out, device->jpeg_packet->data, (size_t)device->jpeg_packet->size);
            length = (uint32_t)device->jpeg_packet->size;
        }
        av_packet_unref(device->jpeg_packet);
    }
    return length;
}

/// Draws frame k into a buffer; returns the bytes used.
static uint32_t draw_frame(struct fake_device *device, uint8_t *out, uint64_t k) {
    const struct v4l2_pix_format *pix = &device->pix;
    if (device->config->clip && pix->width == device->config->clip_width && pix->height == device->config->clip_height
        && pix->pixelformat != V4L2_PIX_FMT_MJPEG) {
        draw_clip_frame(device, out, k);
        return pix->sizeimage;
    }
    uint32_t width = pix->width, height = pix->height, line = pix->bytesperline;
    uint32_t bar_width = (width / 20) & ~3u;
    if (bar_width < 8) bar_width = 8;
    uint32_t bar_x = (uint32_t)((k * 4) % (width - bar_width)) & ~1u;
    struct yuv bg = background_for(device->slot);
    if (pix->pixelformat == V4L2_PIX_FMT_MJPEG) return encode_jpeg(device, out, k, bar_x, bar_width, bg);
    for (uint32_t row = 0; row < height; row++) {
        int counter = row >= 8 && row < 24;
        if (pix->pixelformat == V4L2_PIX_FMT_YUYV) {
            uint8_t *p = out + (size_t)row * line;
            for (uint32_t x = 0; x < width; x += 2) {
                struct yuv a = pixel_at(x, counter, k, bar_x, bar_width, bg);
                struct yuv b = pixel_at(x + 1, counter, k, bar_x, bar_width, bg);
                p[2 * x] = a.y; p[2 * x + 1] = a.u; p[2 * x + 2] = b.y; p[2 * x + 3] = a.v;
            }
        } else if (pix->pixelformat == V4L2_PIX_FMT_NV12 || pix->pixelformat == V4L2_PIX_FMT_YUV420) {
            uint8_t *luma = out + (size_t)row * line;
            for (uint32_t x = 0; x < width; x++) luma[x] = pixel_at(x, counter, k, bar_x, bar_width, bg).y;
            if (row % 2) continue;
            uint8_t *chroma = out + (size_t)line * height;
            for (uint32_t x = 0; x < width; x += 2) {
                struct yuv c = pixel_at(x, counter, k, bar_x, bar_width, bg);
                if (pix->pixelformat == V4L2_PIX_FMT_NV12) {
                    uint8_t *p = chroma + (size_t)(row / 2) * line;
                    p[x] = c.u; p[x + 1] = c.v;
                } else {
                    uint32_t half = line / 2;
                    chroma[(size_t)(row / 2) * half + x / 2] = c.u;
                    chroma[(size_t)half * (height / 2) + (size_t)(row / 2) * half + x / 2] = c.v;
                }
            }
        }
    }
    return pix->sizeimage;
}

static uint64_t nanoseconds(struct timespec t) { return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec; }

static uint64_t period_ns(const struct fake_device *device) { return 1000000000ull / device->rate; }

static int stalled(const struct fake_device *device) {
    return device->config->stall_after >= 0 && device->frames_due >= (uint64_t)device->config->stall_after;
}

static int oldest(struct fake_device *device, enum buffer_state state) {
    int found = -1;
    for (uint32_t i = 0; i < device->buffer_count; i++) {
        if (device->buffers[i].state == state && (found < 0 || device->buffers[i].order < device->buffers[found].order)) found = (int)i;
    }
    return found;
}

/// Produces every frame whose time has come: into the oldest queued buffer, or dropped.
static void advance(struct fake_device *device) {
    if (!device->streaming) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (nanoseconds(now) < nanoseconds(device->start)) return; // still starting (_START_DELAY_MS)
    uint64_t elapsed = nanoseconds(now) - nanoseconds(device->start);
    uint64_t due = elapsed / period_ns(device);
    while (device->frames_due < due && !stalled(device)) {
        uint64_t k = device->frames_due++;
        int index = oldest(device, BUF_QUEUED);
        if (index < 0) { // no buffer: the frame is dropped
            if (trace) {
                int user = 0, done = 0;
                for (uint32_t i = 0; i < device->buffer_count; i++) {
                    user += device->buffers[i].state == BUF_USER;
                    done += device->buffers[i].state == BUF_DONE;
                }
                TRACE("frame %llu dropped: no queued buffer (%d with the client, %d filled)", (unsigned long long)k, user, done);
            }
            continue;
        }
        struct fake_buffer *buffer = &device->buffers[index];
        buffer->bytesused = draw_frame(device, device->memory + (size_t)index * device->stride, k);
        uint64_t at = nanoseconds(device->start) + (k + 1) * period_ns(device);
        buffer->timestamp.tv_sec = (time_t)(at / 1000000000ull);
        buffer->timestamp.tv_usec = (suseconds_t)(at % 1000000000ull / 1000);
        buffer->sequence = (uint32_t)k;
        buffer->state = BUF_DONE;
        buffer->order = device->order_counter++;
        device->frames_filled++;
    }
}

/// Arms the timerfd so that the kernel reports it readable exactly when DQBUF would succeed.
static void rearm(struct fake_device *device) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (device->streaming) {
        if (oldest(device, BUF_DONE) >= 0) {
            spec.it_value.tv_nsec = 1; // an absolute time long past: readable now
        } else if (!stalled(device) && oldest(device, BUF_QUEUED) >= 0) {
            uint64_t at = nanoseconds(device->start) + (device->frames_due + 1) * period_ns(device);
            spec.it_value.tv_sec = (time_t)(at / 1000000000ull);
            spec.it_value.tv_nsec = (long)(at % 1000000000ull);
        }
        // A queue with no buffer in it, or a stalled camera: nothing will come, the timer stays disarmed.
    }
    timerfd_settime(device->fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

// MARK: output

/// Rewrites <prefix>_RECORD.txt: the format the writer set and what its write()s came to.
static void write_record_info(struct fake_device *device) {
    if (!device->config->record[0]) return;
    char path[600];
    snprintf(path, sizeof path, "%s.txt", device->config->record);
    FILE *file = fopen(path, "w");
    if (!file) return;
    const struct v4l2_pix_format *pix = &device->out_pix;
    char fourcc[5] = {(char)(pix->pixelformat & 0xff), (char)(pix->pixelformat >> 8 & 0xff),
                      (char)(pix->pixelformat >> 16 & 0xff), (char)(pix->pixelformat >> 24 & 0xff), 0};
    fprintf(file, "fourcc %s\nwidth %u\nheight %u\nbytesperline %u\nsizeimage %u\n", fourcc, pix->width, pix->height,
            pix->bytesperline, pix->sizeimage);
    fprintf(file, "colorspace %u\nycbcr_enc %u\nquantization %u\nxfer_func %u\n", pix->colorspace, pix->ycbcr_enc,
            pix->quantization, pix->xfer_func);
    fprintf(file, "fps %u/%u\nframes %llu\nbytes %llu\nrefused %llu\n", device->out_interval.denominator,
            device->out_interval.numerator, (unsigned long long)device->frames_written,
            (unsigned long long)device->bytes_written, (unsigned long long)device->writes_refused);
    fclose(file);
}

/// write() on an output device: one frame, as v4l2loopback takes it (appended to <prefix>_RECORD), or EAGAIN
/// for every <prefix>_REFUSE_EVERY-th call, as a loopback whose buffers nobody empties answers.
static ssize_t write_frame(struct fake_device *device, const void *data, size_t count) {
    if (device->config->caps != CAPS_LOOPBACK) { errno = EINVAL; return -1; }
    device->writes++;
    if (device->config->refuse_every > 0 && device->writes % (uint64_t)device->config->refuse_every == 0) {
        device->writes_refused++;
        write_record_info(device);
        errno = EAGAIN;
        return -1;
    }
    if (device->config->record[0]) {
        if (device->record_fd < 0) {
            device->record_fd = real_open(device->config->record, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (device->record_fd < 0) return -1;
        }
        for (size_t done = 0; done < count;) {
            ssize_t n = real_write(device->record_fd, (const uint8_t *)data + done, count - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return -1;
            done += (size_t)n;
        }
    }
    device->frames_written++;
    device->bytes_written += count;
    write_record_info(device);
    TRACE("write fd %d: frame %llu, %zu bytes", device->fd, (unsigned long long)device->frames_written, count);
    return (ssize_t)count;
}

ssize_t write(int fd, const void *data, size_t count) {
    ensure_initialised();
    // Every write of the process comes here: only the fd table is looked at (no lock) unless it is a device.
    if (fd < 0 || fd >= FAKE_MAX_FD || !devices[fd]) return real_write(fd, data, count);
    pthread_mutex_lock(&lock);
    struct fake_device *device = device_for(fd);
    if (!device) {
        pthread_mutex_unlock(&lock);
        return real_write(fd, data, count);
    }
    ssize_t result = write_frame(device, data, count);
    int code = errno;
    pthread_mutex_unlock(&lock);
    errno = code;
    return result;
}

// MARK: device lifetime

static void release_buffers(struct fake_device *device) {
    if (device->memory) real_munmap(device->memory, device->memory_length);
    if (device->memfd >= 0) real_close(device->memfd);
    device->memory = NULL;
    device->memfd = -1;
    device->buffer_count = 0;
}

static int open_device(const struct fake_config *config, int slot, int flags) {
    if (config->format_count == 0 || config->size_count == 0) { errno = ENODEV; return -1; }
    int fd = timerfd_create(CLOCK_MONOTONIC, ((flags & O_CLOEXEC) ? TFD_CLOEXEC : 0) | ((flags & O_NONBLOCK) ? TFD_NONBLOCK : 0));
    if (fd < 0) return -1;
    if (fd >= FAKE_MAX_FD) { real_close(fd); errno = EMFILE; return -1; }
    struct fake_device *device = calloc(1, sizeof *device);
    if (!device) { real_close(fd); errno = ENOMEM; return -1; }
    device->fd = fd;
    device->slot = slot;
    device->config = config;
    device->memfd = -1;
    device->pix.pixelformat = config->formats[0];
    device->pix.width = config->widths[0];
    device->pix.height = config->heights[0];
    adjust_format(config, &device->pix);
    device->rate = config->rates[0];
    device->out_pix = device->pix;
    device->out_interval = (struct v4l2_fract){1, config->rates[0]};
    device->record_fd = -1;
    pthread_mutex_lock(&lock);
    if (open_count == (int)(sizeof open_devices / sizeof open_devices[0])) {
        pthread_mutex_unlock(&lock);
        free(device);
        real_close(fd);
        errno = EMFILE;
        return -1;
    }
    devices[fd] = device;
    open_devices[open_count++] = device;
    pthread_mutex_unlock(&lock);
    TRACE("open %s -> fd %d", config->path, fd);
    return fd;
}

static int maybe_open(const char *path, int flags, int *handled) {
    ensure_initialised();
    int slot = 0;
    const struct fake_config *config = config_for(path, &slot);
    *handled = config != NULL;
    return config ? open_device(config, slot, flags) : -1;
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int handled, fd = maybe_open(path, flags, &handled);
    return handled ? fd : real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int handled, fd = maybe_open(path, flags, &handled);
    return handled ? fd : real_open64(path, flags, mode);
}

int openat(int directory, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int handled = 0, fd = -1;
    if (path[0] == '/') fd = maybe_open(path, flags, &handled);
    else ensure_initialised();
    return handled ? fd : real_openat(directory, path, flags, mode);
}

int openat64(int directory, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    int handled = 0, fd = -1;
    if (path[0] == '/') fd = maybe_open(path, flags, &handled);
    else ensure_initialised();
    return handled ? fd : real_openat64(directory, path, flags, mode);
}

int __open_2(const char *path, int flags) {
    int handled, fd = maybe_open(path, flags, &handled);
    return handled ? fd : real_open_2(path, flags);
}

int __open64_2(const char *path, int flags) {
    int handled, fd = maybe_open(path, flags, &handled);
    return handled ? fd : real_open64_2(path, flags);
}

int close(int fd) {
    ensure_initialised();
    pthread_mutex_lock(&lock);
    struct fake_device *device = device_for(fd);
    if (device) {
        devices[fd] = NULL;
        for (int i = 0; i < open_count; i++) {
            if (open_devices[i] == device) { open_devices[i] = open_devices[--open_count]; break; }
        }
        TRACE("close fd %d (%s): streaming=%d buffers=%u mapped=%d frames=%llu dropped=%llu", fd, device->config->path,
              device->streaming, device->buffer_count, device->mapping_count,
              (unsigned long long)device->frames_filled, (unsigned long long)(device->frames_due - device->frames_filled));
        release_buffers(device);
        free_jpeg(device);
        if (device->writes) write_record_info(device);
        if (device->record_fd >= 0) real_close(device->record_fd);
        free(device);
    }
    pthread_mutex_unlock(&lock);
    return real_close(fd);
}

// MARK: ioctl

static void copy_string(__u8 *destination, size_t size, const char *source) {
    memset(destination, 0, size);
    strncpy((char *)destination, source, size - 1);
}

static int querycap(struct fake_device *device, struct v4l2_capability *cap) {
    memset(cap, 0, sizeof *cap);
    copy_string(cap->driver, sizeof cap->driver, "prism-fake");
    copy_string(cap->card, sizeof cap->card, device->config->card);
    char bus[32];
    snprintf(bus, sizeof bus, "platform:prism-fake-%d", device->slot);
    copy_string(cap->bus_info, sizeof cap->bus_info, bus);
    cap->version = (6u << 16) | (1u << 8);
    switch (device->config->caps) {
    case CAPS_CAPTURE: cap->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING; break;
    case CAPS_OUTPUT: cap->device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING; break;
    case CAPS_LOOPBACK: cap->device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_READWRITE | V4L2_CAP_STREAMING; break;
    case CAPS_READWRITE: cap->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_READWRITE; break;
    }
    cap->capabilities = cap->device_caps | V4L2_CAP_DEVICE_CAPS;
    return 0;
}

static const char *format_name(uint32_t fourcc) {
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: return "YUYV 4:2:2";
    case V4L2_PIX_FMT_NV12: return "Y/UV 4:2:0";
    case V4L2_PIX_FMT_YUV420: return "Planar YUV 4:2:0";
    case V4L2_PIX_FMT_MJPEG: return "Motion-JPEG";
    case V4L2_PIX_FMT_H264: return "H.264";
    case V4L2_PIX_FMT_RGB24: return "24-bit RGB 8-8-8";
    case V4L2_PIX_FMT_BGR24: return "24-bit BGR 8-8-8";
    default: return "?";
    }
}

static int capture_type(uint32_t type) { return type == V4L2_BUF_TYPE_VIDEO_CAPTURE && 1; }

static int fail(int code) { errno = code; return -1; }

/// The video output buffer type's ioctls on an output device; 1 when `request` was one of them.
static int handle_output(struct fake_device *device, unsigned long request, void *argument, int *result) {
    const struct fake_config *config = device->config;
    switch (request) {
    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *desc = argument;
        if (desc->type != V4L2_BUF_TYPE_VIDEO_OUTPUT) return 0;
        if (desc->index >= (uint32_t)config->format_count) { *result = fail(EINVAL); return 1; }
        uint32_t index = desc->index;
        memset(desc, 0, sizeof *desc);
        desc->index = index;
        desc->type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
        desc->pixelformat = config->formats[index];
        desc->flags = desc->pixelformat == V4L2_PIX_FMT_MJPEG || desc->pixelformat == V4L2_PIX_FMT_H264 ? V4L2_FMT_FLAG_COMPRESSED : 0;
        copy_string(desc->description, sizeof desc->description, format_name(desc->pixelformat));
        *result = 0;
        return 1;
    }
    case VIDIOC_G_FMT:
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT: {
        struct v4l2_format *format = argument;
        if (format->type != V4L2_BUF_TYPE_VIDEO_OUTPUT) return 0;
        struct v4l2_pix_format pix = device->out_pix;
        if (request != VIDIOC_G_FMT) {
            // The driver's size and layout; the writer's colour tags (what its readers are told), as v4l2loopback.
            pix = format->fmt.pix;
            adjust_format(config, &pix);
            if (format->fmt.pix.colorspace != V4L2_COLORSPACE_DEFAULT) {
                pix.colorspace = format->fmt.pix.colorspace;
                pix.ycbcr_enc = format->fmt.pix.ycbcr_enc;
                pix.quantization = format->fmt.pix.quantization;
                pix.xfer_func = format->fmt.pix.xfer_func;
            }
            if (request == VIDIOC_S_FMT) device->out_pix = pix;
        }
        memset(&format->fmt, 0, sizeof format->fmt);
        format->fmt.pix = pix;
        *result = 0;
        return 1;
    }
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        struct v4l2_streamparm *parm = argument;
        if (parm->type != V4L2_BUF_TYPE_VIDEO_OUTPUT) return 0;
        struct v4l2_fract wanted = parm->parm.output.timeperframe;
        if (request == VIDIOC_S_PARM && wanted.numerator && wanted.denominator) device->out_interval = wanted;
        memset(&parm->parm, 0, sizeof parm->parm);
        parm->parm.output.capability = V4L2_CAP_TIMEPERFRAME;
        parm->parm.output.timeperframe = device->out_interval;
        *result = 0;
        return 1;
    }
    default:
        return 0;
    }
}

static int handle(struct fake_device *device, unsigned long request, void *argument) {
    const struct fake_config *config = device->config;
    int capture = config->caps == CAPS_CAPTURE || config->caps == CAPS_READWRITE;
    int output_result = 0;
    if ((config->caps == CAPS_OUTPUT || config->caps == CAPS_LOOPBACK)
        && handle_output(device, request, argument, &output_result)) return output_result;
    switch (request) {
    case VIDIOC_QUERYCAP:
        return querycap(device, argument);
    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *desc = argument;
        if (!capture || !capture_type(desc->type) || desc->index >= (uint32_t)config->format_count) return fail(EINVAL);
        uint32_t index = desc->index, type = desc->type;
        memset(desc, 0, sizeof *desc);
        desc->index = index;
        desc->type = type;
        desc->pixelformat = config->formats[index];
        desc->flags = desc->pixelformat == V4L2_PIX_FMT_MJPEG || desc->pixelformat == V4L2_PIX_FMT_H264 ? V4L2_FMT_FLAG_COMPRESSED : 0;
        copy_string(desc->description, sizeof desc->description, format_name(desc->pixelformat));
        return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES: {
        struct v4l2_frmsizeenum *size = argument;
        if (!offers_format(config, size->pixel_format) || size->index >= (uint32_t)config->size_count) return fail(EINVAL);
        size->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        size->discrete.width = config->widths[size->index];
        size->discrete.height = config->heights[size->index];
        return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS: {
        struct v4l2_frmivalenum *interval = argument;
        if (!offers_format(config, interval->pixel_format) || interval->index >= (uint32_t)config->rate_count) return fail(EINVAL);
        int known = 0;
        for (int i = 0; i < config->size_count; i++) {
            known |= config->widths[i] == interval->width && config->heights[i] == interval->height;
        }
        if (!known) return fail(EINVAL);
        interval->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        interval->discrete.numerator = 1;
        interval->discrete.denominator = config->rates[interval->index];
        return 0;
    }
    case VIDIOC_G_FMT: {
        struct v4l2_format *format = argument;
        if (!capture || !capture_type(format->type)) return fail(EINVAL);
        memset(&format->fmt, 0, sizeof format->fmt);
        format->fmt.pix = device->pix;
        return 0;
    }
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT: {
        struct v4l2_format *format = argument;
        if (!capture || !capture_type(format->type)) return fail(EINVAL);
        struct v4l2_pix_format pix = format->fmt.pix;
        adjust_format(config, &pix);
        if (request == VIDIOC_S_FMT) {
            if (device->buffer_count > 0 || device->streaming) return fail(EBUSY);
            device->pix = pix;
        }
        memset(&format->fmt, 0, sizeof format->fmt);
        format->fmt.pix = pix;
        return 0;
    }
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        struct v4l2_streamparm *parm = argument;
        if (!capture || !capture_type(parm->type)) return fail(EINVAL);
        if (request == VIDIOC_S_PARM) {
            if (device->streaming) return fail(EBUSY);
            device->rate = nearest_rate(config, parm->parm.capture.timeperframe);
        }
        memset(&parm->parm, 0, sizeof parm->parm);
        parm->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        parm->parm.capture.timeperframe.numerator = 1;
        parm->parm.capture.timeperframe.denominator = device->rate;
        parm->parm.capture.readbuffers = 0;
        return 0;
    }
    case VIDIOC_REQBUFS: {
        struct v4l2_requestbuffers *request_buffers = argument;
        if (config->caps != CAPS_CAPTURE || !capture_type(request_buffers->type)) return fail(EINVAL);
        if (request_buffers->memory != V4L2_MEMORY_MMAP) return fail(EINVAL);
        if (device->streaming || device->mapping_count > 0) return fail(EBUSY);
        release_buffers(device);
        uint32_t count = request_buffers->count;
        if (count > FAKE_MAX_BUFFERS) count = FAKE_MAX_BUFFERS;
        if (count > 0 && count < 2) count = 2;
        memset(request_buffers->reserved, 0, sizeof request_buffers->reserved);
        request_buffers->capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP;
        request_buffers->count = count;
        if (count == 0) return 0;
        long page = sysconf(_SC_PAGESIZE);
        device->stride = (device->pix.sizeimage + (size_t)page - 1) / (size_t)page * (size_t)page;
        device->memory_length = device->stride * count;
        device->memfd = memfd_create("prism-fake-v4l2", MFD_CLOEXEC);
        if (device->memfd < 0) return -1;
        if (ftruncate(device->memfd, (off_t)device->memory_length) != 0) { int code = errno; release_buffers(device); return fail(code); }
        device->memory = real_mmap(NULL, device->memory_length, PROT_READ | PROT_WRITE, MAP_SHARED, device->memfd, 0);
        if (device->memory == MAP_FAILED) { int code = errno; device->memory = NULL; release_buffers(device); return fail(code); }
        device->buffer_count = count;
        memset(device->buffers, 0, sizeof device->buffers);
        return 0;
    }
    case VIDIOC_QUERYBUF:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF: {
        struct v4l2_buffer *buffer = argument;
        if (!capture_type(buffer->type) || buffer->memory != V4L2_MEMORY_MMAP) return fail(EINVAL);
        if (request == VIDIOC_DQBUF) {
            for (;;) {
                advance(device);
                int index = oldest(device, BUF_DONE);
                if (index >= 0) {
                    buffer->index = (uint32_t)index;
                    device->buffers[index].state = BUF_USER;
                    break;
                }
                if (!device->streaming) return fail(EINVAL);
                if (fcntl(device->fd, F_GETFL) & O_NONBLOCK) return fail(EAGAIN);
                // Blocking DQBUF: wait on the timer with the lock dropped, as a driver sleeps.
                rearm(device);
                struct pollfd wait = {.fd = device->fd, .events = POLLIN};
                pthread_mutex_unlock(&lock);
                poll(&wait, 1, -1);
                pthread_mutex_lock(&lock);
                if (device_for(wait.fd) != device) return fail(EBADF);
            }
        } else if (buffer->index >= device->buffer_count) {
            return fail(EINVAL);
        }
        uint32_t index = buffer->index;
        struct fake_buffer *state = &device->buffers[index];
        if (request == VIDIOC_QBUF) {
            if (state->state != BUF_USER) return fail(EINVAL);
            // Frames that came while this buffer was out were dropped or went to other buffers: settle
            // them first, so the buffer gets the next frame, not one from before it was queued.
            advance(device);
            state->state = BUF_QUEUED;
            state->order = device->order_counter++;
        }
        memset(buffer, 0, sizeof *buffer);
        buffer->index = index;
        buffer->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        buffer->memory = V4L2_MEMORY_MMAP;
        buffer->m.offset = (uint32_t)(index * device->stride);
        buffer->length = device->pix.sizeimage;
        buffer->field = V4L2_FIELD_NONE;
        buffer->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
        for (int i = 0; i < device->mapping_count; i++) {
            if (device->mappings[i].index == index) buffer->flags |= V4L2_BUF_FLAG_MAPPED;
        }
        if (state->state == BUF_QUEUED) buffer->flags |= V4L2_BUF_FLAG_QUEUED;
        if (state->state == BUF_DONE) buffer->flags |= V4L2_BUF_FLAG_DONE;
        if (request == VIDIOC_DQBUF) {
            buffer->bytesused = state->bytesused;
            if (state->bytesused == 0) buffer->flags |= V4L2_BUF_FLAG_ERROR;
            buffer->timestamp = state->timestamp;
            buffer->sequence = state->sequence;
        }
        if (request != VIDIOC_QUERYBUF) rearm(device);
        return 0;
    }
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF: {
        int *type = argument;
        if (config->caps != CAPS_CAPTURE || !capture_type((uint32_t)*type)) return fail(EINVAL);
        if (request == VIDIOC_STREAMON) {
            if (device->buffer_count == 0) return fail(EINVAL);
            if (!device->streaming) {
                device->streaming = 1;
                device->stream_ons++;
                clock_gettime(CLOCK_MONOTONIC, &device->start);
                uint64_t start = nanoseconds(device->start) + (uint64_t)(config->start_delay_ms > 0 ? config->start_delay_ms : 0) * 1000000ull;
                device->start.tv_sec = (time_t)(start / 1000000000ull);
                device->start.tv_nsec = (long)(start % 1000000000ull);
                device->frames_due = 0;
            }
        } else {
            // Every buffer leaves both queues; their contents are no longer valid.
            device->streaming = 0;
            for (uint32_t i = 0; i < device->buffer_count; i++) device->buffers[i].state = BUF_USER;
        }
        rearm(device);
        return 0;
    }
    default:
        return fail(ENOTTY);
    }
}

static const char *request_name(unsigned long request) {
    switch (request) {
    case VIDIOC_QUERYCAP: return "VIDIOC_QUERYCAP";
    case VIDIOC_ENUM_FMT: return "VIDIOC_ENUM_FMT";
    case VIDIOC_ENUM_FRAMESIZES: return "VIDIOC_ENUM_FRAMESIZES";
    case VIDIOC_ENUM_FRAMEINTERVALS: return "VIDIOC_ENUM_FRAMEINTERVALS";
    case VIDIOC_G_FMT: return "VIDIOC_G_FMT";
    case VIDIOC_S_FMT: return "VIDIOC_S_FMT";
    case VIDIOC_TRY_FMT: return "VIDIOC_TRY_FMT";
    case VIDIOC_G_PARM: return "VIDIOC_G_PARM";
    case VIDIOC_S_PARM: return "VIDIOC_S_PARM";
    case VIDIOC_REQBUFS: return "VIDIOC_REQBUFS";
    case VIDIOC_QUERYBUF: return "VIDIOC_QUERYBUF";
    case VIDIOC_QBUF: return "VIDIOC_QBUF";
    case VIDIOC_DQBUF: return "VIDIOC_DQBUF";
    case VIDIOC_STREAMON: return "VIDIOC_STREAMON";
    case VIDIOC_STREAMOFF: return "VIDIOC_STREAMOFF";
    default: return NULL;
    }
}

int ioctl(int fd, unsigned long request, ...) {
    va_list arguments;
    va_start(arguments, request);
    void *argument = va_arg(arguments, void *);
    va_end(arguments);
    ensure_initialised();
    pthread_mutex_lock(&lock);
    struct fake_device *device = device_for(fd);
    if (!device) {
        pthread_mutex_unlock(&lock);
        return real_ioctl(fd, request, argument);
    }
    int result = argument || request == VIDIOC_STREAMON ? handle(device, request, argument) : fail(EFAULT);
    int code = errno;
    if (trace && request != VIDIOC_QBUF && request != VIDIOC_DQBUF) {
        const char *name = request_name(request);
        if (name) TRACE("%s fd %d -> %d%s%s", name, fd, result, result ? " " : "", result ? strerror(code) : "");
        else TRACE("ioctl 0x%lx fd %d -> %d %s", request, fd, result, result ? strerror(code) : "");
        if (request == VIDIOC_REQBUFS && result == 0) TRACE("REQBUFS count %u", ((struct v4l2_requestbuffers *)argument)->count);
    }
    pthread_mutex_unlock(&lock);
    errno = code;
    return result;
}

// MARK: memory

static void *map_buffer(struct fake_device *device, void *address, size_t length, int prot, int flags, off_t offset) {
    if (device->buffer_count == 0 || offset < 0 || (size_t)offset % device->stride != 0
        || (size_t)offset / device->stride >= device->buffer_count || length == 0 || length > device->stride) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (!(flags & MAP_SHARED)) { errno = EINVAL; return MAP_FAILED; }
    if (device->mapping_count >= (int)(sizeof device->mappings / sizeof device->mappings[0])) { errno = ENOMEM; return MAP_FAILED; }
    void *mapped = real_mmap(address, length, prot, flags, device->memfd, offset);
    if (mapped != MAP_FAILED) {
        device->mappings[device->mapping_count++] = (struct fake_mapping){mapped, length, (uint32_t)((size_t)offset / device->stride)};
    }
    return mapped;
}

void *mmap(void *address, size_t length, int prot, int flags, int fd, off_t offset) {
    ensure_initialised();
    pthread_mutex_lock(&lock);
    struct fake_device *device = device_for(fd);
    if (!device) {
        pthread_mutex_unlock(&lock);
        return real_mmap(address, length, prot, flags, fd, offset);
    }
    void *mapped = map_buffer(device, address, length, prot, flags, offset);
    int code = errno;
    pthread_mutex_unlock(&lock);
    errno = code;
    return mapped;
}

void *mmap64(void *address, size_t length, int prot, int flags, int fd, off64_t offset) {
    ensure_initialised();
    pthread_mutex_lock(&lock);
    struct fake_device *device = device_for(fd);
    if (!device) {
        pthread_mutex_unlock(&lock);
        return real_mmap64(address, length, prot, flags, fd, offset);
    }
    void *mapped = map_buffer(device, address, length, prot, flags, (off_t)offset);
    int code = errno;
    pthread_mutex_unlock(&lock);
    errno = code;
    return mapped;
}

int munmap(void *address, size_t length) {
    ensure_initialised();
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int d = 0; d < open_count && !found; d++) {
        struct fake_device *device = open_devices[d];
        for (int i = 0; i < device->mapping_count; i++) {
            if (device->mappings[i].address == address) {
                device->mappings[i] = device->mappings[--device->mapping_count];
                found = 1;
                break;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return real_munmap(address, length);
}
