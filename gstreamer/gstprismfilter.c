/*
 * prismfilter: a Prism filter graph as a GStreamer element (plugin "prism", libgstprism.so).
 *
 *   gst-launch-1.0 videotestsrc num-buffers=60 ! prismfilter graph="invert, mono" ! videoconvert ! autovideosink
 *
 * Built on the C API (prism.h) by scripts/install-lib. Frames arrive on the sink pad's streaming thread and
 * are pushed into a Prism session (prism_session_push, which waits while the run is behind); a task on the
 * source pad pulls the filtered frames (prism_session_next_frame) and pushes them downstream. The run is
 * asynchronous (source, GPU and output threads of its own), so the two sides never wait for each other
 * frame by frame. Timestamps pass through unchanged (the session counts nanoseconds); each output frame
 * gets the duration of the input frame with its timestamp.
 *
 * Caps: the session is made when the sink caps are known. The output size is the one downstream takes
 * nearest to the graph's own (a model's or a scale's); when downstream asks for another, the run makes it —
 * an mpv hook runs at it as its OUTPUT (so an upscaling hook fills 1280x720 from 640x360), other graphs
 * end with a scale. The output format is the first of downstream's that Prism packs, the input's if
 * downstream takes it. A caps change mid-stream drains the run and starts another.
 */
#include <gst/gst.h>
#include <gst/video/video.h>
#include <prism.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC(prism_filter_debug);
#define GST_CAT_DEFAULT prism_filter_debug

/* GStreamer's names for the formats Prism takes and gives (YUY2 is taken, not given). P010 is not here:
 * Prism's 10-bit input is planar (I420_10LE). */
#define PRISM_SINK_FORMATS "{ RGBA, BGRA, I420, NV12, YUY2, Y42B, Y444, I420_10LE, GRAY8 }"
#define PRISM_SRC_FORMATS "{ RGBA, BGRA, I420, NV12, Y42B, Y444, I420_10LE, GRAY8 }"

static const struct {
    GstVideoFormat gst;
    prism_pixel_format prism;
} format_table[] = {
    {GST_VIDEO_FORMAT_RGBA, PRISM_FORMAT_RGBA},       {GST_VIDEO_FORMAT_BGRA, PRISM_FORMAT_BGRA},
    {GST_VIDEO_FORMAT_I420, PRISM_FORMAT_YUV420P},    {GST_VIDEO_FORMAT_NV12, PRISM_FORMAT_NV12},
    {GST_VIDEO_FORMAT_YUY2, PRISM_FORMAT_YUYV422},    {GST_VIDEO_FORMAT_Y42B, PRISM_FORMAT_YUV422P},
    {GST_VIDEO_FORMAT_Y444, PRISM_FORMAT_YUV444P},    {GST_VIDEO_FORMAT_I420_10LE, PRISM_FORMAT_YUV420P10LE},
    {GST_VIDEO_FORMAT_GRAY8, PRISM_FORMAT_GRAY},
};

static gboolean prism_format(GstVideoFormat format, prism_pixel_format *out) {
    for (guint i = 0; i < G_N_ELEMENTS(format_table); i++) {
        if (format_table[i].gst == format) {
            *out = format_table[i].prism;
            return TRUE;
        }
    }
    return FALSE;
}

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(PRISM_SINK_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(PRISM_SRC_FORMATS)));

/* An input frame's timestamp and duration as they came, and the timestamp it was pushed with (Prism's must
 * increase: a repeated one, as some demuxers give B-frames, is pushed a nanosecond after the last), so its
 * output frame gets them back. */
typedef struct {
    GstClockTime pushed, pts, duration;
} Timing;

