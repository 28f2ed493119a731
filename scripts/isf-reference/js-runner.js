// Renders ISF jobs with the ISF project's WebGL renderer (interactive-shader-format-js, dist/build.js) and
// writes each job's last frame into the page as base64 RGBA rows, top row first, for `--dump-dom` to carry out.
// The renderer's wall clock is replaced by the frames' own times (TIME = frame / FPS, TIMEDELTA 0 on the first
// frame, then 1 / FPS, FRAMEINDEX from 0, DATE fixed), which is what Prism gives a clip of that rate.
// Every image input gets the picture; IMPORTED images their files. Expects IMAGE (a data: URL) and JOBS ([{id, fs, vs, values, images,
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
  // Why the renderer could not build a job's program: its own message, or (when its error mapping itself
  // fails) the first line of WebGL's compile log for the translated shaders.
  function compileLog(gl, job) {
    try {
      const parser = new ISF.Parser();
      parser.parse(job.fs, job.vs || undefined);
      if (!parser.valid) return String(parser.error);
      for (const [type, source] of [[gl.VERTEX_SHADER, parser.vertexShader], [gl.FRAGMENT_SHADER, parser.fragmentShader]]) {
        const shader = gl.createShader(type);
        gl.shaderSource(shader, source);
        gl.compileShader(shader);
        if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) return (gl.getShaderInfoLog(shader) || '').split('\n')[0];
      }
    } catch (e) { return String(e); }
    return null;
  }
  function run(image, job) {
    const canvas = document.createElement('canvas');
    canvas.width = job.width; canvas.height = job.height;
    const gl = canvas.getContext('webgl', { preserveDrawingBuffer: true, premultipliedAlpha: false, antialias: false });
    const renderer = new ISF.Renderer(gl);
    try {
      renderer.loadSource(job.fs, job.vs || undefined);
    } catch (e) {
      return emit(job.id, 'error', compileLog(gl, job) || String(e));
    }
    if (!renderer.valid) {
      const e = renderer.error;
      return emit(job.id, 'error', compileLog(gl, job) || String((e && (e.message || e)) || 'invalid'));
    }
    let frame = 0;
    renderer.setDateUniforms = function () {
      this.setValue('TIME', frame / job.fps);
      this.setValue('TIMEDELTA', frame === 0 ? 0 : 1 / job.fps);
      this.setValue('FRAMEINDEX', frame);
      this.setValue('DATE', [2024, 1, 1, 43200]);
    };
    for (const name in job.values) renderer.setValue(name, job.values[name]);
    const imported = job.importedImages || {};
    // The renderer makes textures for its INPUTS only; an imported sampler gets one of the same kind.
    const Texture = renderer.uniforms['inputImage'] && renderer.uniforms['inputImage'].texture &&
      renderer.uniforms['inputImage'].texture.constructor;
    for (const name in imported) {
      const uniform = renderer.uniforms[name];
      if (uniform && !uniform.texture && Texture) uniform.texture = new Texture({}, renderer.contextState);
    }
    // As the project's own example app does: the image is set again before each draw (which also keeps its
    // texture unit clear of the pass targets' from the second frame on).
    for (frame = 0; frame < job.frames; frame++) {
      for (const name of job.images) if (renderer.uniforms[name]) renderer.setValue(name, image);
      for (const name in imported) if (renderer.uniforms[name]) renderer.setValue(name, imported[name]);
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
  // The picture and each job's IMPORTED images (data: URLs; the host loads them, the renderer only declares
  // their samplers) are decoded before anything is drawn.
  function load(url) {
    return new Promise(function (resolve) {
      const img = new Image();
      img.onload = function () { resolve(img); };
      img.onerror = function () { resolve(null); };
      img.src = url;
    });
  }
  (async function () {
    const image = await load(IMAGE);
    for (const job of JOBS) {
      const urls = job.imported || {};
      job.importedImages = {};
      for (const name in urls) job.importedImages[name] = await load(urls[name]);
      try { run(image, job); } catch (e) { emit(job.id, 'error', String((e && (e.message || e)) || e)); }
    }
    document.title = 'done';
  })();
})();
