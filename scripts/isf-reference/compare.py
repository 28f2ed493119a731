"""Measures Prism's ISF rendering against reference renderers, for scripts/isf-collection-check --compare.

Each image filter is rendered by Prism (`prism run` on a short clip of a still picture, the clip's last frame)
and by a reference given the same picture, the same parameter values and the same frame times, and the two
are compared by PSNR over RGB. References (only local checkouts or builds; nothing is downloaded):
  - the ISF project's WebGL renderer (interactive-shader-format-js: its dist/build.js) in headless Chromium,
    driven by js-runner.js beside this file;
  - a VVISF-GL render tool (vvisf-render.cpp beside this file, built against a local VVISF-GL checkout by
    build-vvisf-render), which compiles what WebGL 1 cannot.
"""
import base64, html, json, math, os, re, shutil, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMES, FPS = 3, 30
AGREE_DB = 30.0


def header(text):
    start = text.find("/*")
    end = text.find("*/", start)
    if start < 0 or end < 0:
        return None
    try:
        return json.loads(text[start + 2:end])
    except ValueError:
        return None


# MARK: parameter values

def _byte(v):
    return max(0, min(255, int(round(v * 255))))


def non_default_values(doc):
    """One set of values other than the defaults, chosen by a fixed rule so that runs are comparable: a float
    at 80 % of its range (30 % when that is its default), the other bool, a long's last choice (its first when
    that is the default), a point at 80 % of its MIN...MAX (without them: None, 80 % across and up the picture,
    filled in by scaled_points), a colour (0.9, 0.3, 0.2, 1). Returns {name: (type, value)}."""
    values = {}
    for item in doc.get("INPUTS", []):
        if not isinstance(item, dict) or "NAME" not in item:
            continue
        name, kind, default = item["NAME"], item.get("TYPE"), item.get("DEFAULT")
        if kind == "float":
            lo, hi = item.get("MIN", 0.0), item.get("MAX", 1.0)
            if not all(isinstance(x, (int, float)) for x in (lo, hi)):
                continue
            v = lo + 0.8 * (hi - lo)
            if isinstance(default, (int, float)) and abs(v - default) < 1e-6 * max(1, abs(hi - lo)):
                v = lo + 0.3 * (hi - lo)
            values[name] = ("float", v)
        elif kind == "bool":
            values[name] = ("bool", not bool(default))
        elif kind == "long":
            choices = item.get("VALUES") or []
            if not choices and isinstance(item.get("MIN"), (int, float)) and isinstance(item.get("MAX"), (int, float)):
                choices = [int(item["MIN"]), int(item["MAX"])]
            choices = [c for c in choices if isinstance(c, (int, float))]
            if len(choices) < 2:
                continue
            v = choices[-1] if choices[-1] != default else choices[0]
            values[name] = ("long", int(v))
        elif kind == "point2D":
            lo, hi = item.get("MIN"), item.get("MAX")
            if isinstance(lo, list) and isinstance(hi, list) and len(lo) >= 2 and len(hi) >= 2:
                values[name] = ("point2D", [lo[0] + 0.8 * (hi[0] - lo[0]), lo[1] + 0.8 * (hi[1] - lo[1])])
            else:
                values[name] = ("point2D", None)
        elif kind == "color":
            values[name] = ("color", [_byte(0.9) / 255, _byte(0.3) / 255, _byte(0.2) / 255, 1.0])
    return values


def _graph_value(item, kind, value):
    if kind == "bool":
        return "true" if value else "false"
    if kind == "long":
        labels, choices = item.get("LABELS") or [], item.get("VALUES") or []
        if labels and len(labels) == len(choices) and value in choices:
            label = labels[choices.index(value)]
            return "'%s'" % label.replace("'", "\\'") if re.search(r"[^A-Za-z0-9_.-]", label) else label
        return str(value)
    if kind == "point2D":
        return "%r:%r" % (float(value[0]), float(value[1]))
    if kind == "color":
        return "#" + "".join("%02x" % _byte(c) for c in value)
    return repr(float(value))