typedef struct _GstPrismFilter {
    GstElement parent;
    GstPad *sinkpad, *srcpad;

    /* Properties (under the object lock). */
    gchar *graph, *params;
    gint gpu;

    /* The run: made on the sink thread at caps, used by both threads, freed with the task stopped. */
    prism_session *session;
    GstVideoInfo in_info, out_info;
    gboolean have_session;
    /* The sink saw EOS: the task sends it on once the run has ended. */
    gboolean eos;
    /* The run ended (task side), and how the task's last push went. */
    gboolean ended;
    GstFlowReturn src_flow;
    /* Frames pushed in this run: a frame without a timestamp gets one from the rate and this count. */
    guint64 pushed;
    /* The last timestamp pushed (GST_CLOCK_TIME_NONE before the first). */
    GstClockTime last_pushed;
    GMutex lock; /* timings, ended, src_flow, eos */
    GCond drained;
    GQueue timings;
} GstPrismFilter;

typedef struct _GstPrismFilterClass {
    GstElementClass parent_class;
} GstPrismFilterClass;

#define GST_TYPE_PRISM_FILTER (gst_prism_filter_get_type())
#define GST_PRISM_FILTER(obj) ((GstPrismFilter *)(obj))
GType gst_prism_filter_get_type(void);
G_DEFINE_TYPE(GstPrismFilter, gst_prism_filter, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_GRAPH, PROP_PARAMS, PROP_GPU };

static void clear_timings(GstPrismFilter *self) {
    Timing *timing;
    while ((timing = g_queue_pop_head(&self->timings)) != NULL) g_free(timing);
}

/* Stops the task and frees the run (any thread but the task's). */
static void stop_run(GstPrismFilter *self) {
    if (self->session) prism_session_cancel(self->session);
    gst_pad_stop_task(self->srcpad);
    prism_session_free(self->session);
    self->session = NULL;
    self->have_session = FALSE;
    g_mutex_lock(&self->lock);
    clear_timings(self);
    self->ended = FALSE;
    self->eos = FALSE;
    self->src_flow = GST_FLOW_OK;
    g_mutex_unlock(&self->lock);
}

/* Gives `buffer` the timestamp and duration of the input frame pushed at `pushed` (frames before it are
 * forgotten). */
static void set_timing(GstPrismFilter *self, GstBuffer *buffer, GstClockTime pushed) {
    GstClockTime pts = pushed, duration = GST_CLOCK_TIME_NONE;
    g_mutex_lock(&self->lock);
    Timing *timing;
    while ((timing = g_queue_peek_head(&self->timings)) != NULL && timing->pushed <= pushed) {
        if (timing->pushed == pushed) pts = timing->pts, duration = timing->duration;
        g_free(g_queue_pop_head(&self->timings));
    }
    g_mutex_unlock(&self->lock);
    if (!GST_CLOCK_TIME_IS_VALID(duration) && GST_VIDEO_INFO_FPS_N(&self->out_info) > 0)
        duration = gst_util_uint64_scale(GST_SECOND, GST_VIDEO_INFO_FPS_D(&self->out_info), GST_VIDEO_INFO_FPS_N(&self->out_info));
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DURATION(buffer) = duration;
}

/* Copies a Prism frame into a new buffer laid out as `out_info` says. */
static GstBuffer *buffer_from(GstPrismFilter *self, prism_frame *frame) {
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&self->out_info), NULL);
    GstVideoFrame out;
    if (!buffer || !gst_video_frame_map(&out, &self->out_info, buffer, GST_MAP_WRITE)) {
        if (buffer) gst_buffer_unref(buffer);
        return NULL;
    }
    for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&out); plane++) {
        int stride = 0;
        const uint8_t *rows = prism_frame_plane(frame, (int)plane, &stride);
        guint8 *dest = GST_VIDEO_FRAME_PLANE_DATA(&out, plane);
        gint dest_stride = GST_VIDEO_FRAME_PLANE_STRIDE(&out, plane);
        const GstVideoFormatInfo *format = out.info.finfo;
        guint component = 0;
        /* The plane's first component gives its size (GStreamer's own rule for plane geometry). */
        for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS(format); c++) {
            if (GST_VIDEO_FORMAT_INFO_PLANE(format, c) == plane) { component = c; break; }
        }
        gint height = GST_VIDEO_FRAME_COMP_HEIGHT(&out, component);
        gint width_bytes = GST_VIDEO_FRAME_COMP_WIDTH(&out, component) * GST_VIDEO_FRAME_COMP_PSTRIDE(&out, component);
        if (!rows) {
            gst_video_frame_unmap(&out);
            gst_buffer_unref(buffer);
            return NULL;
        }
        for (gint row = 0; row < height; row++) memcpy(dest + row * dest_stride, rows + (size_t)row * stride, width_bytes);
    }
    gst_video_frame_unmap(&out);
    set_timing(self, buffer, (GstClockTime)prism_frame_pts_ns(frame));
    GST_BUFFER_OFFSET(buffer) = (guint64)prism_frame_index(frame);
    return buffer;
}

