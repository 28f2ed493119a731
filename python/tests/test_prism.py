"""The Python package against `prism run` and `prism render`: the same graphs on the same input give the same
bytes. Run by the Swift suite (LibraryTests) with the package installed from the checkout; by hand:

    PRISM_PREFIX=PREFIX PRISM_TOOL=.build/debug/prism .venv/bin/python -m pytest python/tests

PRISM_TOOL is the `prism` to compare with; PRISM_FIXTURES the folder holding opencv/Megamind.avi and
chelsea.png (default: the checkout's .fixtures, from scripts/install-deps --tests).
"""

import os
import pathlib
import subprocess

import numpy
import pytest

import prism

CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
TOOL = os.environ.get("PRISM_TOOL", str(CHECKOUT / ".build/debug/prism"))
FIXTURES = pathlib.Path(os.environ.get("PRISM_FIXTURES") or CHECKOUT / ".fixtures")
WIDTH, HEIGHT, FRAMES, RATE = 720, 528, 12, 25

RIPPLE = """/*{ "DESCRIPTION": "a ripple whose phase follows TIME, tinted",
    "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" },
                { "NAME": "amount", "TYPE": "float", "DEFAULT": 0.01, "MIN": 0.0, "MAX": 0.05 } ] }*/
void main() {
    vec2 uv = isf_FragNormCoord;
    uv.x += amount * sin(uv.y * 40.0 + TIME * 6.0);
    gl_FragColor = IMG_NORM_PIXEL(inputImage, uv) * vec4(1.0, 0.9, 0.8, 1.0);
}
"""


def run(arguments, stdin=None):
    result = subprocess.run(arguments, input=stdin, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """OpenCV's Megamind.avi (faces), its first frames re-encoded at 25 fps, so every timestamp is whole
    milliseconds and a TIME-driven shader sees the same times in every way in."""
    path = tmp_path_factory.mktemp("clip") / "megamind.mp4"
    run(["ffmpeg", "-v", "error", "-y", "-i", str(FIXTURES / "opencv/Megamind.avi"), "-map", "0:v", "-frames:v", str(FRAMES),
         "-vf", "setpts=N/%d/TB" % RATE, "-r", str(RATE), "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18",
         "-pix_fmt", "yuv420p", str(path)])
    return path


@pytest.fixture(scope="module")
def ripple(tmp_path_factory):
    path = tmp_path_factory.mktemp("shader") / "ripple.fs"
    path.write_text(RIPPLE)
    return path


def prism_run(input, graph, stdin=None, extra=()):
    data = run([TOOL, "run", str(input), "--filter", graph, *extra, "-o", "-", "--output-format", "rgba", "--quiet"], stdin)
    return numpy.frombuffer(data, numpy.uint8).reshape(-1, HEIGHT, WIDTH, 4)


def assert_same(got, expected):
    assert got.shape == expected.shape
    differing = numpy.argwhere(got != expected)
    assert differing.size == 0, "%d bytes differ, the first at %s" % (len(differing), differing[0])


@pytest.mark.parametrize("graph", ["face-pixellate", "{ripple}(amount=0.02)"])
def test_movie_frames_equal_prism_run(clip, ripple, graph):
    graph = graph.format(ripple=ripple)
    with prism.Session(clip, graph) as session:
        assert session.output_size == (WIDTH, HEIGHT)
        frames = list(session.frames())
        report = session.report
    assert all(frame.shape == (HEIGHT, WIDTH, 4) and frame.dtype == numpy.uint8 for frame in frames)
    expected = prism_run(clip, graph)
    assert_same(numpy.stack(frames), expected)
    assert report["frames_out"] == FRAMES
    # The graph did something: the frames are not the movie's own.
    assert (expected != prism_run(clip, "")).any()


def test_parameters_are_set_by_name(clip, ripple):
    with prism.Session(clip, str(ripple), params={"ripple.amount": 0.03}, frames=3) as session:
        frames = numpy.stack(list(session.frames()))
    assert_same(frames, prism_run(clip, "%s(amount=0.03)" % ripple, extra=["--frames", "3"]))


def test_pushed_numpy_frames_equal_prism_run_of_the_same_raw_frames(clip, ripple):
    # The movie's frames as RGBA arrays: what a program would hand over.
    frames = prism_run(clip, "")
    graph = "%s(amount=0.02), mono" % ripple
    with prism.Session(iter(frames), graph, rate=RATE) as session:
        timed = list(session.frames(timestamps=True))
    expected = prism_run("-", graph, stdin=frames.tobytes(), extra=["--input-format", "%dx%d:rgba:%d" % (WIDTH, HEIGHT, RATE)])
    assert_same(numpy.stack([frame for _, frame in timed]), expected)
    assert [round(time * RATE) for time, _ in timed] == list(range(FRAMES))
    # RGB arrays are taken too (alpha added).
    with prism.Session([frame[:, :, :3] for frame in frames[:2]], graph, rate=RATE) as session:
        assert_same(numpy.stack(list(session.frames())), expected[:2])


def test_write_makes_a_movie(clip, tmp_path):
    output = tmp_path / "out.mp4"
    report = prism.Session(clip, "invert", frames=5).write(output)
    assert report["frames_out"] == 5
    count = run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                 "stream=nb_read_frames,width,height", "-of", "csv=p=0", str(output)])
    assert count.decode().strip() == "%d,%d,5" % (WIDTH, HEIGHT)


def test_render_equals_prism_render(tmp_path):
    image = FIXTURES / "chelsea.png"
    ours, theirs = tmp_path / "ours.png", tmp_path / "theirs.png"
    prism.render("invert, mono", image, ours)
    run([TOOL, "render", "--filter", "invert, mono", str(image), "-o", str(theirs)])
    assert ours.read_bytes() == theirs.read_bytes()
    # A JPEG (Y'CbCr) into an array: the tool's PNG's pixels.
    jpeg, reference = FIXTURES / "opencv/messi5.jpg", tmp_path / "messi.png"
    run([TOOL, "render", "--filter", "mono", str(jpeg), "-o", str(reference)])
    assert_same(prism.render("mono", jpeg), prism.render("", reference))
    # An array in, an array out: the same pixels as the file.
    pixels = prism.render("", image)
    inverted = prism.render("invert", pixels)
    assert inverted.shape == pixels.shape and inverted.dtype == numpy.uint8
    assert_same(inverted[:, :, :3], 255 - pixels[:, :, :3])


def test_errors_are_exceptions_with_the_line(clip, tmp_path):
    with pytest.raises(prism.PrismError, match="no such file") as missing:
        prism.Session(tmp_path / "missing.mp4", "invert")
    assert missing.value.status == -2
    with pytest.raises(prism.PrismError, match="unknown filter 'no-such-filter'"):
        prism.Session(clip, "no-such-filter")
    with pytest.raises(prism.PrismError, match="unknown option 'colour'") as option:
        prism.Session(clip, "invert", colour="red")
    assert option.value.status == -1
    with pytest.raises(ValueError, match="frame of shape"):
        list(prism.Session([numpy.zeros((8, 8, 4), numpy.uint8), numpy.zeros((8, 6, 4), numpy.uint8)], "invert").frames())
    with pytest.raises(TypeError):
        prism.Session([numpy.zeros((8, 8, 4), numpy.float32)], "invert")


def test_leaving_early_stops_the_run(clip):
    session = prism.Session(clip, "invert")
    for index, _ in enumerate(session.frames()):
        if index == 1:
            break
    session.close()
    with pytest.raises(prism.PrismError, match="closed"):
        session.report
