#!/usr/bin/env python3
"""bench/report.py: the benchmarks' CSV files, their tables and their plots.

Every benchmark (scripts/bench NAME) leaves one CSV file: comment lines
"# key: value" (command, machine, commit, date) and then a header and
rows. This program turns the committed ones, docs/results/NAME.csv, into
the table block of docs/benchmarks.md (between the lines
"<!-- results:NAME begin ... -->" and "<!-- results:NAME end -->") and the
plots docs/img/NAME-*.svg (gnuplot). It is run through scripts/plots (all
of it) and scripts/bench (the import of a fresh run); see those for the
commands. Python's standard library and gnuplot only.

  report.py list                      the images `write` draws, one path a line
  report.py write [NAME...]           tables into the doc, plots into docs/img
  report.py check                     the doc's blocks are what the CSVs give
  report.py table NAME CSV            print NAME's block for CSV (no plots)
  report.py import NAME OUT INPUT...  a fresh run's output as NAME's CSV
        --meta KEY=VALUE ...          (scripts/bench passes command, machine, commit, date)
"""

import csv
import io
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = "docs/benchmarks.md"
BENCHES = ["pool", "fiber", "asio", "micro", "kernel-pipe", "kernel-hackbench"]
META_KEYS = ["benchmark", "command", "machine", "commit", "date", "note"]


def csv_path(name):
    return f"docs/results/{name}.csv"


def image_path(name, plot):
    return f"docs/img/{name}-{plot}.svg"


# --- reading and writing the CSV files ------------------------------------------------------

def read_results(path):
    """Returns (meta, rows): the leading "# key: value" lines, then the rows as dicts."""
    meta, body = {}, []
    with open(path, newline="") as f:
        lines = f.read().splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        key, _, value = lines[i][1:].strip().partition(":")
        if value:
            meta[key.strip()] = (meta[key.strip()] + " " if key.strip() in meta else "") + value.strip()
        i += 1
    rows = list(csv.DictReader(io.StringIO("".join(lines[i:]))))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    return meta, rows


def write_results(path, meta, columns, rows):
    """Writes meta lines, then columns and rows (dicts; a missing key is an empty cell)."""
    with open(path, "w", newline="") as f:
        for key in META_KEYS + sorted(k for k in meta if k not in META_KEYS):
            if meta.get(key):
                f.write(f"# {key}: {meta[key]}\n")
        w = csv.DictWriter(f, columns, extrasaction="raise", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})


