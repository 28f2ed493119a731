"""The C library (prism.h) through ctypes: where it is found, its functions' types, its errors."""

import ctypes
import ctypes.util
import os

# prism_status (prism.h)
OK, END = 0, 1
ERROR_ARGUMENT, ERROR_USAGE, ERROR_STATE, ERROR_RUN = -1, -2, -3, -4

# prism_pixel_format (prism.h), by FFmpeg's names
FORMATS = {
    "rgba": 0, "bgra": 1, "yuv420p": 2, "nv12": 3, "yuyv422": 4, "yuv422p": 5, "yuv444p": 6,
    "yuv420p10le": 7, "gray": 8,
}


class PrismError(Exception):
    """A call into Prism failed: `status` is prism.h's code, the message its one line."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _candidates():
    chosen = os.environ.get("PRISM_LIBRARY")
    if chosen:
        return [chosen]
    prefixes = [os.environ.get("PRISM_PREFIX"), "/usr/local", "/usr"]
    found = [os.path.join(prefix, "lib", "libprism.so") for prefix in prefixes if prefix]
    return [path for path in found if os.path.exists(path)] + [ctypes.util.find_library("prism") or "libprism.so"]


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            errors.append(str(error))
    raise ImportError("libprism.so not found (install it with scripts/install-lib PREFIX, then set PRISM_PREFIX=PREFIX "
                      "or PRISM_LIBRARY=PREFIX/lib/libprism.so): " + "; ".join(errors))


lib = _load()

_p, _int, _i64, _str = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p
_signatures = {
    "prism_version": (_str, []),
    "prism_api_version": (_int, []),
    "prism_last_error": (_str, []),
    "prism_options_new": (_p, []),
    "prism_options_set": (_int, [_p, _str, _str]),
    "prism_options_free": (None, [_p]),
    "prism_session_open": (_int, [_str, _str, _p, ctypes.POINTER(_p)]),
    "prism_session_open_frames": (_int, [_int, _int, _int, _int, _int, _str, _p, ctypes.POINTER(_p)]),
    "prism_session_output_size": (_int, [_p, ctypes.POINTER(_int), ctypes.POINTER(_int)]),
    "prism_session_input_size": (_int, [_p, ctypes.POINTER(_int), ctypes.POINTER(_int)]),
    "prism_session_push": (_int, [_p, ctypes.POINTER(_p), ctypes.POINTER(_int), _i64, _i64]),
    "prism_session_end_input": (_int, [_p]),
    "prism_session_start": (_int, [_p, _int]),
    "prism_session_next_frame": (_int, [_p, ctypes.POINTER(_p)]),
    "prism_session_write": (_int, [_p, _str]),
    "prism_session_cancel": (None, [_p]),
    "prism_session_report": (_str, [_p]),
    "prism_session_free": (None, [_p]),
    "prism_frame_width": (_int, [_p]),
    "prism_frame_height": (_int, [_p]),
    "prism_frame_format": (_int, [_p]),
    "prism_frame_index": (_i64, [_p]),
    "prism_frame_pts_ns": (_i64, [_p]),
    "prism_frame_plane_count": (_int, [_p]),
    "prism_frame_plane": (ctypes.POINTER(ctypes.c_uint8), [_p, _int, ctypes.POINTER(_int)]),
    "prism_frame_data": (ctypes.POINTER(ctypes.c_uint8), [_p, ctypes.POINTER(ctypes.c_size_t)]),
    "prism_frame_free": (None, [_p]),
    "prism_render": (_int, [_str, _str, _str, _p]),
}
for _name, (_result, _arguments) in _signatures.items():
    _function = getattr(lib, _name)
    _function.restype = _result
    _function.argtypes = _arguments


def check(status):
    """Raises PrismError with the thread's last error for a failing status; returns the status otherwise."""
    if status < 0:
        raise PrismError(status, lib.prism_last_error().decode("utf-8", "replace"))
    return status


def encode(text):
    return text.encode("utf-8") if text is not None else None


class Options:
    """prism_options from keyword arguments: `size=(640, 360)` or "640x360", `fps=30`, `frames=10`,
    `params={"pixellate.scale": 20}` or "pixellate.scale=20", `mirror=True`, … (names as in prism.h, with
    `_` for `-`)."""

    def __init__(self, options):
        self.handle = lib.prism_options_new()
        try:
            for name, value in options.items():
                check(lib.prism_options_set(self.handle, encode(name.replace("_", "-")), encode(self.text(value))))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def text(value):
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return "%dx%d" % tuple(value)
        if isinstance(value, dict):
            return ",".join("%s=%s" % (key, Options.text(item)) for key, item in value.items())
        return str(value)

    def close(self):
        if self.handle:
            lib.prism_options_free(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