/* The source pad's task: one filtered frame per turn, pushed downstream. */
static void src_loop(gpointer data) {
    GstPrismFilter *self = GST_PRISM_FILTER(data);
    prism_frame *frame = NULL;
    prism_status status = prism_session_next_frame(self->session, &frame);
    GstFlowReturn flow = GST_FLOW_OK;
    if (status == PRISM_OK) {
        GstBuffer *buffer = buffer_from(self, frame);
        prism_frame_free(frame);
        if (!buffer) {
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("could not copy a frame into a buffer"), (NULL));
            flow = GST_FLOW_ERROR;
        } else {
            flow = gst_pad_push(self->srcpad, buffer);
        }
        if (flow == GST_FLOW_OK) return;
        /* Downstream stopped taking frames: so does the run (a blocked push upstream wakes up). */
        prism_session_cancel(self->session);
        if (flow == GST_FLOW_NOT_NEGOTIATED || flow < GST_FLOW_EOS) GST_ELEMENT_FLOW_ERROR(self, flow);
    } else if (status != PRISM_END) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Prism: %s", prism_last_error()), (NULL));
        flow = GST_FLOW_ERROR;
    } else {
        flow = GST_FLOW_EOS;
    }
    g_mutex_lock(&self->lock);
    gboolean eos = self->eos;
    self->ended = TRUE;
    self->src_flow = flow;
    g_cond_broadcast(&self->drained);
    g_mutex_unlock(&self->lock);
    /* The end of the run is the end of the stream only once the sink has seen EOS (a caps change drains). */
    if (flow == GST_FLOW_EOS && eos) gst_pad_push_event(self->srcpad, gst_event_new_eos());
    if (flow != GST_FLOW_OK && flow != GST_FLOW_EOS) gst_pad_push_event(self->srcpad, gst_event_new_eos());
    gst_pad_pause_task(self->srcpad);
}

/* The output caps: downstream's first format Prism gives (the input's if downstream takes it), at the size
 * downstream takes nearest to the graph's own `width`×`height`, at the input's rate and pixel aspect. NULL
 * when downstream takes nothing Prism gives. */
