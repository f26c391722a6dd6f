#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Serving benchmark of dtensor-server (examples/server): the KV-cache server
(continuous batching over cache slots) against the recompute server (every
step recomputes a [B, S] window) on the same model and weights, in one run.

  python3 -m dtensor_bench.server [--quick] [--out DIR] [--build-dir DIR] [--models tiny,gqa]
      [--ranks 1,2] [--concurrency 1,8,32] [--max-tokens N]
      [--prompt-min L] [--prompt-max L] [--requests-per-client K]
      [--recompute-batch B] [--slots N] [--no-recompute] [--sampling] [--seed N]

For each model, rank count and number of concurrent clients it starts
`mpirun -n R dtensor-server` on the KV-cache artifact (gen-model-plan.py
--kv-cache, slots >= the largest concurrency) and on the stateless artifact
(--batch B --seq S, S >= the longest prompt + the generation), warms each up,
and lets C client threads (standard library HTTP) send streaming
POST /v1/completions requests, one after the other, with random prompts
(token ids, lengths uniform in [--prompt-min, --prompt-max], a fixed seed;
the same prompts on both servers). From the server-sent events, client-side:

- time to first token (request sent -> first token event), p50 / p99;
- inter-token latency: the gap between token events, split evenly over the
  tokens of an event that carries several, p50 / p99;
- tokens/s: generated tokens / wall time of the load (first request sent to
  last answer);
- errors (a status other than 200, a dropped connection, a stream without
  `data: [DONE]`, a count other than max_tokens), and whether both servers
  generated the same ids for the same prompt (greedy decoding).

Writes DIR/results.json (every request's timings, the servers' metrics,
load averages, the commands) and DIR/results.md (the table). Models:

- tiny: llama_tiny's sizes (2 layers, dim 64, 4 heads, vocab 256);
- gqa: 2 layers, dim 512, 8 heads, 2 KV heads (grouped-query attention, 4
  query heads per KV head), ffn 1536, vocab 2048. Dim 512 keeps the
  recompute server's [8, 528] step under a second on 2 cores; a 2048-dim
  model's would take about 15 s per generated token.

--sampling: both servers are also loaded with sampling requests
(temperature, top-k, top-p, repetition penalty, a seed per request: the
recompute server fetches the [B, S, V] logits to rank 0 each step, the
KV-cache server the logits of its prefill and decode steps, and rank 0
samples), rows "kv+sampling" and "recompute+sampling", against their
greedy rows on the same artifacts (the model's own argmax, no logits
fetched). Greedy requests say temperature 0 (the server's default is
OpenAI's 1 on an artifact with logits).

--quick: the tiny model on 2 ranks, 1 and 4 clients, prompts of 16-64
tokens, 8 new tokens (under a minute with the compiles). Timings are
reported, never checked.
"""

import argparse
import http.client
import json
import os
import random
import re
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time

from dtensor_bench.support import ROOT, module_command

# name: gen-model-plan.py flags shared by the KV-cache and stateless plans.
MODELS = {
    "tiny": ["--layers", "2", "--dim", "64", "--heads", "4", "--ffn", "128",
             "--vocab", "256"],
    "gqa": ["--layers", "2", "--dim", "512", "--heads", "8", "--kv-heads",
            "2", "--ffn", "1536", "--vocab", "2048"],
}
VOCAB = {"tiny": 256, "gqa": 2048}


def log(message):
    print(f"bench-server: {message}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def run(command, **kwargs):
    """Runs a command; its output on failure."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"bench-server: {shlex.join(command)} exited "
                         f"{result.returncode}:\n{result.stdout}"
                         f"{result.stderr}")
    return result.stdout


