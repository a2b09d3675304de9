#!/usr/bin/env python3
"""Where an answer's build time goes to the garbage collector, with the collector as the caller
left it (this script never changes gc settings; it only listens through `gc.callbacks`).

    python benchmarks/bench_gc.py --offers 180000 1000000

For each size, in a fresh process: building that many `CatalogItem`s the way an answer does
(`new_offers`, all allocated empty, then filled), with the time of every collection it started
counted by generation; the same with the collector disabled around it, for comparison; and what
one full collection costs per live object, for empty and filled `CatalogItem`s (15 slots) and for
empty objects of 2 slots: a full collection walks every tracked object, so its cost follows the
objects' size in memory rather than what they point to.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import gc, json, sys, time
from itertools import repeat, starmap
from gpuhunt._internal.models import fill_offers, new_offers
n = int(sys.argv[1])
spent = []
def listen(phase, info):
    if phase == "start":
        listen.t = time.perf_counter()
    else:
        spent.append((info["generation"], time.perf_counter() - listen.t))
shape = ("aws", "p5.48xlarge", 192, 2048.0, 8, "H100", 80.0, None, None, [], "x86", {}, False)
shapes, locations, prices = [shape] * n, ["us-east-1"] * n, [0.5 + i / n for i in range(n)]
res = {"offers": n, "builds": []}
gc.callbacks.append(listen)
for _ in range(3):
    spent.clear()
    t = time.perf_counter()
    a = new_offers(n)
    fill_offers(iter(a), shapes, locations, prices)
    wall = time.perf_counter() - t
    res["builds"].append({"s": wall, "gc": {g: [len([s for k, s in spent if k == g]),
                                                sum(s for k, s in spent if k == g)] for g in range(3)}})
    del a
gc.callbacks.remove(listen)
was = gc.isenabled(); gc.disable()
t = time.perf_counter(); a = new_offers(n); fill_offers(iter(a), shapes, locations, prices)
res["build_gc_off_s"] = time.perf_counter() - t
del a
if was:
    gc.enable()
def full():
    best = None
    for _ in range(3):
        t = time.perf_counter(); gc.collect(); d = time.perf_counter() - t
        best = d if best is None else min(best, d)
    return best
class Two:
    __slots__ = ("a", "b")
res["full_base_s"] = full()
a = new_offers(n); res["full_empty_s"] = full()
fill_offers(iter(a), shapes, locations, prices); res["full_filled_s"] = full(); del a
p = list(starmap(object.__new__, repeat((Two,), n))); res["full_two_slots_s"] = full(); del p
print("RESULT " + json.dumps(res))
"""


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--offers", type=int, nargs="+", default=[180_000, 1_000_000])
    args = p.parse_args()
    env = {"PYTHONPATH": str(ROOT / "src")}
    for n in args.offers:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n)],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            timeout=3600,
        )
        line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(out.stderr[-3000:], file=sys.stderr)
            return 1
        r = json.loads(line[7:])
        best = min(r["builds"], key=lambda b: b["s"])
        per = {g: best["gc"][str(g)] for g in range(3)}
        ns = 1e9 / n
        print(
            f"{n} offers: build {best['s'] * 1000:.0f} ms (best of 3), of which collections "
            + ", ".join(f"gen{g} {c}x {s * 1000:.0f} ms" for g, (c, s) in per.items())
            + f"; with the collector off {r['build_gc_off_s'] * 1000:.0f} ms"
        )
        print(
            f"  one full collection per live object: empty CatalogItem "
            f"{(r['full_empty_s'] - r['full_base_s']) * ns:.0f} ns, filled "
            f"{(r['full_filled_s'] - r['full_base_s']) * ns:.0f} ns, empty 2-slot object "
            f"{(r['full_two_slots_s'] - r['full_base_s']) * ns:.0f} ns "
            f"(the process alone {r['full_base_s'] * 1000:.1f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
