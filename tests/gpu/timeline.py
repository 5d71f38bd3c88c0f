#!/usr/bin/env python3
"""The timeline of traced NAME_stream runs (docs/streaming.md), from the BENCH_TRACE lines
make bench keeps in its work directory's trace.txt, one panel per sample, a lane per
device and stream: each chunk's copies in, its launch (from the end of its copies in to
the start of its copies out: queued or running) and its copies out, on the clock of its
device (ms since the run began there), from CUDA events the runtime records
(pipert_stream_plan.trace).
   tests/gpu/timeline.py TRACE OUT.png DEVICES TITLE
DEVICES: the runs over that many devices (1: the runs on one GPU)."""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

trace_path, out_path, devices, title = sys.argv[1:5]
LINE = re.compile(r"^(\S+) (\S+) (\S+) devices=(\d+) chunk=(\d+) device=(\d+) stream=(\d+) "
                  r"rows=(\d+) h2d=([\d.]+),([\d.]+) d2h=([\d.]+),([\d.]+)$")
runs = {}
for line in open(trace_path):
    m = LINE.match(line.strip())
    if not m or m.group(4) != devices:
        continue
    sample = f"{m.group(3)} ({m.group(1)} {m.group(2)})"
    runs.setdefault(sample, []).append(
        (int(m.group(6)), int(m.group(7)), int(m.group(5)), *map(float, m.group(9, 10, 11, 12))))
if not runs:
    sys.exit(f"timeline: no run over {devices} device(s) in {trace_path}")

colours = {"H2D": "#4a7ab0", "launch": "#6aa84f", "D2H": "#e69138"}
lanes_of = {s: sorted({(c[0], c[1]) for c in chunks}) for s, chunks in runs.items()}
height = 1.0 + sum(0.9 + 0.35 * len(lanes) for lanes in lanes_of.values())
fig, axes = plt.subplots(len(runs), 1, figsize=(11, height), squeeze=False,
                         height_ratios=[len(lanes_of[s]) + 1.5 for s in sorted(runs)])
for ax, (sample, chunks) in zip(axes[:, 0], sorted(runs.items())):
    lanes = lanes_of[sample]
    for dev, stream, chunk, h0, h1, d0, d1 in chunks:
        y = lanes.index((dev, stream))
        for what, a, b in (("H2D", h0, h1), ("launch", h1, d0), ("D2H", d0, d1)):
            ax.broken_barh([(a, max(b - a, 0.01))], (y - 0.35, 0.7), color=colours[what])
        ax.text((h0 + d1) / 2, y, str(chunk), ha="center", va="center", fontsize=6)
    ax.set_yticks(range(len(lanes)), [f"GPU {d} stream {s}" for d, s in lanes], fontsize=7)
    ax.invert_yaxis()
    ax.set_title(sample, fontsize=9)
    ax.set_xlabel("ms since the run began on the device")
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
fig.legend(handles, ["copies in (H2D)", "launch (queued or running)", "copies out (D2H)"],
           loc="upper right", fontsize=7, ncol=3)
fig.suptitle(title, fontsize=10, x=0.02, ha="left")
fig.tight_layout(rect=(0, 0, 1, 0.95))
fig.savefig(out_path, dpi=110)
