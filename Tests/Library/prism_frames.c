/*
 * A C program on Prism's C API, as its users write one; the end-to-end tests (CLibraryTests) build it with
 * `pkg-config --cflags --libs prism` against what scripts/install-lib installed, run it, and compare what it
 * writes with `prism run`.
 *
 *   prism_frames read INPUT GRAPH OUT.rgba [NAME=VALUE…]        frames pulled as RGBA, rows written tight
 *   prism_frames push WxH RATE IN.yuv GRAPH OUT.rgba [NAME=VALUE…]
 *                                        yuv420p frames read from IN.yuv and pushed from a second thread
 *   prism_frames write INPUT GRAPH OUT [NAME=VALUE…]            prism_session_write
 *   prism_frames render GRAPH IN.png OUT.png                    prism_render
 *   prism_frames errors INPUT                                   each misuse gets its status and a message
 *
 * Prints one line per frame ("frame INDEX PTS_NS WxH") and the report; exits 1 with the error on failure.
 */
#include <prism.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, prism_status status) {
    fprintf(stderr, "%s: status %d: %s\n", what, (int)status, prism_last_error());
    return 1;
}

static prism_options *options_from(int argc, char **argv) {
    prism_options *options = prism_options_new();
    for (int i = 0; i < argc; i++) {
        char *equals = strchr(argv[i], '=');
        if (!equals) continue;
        *equals = 0;
        prism_status status = prism_options_set(options, argv[i], equals + 1);
        if (status != PRISM_OK) {
            fail(argv[i], status);
            exit(1);
        }
    }
    return options;
}

/* Pulls every frame as RGBA into `path`, rows without padding. */
static int pull_all(prism_session *session, const char *path) {
    prism_status status = prism_session_start(session, PRISM_FORMAT_RGBA);
    if (status != PRISM_OK) return fail("start", status);
    FILE *out = fopen(path, "wb");
    if (!out) return fail(path, PRISM_ERROR_ARGUMENT);
    prism_frame *frame;
    while ((status = prism_session_next_frame(session, &frame)) == PRISM_OK) {
        int width = prism_frame_width(frame), height = prism_frame_height(frame), stride = 0;
        const uint8_t *rows = prism_frame_plane(frame, 0, &stride);
        if (prism_frame_format(frame) != PRISM_FORMAT_RGBA || prism_frame_plane_count(frame) != 1 || !rows) {
            fclose(out);
            prism_frame_free(frame);
            fprintf(stderr, "an RGBA frame has one plane\n");
            return 1;
        }
        for (int row = 0; row < height; row++) fwrite(rows + (size_t)row * stride, 4, (size_t)width, out);
        printf("frame %lld %lld %dx%d\n", (long long)prism_frame_index(frame), (long long)prism_frame_pts_ns(frame), width, height);
        prism_frame_free(frame);
    }
    fclose(out);
    if (status != PRISM_END) return fail("next_frame", status);
    printf("report %s\n", prism_session_report(session));
    return 0;
}

struct producer {
    prism_session *session;
    FILE *in;
    int width, height;
    prism_status status;
};

/* The producer thread: yuv420p frames from the file, pushed with timestamps of their own (frame numbers at
 * the rate, the default time base), then the end of the input. */
static void *produce(void *data) {
    struct producer *p = data;
    size_t luma = (size_t)p->width * p->height, chroma = (size_t)((p->width + 1) / 2) * ((p->height + 1) / 2);
    uint8_t *frame = malloc(luma + 2 * chroma);
    int64_t index = 0;
    p->status = PRISM_OK;
    while (fread(frame, 1, luma + 2 * chroma, p->in) == luma + 2 * chroma) {
        const uint8_t *planes[3] = {frame, frame + luma, frame + luma + chroma};
        int strides[3] = {p->width, (p->width + 1) / 2, (p->width + 1) / 2};
        p->status = prism_session_push(p->session, planes, strides, index++, 1);
        if (p->status != PRISM_OK) {
            fprintf(stderr, "push: %s\n", prism_last_error());
            break;
        }
    }
    free(frame);
    prism_session_end_input(p->session);
    return NULL;
}

static int push_mode(char **argv, int argc) {
    int width, height, rate;
    if (sscanf(argv[2], "%dx%d", &width, &height) != 2 || sscanf(argv[3], "%d", &rate) != 1) return fail("WxH RATE", PRISM_ERROR_ARGUMENT);
    struct producer producer = {.in = fopen(argv[4], "rb"), .width = width, .height = height};
    if (!producer.in) return fail(argv[4], PRISM_ERROR_ARGUMENT);
    prism_options *options = options_from(argc - 7, argv + 7);
    prism_status status = prism_session_open_frames(width, height, PRISM_FORMAT_YUV420P, rate, 1, argv[5], options, &producer.session);
    prism_options_free(options);
    if (status != PRISM_OK) return fail("open_frames", status);
    pthread_t thread;
    pthread_create(&thread, NULL, produce, &producer);
    int result = pull_all(producer.session, argv[6]);
    pthread_join(thread, NULL);
    fclose(producer.in);
    prism_session_free(producer.session);
    return result || producer.status != PRISM_OK;
}