def records(path, prefix="RESULT"):
    """The `PREFIX key=value ...` lines of a file (bench/results.hpp's Record::line), as dicts."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith(prefix + " "):
                out.append(dict(field.split("=", 1) for field in shlex.split(line[len(prefix) + 1:])))
    return out


def num(v):
    """A cell as a float; None when empty."""
    return float(v) if v not in (None, "") else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# --- formatting -----------------------------------------------------------------------------

def rate(v):
    """ops/s for a table: 3.59 M, 352 k, 870."""
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e4:
        return f"{v / 1e3:.0f} k"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def fixed(v, digits=2):
    return "n/a" if v is None else f"{v:.{digits}f}"


def md_table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def header_line(name, meta):
    parts = [f"`{meta.get('command', 'scripts/bench ' + name)}`"]
    for key in ("machine", "commit", "date"):
        if meta.get(key):
            parts.append(("commit " if key == "commit" else "") + meta[key])
    text = "; ".join(parts) + f". Data: [{os.path.basename(csv_path(name))}](results/{name}.csv)."
    if meta.get("note"):
        text += f" {meta['note']}"
    return text


def image_line(name, plot, alt):
    return f"![{alt}](img/{name}-{plot}.svg)"


# --- gnuplot --------------------------------------------------------------------------------

# Colours that stay apart from each other (Okabe-Ito, then Paul Tol's), so
# that no two series of a plot share one.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#882255",
           "#44AA99", "#999933", "#332288", "#888888", "#AA4499", "#DDCC77"]
TERMINAL = "set terminal svg size {w},{h} dynamic font 'sans,12' background rgb 'white'\nset termoption noenhanced\n"


def gnuplot(script, files):
    """Runs a gnuplot script; `files` maps placeholder names in it to data text."""
    with tempfile.TemporaryDirectory() as tmp:
        for key, text in files.items():
            path = os.path.join(tmp, key + ".dat")
            with open(path, "w") as f:
                f.write(text)
            script = script.replace("@" + key + "@", path)
        proc = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if proc.returncode != 0:
            raise SystemExit("gnuplot failed:\n" + proc.stderr + "\n--- script:\n" + script)


def log_ticks(lo, hi):
    ticks = [t * 10 ** e for e in range(-3, 4) for t in (1, 2, 3, 5)]
    return ", ".join(f'"{t:g}" {t:g}' for t in ticks if lo <= t <= hi)


def ratio_bars(out, title, ylabel, groups, series, value):
    """Bars of ratios on a log axis, growing up or down from 1: `groups` along
    x, one bar per name in `series` in each; value(group, name) -> ratio or None."""
    n = len(series)
    width = 0.8 / n
    files, plots, ratios = {}, [], []
    for k, s in enumerate(series):
        text = ""
        for g, group in enumerate(groups):
            r = value(group, s)
            if r is None or r <= 0:
                continue
            ratios.append(r)
            x = g - 0.4 + width * (k + 0.5)
            text += f"{x:.4f} {r:.6g} {x - width / 2:.4f} {x + width / 2:.4f} {min(1, r):.6g} {max(1, r):.6g}\n"
        if text:
            files[f"s{k}"] = text
            plots.append(f"'@s{k}@' using 1:2:3:4:5:6 with boxxyerror fc rgb '{COLOURS[k % len(COLOURS)]}' "
                         f"fs solid 0.9 border lc rgb '#333333' title '{s}'")
            # A cap at the value, so that a bar of about 1 still shows.
            plots.append(f"'@s{k}@' using 3:2:($4-$3):(0) with vectors nohead lw 2 "
                         f"lc rgb '{COLOURS[k % len(COLOURS)]}' notitle")
    lo = min(ratios + [1]) / 1.25
    hi = max(ratios + [1]) * 1.25
    xtics = ", ".join(f'"{g}" {i}' for i, g in enumerate(groups))
    script = TERMINAL.format(w=1000, h=480) + f"""
set output '{out}'
set title "{title}"
set key outside right top vertical Left reverse samplen 1.5
set logscale y
set yrange [{lo:.4g}:{hi:.4g}]
set ytics ({log_ticks(lo, hi)})
set xrange [-0.6:{len(groups) - 0.4}]
set xtics ({xtics}) scale 0
set grid ytics lc rgb '#dddddd'
set ylabel "{ylabel}"
set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#333333' lw 1.5 front
set lmargin 9
plot {", ".join(plots)}
"""
    gnuplot(script, files)


def lines_plot(out, title, panels, xs, xlabel, series, logx=True):
    """One or two side-by-side panels of lines over `xs`: panels is a list of
    (ylabel, logy, value(series, x) -> y or None); the key beside the last.
    Series that coincide stay visible: each has its own point type and dash
    pattern and is drawn a little to the side of its neighbours."""
    n = len(series)
    files = {}
    for k, s in enumerate(series):
        for p, (_, _, value) in enumerate(panels):
            text = ""
            for x in xs:
                y = value(s, x)
                if y is None:
                    continue
                dx = (k - (n - 1) / 2) * 0.018
                xx = x * 2 ** dx if logx else x + dx * (xs[-1] - xs[0]) / 4
                text += f"{xx:.6g} {y:.6g}\n"
            files[f"p{p}s{k}"] = text
    width = 1000 if len(panels) > 1 else 820
    script = TERMINAL.format(w=width, h=460) + f"set output '{out}'\n"
    if len(panels) > 1:
        script += f'set multiplot title "{title}"\n'
    # Panels side by side, 0.1 of the width between them for the second's
    # y labels; the key to the right of the last, inside the picture.
    key_at, left, gap = (0.77 if len(panels) > 1 else 0.76), 0.09, 0.10
    span = (key_at - left - gap * (len(panels) - 1)) / len(panels)
    for p, (ylabel, logy, _) in enumerate(panels):
        plots = []
        for k, s in enumerate(series):
            if files[f"p{p}s{k}"]:
                plots.append(f"'@p{p}s{k}@' using 1:2 with linespoints lw 2 pt {k % 13 + 1} ps 1.1 "
                             f"dt {k % 5 + 1} lc rgb '{COLOURS[k % len(COLOURS)]}' title '{s}'")
        script += f"""