def percentile(values, q):
    """The q-th percentile (0-100) by linear interpolation; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Server:
    """mpirun -n R dtensor-server ... --port 0 --port-file F, stopped with
    POST /admin/shutdown, then signals to mpirun and what is below it."""

    def __init__(self, mpirun, ranks, binary, artifact, weights, work, name,
                 http_threads, extra=()):
        self.port_file = os.path.join(work, name + ".port")
        self.log_path = os.path.join(work, name + ".log")
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        self.command = (shlex.split(mpirun) + ["-n", str(ranks), binary,
                        artifact, "--weights", weights, "--port", "0",
                        "--port-file", self.port_file, "--http-threads",
                        str(http_threads)] + list(extra))
        self.process = None
        self.port = None

    def __enter__(self):
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(self.command, stdout=self.log,
                                        stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.__exit__()
        with open(self.log_path) as f:
            raise SystemExit(f"bench-server: the server did not start "
                             f"({shlex.join(self.command)}):\n{f.read()}")

    def __exit__(self, *exc):
        if self.process is None:
            return False
        if self.process.poll() is None and self.port is not None:
            try:
                self.request("POST", "/admin/shutdown", b"", timeout=5)
            except OSError:
                pass
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        below = descendants(self.process.pid)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.log.close()
        return False

    def request(self, method, path, body=None, timeout=60):
        connection = http.client.HTTPConnection("127.0.0.1", self.port,
                                                timeout=timeout)
        try:
            connection.request(method, path, body=body,
                               headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            return answer.status, answer.read().decode()
        finally:
            connection.close()

    def metrics(self):
        status, text = self.request("GET", "/metrics")
        values = {}
        if status == 200:
            for line in text.splitlines():
                if line and not line.startswith("#"):
                    key, value = line.rsplit(" ", 1)
                    values[key] = float(value)
        return values


def sampling_fields(index):
    """--sampling: the fields of request `index` (seeded by its index, so
    every server and rank count draws the same tokens for it)."""
    return {"temperature": 0.8, "top_k": 50, "top_p": 0.95,
            "repetition_penalty": 1.1, "seed": index}


def stream_completion(port, prompt, max_tokens, timeout, extra=None):
    """One streaming POST /v1/completions (with the fields of `extra`).
    Returns a dict: sent (monotonic seconds), events [(time, [ids])],
    finish, done ([DONE] seen), status, error."""
    record = {"prompt_tokens": len(prompt), "events": [], "finish": None,
              "done": False, "status": None, "error": None}
    body = json.dumps(dict({"prompt": prompt, "max_tokens": max_tokens,
                            "stream": True}, **(extra or {}))).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port,
                                            timeout=timeout)
    try:
        record["sent"] = time.monotonic()
        connection.request("POST", "/v1/completions", body=body,
                           headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        record["status"] = answer.status
        if answer.status != 200:
            record["error"] = f"{answer.status} {answer.read().decode()[:200]}"
            return record
        while True:
            line = answer.readline()
            if not line:
                break
            now = time.monotonic()
            line = line.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                record["done"] = True
                break
            event = json.loads(data)
            if "error" in event:
                record["error"] = f"stream error: {event['error']}"
                break
            choice = event["choices"][0]
            if choice.get("token_ids"):
                record["events"].append((now, list(choice["token_ids"])))
            if choice.get("finish_reason"):
                record["finish"] = choice["finish_reason"]
    except (OSError, http.client.HTTPException, ValueError) as error:
        record["error"] = f"{type(error).__name__}: {error}"
    finally:
        connection.close()
    record["end"] = time.monotonic()
    return record


def run_load(port, prompts, max_tokens, clients, timeout, sampling=False):
    """C client threads take the prompts in order; returns the records (in
    prompt order) and the wall time. `sampling`: each request samples
    (sampling_fields)."""
    records = [None] * len(prompts)
    lock = threading.Lock()
    next_index = [0]

    def client():
        while True:
            with lock:
                index = next_index[0]
                next_index[0] += 1
            if index >= len(prompts):
                return
            records[index] = stream_completion(
                port, prompts[index], max_tokens, timeout,
                sampling_fields(index) if sampling else {"temperature": 0})

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return records, time.monotonic() - start


def summarize(records, wall, max_tokens):
    """TTFT, inter-token latency, tokens/s and errors of one load."""
    ttft, itl, tpot, errors, coalesced, generated = [], [], [], [], 0, 0
    for i, record in enumerate(records):
        ids = [t for _, event in record["events"] for t in event]
        generated += len(ids)
        problem = record["error"]
        if not problem and not record["done"]:
            problem = "the stream ended without data: [DONE]"
        if not problem and (len(ids) != max_tokens or
                            record["finish"] != "length"):
            problem = (f"{len(ids)} tokens, finish_reason "
                       f"{record['finish']!r}")
        if problem:
            errors.append(f"request {i}: {problem}")
        if not record["events"]:
            continue
        ttft.append(record["events"][0][0] - record["sent"])
        previous = record["events"][0][0]
        for at, event in record["events"][1:]:
            gap = at - previous
            itl.extend([gap / len(event)] * len(event))
            previous = at
        coalesced += sum(len(e) > 1 for _, e in record["events"])
        if len(ids) > 1:
            tpot.append((record["events"][-1][0] - record["events"][0][0]) /
                        (len(ids) - 1))
    ms = lambda v: None if v is None else round(v * 1000, 3)  # noqa: E731
    return {
        "requests": len(records),
        "errors": len(errors),
        "error_messages": errors[:20],
        "generated_tokens": generated,
        "wall_s": round(wall, 3),
        "tokens_per_s": round(generated / wall, 2) if wall > 0 else None,
        "requests_per_s": round(len(records) / wall, 3) if wall > 0 else None,
        "ttft_ms": {"p50": ms(percentile(ttft, 50)),
                    "p99": ms(percentile(ttft, 99)),
                    "max": ms(max(ttft) if ttft else None)},
        "itl_ms": {"p50": ms(percentile(itl, 50)),
                   "p99": ms(percentile(itl, 99)),
                   "max": ms(max(itl) if itl else None)},
        "tpot_ms_mean": ms(statistics.mean(tpot) if tpot else None),
        "events_with_several_tokens": coalesced,
    }


def server_numbers(before, after):
    """What the server's counters say about one load."""
    delta = lambda key: after.get(key, 0) - before.get(key, 0)  # noqa: E731
    steps = delta("dtensor_server_steps_total")
    rows = delta("dtensor_server_batch_rows_sum")
    count = delta("dtensor_server_batch_rows_count")
    seconds = delta("dtensor_server_step_seconds_sum")
    mean = lambda name: (  # noqa: E731
        round(1000 * delta(name + "_sum") / delta(name + "_count"), 3)
        if delta(name + "_count") else None)
    return {"steps": int(steps),
            # The server's own view (KV-cache server only): from a request's
            # queueing to its token's publication, and between publications.
            "server_ttft_ms_mean": mean(
                "dtensor_server_time_to_first_token_seconds"),
            "server_itl_ms_mean": mean("dtensor_server_inter_token_seconds"),
            "average_rows_per_step": round(rows / count, 3) if count else None,
            "step_ms_mean": round(1000 * seconds / count, 3) if count else None,
            "step_failures": int(delta("dtensor_server_step_failures_total"))}


