# %% [markdown]
# # Faces in a movie, from Python
# Prism pixellates the faces; numpy looks at what changed; Prism writes the movie. Cells (`# %%`) run one by one
# in an editor that knows them, or the whole file as a script:
#
#     python3 Examples/python/faces.py IN.mp4 OUT.mp4 [FRAMES]
#
# Needs the package (`pip install ./python`) and the library (`scripts/install-lib PREFIX`; PRISM_PREFIX=PREFIX
# when PREFIX is not /usr/local).

# %%
import sys

import numpy

import prism

source, output = sys.argv[1], sys.argv[2]
frames = int(sys.argv[3]) if len(sys.argv) > 3 else 48
print("prism", prism.version())

# %% [markdown]
# Two sessions side by side: the movie as it is, and through `face-pixellate`. Each frame is a height × width × 4
# RGBA array; the share of pixels that differ is the share the faces' blocks cover.

# %%
plain = prism.Session(source, "", frames=frames)
faces = prism.Session(source, "face-pixellate", frames=frames)
covered = [float((a != b).any(axis=2).mean()) for a, b in zip(plain.frames(), faces.frames())]
print("%d frames, %dx%d; faces cover %.1f%% of a frame on average, %.1f%% at most"
      % (len(covered), *faces.output_size, 100 * numpy.mean(covered), 100 * max(covered)))

# %% [markdown]
# Frames made in numpy go through a graph too: here the movie's last frame, darkened by numpy, then mono.

# %%
last = list(prism.Session(source, "", frames=frames).frames())[-1]
darker = (last * 0.5).astype(numpy.uint8)
mono = prism.render("mono", darker)
print("last frame's mean level: %.1f; darkened and mono: %.1f" % (last[:, :, :3].mean(), mono[:, :, :3].mean()))

# %% [markdown]
# The whole movie, written by Prism (the extension picks the container; the encoder is H.264).

# %%
report = prism.Session(source, "face-pixellate", frames=frames).write(output)
print("wrote %d frames to %s at %.1f fps" % (report["frames_out"], output, report["fps"]))