reset
set termoption noenhanced
{'' if len(panels) > 1 else f'set title "{title}"'}
set lmargin at screen {left + p * (span + gap):.3f}
set rmargin at screen {left + p * (span + gap) + span:.3f}
set tmargin at screen 0.88
set bmargin at screen 0.13
{'set logscale x 2' if logx else ''}
set xtics ({", ".join(f'"{x:g}" {x}' for x in xs)})
set xrange [{xs[0] / 1.25 if logx else xs[0]}:{xs[-1] * 1.25 if logx else xs[-1]}]
set xlabel "{xlabel}"
set ylabel "{ylabel}"
{'set logscale y' if logy else "set yrange [0:*]; set format y '%.0s%c'"}
set grid xtics ytics lc rgb '#dddddd'
{'set key at screen 0.995, screen 0.88 top right Left reverse samplen 3' if p == len(panels) - 1 else 'unset key'}
plot {", ".join(plots)}
"""
    if len(panels) > 1:
        script += "unset multiplot\n"
    gnuplot(script, files)


def value_bars(out, title, ylabel, groups, series, value):
    """Bars from 0, one per series in each group, with an error bar where
    value(group, name) gives (y, low, high); (y, None, None) draws none."""
    n = len(series)
    width = 0.8 / n
    files, plots = {}, []
    for k, s in enumerate(series):
        text = bars = ""
        for g, group in enumerate(groups):
            v = value(group, s)
            if v is None or v[0] is None:
                continue
            y, lo, hi = v
            x = g - 0.4 + width * (k + 0.5)
            text += f"{x:.4f} {y:.6g} {width:.4f}\n"
            if lo is not None and hi is not None:
                bars += f"{x:.4f} {y:.6g} {lo:.6g} {hi:.6g}\n"
        if text:
            files[f"s{k}"] = text
            plots.append(f"'@s{k}@' using 1:2:3 with boxes fc rgb '{COLOURS[k % len(COLOURS)]}' "
                         f"fs solid 0.9 border lc rgb '#333333' " + (f"title '{s}'" if n > 1 else "notitle"))
        if bars:
            files[f"e{k}"] = bars
            # The range: a line from low to high, a cap at each end.
            for y0, dy in (("3", "($4-$3)"), ("3", "(0)"), ("4", "(0)")):
                dx = "(0)" if dy != "(0)" else f"({width / 4:.4f})"
                x0 = "1" if dy != "(0)" else f"($1-{width / 8:.4f})"
                plots.append(f"'@e{k}@' using {x0}:{y0}:{dx}:{dy} with vectors nohead lw 1.5 "
                             f"lc rgb '#000000' notitle")
    xtics = ", ".join(f'"{g}" {i}' for i, g in enumerate(groups))
    script = TERMINAL.format(w=820, h=420) + f"""
