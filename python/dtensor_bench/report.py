# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmark's analysis and outputs: the roofline of each case, the
peers faster than ours, results.md, results.json and results.png."""

import json
import os

from dtensor_bench import context_parallel as bench_cp
from dtensor_bench import training as bench_train
from dtensor_bench import decode as bench_decode
from dtensor_bench.support import fmt_bytes, fmt_ms, log


# The targets.
TARGET_GEMM = 0.80      # GEMM-bound: of the GEMM peak per rank
TARGET_BANDWIDTH = 0.70  # decode: of the memory bandwidth per rank
TARGET_SPEEDUP = 2.0     # every case: over PyTorch eager
TARGET_COMPILE_S = 30.0  # the 32-layer plan



# --- analysis ------------------------------------------------------------------------------------

def analyse(case, per_rank):
    """Rates, roofline and the targets of one measured case."""
    t = case["ours"]["median_ms"] / 1e3
    work = case["work"]
    peak, bw = per_rank["gemm_gflops"], per_rank["bandwidth_gbps"]
    case["gflops_per_rank"] = work["flops_per_rank"] / t / 1e9
    case["gbps_per_rank"] = work["bytes_per_rank"] / t / 1e9
    compute_s = work["flops_per_rank"] / (peak * 1e9)
    memory_s = work["bytes_per_rank"] / (bw * 1e9)
    case["roofline_ms"] = 1e3 * max(compute_s, memory_s)
    case["fraction_of_roofline"] = case["roofline_ms"] / case["ours"]["median_ms"]
    intensity = work["flops_per_rank"] / work["bytes_per_rank"]
    case["intensity_flop_per_byte"] = intensity
    case["bound"] = ("gemm" if intensity >= per_rank["balance_flop_per_byte"]
                     else "memory")
    # A step whose bytes fit in a core's private L2 is not limited by the
    # memory bandwidth (which the roofline then underestimates).
    case["fits_in_l2"] = work["bytes_per_rank"] <= per_rank["l2_bytes"]
    case["fraction_of_gemm_peak"] = case["gflops_per_rank"] / peak
    case["fraction_of_bandwidth"] = case["gbps_per_rank"] / bw
    if case.get("gemms_alone"):
        # The share of our step its matrix products alone would take.
        case["gemm_share"] = min(1.0, case["gemms_alone"]["median_ms"] /
                                 case["ours"]["median_ms"])
    for key in PEERS:
        if "median_ms" in case.get(key, {}):
            case["speedup_" + key] = (case[key]["median_ms"] /
                                      case["ours"]["median_ms"])
    case["faster_peers"] = faster_peers(case)
    targets = []
    if case["bound"] == "gemm":
        targets.append(target("gemm_peak", case["fraction_of_gemm_peak"],
                              TARGET_GEMM))
    if case["tokens"] <= 8:
        targets.append(target("bandwidth", case["fraction_of_bandwidth"],
                              TARGET_BANDWIDTH))
        targets[-1]["fits_in_l2"] = case["fits_in_l2"]
    if case.get("speedup_torch") is not None:
        targets.append(target("speedup_vs_torch", case["speedup_torch"],
                              TARGET_SPEEDUP))
    case["targets"] = targets


# Every peer column: results key, table label.
PEERS = {"torch": "torch", "torch_tuned": "torch*",
         "dtensor_eager": "DTensor eager", "dtensor_compiled": "DTensor compiled"}


def peer_family(case, key):
    """The BLAS kernel family a peer's matrix products ran on."""
    blas = case.get(key, {}).get("blas") or {}
    if blas.get("family"):
        return blas["family"]
    if blas.get("openblas_corename"):
        return "OpenBLAS " + blas["openblas_corename"]
    return blas.get("torch_blas_info") or "?"


