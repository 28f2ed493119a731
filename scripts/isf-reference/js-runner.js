// Renders ISF jobs with the ISF project's WebGL renderer (interactive-shader-format-js, dist/build.js) and
// writes each job's last frame into the page as base64 RGBA rows, top row first, for `--dump-dom` to carry out.
// The renderer's wall clock is replaced by the frames' own times (TIME = frame / FPS, TIMEDELTA 0 on the first
// frame, then 1 / FPS, FRAMEINDEX from 0, DATE fixed), which is what Prism gives a clip of that rate.
// Every image input gets the picture. Expects IMAGE (a data: URL) and JOBS ([{id, fs, vs, values, images,
// frames, fps, width, height}]) defined before it.
(function () {
  const ISF = window.interactiveShaderFormat;
  const out = document.getElementById('results');
  function emit(id, status, text) {
    const pre = document.createElement('pre');
    pre.id = 'job-' + id;
    pre.setAttribute('data-status', status);
    pre.textContent = text;
    out.appendChild(pre);
  }
  function base64(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }
  function run(image, job) {
    const canvas = document.createElement('canvas');
    canvas.width = job.width; canvas.height = job.height;
    const gl = canvas.getContext('webgl', { preserveDrawingBuffer: true, premultipliedAlpha: false, antialias: false });
    const renderer = new ISF.Renderer(gl);
    renderer.loadSource(job.fs, job.vs || undefined);
    if (!renderer.valid) {
      const e = renderer.error;
      return emit(job.id, 'error', String((e && (e.message || e)) || 'invalid'));
    }
    let frame = 0;
    renderer.setDateUniforms = function () {
      this.setValue('TIME', frame / job.fps);
      this.setValue('TIMEDELTA', frame === 0 ? 0 : 1 / job.fps);
      this.setValue('FRAMEINDEX', frame);
      this.setValue('DATE', [2024, 1, 1, 43200]);
    };
    for (const name in job.values) renderer.setValue(name, job.values[name]);
    // As the project's own example app does: the image is set again before each draw (which also keeps its
    // texture unit clear of the pass targets' from the second frame on).
    for (frame = 0; frame < job.frames; frame++) {
      for (const name of job.images) if (renderer.uniforms[name]) renderer.setValue(name, image);
      renderer.draw(canvas);
    }
    const w = job.width, h = job.height, pixels = new Uint8Array(w * h * 4), rows = new Uint8Array(w * h * 4);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    for (let y = 0; y < h; y++) rows.set(pixels.subarray((h - 1 - y) * w * 4, (h - y) * w * 4), y * w * 4);
    if (gl.isContextLost()) return emit(job.id, 'error', 'context lost');
    emit(job.id, 'ok', base64(rows));
    const lose = gl.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext();
  }
  const image = new Image();
  image.onload = function () {
    for (const job of JOBS) {
      try { run(image, job); } catch (e) { emit(job.id, 'error', String((e && (e.message || e)) || e)); }
    }
    document.title = 'done';
  };
  image.src = IMAGE;
})();