def filter_spec(path, doc, values):
    """The graph text that names the shader at `path` with `values` ({name: (type, value)})."""
    items = {i["NAME"]: i for i in doc.get("INPUTS", []) if isinstance(i, dict) and "NAME" in i}
    quoted = "'%s'" % path.replace("'", "\\'")
    # Every image input gets the picture (an unconnected one is undefined in the references: their sampler
    # reads whatever texture unit 0 holds).
    images = image_inputs(doc)
    if len(images) > 1:
        quoted = "[in]" * len(images) + quoted
    if not values:
        return quoted
    return quoted + "(" + ", ".join("%s=%s" % (n, _graph_value(items[n], k, v)) for n, (k, v) in values.items()) + ")"


def image_inputs(doc):
    return [i["NAME"] for i in doc.get("INPUTS", []) if isinstance(i, dict) and i.get("TYPE") == "image" and "NAME" in i]


def imported_urls(folder, doc):
    """IMPORTED images as data: URLs (PNG and JPEG, beside the shader), for the JavaScript renderer's host."""
    urls = {}
    imported = doc.get("IMPORTED") or {}
    entries = imported.items() if isinstance(imported, dict) else [(i.get("NAME"), i) for i in imported if isinstance(i, dict)]
    for name, entry in entries:
        path = os.path.join(folder, entry.get("PATH", "")) if isinstance(entry, dict) and name else None
        if path and os.path.isfile(path):
            kind = "jpeg" if path.lower().endswith((".jpg", ".jpeg")) else "png"
            with open(path, "rb") as f:
                urls[name] = "data:image/%s;base64,%s" % (kind, base64.b64encode(f.read()).decode())
    return urls


def js_values(values):
    out = {}
    for name, (kind, value) in values.items():
        out[name] = (1 if value else 0) if kind == "bool" else value
    return out


# MARK: pictures

class Picture:
    """A test picture scaled to `width`, as a PNG (for the references) and as a clip of FRAMES frames at FPS
    (for Prism), both lossless from the same pixels."""

    def __init__(self, source, width, folder):
        self.name = os.path.splitext(os.path.basename(source))[0]
        self.png = os.path.join(folder, "%s-%d.png" % (self.name, width))
        self.clip = os.path.join(folder, "%s-%d.nut" % (self.name, width))
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", source,
                        "-vf", "scale=%d:-2:flags=area,format=rgb24" % width, self.png], check=True)
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-loop", "1", "-framerate", str(FPS),
                        "-i", self.png, "-frames:v", str(FRAMES), "-c:v", "ffv1", "-pix_fmt", "bgr0", self.clip],
                       check=True)
        probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "stream=width,height", "-of", "csv=p=0", self.png], capture_output=True, text=True,
                               check=True).stdout.strip().split(",")
        self.width, self.height = int(probe[0]), int(probe[1])
        self.rgba = os.path.join(folder, "%s-%d.rgba" % (self.name, width))
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", self.png, "-f", "rawvideo",
                        "-pix_fmt", "rgba", self.rgba], check=True)
        with open(self.png, "rb") as f:
            self.data_url = "data:image/png;base64," + base64.b64encode(f.read()).decode()


def scaled_points(values, picture):
    """A point without MIN/MAX (None) is put 80 % across and up the picture, in pixels."""
    out = {}
    for name, (kind, value) in values.items():
        if kind == "point2D" and value is None:
            value = [0.8 * picture.width, 0.8 * picture.height]
        out[name] = (kind, value)
    return out


# MARK: renderers