static GstCaps *output_caps(GstPrismFilter *self, int width, int height) {
    GstCaps *template = gst_pad_get_pad_template_caps(self->srcpad);
    GstCaps *wanted = gst_caps_copy(template);
    gst_caps_unref(template);
    gst_caps_set_simple(wanted, "framerate", GST_TYPE_FRACTION, GST_VIDEO_INFO_FPS_N(&self->in_info), GST_VIDEO_INFO_FPS_D(&self->in_info),
                        "pixel-aspect-ratio", GST_TYPE_FRACTION, GST_VIDEO_INFO_PAR_N(&self->in_info), GST_VIDEO_INFO_PAR_D(&self->in_info),
                        NULL);
    GstCaps *allowed = gst_pad_peer_query_caps(self->srcpad, wanted);
    gst_caps_unref(wanted);
    if (gst_caps_is_empty(allowed)) {
        gst_caps_unref(allowed);
        return NULL;
    }
    GstCaps *same = gst_caps_copy(allowed);
    gst_caps_set_simple(same, "format", G_TYPE_STRING, gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&self->in_info)), NULL);
    GstCaps *result = gst_caps_intersect(allowed, same);
    gst_caps_unref(same);
    if (gst_caps_is_empty(result)) {
        gst_caps_unref(result);
        result = gst_caps_ref(allowed);
    }
    gst_caps_unref(allowed);
    result = gst_caps_truncate(gst_caps_make_writable(result));
    GstStructure *structure = gst_caps_get_structure(result, 0);
    gst_structure_fixate_field_nearest_int(structure, "width", width);
    gst_structure_fixate_field_nearest_int(structure, "height", height);
    result = gst_caps_fixate(result);
    /* Y'CbCr out of Y'CbCr in keeps the input's matrix and range (what Prism packs them in). */
    GstVideoInfo info;
    if (gst_video_info_from_caps(&info, result) && GST_VIDEO_INFO_IS_YUV(&info) && GST_VIDEO_INFO_IS_YUV(&self->in_info)) {
        gchar *colorimetry = gst_video_colorimetry_to_string(&self->in_info.colorimetry);
        if (colorimetry) {
            result = gst_caps_make_writable(result);
            gst_caps_set_simple(result, "colorimetry", G_TYPE_STRING, colorimetry, NULL);
            g_free(colorimetry);
        }
    }
    return result;
}

/* Prism's names for the input's Y'CbCr matrix and range. */
static void set_color(prism_options *options, const GstVideoInfo *info) {
    if (!GST_VIDEO_INFO_IS_YUV(info)) return;
    switch (info->colorimetry.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT601: prism_options_set(options, "color-matrix", "bt601"); break;
    case GST_VIDEO_COLOR_MATRIX_BT709: prism_options_set(options, "color-matrix", "bt709"); break;
    case GST_VIDEO_COLOR_MATRIX_BT2020: prism_options_set(options, "color-matrix", "bt2020"); break;
    default: break;
    }
    if (info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255) prism_options_set(options, "color-range", "full");
    else if (info->colorimetry.range == GST_VIDEO_COLOR_RANGE_16_235) prism_options_set(options, "color-range", "limited");
}

/* A session for `in_info`'s frames with the element's properties; `size` ("WxH") is the output size asked
 * for (a final scale, an mpv hook's OUTPUT), NULL for the graph's own. NULL with an element error posted. */
static prism_session *open_session(GstPrismFilter *self, const char *size) {
    prism_pixel_format format;
    if (!prism_format(GST_VIDEO_INFO_FORMAT(&self->in_info), &format)) return NULL;
    GST_OBJECT_LOCK(self);
    gchar *graph = g_strdup(self->graph ? self->graph : "");
    gchar *params = g_strdup(self->params);
    gchar *gpu = self->gpu >= 0 ? g_strdup_printf("%d", self->gpu) : NULL;
    GST_OBJECT_UNLOCK(self);

    prism_options *options = prism_options_new();
    prism_options_set(options, "time-base", "1/1000000000");
    set_color(options, &self->in_info);
    gboolean ok = (!params || !*params || prism_options_set(options, "params", params) == PRISM_OK) &&
                  (!gpu || prism_options_set(options, "gpu", gpu) == PRISM_OK) &&
                  (!size || prism_options_set(options, "size", size) == PRISM_OK);
    /* A variable rate (0/1) is given a nominal one; the timestamps are the buffers' own. */
    int rate_n = GST_VIDEO_INFO_FPS_N(&self->in_info), rate_d = GST_VIDEO_INFO_FPS_D(&self->in_info);
    if (rate_n <= 0 || rate_d <= 0) rate_n = 30, rate_d = 1;
    prism_session *session = NULL;
    if (ok)
        ok = prism_session_open_frames(GST_VIDEO_INFO_WIDTH(&self->in_info), GST_VIDEO_INFO_HEIGHT(&self->in_info), format,
                                       rate_n, rate_d, graph, options, &session) == PRISM_OK;
    prism_options_free(options);
    g_free(graph);
    g_free(params);
    g_free(gpu);
    if (!ok) GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Prism: %s", prism_last_error()), (NULL));
    return ok ? session : NULL;
}