def prepare(args, model, work):
    """Plans, weights and artifacts of one model: {(kind, ranks): path}."""
    os.makedirs(work, exist_ok=True)
    gen = module_command(sys.executable, "dtensor_testing.gen_model_plan")
    slots = args.slots or max(args.concurrency)
    # A chunked prefill pads its last chunk to an entry's length: the prompt
    # rounds up to a multiple of 16 (the smallest prefill); then the tokens.
    rounded = -(-args.prompt_max // 16) * 16
    max_seq = rounded + args.max_tokens
    prefill = [n for n in (16, 64, 256) if n <= rounded] or [16]
    kv_plan = os.path.join(work, "kv.json")
    run(gen + MODELS[model] + ["--kv-cache", "--slots", str(slots),
        "--max-seq", str(max_seq), "--prefill",
        ",".join(map(str, prefill)), "-o", kv_plan] +
        (["--logits-output"] if args.sampling else []))
    seq = args.prompt_max + args.max_tokens
    stateless_plan = os.path.join(work, "recompute.json")
    # --sampling: the logits are an output too (the server samples from
    # them; its greedy requests still read the in-graph argmax only).
    run(gen + MODELS[model] + ["--batch", str(args.recompute_batch),
        "--seq", str(seq), "-o", stateless_plan] +
        (["--logits-output"] if args.sampling else []))
    weights_dir = os.path.join(work, "weights")
    run(module_command(sys.executable, "dtensor_testing.make_test_tensors") + [
        kv_plan, "-d", weights_dir, "--seed",
         str(args.seed)])
    compile_bin = os.path.join(args.build_dir, "bin", "dtensor-compile")
    artifacts, shapes = {}, {}
    kinds = [("kv", kv_plan)]
    if not args.no_recompute:
        kinds.append(("recompute", stateless_plan))
    for kind, plan in kinds:
        for ranks in args.ranks:
            path = os.path.join(work, f"{kind}-{ranks}.dtc")
            start = time.monotonic()
            run([compile_bin, plan, "--mesh", str(ranks), "-o", path])
            log(f"{model}: compiled {kind} for {ranks} rank(s) in "
                f"{time.monotonic() - start:.1f} s")
            artifacts[(kind, ranks)] = path
    shapes["kv"] = {"slots": slots, "max_seq": max_seq, "prefill": prefill}
    shapes["recompute"] = {"batch": args.recompute_batch, "seq": seq}
    return artifacts, os.path.join(weights_dir, "weights.safetensors"), shapes


def prompts_for(args, model, clients, count):
    """`count` prompts for a model and a client count; the same on every
    server and rank count."""
    rng = random.Random(f"{args.seed}-{model}-{clients}")
    return [[rng.randrange(VOCAB[model]) for _ in range(
        rng.randint(args.prompt_min, args.prompt_max))]
        for _ in range(count)]


def bench_server(args, model, kind, ranks, artifact, weights, work,
                 sampling=False):
    """Every concurrency on one started server; a list of result rows.
    `sampling`: the requests sample (the artifact has logits), their rows
    named "<kind>+sampling"."""
    rows = []
    binary = os.path.join(args.build_dir, "bin", "dtensor-server")
    threads = args.http_threads or max(args.concurrency) + 8
    name = f"{model}-{kind}{'+sampling' if sampling else ''}-{ranks}"
    with Server(args.mpirun, ranks, binary, artifact, weights, work, name,
                threads, args.server_arg) as server:
        # Warm-up: page in the weights, the first steps of each entry.
        warm = prompts_for(args, model, 0, 2)
        run_load(server.port, warm, min(args.max_tokens, 4), 2,
                 args.timeout)
        for clients in args.concurrency:
            per_client = (args.requests_per_client if kind == "kv"
                          else args.recompute_requests_per_client)
            count = clients * per_client
            prompts = prompts_for(args, model, clients,
                                  clients * args.requests_per_client)[:count]
            before = server.metrics()
            load = loadavg()
            records, wall = run_load(server.port, prompts, args.max_tokens,
                                     clients, args.timeout, sampling)
            # The server counts a step after answering it: let the last
            # step's count land before reading the counters.
            time.sleep(0.2)
            after = server.metrics()
            row = {"model": model,
                   "server": kind + ("+sampling" if sampling else ""),
                   "ranks": ranks,
                   "clients": clients,
                   "prompt_tokens_mean": round(statistics.mean(
                       len(p) for p in prompts), 1),
                   "max_tokens": args.max_tokens,
                   "loadavg_before": load, "loadavg_after": loadavg()}
            row.update(summarize(records, wall, args.max_tokens))
            row["server_metrics"] = server_numbers(before, after)
            row["generated"] = [[t for _, e in r["events"] for t in e]
                                for r in records]
            if args.keep_requests:
                row["request_records"] = [
                    {"prompt_tokens": r["prompt_tokens"],
                     "ttft_s": (r["events"][0][0] - r["sent"])
                     if r["events"] else None,
                     "event_times_s": [round(t - r["sent"], 6)
                                       for t, _ in r["events"]],
                     "error": r["error"]} for r in records]
            log(f"{name} clients {clients}: {row['requests']} requests, "
                f"{row['tokens_per_s']} tokens/s, TTFT p50 "
                f"{row['ttft_ms']['p50']} ms, ITL p50 {row['itl_ms']['p50']} "
                f"ms, {row['errors']} errors")
            rows.append(row)
        health = server.request("GET", "/health")
        rows[-1]["health_after"] = health[0]
    return rows


def agreement(rows):
    """Requests whose ids differ between the servers and rank counts (the
    same prompt, greedy decoding)."""
    by_prompt = {}
    for row in rows:
        for i, ids in enumerate(row["generated"]):
            if ids:
                # Sampled answers agree with sampled ones only.
                key = (row["model"], row["clients"], i,
                       row["server"].endswith("+sampling"))
                by_prompt.setdefault(key, []).append(
                    (f"{row['server']}-{row['ranks']}", ids))
    differ = []
    for key, answers in sorted(by_prompt.items()):
        if len({tuple(ids) for _, ids in answers}) > 1:
            differ.append({"model": key[0], "clients": key[1],
                           "request": key[2],
                           "answers": {n: ids for n, ids in answers}})
    compared = sum(len(a) > 1 for a in by_prompt.values())
    return compared, differ


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(result):
    lines = ["# dtensor-server: KV cache against recompute", "",
             f"{result['conditions']['date']}, {result['conditions']['nproc']} "
             f"cores, load average before/after "
             f"{result['conditions']['loadavg_start']} / "
             f"{result['conditions']['loadavg_end']}, commit "
             f"{result['conditions']['commit']}. Streaming "
             f"`/v1/completions`, {result['settings']['max_tokens']} new "
             f"tokens per request, prompts of "
             f"{result['settings']['prompt_min']}-"
             f"{result['settings']['prompt_max']} random token ids "
             f"(seed {result['settings']['seed']}); times measured by the "
             f"clients from the server-sent events.", "",
             "| model | server | ranks | clients | requests | prompt mean | "
             "TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms | TPOT ms "
             "| server ITL ms | tokens/s | steps | rows/step | step ms | "
             "errors |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
             "|---:|---:|---:|---:|"]
    for row in result["rows"]:
        m = row["server_metrics"]
        lines.append(
            f"| {row['model']} | {row['server']} | {row['ranks']} | "
            f"{row['clients']} | {row['requests']} | "
            f"{row['prompt_tokens_mean']} | {fmt(row['ttft_ms']['p50'])} | "
            f"{fmt(row['ttft_ms']['p99'])} | {fmt(row['itl_ms']['p50'], 2)} | "
            f"{fmt(row['itl_ms']['p99'], 2)} | {fmt(row['tpot_ms_mean'], 2)} | "
            f"{fmt(m['server_itl_ms_mean'], 2)} | "
            f"{fmt(row['tokens_per_s'])} | {m['steps']} | "
            f"{fmt(m['average_rows_per_step'], 2)} | "
            f"{fmt(m['step_ms_mean'], 2)} | {row['errors']} |")
    lines += ["", "Shapes: " + "; ".join(
        f"{model}: KV cache {s['kv']['slots']} slots x {s['kv']['max_seq']} "
        f"positions, prefill {','.join(map(str, s['kv']['prefill']))}; "
        f"recompute [{s['recompute']['batch']}, {s['recompute']['seq']}]"
        for model, s in result["shapes"].items()) + "."]
    compared, differ = result["agreement"]["compared"], \
        result["agreement"]["differ"]
    lines.append(f"Same prompt, same ids on every server and rank count "
                 f"(sampled requests against sampled ones): "
                 f"{compared - len(differ)} of {compared} prompts.")
    errors = [m for row in result["rows"] for m in row["error_messages"]]
    if errors:
        lines += ["", "Errors (first ones):", ""] + [f"- {m}" for m in
                                                     errors[:10]]
    return "\n".join(lines) + "\n"


def parse_list(text):
    return [int(x) for x in text.split(",") if x]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--quick", action="store_true",
                        help="tiny model, 2 ranks, 1 and 4 clients, short "
                             "prompts (under a minute)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results",
                                                      "server"),
                        help="output folder (default bench-results/server)")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", default=None,
                        help="comma-separated, of tiny, gqa (default both)")
    parser.add_argument("--ranks", type=parse_list, default=None,
                        help="default 1,2")
    parser.add_argument("--concurrency", type=parse_list, default=None,
                        help="concurrent streaming clients (default 1,8,32)")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="new tokens per request (default 16)")
    parser.add_argument("--prompt-min", type=int, default=None,
                        help="default 16")
    parser.add_argument("--prompt-max", type=int, default=None,
                        help="default 512")
    parser.add_argument("--requests-per-client", type=int, default=None,
                        help="KV-cache server: requests per client "
                             "(default 2)")
    parser.add_argument("--recompute-requests-per-client", type=int,
                        default=1,
                        help="recompute server: requests per client, the "
                             "first of the same prompts (default 1)")
    parser.add_argument("--recompute-batch", type=int, default=8,
                        help="the stateless plan's batch B (default 8)")
    parser.add_argument("--slots", type=int, default=0,
                        help="the KV cache's slots (default: the largest "
                             "concurrency; fewer: the other requests wait "
                             "in the server's queue for a free slot)")
    parser.add_argument("--sampling", action="store_true",
                        help="also run both servers with sampling "
                        "requests (temperature 0.8, top_k 50, top_p 0.95, "
                        "repetition_penalty 1.1, seeded): the logits are "
                        "fetched to rank 0 each step (the KV-cache plan "
                        "gets --logits-output)")
    parser.add_argument("--no-recompute", action="store_true",
                        help="the KV-cache server only")
    parser.add_argument("--http-threads", type=int, default=0,
                        help="the server's --http-threads (default: the "
                             "largest concurrency + 8: a streaming client "
                             "holds a thread)")
    parser.add_argument("--server-arg", action="append", default=[],
                        metavar="ARG",
                        help="one more argument for every dtensor-server "
                             "(repeatable), e.g. --server-arg=--max-prefills=1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds a client waits on a socket")
    parser.add_argument("--keep-requests", action="store_true",
                        help="every request's event times in results.json")
    parser.add_argument("--mpirun", default=None,
                        help="the launcher (default mpirun --oversubscribe "
                             "--mca btl self,vader, --allow-run-as-root as "
                             "root)")
    args = parser.parse_args()

    quick = args.quick
    defaults = {"models": "tiny" if quick else "tiny,gqa",
                "ranks": [2] if quick else [1, 2],
                "concurrency": [1, 4] if quick else [1, 8, 32],
                "max_tokens": 8 if quick else 16,
                "prompt_min": 16, "prompt_max": 64 if quick else 512,
                "requests_per_client": 1 if quick else 2}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.models = [m for m in args.models.split(",") if m]
    for model in args.models:
        if model not in MODELS:
            parser.error(f"unknown model '{model}' (tiny, gqa)")
    if not 1 <= args.prompt_min <= args.prompt_max:
        parser.error("need 1 <= --prompt-min <= --prompt-max")
    if args.mpirun is None:
        args.mpirun = "mpirun --oversubscribe --mca btl self,vader"
        if os.geteuid() == 0:
            args.mpirun += " --allow-run-as-root"
    for tool in ("dtensor-compile", "dtensor-server"):
        if not os.access(os.path.join(args.build_dir, "bin", tool), os.X_OK):
            raise SystemExit(f"bench-server: no {tool} in "
                             f"{args.build_dir}/bin (build it first; the "
                             f"server needs cpp-httplib)")

    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    result = {"conditions": {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                             "nproc": os.cpu_count(), "commit": commit,
                             "loadavg_start": loadavg(),
                             "command": shlex.join(sys.argv)},
              "settings": {k: v for k, v in vars(args).items()},
              "shapes": {}, "rows": []}
    started = time.monotonic()
    for model in args.models:
        artifacts, weights, shapes = prepare(args, model,
                                             os.path.join(work, model))
        result["shapes"][model] = shapes
        for ranks in args.ranks:
            for kind in ("kv", "recompute"):
                if (kind, ranks) not in artifacts:
                    continue
                result["rows"] += bench_server(
                    args, model, kind, ranks, artifacts[(kind, ranks)],
                    weights, os.path.join(work, model))
                if args.sampling:
                    result["rows"] += bench_server(
                        args, model, kind, ranks, artifacts[(kind, ranks)],
                        weights, os.path.join(work, model), sampling=True)
    compared, differ = agreement(result["rows"])
    result["agreement"] = {"compared": compared, "differ": differ[:20],
                           "differ_count": len(differ)}
    for row in result["rows"]:
        row.pop("generated")
    result["conditions"]["loadavg_end"] = loadavg()
    result["conditions"]["wall_s"] = round(time.monotonic() - started, 1)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    table = markdown(result)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    print(table)
    log(f"wrote {args.out}/results.json and results.md in "
        f"{result['conditions']['wall_s']} s")
    if any(row["errors"] for row in result["rows"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