def render_prism(prism, spec, picture, timeout=120, cache=None, sources=()):
    """The clip's last frame through `spec`, as RGBA bytes, or an error line. With `cache` (a folder), a
    frame already rendered by the same prism binary (same size and time) from the same spec and the same
    shader files (`sources`: their contents are part of the key) is read back."""
    key = None
    if cache:
        import hashlib
        stat = os.stat(prism)
        digest = hashlib.sha1(("%s|%d|%d|%s|%dx%d" % (
            spec, stat.st_size, stat.st_mtime_ns, picture.name, picture.width, picture.height)).encode())
        for source in sources:
            if os.path.exists(source):
                with open(source, "rb") as f:
                    digest.update(f.read())
        key = os.path.join(cache, digest.hexdigest())
        if os.path.exists(key):
            with open(key, "rb") as f:
                return f.read(), None
    try:
        r = subprocess.run([prism, "run", picture.clip, "--filter", spec, "--frames", str(FRAMES), "--quiet",
                            "-o", "-", "--output-format", "rgba"], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    size = picture.width * picture.height * 4
    if r.returncode != 0 or len(r.stdout) < size:
        return None, (r.stderr.decode(errors="replace").strip().splitlines() or ["exit %d" % r.returncode])[-1]
    if key:
        os.makedirs(cache, exist_ok=True)
        with open(key, "wb") as f:
            f.write(r.stdout[-size:])
    return r.stdout[-size:], None


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render_js(js_checkout, picture, jobs, timeout=600):
    """Renders jobs ([{id, fs, vs, values}]) in one headless Chromium page; {id: (bytes or None, error)}."""
    build = os.path.join(js_checkout, "dist", "build.js")
    with open(build, encoding="utf-8") as f:
        library = f.read()
    with open(os.path.join(HERE, "js-runner.js"), encoding="utf-8") as f:
        runner = f.read()
    for job in jobs:
        job.update(frames=FRAMES, fps=FPS, width=picture.width, height=picture.height)

    def script(text):
        return "<script>" + text.replace("</script", "<\\/script") + "</script>"

    page = ("<!doctype html><html><head><meta charset=utf-8></head><body><div id=results></div>"
            + script(library) + script("var IMAGE = %s; var JOBS = %s;" % (json.dumps(picture.data_url), json.dumps(jobs)))
            + script(runner) + "</body></html>")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "page.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        try:
            # WebGL on Mesa's GL through ANGLE (llvmpipe here, as Prism and vvisf-render use): hash noise such as
            # fract(sin(x) * 43758.5453) then depends on the renderers, not on two sin() implementations.
            r = subprocess.run([chromium_path(), "--headless", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
                                "--use-gl=angle", "--use-angle=gl-egl", "--ignore-gpu-blocklist", "--mute-audio",
                                "--user-data-dir=" + os.path.join(folder, "profile"), "--virtual-time-budget=600000",
                                "--dump-dom", "file://" + path], capture_output=True, text=True, timeout=timeout)
            dom = r.stdout
        except subprocess.TimeoutExpired:
            dom = ""
    results = {}
    for m in re.finditer(r'<pre id="job-([^"]+)" data-status="(ok|error)">([^<]*)</pre>', dom):
        jid, status, text = m.group(1), m.group(2), html.unescape(m.group(3))
        results[jid] = (base64.b64decode(text), None) if status == "ok" else (None, text.strip().splitlines()[0][:200] if text.strip() else "error")
    for job in jobs:
        results.setdefault(str(job["id"]), (None, "no result from the page"))
    return results


def render_vvisf(tool, path, picture, values, timeout=120):
    """The last of FRAMES frames from the vvisf-render tool (build-vvisf-render), or an error line."""
    arguments = []
    for name, (kind, value) in values.items():
        text = ",".join(repr(float(v)) for v in value) if isinstance(value, list) else repr(float(value))
        arguments.append("%s=%s:%s" % (name, kind, text))
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out.rgba")
        try:
            r = subprocess.run([tool, path, picture.rgba, str(picture.width), str(picture.height), str(FRAMES), str(FPS),
                                out] + arguments, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timed out"
        if r.returncode != 0 or not os.path.exists(out):
            lines = [l for l in r.stderr.strip().splitlines() if l.startswith("vvisf-render")] or r.stderr.strip().splitlines()
            return None, (lines or ["exit %d" % r.returncode])[-1][:300]
        with open(out, "rb") as f:
            return f.read(), None


def psnr(a, b):
    """PSNR over R, G and B (8-bit), infinite for identical pictures."""
    if len(a) != len(b):
        return float("nan")
    total, count = 0, 0
    mv_a, mv_b = memoryview(a), memoryview(b)
    try:
        import numpy
        x = numpy.frombuffer(a, numpy.uint8).reshape(-1, 4)[:, :3].astype(numpy.int32)
        y = numpy.frombuffer(b, numpy.uint8).reshape(-1, 4)[:, :3].astype(numpy.int32)
        mse = float(((x - y) ** 2).mean())
    except ImportError:
        for i in range(0, len(a), 4):
            for c in range(3):
                d = mv_a[i + c] - mv_b[i + c]
                total += d * d
            count += 3
        mse = total / count
    return float("inf") if mse == 0 else 10 * math.log10(255 * 255 / mse)


# MARK: the comparison

def undeclared_defaults(doc):
    """Values for the inputs that declare no DEFAULT, given to every renderer: the hosts differ there (the
    JavaScript renderer leaves GL's zero, VVISF takes a float's midpoint and true for a bool; the spec says
    nothing), and the comparison is about rendering. Prism's own choice, the JavaScript renderer's zeros: 0
    (the nearer end of MIN...MAX when 0 is outside), false, a long's 0 (its first value when 0 is not one),
    (0, 0), (0, 0, 0, 0)."""
    values = {}
    for item in doc.get("INPUTS", []):
        if not isinstance(item, dict) or "NAME" not in item or "DEFAULT" in item:
            continue
        name, kind = item["NAME"], item.get("TYPE")
        if kind == "float":
            lo, hi = item.get("MIN", -math.inf), item.get("MAX", math.inf)
            if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                values[name] = ("float", float(min(max(0.0, min(lo, hi)), max(lo, hi))))
        elif kind == "bool":
            values[name] = ("bool", False)
        elif kind == "long":
            choices = [c for c in (item.get("VALUES") or []) if isinstance(c, (int, float))]
            values[name] = ("long", 0 if not choices or 0 in choices else int(choices[0]))
        elif kind == "point2D":
            values[name] = ("point2D", [0.0, 0.0])
        elif kind == "color":
            values[name] = ("color", [0.0, 0.0, 0.0, 0.0])
    return values


def cases_for(folder, name, pictures):
    """The (picture, label, values) cases of one filter: defaults, and non-default values where it has any."""
    with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
        doc = header(f.read()) or {}
    changed = non_default_values(doc)
    undeclared = undeclared_defaults(doc)
    changed = dict(undeclared, **changed)
    cases = []
    for picture in pictures:
        cases.append((picture, "default", dict(undeclared)))
        if changed:
            cases.append((picture, "changed", scaled_points(changed, picture)))
    return doc, cases


def describe(values):
    return ", ".join("%s=%s" % (n, v if k != "color" else "(%s)" % ",".join("%.2f" % c for c in v)) for n, (k, v) in values.items())


def save_png(data, picture, path):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba", "-s",
                    "%dx%d" % (picture.width, picture.height), "-i", "-", path], input=data, check=True)


