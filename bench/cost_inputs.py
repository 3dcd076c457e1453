#!/usr/bin/env python3
"""Writes the inputs of docs/performance.md's "Issue 23: costs that grew
faster than the input" (each used to cost time or memory quadratic in its
size, or in a number in it):

    bench/cost_inputs.py nodes N DIR       # a run directory: allocations.csv on N nodes
    bench/cost_inputs.py profiles N DIR    # a sweep directory: sweep.csv of N profiles at 2 loads
    bench/cost_inputs.py scorers N         # a profile of N scorers with args (stdout)
    bench/cost_inputs.py duration N MAX    # a workload of N duration jobs of maxReplicas MAX (stdout)

Names come in reverse order (node-N first), so the report sorts them.
"""
import os
import sys

kind = sys.argv[1]


def write(out, name, text):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


if kind == "nodes":
    n, out = int(sys.argv[2]), sys.argv[3]
    end = n + 10
    write(out, "summary.json", '{"profile": "p", "end_time": %d, "counts": {"total": 1}}\n' % end)
    write(out, "jobs.csv",
          "name,submit,queueing,launching,running,completion,jct\njob-1,0,0,0,%d,%d,%d\n" % (end, end, end))
    write(out, "utilization.csv", "time,cpu_allocated,cpu_effective\n0,0.5,0.5\n%d,0,0\n" % end)
    write(out, "events.csv", "time,job,event,workers\n0,job-1,submitted,\n0,job-1,started,1\n")
    write(out, "allocations.csv", "node,job,start,end,tasks,gpus\n" +
          "".join("node-%d,job-1,%d,%d,1,1\n" % (n - i, i, i + 10) for i in range(n)))
elif kind == "profiles":
    n, out = int(sys.argv[2]), sys.argv[3]
    rows = ["cell,cells,profile,load,seed,status,total,completed,jct_mean\n"]
    for i in range(n):
        for k, load in enumerate((1, 2)):
            rows.append("%d,%d,p%d,%d,,all done,3,3,%d\n" % (2 * i + k, 2 * n, n - i, load, 100 + i))
    write(out, "sweep.csv", "".join(rows))
elif kind == "scorers":
    n = int(sys.argv[2])
    sys.stdout.write("name: many\nscorers:\n" + "".join(
        "  - {name: LeastAllocated, weight: 1, args: {resources: [{name: cpu, weight: 1}, "
        "{name: memory, weight: 1}]}}\n" for _ in range(n)))
elif kind == "duration":
    n, most = int(sys.argv[2]), int(sys.argv[3])
    sys.stdout.write("jobs:\n" + "".join(
        "  - {name: j%d, arrival: 0, duration: 100, scaling: sqrt, worker: {replicas: 4, "
        "minReplicas: 2, maxReplicas: %d, resources: {nvidia.com/gpu: 1}}}\n" % (i, most)
        for i in range(n)))
else:
    sys.exit(__doc__)
