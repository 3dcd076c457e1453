#!/usr/bin/env python3
"""Writes a native-format trace (docs/traces.md) of N Philly-like jobs for the
scaling table of docs/performance.md: each job's (duration, num_gpus) is a
row of data/pollux/philly.csv drawn at random, arrivals are Poisson with the
mean gap that loads `gpus` GPUs to `load` (the mean job is 42,811
GPU-seconds). Seeded: the same arguments give the same file.

    bench/scale_trace.py N GPUS LOAD SEED > trace.csv
"""
import csv
import os
import random
import sys

n, gpus, load, seed = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
here = os.path.dirname(os.path.abspath(__file__))
rows = [(float(r["duration"]), int(r["num_gpus"]))
        for r in csv.DictReader(open(os.path.join(here, "..", "data", "pollux", "philly.csv")))]
mean_work = sum(d * g for d, g in rows) / len(rows)
gap = mean_work / (load * gpus)
rng = random.Random(seed)
t = 0.0
out = sys.stdout
out.write("name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling\n")
for i in range(n):
    d, g = rows[rng.randrange(len(rows))]
    g = min(g, gpus)
    out.write(f"j{i},{t:.0f},{g},{g},{g},1,,,{d:.0f},linear\n")
    t += rng.expovariate(1 / gap)