/* Makes the session for `caps`, sets the output caps and starts the task; FALSE (an element error posted)
 * when it cannot. */
static gboolean start_run(GstPrismFilter *self, GstCaps *caps) {
    if (!gst_video_info_from_caps(&self->in_info, caps)) return FALSE;
    self->session = open_session(self, NULL);
    if (!self->session) return FALSE;
    int width = 0, height = 0;
    prism_session_output_size(self->session, &width, &height);
    GstCaps *out = output_caps(self, width, height);
    prism_pixel_format out_format;
    if (!out || !gst_video_info_from_caps(&self->out_info, out) || !prism_format(GST_VIDEO_INFO_FORMAT(&self->out_info), &out_format)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("downstream takes no format prismfilter gives at %dx%d", width, height), (NULL));
        if (out) gst_caps_unref(out);
        stop_run(self);
        return FALSE;
    }
    if (GST_VIDEO_INFO_WIDTH(&self->out_info) != width || GST_VIDEO_INFO_HEIGHT(&self->out_info) != height) {
        /* Downstream wants another size: the run makes it (an upscaling hook runs at it, others end scaled). */
        gchar *size = g_strdup_printf("%dx%d", GST_VIDEO_INFO_WIDTH(&self->out_info), GST_VIDEO_INFO_HEIGHT(&self->out_info));
        prism_session_free(self->session);
        self->session = open_session(self, size);
        g_free(size);
        if (!self->session) {
            gst_caps_unref(out);
            return FALSE;
        }
    }
    GST_INFO_OBJECT(self, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps, out);
    gboolean set = gst_pad_set_caps(self->srcpad, out);
    gst_caps_unref(out);
    if (!set || prism_session_start(self->session, out_format) != PRISM_OK) {
        if (set) GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Prism: %s", prism_last_error()), (NULL));
        else GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("downstream refused the output caps"), (NULL));
        stop_run(self);
        return FALSE;
    }
    self->have_session = TRUE;
    self->pushed = 0;
    self->last_pushed = GST_CLOCK_TIME_NONE;
    return gst_pad_start_task(self->srcpad, src_loop, self, NULL);
}

/* Ends the input and waits for the task to deliver the run's last frame (a caps change, or EOS). */
static void drain(GstPrismFilter *self) {
    if (!self->have_session) return;
    prism_session_end_input(self->session);
    g_mutex_lock(&self->lock);
    while (!self->ended) g_cond_wait(&self->drained, &self->lock);
    g_mutex_unlock(&self->lock);
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GstPrismFilter *self = GST_PRISM_FILTER(parent);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
        GstCaps *caps;
        gst_event_parse_caps(event, &caps);
        GstVideoInfo info;
        if (self->have_session && gst_video_info_from_caps(&info, caps) && gst_video_info_is_equal(&info, &self->in_info)) {
            gst_event_unref(event);
            return TRUE;
        }
        drain(self);
        stop_run(self);
        gboolean ok = start_run(self, caps);
        gst_event_unref(event);
        return ok;
    }
    case GST_EVENT_EOS: {
        if (!self->have_session) return gst_pad_push_event(self->srcpad, event);
        g_mutex_lock(&self->lock);
        self->eos = TRUE;
        gboolean ended = self->ended;
        g_mutex_unlock(&self->lock);
        gst_event_unref(event);
        /* The task sends EOS after the last frame; a run that already ended sends it here. */
        if (ended) return gst_pad_push_event(self->srcpad, gst_event_new_eos());
        prism_session_end_input(self->session);
        return TRUE;
    }
    case GST_EVENT_FLUSH_START: {
        gboolean ok = gst_pad_push_event(self->srcpad, event);
        if (self->session) prism_session_cancel(self->session);
        gst_pad_pause_task(self->srcpad);
        return ok;
    }
    case GST_EVENT_FLUSH_STOP: {
        /* The run is over; the next buffer starts another with the same caps. */
        stop_run(self);
        return gst_pad_push_event(self->srcpad, event);
    }
    default:
        return gst_pad_event_default(pad, parent, event);
    }
}