#define EXPECT(call, expected)                                                                        \
    do {                                                                                              \
        prism_status got = (call);                                                                    \
        if (got != (expected) || (got < 0 && !*prism_last_error())) {                                 \
            fprintf(stderr, "%s: status %d, expected %d (%s)\n", #call, got, expected, prism_last_error()); \
            return 1;                                                                                 \
        }                                                                                             \
        if (got < 0) printf("%s -> %d: %s\n", #call, got, prism_last_error());                       \
    } while (0)

/* Misuse: each gets its status and a line naming the problem; nothing crashes. */
static int errors_mode(const char *input) {
    prism_session *session = NULL;
    prism_options *options = prism_options_new();
    EXPECT(prism_session_open("/no/such/file.mp4", "invert", NULL, &session), PRISM_ERROR_USAGE);
    if (session) return fail("a failed open leaves no session", PRISM_ERROR_ARGUMENT);
    EXPECT(prism_session_open(input, "no-such-filter", NULL, &session), PRISM_ERROR_USAGE);
    EXPECT(prism_session_open(NULL, "invert", NULL, &session), PRISM_ERROR_ARGUMENT);
    EXPECT(prism_options_set(options, "no-such-option", "1"), PRISM_ERROR_ARGUMENT);
    EXPECT(prism_options_set(options, "size", "wide"), PRISM_ERROR_ARGUMENT);
    EXPECT(prism_options_set(options, "params", "pixellate.scale=999999"), PRISM_OK);
    EXPECT(prism_session_open(input, "pixellate", options, &session), PRISM_ERROR_ARGUMENT);
    prism_options_free(options);
    EXPECT(prism_session_open_frames(64, 48, (prism_pixel_format)42, 30, 1, "invert", NULL, &session), PRISM_ERROR_ARGUMENT);
    EXPECT(prism_session_open_frames(0, 48, PRISM_FORMAT_RGBA, 30, 1, "invert", NULL, &session), PRISM_ERROR_ARGUMENT);

    EXPECT(prism_session_open(input, "invert", NULL, &session), PRISM_OK);
    const uint8_t *planes[1] = {NULL};
    int strides[1] = {0};
    EXPECT(prism_session_push(session, planes, strides, 0, 0), PRISM_ERROR_STATE);
    prism_frame *frame = NULL;
    EXPECT(prism_session_next_frame(session, &frame), PRISM_ERROR_STATE);
    EXPECT(prism_session_start(session, PRISM_FORMAT_YUYV422), PRISM_ERROR_ARGUMENT);
    prism_session_free(session);

    /* A setting a message names is spelt as this API or PrismKit spells it, not as prism's flag. */
    EXPECT(prism_session_open(input, "invert", NULL, &session), PRISM_OK);
    EXPECT(prism_session_write(session, "out.no-such-container"), PRISM_ERROR_RUN);
    prism_session_free(session);

    EXPECT(prism_session_open(input, "invert", NULL, &session), PRISM_OK);
    EXPECT(prism_session_start(session, PRISM_FORMAT_RGBA), PRISM_OK);
    EXPECT(prism_session_start(session, PRISM_FORMAT_RGBA), PRISM_ERROR_STATE);
    EXPECT(prism_session_next_frame(session, &frame), PRISM_OK);
    prism_frame_free(frame);
    /* Freed with the run going: it is stopped, and the program exits cleanly. */
    prism_session_free(session);

    EXPECT(prism_session_open_frames(64, 48, PRISM_FORMAT_RGBA, 30, 1, "invert", NULL, &session), PRISM_OK);
    uint8_t pixels[64 * 48 * 4] = {0};
    planes[0] = pixels;
    strides[0] = 64 * 4;
    EXPECT(prism_session_push(session, planes, strides, 5, 0), PRISM_OK);
    EXPECT(prism_session_push(session, planes, strides, 5, 0), PRISM_ERROR_ARGUMENT);
    strides[0] = 10;
    EXPECT(prism_session_push(session, planes, strides, 6, 0), PRISM_ERROR_ARGUMENT);
    strides[0] = 64 * 4;
    EXPECT(prism_session_end_input(session), PRISM_OK);
    EXPECT(prism_session_push(session, planes, strides, 7, 0), PRISM_ERROR_STATE);
    EXPECT(prism_session_start(session, PRISM_FORMAT_RGBA), PRISM_OK);
    EXPECT(prism_session_next_frame(session, &frame), PRISM_OK);
    if (prism_frame_width(frame) != 64 || prism_frame_plane(frame, 0, NULL)[0] != 255) {
        fprintf(stderr, "the pushed black frame comes back inverted\n");
        return 1;
    }
    prism_frame_free(frame);
    EXPECT(prism_session_next_frame(session, &frame), PRISM_END);
    prism_session_free(session);
    printf("errors ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return fail("usage: prism_frames read|push|write|render|errors …", PRISM_ERROR_ARGUMENT);
    printf("prism %s, API %d\n", prism_version(), prism_api_version());
    const char *mode = argv[1];
    if (!strcmp(mode, "errors") && argc == 3) return errors_mode(argv[2]);
    if (!strcmp(mode, "render") && argc == 5) {
        prism_status status = prism_render(argv[2], argv[3], argv[4], NULL);
        return status == PRISM_OK ? 0 : fail("render", status);
    }
    if (!strcmp(mode, "push") && argc >= 7) return push_mode(argv, argc);
    if ((strcmp(mode, "read") && strcmp(mode, "write")) || argc < 5) return fail("usage: prism_frames read|push|write|render|errors …", PRISM_ERROR_ARGUMENT);

    prism_options *options = options_from(argc - 5, argv + 5);
    prism_session *session;
    prism_status status = prism_session_open(argv[2], argv[3], options, &session);
    prism_options_free(options);
    if (status != PRISM_OK) return fail("open", status);
    int width = 0, height = 0;
    prism_session_output_size(session, &width, &height);
    printf("output %dx%d\n", width, height);
    int result;
    if (!strcmp(mode, "write")) {
        status = prism_session_write(session, argv[4]);
        result = status == PRISM_OK ? 0 : fail("write", status);
        if (!result) printf("report %s\n", prism_session_report(session));
    } else {
        result = pull_all(session, argv[2 + 2]);
    }
    prism_session_free(session);
    return result;
}