def faster_peers(case):
    """The peers faster than ours in this case, each with the reason the
    measurements give: the BLAS kernel families, our matrix products alone
    against the peer's whole step, and (DTensor peers, profiled when
    faster) where the peer's step time goes."""
    ours = case["ours"]["median_ms"]
    alone = case.get("gemms_alone", {}).get("median_ms")
    ours_family = "OpenBLAS " + (case["ours"].get("openblas_corename")
                                 or "not called (runtime's own kernels)")
    found = []
    for key, label in PEERS.items():
        peer = case.get(key, {}).get("median_ms")
        if peer is None or peer >= ours:
            continue
        reasons = []
        family = peer_family(case, key)
        if family != ours_family:
            reasons.append(f"matrix products on {family}, ours on "
                           f"{ours_family}")
        profile = case[key].get("profile")
        if alone is not None:
            rest = ours - alone
            if profile and profile.get("gemm_ms") is not None:
                # The profiler slows the peer's steps down: its shares, not
                # its times, are carried over to the measured median.
                share = min(1.0, (profile["gemm_ms"] +
                                  profile.get("attention_ms", 0.0)) /
                            max(profile["step_ms"], 1e-9))
                reasons.append(
                    f"products (attention's included): ours {fmt_ms(alone)} "
                    f"ms alone, the peer's {100 * share:.0f}% of its "
                    f"profiled step (≈ {fmt_ms(share * peer)} ms); the rest: "
                    f"ours {fmt_ms(rest)} ms (step − products alone), the "
                    f"peer's ≈ {fmt_ms((1 - share) * peer)} ms")
            elif alone >= peer:
                reasons.append(f"our matrix products alone take "
                               f"{fmt_ms(alone)} ms, more than the peer's "
                               f"whole step")
            else:
                reasons.append(f"our step takes {fmt_ms(rest)} ms more than "
                               "its matrix products timed alone (elementwise "
                               "loops, copies, collectives, call overhead, "
                               "or products slower within the step)")
        if profile and profile.get("top"):
            reasons.append(
                f"peer's profile ({fmt_ms(profile['step_ms'])} ms per "
                "profiled step, self times): " + ", ".join(
                    f"{t['name'][:40]} {fmt_ms(t['ms'])} ms"
                    for t in profile["top"][:4]))
        found.append({"peer": key, "label": label, "peer_ms": peer,
                      "ours_ms": ours, "ratio": peer / ours,
                      "reasons": reasons or ["no difference measured"]})
    return found


def target(name, value, goal):
    return {"target": name, "value": value, "goal": goal,
            "met": value >= goal,
            # How far off: the ratio still missing (0 when met).
            "missing_factor": 0.0 if value >= goal else goal / max(value, 1e-12)}


# --- output ----------------------------------------------------------------------------------------

def target_text(t):
    if t["target"] == "gemm_peak":
        text = f"GEMM {100 * t['value']:.0f}%/{100 * t['goal']:.0f}%"
    elif t["target"] == "bandwidth":
        text = f"BW {100 * t['value']:.0f}%/{100 * t['goal']:.0f}%"
        if t.get("fits_in_l2"):
            text += " (in L2)"
    else:
        text = f"torch {t['value']:.2f}x/{t['goal']:.0f}x"
    return text + (" ok" if t["met"] else " MISS")