static gboolean sink_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    /* Buffers are copied into the run: upstream allocates as it likes (the default would ask downstream,
     * whose frames may be another size). */
    if (GST_QUERY_TYPE(query) == GST_QUERY_ALLOCATION) return FALSE;
    return gst_pad_query_default(pad, parent, query);
}

static GstFlowReturn sink_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GstPrismFilter *self = GST_PRISM_FILTER(parent);
    (void)pad;
    if (!self->have_session) {
        /* After a flush: a new run with the caps we had. */
        GstCaps *caps = gst_pad_get_current_caps(self->sinkpad);
        gboolean ok = caps && start_run(self, caps);
        if (caps) gst_caps_unref(caps);
        if (!ok) {
            gst_buffer_unref(buffer);
            return GST_FLOW_NOT_NEGOTIATED;
        }
    }
    GstVideoFrame frame;
    if (!gst_video_frame_map(&frame, &self->in_info, buffer, GST_MAP_READ)) {
        gst_buffer_unref(buffer);
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("could not map an input buffer"), (NULL));
        return GST_FLOW_ERROR;
    }
    const uint8_t *planes[4] = {NULL};
    int strides[4] = {0};
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&frame); i++) {
        planes[i] = GST_VIDEO_FRAME_PLANE_DATA(&frame, i);
        strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, i);
    }
    GstClockTime pts = GST_BUFFER_PTS(buffer), duration = GST_BUFFER_DURATION(buffer);
    if (!GST_CLOCK_TIME_IS_VALID(pts)) {
        int rate_n = GST_VIDEO_INFO_FPS_N(&self->in_info), rate_d = GST_VIDEO_INFO_FPS_D(&self->in_info);
        pts = rate_n > 0 ? gst_util_uint64_scale(self->pushed, GST_SECOND * rate_d, rate_n) : self->pushed * (GST_SECOND / 30);
    }
    self->pushed++;
    Timing *timing = g_new(Timing, 1);
    timing->pts = GST_BUFFER_PTS(buffer);
    timing->duration = duration;
    if (GST_CLOCK_TIME_IS_VALID(self->last_pushed) && pts <= self->last_pushed) {
        GST_DEBUG_OBJECT(self, "timestamp %" GST_TIME_FORMAT " does not increase: pushed 1 ns after the last", GST_TIME_ARGS(pts));
        pts = self->last_pushed + 1;
    }
    self->last_pushed = pts;
    timing->pushed = pts;
    g_mutex_lock(&self->lock);
    g_queue_push_tail(&self->timings, timing);
    g_mutex_unlock(&self->lock);
    prism_status status = prism_session_push(self->session, planes, strides, (int64_t)pts,
                                             GST_CLOCK_TIME_IS_VALID(duration) ? (int64_t)duration : 0);
    gst_video_frame_unmap(&frame);
    gst_buffer_unref(buffer);
    if (status == PRISM_OK) return GST_FLOW_OK;
    /* The run ended first: upstream gets what the task got (EOS, an error, flushing). */
    g_mutex_lock(&self->lock);
    GstFlowReturn flow = self->ended ? self->src_flow : GST_FLOW_FLUSHING;
    g_mutex_unlock(&self->lock);
    if (status != PRISM_ERROR_STATE) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Prism: %s", prism_last_error()), (NULL));
        return GST_FLOW_ERROR;
    }
    return flow == GST_FLOW_OK ? GST_FLOW_FLUSHING : flow;
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    GstPrismFilter *self = GST_PRISM_FILTER(element);
    if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && self->session) prism_session_cancel(self->session);
    GstStateChangeReturn result = GST_ELEMENT_CLASS(gst_prism_filter_parent_class)->change_state(element, transition);
    if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) stop_run(self);
    return result;
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *spec) {
    GstPrismFilter *self = GST_PRISM_FILTER(object);
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_GRAPH: g_free(self->graph); self->graph = g_value_dup_string(value); break;
    case PROP_PARAMS: g_free(self->params); self->params = g_value_dup_string(value); break;
    case PROP_GPU: self->gpu = g_value_get_int(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec); break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *spec) {
    GstPrismFilter *self = GST_PRISM_FILTER(object);
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_GRAPH: g_value_set_string(value, self->graph); break;
    case PROP_PARAMS: g_value_set_string(value, self->params); break;
    case PROP_GPU: g_value_set_int(value, self->gpu); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec); break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void finalize(GObject *object) {
    GstPrismFilter *self = GST_PRISM_FILTER(object);
    prism_session_free(self->session);
    clear_timings(self);
    g_free(self->graph);
    g_free(self->params);
    g_mutex_clear(&self->lock);
    g_cond_clear(&self->drained);
    G_OBJECT_CLASS(gst_prism_filter_parent_class)->finalize(object);
}

