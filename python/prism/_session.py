"""Sessions and stills over the C library: a movie (or frames you give) through a graph, into numpy
arrays or a file."""

import ctypes
import fractions
import json
import os
import tempfile
import threading

import numpy

from ._library import END, ERROR_STATE, FORMATS, Options, PrismError, check, encode, lib


def _rate(rate):
    value = fractions.Fraction(str(rate)) if isinstance(rate, str) else fractions.Fraction(rate)
    value = value.limit_denominator(1_000_000)
    if value <= 0:
        raise ValueError("rate must be positive, not %r" % (rate,))
    return value.numerator, value.denominator


def _pushable(frame):
    """A frame as Prism takes it: (array, format). RGBA (H×W×4) and grey (H×W) as they are, RGB gets alpha."""
    frame = numpy.asarray(frame)
    if frame.dtype != numpy.uint8:
        raise TypeError("frames are uint8 arrays, not %s" % frame.dtype)
    if frame.ndim == 2:
        return numpy.ascontiguousarray(frame), "gray"
    if frame.ndim == 3 and frame.shape[2] == 3:
        alpha = numpy.full(frame.shape[:2] + (1,), 255, numpy.uint8)
        return numpy.ascontiguousarray(numpy.concatenate([frame, alpha], axis=2)), "rgba"
    if frame.ndim == 3 and frame.shape[2] == 4:
        return numpy.ascontiguousarray(frame), "rgba"
    raise ValueError("frames are H×W×4 (RGBA), H×W×3 (RGB) or H×W (grey) arrays, not shape %s" % (frame.shape,))


class Session:
    """One run of a filter graph, as `prism run` does it.

    `input` is a movie path or URL, "pattern", a camera (/dev/video0), or an iterable of numpy frames
    (H×W×4 RGBA, H×W×3 RGB or H×W grey, uint8; all of one size), pushed from a thread of the session's at
    `rate` frames per second (default 30). `graph` is Prism's graph text ("face-pixellate",
    "look.fs(amount=0.3)", "hook.glsl"). Options as prism.h names them: size=(w, h), fps, frames,
    duration, gpu, params={"node.name": value}, mirror, face_model, codec, crf, preset, buffered…

    A session runs once: `frames()` or `write(path)`. Close it (or use `with`) to stop a run early.
    """

    def __init__(self, input, graph="", rate=30, **options):
        self._handle = ctypes.c_void_p()
        self._pending = None
        self._feeder = None
        self._feed_error = None
        with Options(options) as settings:
            if isinstance(input, (str, os.PathLike)):
                check(lib.prism_session_open(encode(os.fspath(input)), encode(graph), settings.handle,
                                             ctypes.byref(self._handle)))
                return
            frames = iter(input)
            first = next(frames, None)
            if first is None:
                raise ValueError("no frames to push")
            first, kind = _pushable(first)
            num, den = _rate(rate)
            check(lib.prism_session_open_frames(first.shape[1], first.shape[0], FORMATS[kind], num, den, encode(graph),
                                                settings.handle, ctypes.byref(self._handle)))
            self._pending = (first, frames, kind)

    # Pushing (a thread of the session's)

    def _push_all(self):
        first, rest, kind = self._pending
        try:
            for frame in _chain(first, rest):
                array, this = _pushable(frame)
                if this != kind or array.shape != first.shape:
                    raise ValueError("frame of shape %s after frames of shape %s" % (array.shape, first.shape))
                planes = (ctypes.c_void_p * 1)(array.ctypes.data)
                strides = (ctypes.c_int * 1)(array.strides[0])
                status = lib.prism_session_push(self._handle, planes, strides, -1, 0)
                if status == ERROR_STATE:
                    return  # the run ended (an error it reports, or a stop)
                check(status)
        except BaseException as error:  # given to the consumer, which raises it
            self._feed_error = error
            lib.prism_session_cancel(self._handle)
        finally:
            lib.prism_session_end_input(self._handle)

    def _start_feeding(self):
        if self._pending is not None and self._feeder is None:
            self._feeder = threading.Thread(target=self._push_all, name="prism push", daemon=True)
            self._feeder.start()

    def _finish_feeding(self):
        if self._feeder is not None:
            self._feeder.join()
        if self._feed_error is not None:
            error, self._feed_error = self._feed_error, None
            raise error

    # Runs

    def frames(self, format="rgba", timestamps=False):
        """Every filtered frame in order: H×W×4 uint8 arrays for "rgba"/"bgra", H×W for "gray" (other formats:
        the packed buffer's rows). `timestamps=True` yields (seconds, array) pairs."""
        if format not in FORMATS:
            raise ValueError("unknown format %r (%s)" % (format, ", ".join(FORMATS)))
        check(lib.prism_session_start(self._live(), FORMATS[format]))
        self._start_feeding()
        try:
            frame = ctypes.c_void_p()
            while True:
                status = lib.prism_session_next_frame(self._handle, ctypes.byref(frame))
                if status == END:
                    break
                if status < 0 and self._feed_error is not None:
                    break
                check(status)
                try:
                    array = _array(frame, format)
                    pts = lib.prism_frame_pts_ns(frame) / 1e9
                finally:
                    lib.prism_frame_free(frame)
                yield (pts, array) if timestamps else array
        finally:
            if self._feeder is not None and self._feeder.is_alive():
                lib.prism_session_cancel(self._handle)
        self._finish_feeding()

    def write(self, path):
        """Writes the run to `path` (a movie, or a .png/.jpg of the first frame); returns the report."""
        self._live()
        self._start_feeding()
        try:
            status = lib.prism_session_write(self._handle, encode(os.fspath(path)))
        finally:
            if self._feeder is not None and self._feeder.is_alive():
                lib.prism_session_cancel(self._handle)
            self._finish_feeding()
        check(status)
        return self.report

    @property
    def report(self):
        """What the run did (frames_in, frames_out, fps, stop_reason, renderer, notes) as a dict."""
        return json.loads(lib.prism_session_report(self._live()).decode("utf-8"))

    @property
    def output_size(self):
        """(width, height) of the frames the run gives."""
        return self._size(lib.prism_session_output_size)

    @property
    def input_size(self):
        return self._size(lib.prism_session_input_size)

    def _size(self, function):
        width, height = ctypes.c_int(), ctypes.c_int()
        check(function(self._live(), ctypes.byref(width), ctypes.byref(height)))
        return width.value, height.value

    def _live(self):
        if not self._handle:
            raise PrismError(ERROR_STATE, "the session is closed")
        return self._handle

    def close(self):
        """Stops a run still going and frees the session."""
        if self._handle:
            lib.prism_session_cancel(self._handle)
            if self._feeder is not None:
                self._feeder.join()
            lib.prism_session_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # at interpreter exit the library may be gone already
            pass