def markdown(results):
    c = results["ceilings"]
    g, s = c["gemm"], c["stream"]
    lines = ["# dtensor benchmarks", ""]
    st = results["settings"]
    lines += [f"{results['machine']['cpu']}, {results['machine']['cores']} "
              f"cores; {st['mode']} run, {results['date']}; load average "
              f"{st['load_average_at_start'][0]:.1f} at the start, "
              f"{st['load_average_at_end'][0]:.1f} at the end (other "
              "processes share the machine: each side is measured "
              f"{st['rounds']}× per case, 1× more when its steps take < 50 "
              "ms, interleaved, best median kept).", ""]
    lines += ["## Ceilings (dtensor-bench-ceilings: the best of "
              f"{c.get('measurements', 1)} measurements — at the start, the "
              "end, and a probe of our kernel family before each model)", "",
              "| ceiling | value |", "|---|---|"]
    for fam in g["families"]:
        lines.append(f"| sgemm {g['size']}³, 1 thread, OPENBLAS_CORETYPE="
                     f"{fam['coretype']} (core {fam['corename'] or '?'}) | "
                     + (f"{fam['gflops']:.1f} GFLOP/s |" if fam["ok"]
                        else "failed |"))
    lines.append(f"| sgemm, {g['all_threads']} threads "
                 f"({g.get('roofline_coretype', g['best_coretype'])}) | "
                 f"{g['peak_all_threads_gflops']:.1f} GFLOP/s |")
    lines.append(f"| sgemm, {g['concurrent_1thread_processes']} concurrent "
                 f"1-thread processes, slowest | "
                 f"{g['concurrent_min_gflops']:.1f} GFLOP/s each |")
    for label, key in (("1 thread", "threads_1"),
                       (f"{s['all_threads']} threads", "threads_all")):
        r = s[key]
        lines.append(f"| stream {label}: copy / triad / read | "
                     f"{r['copy_gbps']:.1f} / {r['triad_gbps']:.1f} / "
                     f"{r['read_gbps']:.1f} GB/s |")
    lines += ["", f"Stream arrays: 3 × {fmt_bytes(s['array_bytes'])} (LLC "
              f"{fmt_bytes(c['cpu']['llc_bytes'])}); bytes counted as STREAM "
              "does (read + written, no write-allocate).", ""]
    lines += ["Per-rank ceilings used for the roofline:", "",
              "| ranks | threads/rank | GEMM peak/rank | bandwidth/rank | "
              "balance |", "|---|---|---|---|---|"]
    for r in results["ceilings_per_rank"].values():
        lines.append(f"| {r['ranks']} | {r['threads']} | "
                     f"{r['gemm_gflops']:.1f} GFLOP/s | "
                     f"{r['bandwidth_gbps']:.1f} GB/s | "
                     f"{r['balance_flop_per_byte']:.1f} FLOP/B |")
    lines += kernel_families(results)
    tb = results.get("torch_blas") or {}
    tuned = results["settings"].get("torch_tuned_coretype")
    if tb:
        lines += ["", f"PyTorch {tb.get('torch')}: BLAS_INFO="
                  f"{tb.get('torch_blas_info')}, CPU capability "
                  f"{tb.get('torch_cpu_capability')}; matrix products in "
                  f"OpenBLAS, whose core as shipped is "
                  f"{tb.get('openblas_corename')}"
                  + (f" (torch* columns: OPENBLAS_CORETYPE={tuned}, the "
                     "kernels our runtime selects)." if tuned else ".")]
    lines += ["", "## Cases", "",
              "| case | tokens (B×S) | ranks | ours ms | GEMMs alone ms | "
              "torch ms | speedup | torch* ms | speedup* | DTensor eager ms | "
              "speedup | DTensor compiled ms | speedup | BLAS ours / torch / "
              "DTensor | GFLOP/s/rank | "
              "GB/s/rank | bound | % roofline | coll. bytes/rank | targets |",
              "|---" * 20 + "|"]
    for case in results["cases"]:
        if "error" in case:
            lines.append(f"| {case['model']} {case['shape']} | | {case['ranks']} "
                         f"| error: {case['error'].splitlines()[0][:80]} |"
                         + " |" * 16)
            continue
        torch = case.get("torch")
        tuned = case.get("torch_tuned")
        cells = [f"{case['model']} {case['shape']}",
                 f"{case['tokens']} ({case['batch']}×{case['seq']})",
                 str(case["ranks"]), fmt_ms(case["ours"]["median_ms"]),
                 (f"{fmt_ms(case['gemms_alone']['median_ms'])} "
                  f"({100 * case['gemm_share']:.0f}%)")
                 if case.get("gemms_alone") else "-",
                 fmt_ms(torch["median_ms"]) if torch else "-",
                 f"{case['speedup_torch']:.2f}×" if torch else "-",
                 fmt_ms(tuned["median_ms"]) if tuned else "-",
                 f"{case['speedup_torch_tuned']:.2f}×" if tuned else "-"]
        for key in ("dtensor_eager", "dtensor_compiled"):
            peer = case.get(key, {})
            if "median_ms" in peer:
                cells += [fmt_ms(peer["median_ms"]),
                          f"{case['speedup_' + key]:.2f}×"]
            elif "compile_error" in peer:
                cells += ["compile failed", "-"]
            elif "error" in peer:
                cells += ["failed", "-"]
            else:
                cells += ["-", "-"]
        dt = next((k for k in ("dtensor_eager", "dtensor_compiled")
                   if "median_ms" in case.get(k, {})), None)
        blas = [case["ours"].get("openblas_corename") or "own",
                (torch["blas"].get("openblas_corename") or "?") if torch
                else "-",
                peer_family(case, dt) if dt else "-"]
        cells += [
                 " / ".join(blas),
                 f"{case['gflops_per_rank']:.2f}",
                 f"{case['gbps_per_rank']:.2f}",
                 case["bound"] + (" (in L2)" if case["fits_in_l2"] else ""),
                 f"{100 * case['fraction_of_roofline']:.1f}%",
                 fmt_bytes(case["collectives"]["bytes_per_rank"]),
                 "; ".join(target_text(t) for t in case["targets"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += faster_section(results)
    ct = results.get("compile_time")
    if ct:
        lines += ["", "## Compile time", "",
                  "| plan | layers | ops | wall s | peak RSS | target |",
                  "|---|---|---|---|---|---|"]
        verdict = ("timed out" if ct["timed_out"] else
                   "failed" if not ct["ok"] else
                   f"{ct['wall_s']:.1f}/{ct['target_s']:.0f} s "
                   + ("ok" if ct["target_met"] else
                      f"MISS ({ct['wall_s'] / ct['target_s']:.1f}× over)"))
        lines.append(f"| `{ct['plan']}` | {ct['layers']} | {ct['ops']} | "
                     f"{ct['wall_s']:.1f} | "
                     f"{fmt_bytes(ct['peak_rss_kib'] * 1024)} | {verdict} |")
    summary = results["summary"]
    lines += ["", "## Targets", "",
              f"- GEMM-bound cases at ≥ {100 * TARGET_GEMM:.0f}% of the GEMM "
              f"peak per rank: {summary['gemm_peak']}",
              f"- decode cases at ≥ {100 * TARGET_BANDWIDTH:.0f}% of the memory "
              f"bandwidth per rank: {summary['bandwidth']}",
              f"- every case ≥ {TARGET_SPEEDUP:.0f}× faster than PyTorch eager "
              f"(as shipped): {summary['speedup_vs_torch']}",
              f"- 32-layer plan compiled in ≤ {TARGET_COMPILE_S:.0f} s: "
              f"{summary['compile_time']}"]
    if "decode" in summary:
        lines.append(
            "- decode with the KV cache (below): flat in the context, ≥ "
            f"{bench_decode.TARGET_RECOMPUTE:.0f}× faster than recomputation "
            f"and ≥ {bench_decode.TARGET_TORCH:.0f}× faster than PyTorch with "
            f"a cache at the largest context: {summary['decode']}")
    lines += ["", "## Definitions", "",
              "- ours: `dtensor-run -n R` median step time (rank 0) after "
              "warm-up steps. GEMMs alone: the step's matrix products (its "
              "shapes per rank) timed alone through our runtime's matrix "
              "products (OpenBLAS with the kernels it selects, or its own "
              "kernels for products of up to 8 rows by a weight) and threads, "
              "one process per rank at once, and their share of our "
              "step: the rest is everything else (elementwise loops, copies, "
              "allocation, collectives, call overhead). torch: the same model in PyTorch eager, manual "
              "Megatron-style tensor parallelism on gloo, median step time "
              "(rank 0, each step after a barrier); both with cores/R threads "
              "per rank. speedup = torch ms / ours ms. torch*: the same with "
              "OPENBLAS_CORETYPE set to the kernels our runtime selects. "
              "DTensor eager / compiled: PyTorch 2 (scripts/torch-env.sh) "
              "with the model as nn.Modules, parallelize_module and the "
              "standard Llama tensor-parallel plan (ColwiseParallel / "
              "RowwiseParallel, vocab-parallel embedding, replicated "
              "logits) on gloo, eager or under torch.compile (Inductor, "
              "CPU; its compilation not timed), median step time (rank 0, "
              "each step after a barrier, until its output is ready); "
              "speedup = DTensor ms / ours ms. BLAS: the kernel family each "
              "side's matrix products ran on (OpenBLAS's "
              "openblas_get_corename(); \"own\": no product of ours went "
              "to OpenBLAS; MKL: the instruction set MKL_VERBOSE reports).",
              "- FLOPs: 2·M·N·K for each matrix product (attention's QKᵀ and "
              "PV over the full S×S, as both sides compute it); elementwise "
              "ops, norms, softmax not counted. Bytes: per rank, its weight "
              "shards, looked-up embedding rows, the step's inputs and "
              "outputs, once, and its activations: every intermediate "
              "tensor (views excepted, attention's S×S scores included) "
              "written once and read once in f32, 1/R of those the tp plan "
              "splits. Small models (dim 64) move far more activation than "
              "weight bytes: counting only the weights called them "
              "GEMM-bound.",
              "- roofline per rank = max(FLOPs/rank ÷ GEMM peak/rank, "
              "bytes/rank ÷ bandwidth/rank); % roofline = roofline ÷ ours. "
              "bound: GEMM if FLOPs/bytes ≥ balance, else memory; "
              "\"(in L2)\": the step's bytes fit in a core's L2 cache, so "
              "the memory bandwidth is not its limit (% of bandwidth and of "
              "roofline may exceed 100%).",
              "- targets: GEMM x%/80% (GEMM-bound cases: GFLOP/s/rank over "
              "the GEMM peak/rank), BW x%/70% (decode, ≤ 8 tokens: GB/s/rank "
              "over the bandwidth/rank), torch x/2x (speedup over torch as "
              "shipped). `coll. bytes/rank`: the compiler's communication "
              "report, bytes each rank sends per step.", ""]
    return "\n".join(lines)


def kernel_families(results):
    """The BLAS kernel family of every side and of the ceilings, and the
    conditions they were measured under."""
    fam = results.get("kernel_families", {})
    if not fam:
        return []
    st = results["settings"]
    lines = ["", "Kernel families (BLAS each side's matrix products ran on, "
             "as the libraries report them):", "",
             "| side | BLAS, kernel family |", "|---|---|"]
    for side, value in fam.items():
        lines.append(f"| {side} | {value} |")
    preset = st.get("openblas_coretype_preset")
    choice = st.get("blas_coretype")
    lines += ["", "Conditions: OPENBLAS_CORETYPE in the environment: "
              + (f"`{preset}`" if preset else "unset")
              + " (our runtime's private OpenBLAS does not read it); "
              f"--blas-coretype {choice}: " + {
                  "runtime": "DTENSOR_BLAS_CORETYPE removed for our programs "
                             "and the ceilings, so the runtime picks its "
                             "family itself",
                  "inherit": "DTENSOR_BLAS_CORETYPE kept as found"}.get(
                      choice, f"DTENSOR_BLAS_CORETYPE={choice} for our "
                              "programs")
              + ". The roofline's GEMM peak is measured with the family our "
              "programs ran ("
              + str(results["ceilings"]["gemm"].get("roofline_coretype"))
              + "), the GEMMs-alone runs and torch* use it too; torch runs "
              "OpenBLAS's own pick (as shipped, no OPENBLAS_CORETYPE); the "
              "DTensor peers' MKL does not read OPENBLAS_CORETYPE."]
    return lines


def faster_section(results):
    rows = [(c, f) for c in results["cases"] for f in c.get("faster_peers", [])]
    lines = ["", "## Where a peer is faster", ""]
    if not rows:
        return lines + ["No peer is faster than ours in any case measured."]
    for case, f in rows:
        lines.append(f"- {case['model']} {case['shape']} R={case['ranks']}: "
                     f"{f['label']} {fmt_ms(f['peer_ms'])} ms against ours "
                     f"{fmt_ms(f['ours_ms'])} ms ({f['ratio']:.2f}×): "
                     + "; ".join(f["reasons"]))
    return lines


def summarise(results):
    def verdict(name):
        rows = [(c, t) for c in results["cases"] if "targets" in c
                for t in c["targets"] if t["target"] == name]
        if not rows:
            return "no case"
        met = sum(t["met"] for _, t in rows)
        misses = [f"{c['model']} {c['shape']} R={c['ranks']}" for c, t in rows
                  if not t["met"]]
        text = f"{met} of {len(rows)} met"
        if misses:
            text += " (missed: " + ", ".join(misses) + ")"
        return text
    ct = results.get("compile_time")
    summary = {"gemm_peak": verdict("gemm_peak"),
               "bandwidth": verdict("bandwidth"),
               "speedup_vs_torch": verdict("speedup_vs_torch"),
               "compile_time": ("not measured" if not ct else
                                "timed out" if ct["timed_out"] else
                                "failed" if not ct["ok"] else
                                f"{ct['wall_s']:.1f} s: " +
                                ("met" if ct["target_met"] else "missed"))}
    if "decode" in results:
        summary["decode"] = bench_decode.summary(results["decode"])
    results["summary"] = summary


def plot(results, path):
    """Speedup over PyTorch and fraction of the roofline, per case."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed (apt-get install python3-matplotlib):"
            " no results.png")
        return False
    cases = [c for c in results["cases"] if "targets" in c]
    labels = [f"{c['model']} {c['shape']} R{c['ranks']}" for c in cases]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.35 * len(cases) + 2), 8),
                             sharex=True)
    x = list(range(len(cases)))
    legends = {"torch": "vs torch (as shipped)",
               "torch_tuned": "vs torch* (OPENBLAS_CORETYPE as ours)",
               "dtensor_eager": "vs DTensor eager (PyTorch 2)",
               "dtensor_compiled": "vs DTensor + torch.compile"}
    series = [k for k in PEERS if any("speedup_" + k in c for c in cases)]
    width = 0.8 / max(1, len(series))
    for n, key in enumerate(series):
        axes[0].bar([i + (n - (len(series) - 1) / 2) * width for i in x],
                    [c.get("speedup_" + key, 0) for c in cases], width,
                    label=legends[key])
    axes[0].axhline(TARGET_SPEEDUP, color="red", linestyle="--",
                    label=f"target {TARGET_SPEEDUP:.0f}×")
    axes[0].axhline(1.0, color="black", linewidth=0.5)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("speedup (torch ms / ours ms)")
    axes[0].legend(fontsize=8)
    fractions = [100 * c["fraction_of_roofline"] for c in cases]
    axes[1].bar(x, fractions,
                color=["tab:green" if c["bound"] == "gemm" else "tab:purple"
                       for c in cases])
    for i, value in zip(x, fractions):
        axes[1].text(i, value + 1, f"{value:.0f}", ha="center", fontsize=6)
    axes[1].axhline(100 * TARGET_GEMM, color="tab:green", linestyle="--",
                    label="80% (GEMM-bound target)")
    axes[1].axhline(100 * TARGET_BANDWIDTH, color="tab:purple", linestyle="--",
                    label="70% (decode bandwidth target)")
    axes[1].set_ylim(0, max(105, max(fractions, default=0) + 10))
    axes[1].set_ylabel("% of roofline (green: GEMM-bound)")
    axes[1].legend(fontsize=8)
    axes[1].set_xticks(list(x))
    axes[1].set_xticklabels(labels, rotation=75, ha="right", fontsize=7)
    fig.suptitle("dtensor vs PyTorch (eager, DTensor, torch.compile) and the "
                 "machine's roofline")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True



def families_used(results):
    """Side -> the BLAS kernel family it ran (as its library reports it),
    over all cases; several values are listed with commas."""
    def collect(values):
        found = sorted({v for v in values if v})
        return ", ".join(found) if found else None
    cases = [c for c in results["cases"] if "error" not in c]
    g = results["ceilings"]["gemm"]
    fam = {"ours (dtensor-run, OpenBLAS)": collect(
               [results.get("runtime_openblas_corename")] +
               [c["ours"].get("openblas_corename") for c in cases]),
           "ceilings (roofline GEMM peak)":
               f"OpenBLAS {g['roofline_coretype']} (core "
               f"{g.get('roofline_corename') or '?'})",
           "GEMMs alone (our runtime's products)": collect(
               c.get("gemms_alone", {}).get("openblas_corename")
               for c in cases)}
    for key, label in (("torch", "torch (as shipped)"),
                       ("torch_tuned", "torch*")):
        value = collect(peer_family(c, key) for c in cases if c.get(key))
        if value:
            blas = next(c[key]["blas"] for c in cases if c.get(key))
            fam[f"{label}, PyTorch {blas.get('torch')}"] = value
    peers = results.get("dtensor_peers", {})
    for mode in peers.get("modes", []):
        value = collect(peer_family(c, "dtensor_" + mode) for c in cases
                        if "median_ms" in c.get("dtensor_" + mode, {}))
        if value:
            fam[f"DTensor {mode}, PyTorch {peers['blas'].get('torch')}"] = value
    return {k: v for k, v in fam.items() if v}


def write_outputs(a, results):
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(results)
    if "decode" in results:
        text += "\n" + bench_decode.markdown(results["decode"])
    if "context_parallel" in results:
        text += "\n" + bench_cp.markdown(results["context_parallel"])
    if "training" in results:
        text += "\n" + bench_train.markdown(results["training"])
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    plotted = plot(results, os.path.join(a.out, "results.png"))
    log(f"wrote {a.out}/results.json, results.md"
        + (", results.png" if plotted else ""))
    print(text)