static void gst_prism_filter_class_init(GstPrismFilterClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    object_class->set_property = set_property;
    object_class->get_property = get_property;
    object_class->finalize = finalize;
    /* Read when the stream's caps arrive: a change takes effect at the next caps or after READY. */
    GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
    g_object_class_install_property(object_class, PROP_GRAPH,
        g_param_spec_string("graph", "Graph", "The filter graph in Prism's text form, e.g. \"invert, mono\" or \"look.fs\"",
                            "", flags));
    g_object_class_install_property(object_class, PROP_PARAMS,
        g_param_spec_string("params", "Parameters", "Graph parameters: NAME=VALUE or NODE.NAME=VALUE, comma separated",
                            "", flags));
    g_object_class_install_property(object_class, PROP_GPU,
        g_param_spec_int("gpu", "GPU", "The EGL device to render on (prism devices); -1: the first that works",
                         -1, 255, -1, flags));
    gst_element_class_set_static_metadata(element_class, "Prism filter", "Filter/Effect/Video",
        "Runs a Prism filter graph (ISF and ShaderToy shaders, mpv hooks, ONNX models, faces, looks) on the GPU",
        "Prism");
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    element_class->change_state = change_state;
}

static void gst_prism_filter_init(GstPrismFilter *self) {
    self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
    gst_pad_set_chain_function(self->sinkpad, sink_chain);
    gst_pad_set_event_function(self->sinkpad, sink_event);
    gst_pad_set_query_function(self->sinkpad, sink_query);
    gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);
    self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
    gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
    self->graph = g_strdup("");
    self->params = g_strdup("");
    self->gpu = -1;
    self->src_flow = GST_FLOW_OK;
    g_mutex_init(&self->lock);
    g_cond_init(&self->drained);
    g_queue_init(&self->timings);
}

static gboolean plugin_init(GstPlugin *plugin) {
    GST_DEBUG_CATEGORY_INIT(prism_filter_debug, "prismfilter", 0, "Prism filter graphs");
    return gst_element_register(plugin, "prismfilter", GST_RANK_NONE, GST_TYPE_PRISM_FILTER);
}

#ifndef PACKAGE
#define PACKAGE "prism"
#endif
#ifndef PRISM_VERSION
#define PRISM_VERSION "0.1.0"
#endif

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, prism, "Prism filter graphs on the GPU", plugin_init, PRISM_VERSION,
                  "unknown", "Prism", "https://github.com/")
