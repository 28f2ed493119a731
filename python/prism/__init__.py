"""Prism's GPU filter graphs from Python: ISF and ShaderToy shaders, mpv hooks, ONNX models, faces and looks
on movies, cameras or numpy frames, through the C library (libprism.so) with ctypes.

    import prism
    for frame in prism.Session("in.mp4", "face-pixellate").frames():   # H×W×4 RGBA uint8 arrays
        ...
    prism.render("invert, mono", "in.png", "out.png")
"""

from ._library import PrismError, lib as _lib
from ._session import Session, render

__all__ = ["PrismError", "Session", "render", "version"]


def version():
    """The library's version ("0.1.0 (commit)")."""
    return _lib.prism_version().decode("utf-8")