def compare_folder(folder, names, prism, js_checkout, sources, vvisf=None, log=None, batch=24, keep=None, workers=2,
                   cache=None):
    """Every filter in `names` against each reference. Returns {name: {"prism": first error or None,
    "references": {ref: [{label, picture, db, error, values}]}}}. Prism's renders (`workers` at a time), the
    JavaScript renderer's pages and VVISF's renders run side by side."""
    from concurrent.futures import ThreadPoolExecutor
    with tempfile.TemporaryDirectory() as scratch:
        pictures = [Picture(source, 320, scratch) for source in sources]
        plan, jobs, cases_in_order = {}, {p.name: [] for p in pictures}, []
        for name in names:
            doc, cases = cases_for(folder, name, pictures)
            path = os.path.abspath(os.path.join(folder, name))
            vs_path = path[:-3] + ".vs"
            with open(path, encoding="utf-8", errors="replace") as f:
                fs = f.read()
            vs = open(vs_path, encoding="utf-8", errors="replace").read() if os.path.exists(vs_path) else None
            entry = plan[name] = {"cases": []}
            for picture, label, values in cases:
                case = dict(id=str(len(cases_in_order)), picture=picture, label=label, values=values, path=path,
                            spec=filter_spec(path, doc, values))
                entry["cases"].append(case)
                cases_in_order.append(case)
                jobs[picture.name].append(dict(id=case["id"], fs=fs, vs=vs, values=js_values(values), images=image_inputs(doc),
                                               imported=imported_urls(folder, doc)))
        results = {}

        def prism_case(case):
            case["prism"], case["prism_error"] = render_prism(prism, case["spec"], case["picture"], cache=cache,
                                                              sources=(case["path"], case["path"][:-3] + ".vs"))

        def js_all():
            for picture in pictures:
                todo = jobs[picture.name]
                for start in range(0, len(todo), batch):
                    results.update({("js", k): v for k, v in render_js(js_checkout, picture, todo[start:start + batch]).items()})
                    if log:
                        log("js %s: %d of %d" % (picture.name, min(start + batch, len(todo)), len(todo)))

        def vvisf_all():
            for case in cases_in_order:
                results[("vvisf", case["id"])] = render_vvisf(vvisf, case["path"], case["picture"], case["values"])

        with ThreadPoolExecutor(max_workers=workers + 2) as pool:
            side = [pool.submit(js_all)] if js_checkout else []
            side += [pool.submit(vvisf_all)] if vvisf else []
            with ThreadPoolExecutor(max_workers=workers) as prism_pool:
                for name, entry in plan.items():
                    list(prism_pool.map(prism_case, entry["cases"]))
                    if log:
                        log("prism %s: %s" % (name, "; ".join(c["prism_error"] for c in entry["cases"] if c["prism_error"]) or "ok"))
            for future in side:
                future.result()
        report = {}
        for name, entry in plan.items():
            row = report[name] = {"prism": None, "references": {}}
            errors = [c["prism_error"] for c in entry["cases"] if c["prism_error"]]
            row["prism"] = errors[0] if errors else None
            for ref in ("js", "vvisf"):
                measured = []
                for case in entry["cases"]:
                    if (ref, case["id"]) not in results:
                        continue
                    data, error = results[(ref, case["id"])]
                    if keep:
                        stem = os.path.join(keep, "%s-%s-%s" % (name[:-3], case["picture"].name, case["label"]))
                        for who, frame in (("prism", case["prism"]), (ref, data)):
                            if frame is not None:
                                save_png(frame, case["picture"], "%s-%s.png" % (stem, who))
                    db = psnr(case["prism"], data) if data is not None and case["prism"] is not None else None
                    measured.append(dict(label=case["label"], picture=case["picture"].name, db=db, error=error,
                                         values=describe(case["values"])))
                if measured:
                    row["references"][ref] = measured
        return report


def verdict(row):
    """('agrees' | 'disagrees' | 'unchecked', reason) for one filter's row. It agrees when every case that a
    reference renders is within AGREE_DB of it, for some reference that renders every case; it disagrees when
    references render it but none agrees (the reason names the worst case); it cannot be checked when no
    reference renders every case (the reason says why each failed)."""
    if row["prism"]:
        return "disagrees", "Prism fails: " + row["prism"]
    failures, disagreements = [], []
    for ref, cases in row["references"].items():
        failed = [c for c in cases if c["db"] is None]
        if failed:
            failures.append("%s: %s" % (ref, failed[0]["error"]))
            continue
        worst = min(cases, key=lambda c: c["db"])
        if worst["db"] >= AGREE_DB:
            others = "".join("; %s disagrees (%s)" % d for d in disagreements)
            return "agrees", "%s, worst %.1f dB%s" % (ref, worst["db"], others)
        disagreements.append((ref, "%.1f dB on %s at %s%s" % (worst["db"], worst["picture"], worst["label"],
                              (" (" + worst["values"] + ")") if worst["values"] else "")))
    if disagreements:
        return "disagrees", "; ".join("%s: %s" % d for d in disagreements)
    return "unchecked", "; ".join(failures) or "no reference"