def _chain(first, rest):
    yield first
    yield from rest


def _array(frame, format):
    """A frame's pixels as an array of its own (copied out of Prism's buffer)."""
    width, height = lib.prism_frame_width(frame), lib.prism_frame_height(frame)
    stride = ctypes.c_int()
    rows = lib.prism_frame_plane(frame, 0, ctypes.byref(stride))
    if lib.prism_frame_plane_count(frame) > 1:
        # Y'CbCr planes lie in one buffer (prism_frame_plane says where): its rows as they are.
        size = ctypes.c_size_t()
        data = lib.prism_frame_data(frame, ctypes.byref(size))
        return numpy.ctypeslib.as_array(data, shape=(size.value,)).reshape(-1, stride.value).copy()
    buffer = numpy.ctypeslib.as_array(rows, shape=(height * stride.value,)).reshape(height, stride.value)
    if format == "gray":
        return buffer[:, :width].copy()
    return buffer[:, : width * 4].reshape(height, width, 4).copy()


def render(graph, src_image, dst_image=None, **options):
    """One still image through `graph`, as `prism render` does: `src_image` a path (PNG, JPEG…) or an array
    (H×W×4, H×W×3 or H×W uint8); `dst_image` a .png/.jpg path to write, or None to get the result as an
    H×W×4 RGBA array."""
    if isinstance(src_image, (str, os.PathLike)):
        if dst_image is not None:
            with Options(options) as settings:
                check(lib.prism_render(encode(graph), encode(os.fspath(src_image)), encode(os.fspath(dst_image)),
                                       settings.handle))
            return None
        # A file read as `prism render` reads it (a JPEG's Y'CbCr as FFmpeg converts it), through a PNG, which
        # reads back exactly.
        with tempfile.TemporaryDirectory() as folder:
            still = os.path.join(folder, "still.png")
            render(graph, src_image, still, **options)
            with Session(still, "") as session:
                return next(iter(session.frames()))
    with Session([src_image], graph, **options) as session:
        if dst_image is not None:
            session.write(dst_image)
            return None
        for frame in session.frames():
            return frame
    raise PrismError(END, "the image gave no frame")