set output '{out}'
set title "{title}"
set key outside right top vertical Left reverse samplen 1.5
set yrange [0:*]
set xrange [-0.6:{len(groups) - 0.4}]
set xtics ({xtics}) scale 0
set grid ytics lc rgb '#dddddd'
set ylabel "{ylabel}"
set format y '%.0s%c'
set lmargin 12
plot {", ".join(plots)}
"""
    gnuplot(script, files)


# --- the benchmarks -------------------------------------------------------------------------

def ordered(values):
    return list(dict.fromkeys(values))


class Pool:
    """taskplace_pool_bench --csv: one row per run (bench/results.hpp)."""
    name = "pool"
    plots = {"policies": "policy sets against Current", "peers": "the peers against Current",
             "pgbench": "pgbench by backends"}
    columns = ["workload", "runtime", "rep", "seconds", "ops", "ops_per_s", "vs_current", "p50_us", "p99_us",
               "migrations", "affine_pct", "steal_attempts", "skips", "crossing_ns", "unpark_ns", "resume_ns"]
    peers = ["oneTBB", "Asio", "Fiber work_stealing", "Fiber shared_work"]

    def __init__(self, meta, rows):
        self.meta, self.rows = meta, rows
        self.workloads = ordered(r["workload"] for r in rows)
        self.runtimes = ordered(r["runtime"] for r in rows)
        self.by = {}
        for r in rows:
            self.by.setdefault((r["workload"], r["runtime"]), []).append(r)

    def med(self, w, rt, col):
        return median(num(r.get(col)) for r in self.by.get((w, rt), []))

    def vs_current(self, w, rt):
        runs = self.by.get((w, rt))
        if not runs:
            return None
        if rt == "Current":
            return 1.0
        if all(r.get("vs_current") for r in runs):
            return median(num(r["vs_current"]) for r in runs)
        # Per repetition, against Current's run of the same repetition.
        cur = {r.get("rep"): num(r["ops_per_s"]) for r in self.by.get((w, "Current"), [])}
        return median(num(r["ops_per_s"]) / cur[r.get("rep")] for r in runs if cur.get(r.get("rep")))

    def ours(self):
        return [rt for rt in self.runtimes if rt not in self.peers and rt != "Current"]

    def table(self):
        def pivot(cols, extra):
            head = ["workload", "Current ops/s"] + [h for h, _ in extra] + cols
            body = []
            for w in self.workloads:
                body.append([w, rate(self.med(w, "Current", "ops_per_s"))] + [f(w) for _, f in extra] +
                            [fixed(self.vs_current(w, rt)) if (w, rt) in self.by else "" for rt in cols])
            return md_table(head, body)
        crossing = median(num(r.get("crossing_ns")) for r in self.rows)
        out = [header_line(self.name, self.meta), ""]
        if crossing:
            out += [f"A cache line's round trip between the two CPUs (the floor of any cross-CPU hand-off): "
                    f"{crossing:.0f} ns.", ""]
        out += ["Each row's ops/s over Current's in the same repetition, the median over the repetitions "
                "(above 1: faster than Current). The pool under each policy set, and the references:", "",
                pivot(self.ours(), []), "",
                image_line(self.name, "policies", self.plots["policies"]), "",
                "The peers, Current's latencies beside them:", "",
                pivot([p for p in self.peers if p in self.runtimes],
                      [("Current p50 us", lambda w: fixed(self.med(w, "Current", "p50_us"), 1)),
                       ("Current p99 us", lambda w: fixed(self.med(w, "Current", "p99_us"), 1))]), "",
                image_line(self.name, "peers", self.plots["peers"]), "",
                image_line(self.name, "pgbench", self.plots["pgbench"])]
        return "\n".join(out)

    def draw(self):
        ours = self.ours()
        ratio_bars(image_path(self.name, "policies"),
                   "The pool under each policy set: throughput against Current",
                   "ops/s over Current's (log scale)", self.workloads, ours, self.vs_current)
        ratio_bars(image_path(self.name, "peers"), "The peers: throughput against the pool under Current",
                   "ops/s over Current's (log scale)", self.workloads,
                   [p for p in self.peers if p in self.runtimes], self.vs_current)
        backends = sorted(int(w.split("/")[1]) for w in self.workloads if w.startswith("pgbench/"))
        series = [rt for rt in ["Current", "AlwaysAffine", "PrevCpu", "Linux2008 unchecked", "Current 1 worker"]
                  + self.peers if rt in self.runtimes]
        lines_plot(image_path(self.name, "pgbench"), "pgbench: one client, N backends of 3 us each",
                   [("requests/s", False, lambda s, x: self.med(f"pgbench/{x}", s, "ops_per_s")),
                    ("p99 latency, us (log scale)", True, lambda s, x: self.med(f"pgbench/{x}", s, "p99_us"))],
                   backends, "backends", series)


class Fiber:
    """scripts/bench fiber: one row per run of taskplace_bench_fiber."""
    name = "fiber"
    plots = {"vs-work-stealing": "each runtime against Boost's work_stealing"}
    columns = ["workload", "runtime", "rep", "workers", "seconds", "ops_per_s", "p50_us", "p99_us", "migrations",
               "steals", "placed_remote"]
    base = "work_stealing"
    plot = "vs-work-stealing"

    def __init__(self, meta, rows):
        self.meta = meta
        self.workloads = ordered(r["workload"] for r in rows)
        self.runtimes = ordered(r["runtime"] for r in rows)
        self.by = {}
        for r in rows:
            self.by.setdefault((r["workload"], r["runtime"]), []).append(r)

    def med(self, w, rt, col="ops_per_s"):
        return median(num(r.get(col)) for r in self.by.get((w, rt), []))

    def ratio(self, w, rt):
        base, v = self.med(w, self.base), self.med(w, rt)
        return v / base if base and v is not None else None

    def table(self):
        head = ["workload", f"{self.base} ops/s"] + [rt for rt in self.runtimes if rt != self.base]
        body = [[w, rate(self.med(w, self.base))] +
                [fixed(self.ratio(w, rt)) for rt in self.runtimes if rt != self.base] for w in self.workloads]
        return "\n".join([header_line(self.name, self.meta), "",
                          f"Median ops/s of {self.base}, and each runtime's median over it (above 1: faster):",
                          "", md_table(head, body), "",
                          image_line(self.name, self.plot, self.plots[self.plot])])

    @staticmethod
    def import_run(inputs):
        rows = []
        for path in inputs:
            for rec in records(path):
                w = rec["workload"]
                if w == "pgbench":
                    w += "/" + rec["clients"]
                rec["workload"] = w
                rows.append(rec)
        return rows

    def draw(self):
        ratio_bars(image_path(self.name, "vs-work-stealing"),
                   "Boost.Fiber: each algorithm against Boost's work_stealing",
                   "ops/s over work_stealing's (log scale)", self.workloads,
                   [rt for rt in self.runtimes if rt != self.base], self.ratio)


class Asio(Fiber):
    """scripts/bench asio: one row per run of taskplace_bench_asio."""
    name = "asio"
    plots = {"vs-thread-pool": "each runtime against Asio's thread_pool"}
    base = "thread_pool"
    plot = "vs-thread-pool"

    def draw(self):
        ratio_bars(image_path(self.name, "vs-thread-pool"),
                   "Boost.Asio: each runtime against Asio's thread_pool",
                   "ops/s over thread_pool's (log scale)", self.workloads,
                   [rt for rt in self.runtimes if rt != self.base], self.ratio)


class Micro:
    """scripts/bench micro: name, metric, value rows (Google Benchmark's
    medians in CPU ns, callgrind's instructions per call)."""
    name = "micro"
    plots = {"placer": "the placer and the balancer by machine size",
             "policies": "instructions per call, policy and baseline"}
    columns = ["name", "metric", "value"]
    cases = ["flip_wide", "newidle_gate", "reservation"]
    cpus = [12, 80, 224, 1024, 4096]
    placer = [("all idle", "BM_place/idle"), ("all busy", "BM_place/busy"), ("half busy", "BM_place/half"),
              ("balance", "BM_balance"), ("balance, dice", "BM_balance_dice")]

    def __init__(self, meta, rows):
        self.meta = meta
        self.v = {(r["name"], r["metric"]): num(r["value"]) for r in rows}

    def get(self, name, metric):
        return self.v.get((name, metric))

    def table(self):
        def ratio(a, b):
            return fixed(a / b if a is not None and b else None)
        rows = []
        for c in self.cases + ["newidle_gate raw"]:
            case, base = (c, "baseline") if c != "newidle_gate raw" else ("newidle_gate", "raw")
            pi, bi = self.get(f"{case} policy", "instructions"), self.get(f"{case} {base}", "instructions")
            pt, bt = self.get(f"BM_{case}_policy", "cpu_ns"), self.get(f"BM_{case}_{base}", "cpu_ns")
            label = case if base == "baseline" else f"{case}, against the formula alone"
            rows.append([label, fixed(pi, 1), fixed(bi, 1), ratio(pi, bi), fixed(pt), fixed(bt), ratio(pt, bt)])
        policies = md_table(["case", "policy instr.", "baseline instr.", "ratio", "policy ns", "baseline ns",
                             "ratio"], rows)
        placer = md_table(["decision"] + [f"{n} CPUs" for n in self.cpus],
                          [[label] + [fixed(self.get(f"{bm}/{n}", "cpu_ns"), 1) for n in self.cpus]
                           for label, bm in self.placer])
        sis_rows = []
        for label, p, q in [("ring, all idle, 224 CPUs", "place_sis idle 224", "place idle 224"),
                            ("ring, all busy, 224 CPUs", "place_sis busy 224", "place busy 224"),
                            ("ring, half busy, 224 CPUs", "place_sis half 224", "place half 224"),
                            ("settled pair, 12 CPUs", "pair sis", "pair current")]:
            a, b = self.get(p, "instructions"), self.get(q, "instructions")
            sis_rows.append([label, fixed(a), fixed(b), ratio(a, b)])
        sis = md_table(["case", "SisCurrent", "Current", "ratio"], sis_rows)
        pair = md_table(["settled ping-pong pair, 12 CPUs", "Runtime", "Runtime, every wake-up judged",
                         "SisCurrent", "Current"],
                        [[label] + [fixed(self.get(f"{kind} {s}", "instructions"))
                                    for s in ("runtime", "runtime_judged", "sis", "current")]
                         for label, kind in [("the decision alone", "decide"),
                                             ("the decision and its run and sleep reports", "pair")]])
        kit_rows = []
        for label, st in [("bookkeeping and placement call (PrevCpu)", "prev"), ("Current", "current"),
                          ("Runtime", "runtime")]:
            k, o, kn, on = (self.get(f"kit {c} {st}", "instructions")
                            for c in ("kit", "old", "kit_nollc", "old_nollc"))
            kit_rows.append([label, fixed(k), fixed(o), ratio(k, o), fixed(kn), fixed(on), ratio(kn, on)])
        kit = md_table(["policy set", "kit", "pool before the kit", "ratio", "kit, no LLC sample",
                        "pool, no LLC sample", "ratio"], kit_rows)
        aa = self.get("pool_pipe affine", "instructions")
        pipe_rows = []
        for label, st in [("AlwaysAffine (the pool's hand-off alone)", "affine"), ("Runtime", "runtime")]:
            v = self.get(f"pool_pipe {st}", "instructions")
            pipe_rows.append([label, fixed(v, 0), fixed(v - aa if v is not None and aa is not None else None, 0)])
        pipe = md_table(["policy set", "instructions a round trip", "over AlwaysAffine"], pipe_rows)
        steady, tsc = self.get("BM_clock_steady", "cpu_ns"), self.get("BM_clock_tsc", "cpu_ns")
        clock = md_table(["clock", "ns a read"], [["`SteadyClock` (steady_clock)", fixed(steady, 1)],
                                                   ["`TscClock`", fixed(tsc, 1)]])
        return "\n".join([
            header_line(self.name, self.meta), "",
            "### Each policy against its baseline", "",
            "Instructions per call (callgrind, the loop around the call included) and CPU ns per call "
            "(Google Benchmark, the median of the repetitions):", "",
            policies, "", image_line(self.name, "policies", self.plots["policies"]), "",
            "### The placer and the balancer by machine size", "",
            "CPU ns per decision:", "", placer, "",
            image_line(self.name, "placer", self.plots["placer"]), "",
            "### What SIS_CURRENT adds to a decision", "",
            "Instructions per decision, `traits::SisCurrent<>` and `traits::Current` on the same inputs:", "",
            sis, "",
            "### The settled pair", "",
            "Instructions per decision of a ping-pong pair that has settled (each set's common case: "
            "Runtime replays CostGate's verdict on 7 wake-ups of 8 and judges the 8th, SIS_CURRENT keeps "
            "it, Current moves it to the idle prev), the caller's building of its `Wakeup` included "
            "([runtime.md](runtime.md#the-settled-pair)):", "",
            pair, "",
            "### The kit's bookkeeping against the pool's hand-written state", "",
            "Instructions per wake-up, 12 workers in one LLC, one stream of wake-ups "
            "([the kit against the pool before it](#the-kit-against-the-pool-before-it)):", "",
            kit, "",
            "### A round trip of the pool's pipe", "",
            "Instructions per round trip (two wake-ups, each task's run and sleep), the pool on 2 workers "
            "in one LLC, the pair settled on one (`bench/micro/pool_pipe_driver.cpp`):", "",
            pipe, "",
            "### Clock reads", "",
            "CPU ns per read, as the pool, the Boost.Fiber algorithm and the workloads' stamps read it:", "",
            clock])

    def draw(self):
        lines_plot(image_path(self.name, "placer"), "The placer and the balancer by machine size",
                   [("CPU ns per decision", False, lambda s, x: self.get(f"{dict(self.placer)[s]}/{x}", "cpu_ns"))],
                   self.cpus, "CPUs", [label for label, _ in self.placer])
        value_bars(image_path(self.name, "policies"), "Each policy against its hand-written baseline",
                   "instructions per call", self.cases, ["policy", "baseline"],
                   lambda c, s: (self.get(f"{c} {s}", "instructions"), None, None))

    @staticmethod
    def import_run(inputs):
        rows = []
        for path in inputs:
            if path.endswith(".json"):
                with open(path) as f:
                    data = json.load(f)
                scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
                for b in data["benchmarks"]:
                    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                        continue
                    if b.get("error_occurred"):
                        continue
                    rows.append({"name": b.get("run_name", b["name"]), "metric": "cpu_ns",
                                 "value": f"{b['cpu_time'] * scale[b.get('time_unit', 'ns')]:.3f}"})
            else:
                rows += [{"name": r["name"], "metric": r["metric"], "value": r["value"]} for r in records(path)]
        return rows


class Kernel:
    """scripts/bench kernel-pipe / kernel-hackbench: one row per placement,
    the medians and ranges of its runs."""
    plots = {"placement": "the kernel's own placement and one CPU"}
    columns = ["placement", "runs", "rate_median", "rate_min", "rate_max", "migrations", "vs_free"]

    def __init__(self, name, meta, rows):
        self.name, self.meta, self.rows = name, meta, rows

    def table(self):
        unit = self.meta.get("unit", "ops/s")
        body = [[r["placement"], f"{num(r['rate_median']):.0f}", f"{num(r['rate_min']):.0f}-{num(r['rate_max']):.0f}",
                 r["migrations"].replace(";", ", "), fixed(num(r["vs_free"]))] for r in self.rows]
        out = [header_line(self.name, self.meta), ""]
        if self.meta.get("runs"):
            out += [self.meta["runs"] + ":", ""]
        return "\n".join(out + [md_table(["placement", f"{unit} (median)", "range", "CPU migrations per run",
                                          "vs free"], body, ["---", "---:", "---", "---", "---:"]), "",
                                image_line(self.name, "placement", self.plots["placement"])])

    def draw(self):
        value_bars(image_path(self.name, "placement"),
                   f"{self.meta.get('title', self.name)}: median and range of the runs",
                   self.meta.get("unit", "ops/s"), [r["placement"] for r in self.rows], ["runs"],
                   lambda g, s: next((num(r["rate_median"]), num(r["rate_min"]), num(r["rate_max"]))
                                     for r in self.rows if r["placement"] == g))

    @staticmethod
    def import_run(inputs, cpu):
        runs = {}
        for path in inputs:
            for rec in records(path):
                runs.setdefault(rec["placement"], []).append((float(rec["rate"]), rec["migrations"]))
        free = statistics.median(o for o, _ in runs["free"])
        rows = []
        for how, label in (("free", "the kernel's own"), ("pinned", f"pinned to CPU {cpu}")):
            ops = sorted(o for o, _ in runs[how])
            migs = sorted((m for _, m in runs[how]), key=lambda m: (not m.isdigit(), int(m) if m.isdigit() else 0))
            rows.append({"placement": label, "runs": len(ops), "rate_median": f"{statistics.median(ops):.0f}",
                         "rate_min": f"{ops[0]:.0f}", "rate_max": f"{ops[-1]:.0f}", "migrations": ";".join(migs),
                         "vs_free": f"{statistics.median(ops) / free:.4f}"})
        return rows


def bench(name, path=None):
    meta, rows = read_results(os.path.join(ROOT, path or csv_path(name)))
    if name == "pool":
        return Pool(meta, rows)
    if name == "fiber":
        return Fiber(meta, rows)
    if name == "asio":
        return Asio(meta, rows)
    if name == "micro":
        return Micro(meta, rows)
    return Kernel(name, meta, rows)


def plot_names(name):
    return {"pool": Pool, "fiber": Fiber, "asio": Asio, "micro": Micro}.get(name, Kernel).plots


# --- the doc's blocks -----------------------------------------------------------------------

def markers(name):
    return (f"<!-- results:{name} begin (scripts/plots writes this block from {csv_path(name)}) -->",
            f"<!-- results:{name} end -->")


def replace_block(text, name, block):
    begin, end = markers(name)
    lines = text.split("\n")
    if lines.count(begin) != 1 or lines.count(end) != 1:
        raise SystemExit(f"{DOC}: needs the lines '{begin}' and '{end}' once each")
    i, j = lines.index(begin), lines.index(end)
    return "\n".join(lines[:i + 1] + block.split("\n") + lines[j:])


def render(text):
    for name in BENCHES:
        text = replace_block(text, name, bench(name).table())
    return text


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    os.chdir(ROOT)
    cmd, args = argv[0], argv[1:]
    if cmd == "list":
        for name in BENCHES:
            for plot in plot_names(name):
                print(image_path(name, plot))
        return 0
    if cmd == "check":
        with open(DOC) as f:
            text = f.read()
        if render(text) != text:
            print(f"{DOC}: a results block differs from what its CSV gives; run scripts/plots", file=sys.stderr)
            return 1
        return 0
    if cmd == "write":
        names = args or BENCHES
        for name in names:
            if name not in BENCHES:
                raise SystemExit(f"no benchmark '{name}' (one of: {' '.join(BENCHES)})")
        with open(DOC) as f:
            text = f.read()
        os.makedirs("docs/img", exist_ok=True)
        for name in names:
            b = bench(name)
            text = replace_block(text, name, b.table())
            b.draw()
            for plot in b.plots:
                print(image_path(name, plot))
        with open(DOC, "w") as f:
            f.write(text)
        return 0
    if cmd == "table" and len(args) == 2:
        print(bench(args[0], os.path.abspath(args[1])).table())
        return 0
    if cmd == "import" and len(args) >= 3:
        name, out, rest = args[0], args[1], args[2:]
        meta = {"benchmark": name}
        inputs = []
        i = 0
        while i < len(rest):
            if rest[i] == "--meta":
                key, _, value = rest[i + 1].partition("=")
                meta[key] = value
                i += 2
            else:
                inputs.append(rest[i])
                i += 1
        if name == "pool":
            rows = [r for path in inputs for r in read_results(path)[1]]
            columns = ordered(Pool.columns + [c for r in rows for c in r])
        elif name in ("fiber", "asio"):
            rows, columns = Fiber.import_run(inputs), Fiber.columns
            columns = ordered(columns + [c for r in rows for c in r if c != "clients"])
            for r in rows:
                r.pop("clients", None)
        elif name == "micro":
            rows, columns = Micro.import_run(inputs), Micro.columns
        elif name in ("kernel-pipe", "kernel-hackbench"):
            rows, columns = Kernel.import_run(inputs, meta.pop("cpu", "0")), Kernel.columns
        else:
            raise SystemExit(f"no benchmark '{name}'")
        write_results(out, meta, columns, rows)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
