#!/usr/bin/env python3
"""Drives dtensor-server on 2 ranks against the 1-rank reference.

  check-server.py --mpirun CMD --server BIN --artifact l2.dtc
                  --weights W --reference reference.json --work DIR
                  [--requests 1000] [--concurrency 8]

(a) next_token answers equal the 1-rank run's, (b) generate equals greedy
steps done by hand, (c) bad requests get their 4xx and never run a step,
(d) a load test, (e) SIGTERM finishes the requests in progress and every
rank exits 0. Prints one line per check for FileCheck; exits non-zero on
the first mismatch.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import signal
import time

from server_harness import (ServerProcess, add_server_arguments, fail,
                            run_bounded)


def steps(server):
    return server.metrics()["dtensor_server_steps_total"]


def check_answers(server, reference):
    for case in reference["next_token"]:
        answer = server.request("POST", "/v1/next_token",
                                {"tokens": case["tokens"]})
        if answer.status != 200:
            fail(f"next_token {case['tokens']}: {answer.status} {answer.body}")
        got = answer.json()
        if got["next_token"] != case["next_token"] or got["argmax"] != case["argmax"]:
            fail(f"next_token {case['tokens']}: got {got}, the 1-rank run "
                 f"gives {case['next_token']} / {case['argmax']}")
    print(f"next_token: {len(reference['next_token'])} prompts of lengths "
          f"{[len(c['tokens']) for c in reference['next_token']]} equal the "
          f"1-rank run")


def check_generate(server, reference):
    for case in reference["generate"]:
        answer = server.request("POST", "/v1/generate",
                                {"tokens": case["tokens"],
                                 "max_new_tokens": case["max_new_tokens"]})
        if answer.status != 200:
            fail(f"generate {case['tokens']}: {answer.status} {answer.body}")
        got = answer.json()
        if (got["generated"] != case["generated"] or
                got["tokens"] != case["tokens"] + case["generated"]):
            fail(f"generate {case['tokens']}: got {got}, greedy 1-rank steps "
                 f"give {case['generated']}")
    print(f"generate: {len(reference['generate'])} prompts x "
          f"{reference['generate'][0]['max_new_tokens']} tokens equal greedy "
          f"1-rank steps")


def check_bad_requests(server, reference):
    seq_len, vocab = reference["seq_len"], reference["vocab"]
    before = steps(server)
    cases = [
        ("malformed JSON", "POST", "/v1/next_token", b'{"tokens": [1, 2,'),
        ("not an object", "POST", "/v1/next_token", b"[1, 2]"),
        ("missing tokens", "POST", "/v1/next_token", b"{}"),
        ("tokens not an array", "POST", "/v1/next_token", b'{"tokens": "1 2"}'),
        ("float id", "POST", "/v1/next_token", b'{"tokens": [1, 2.5]}'),
        ("string id", "POST", "/v1/next_token", b'{"tokens": [1, "2"]}'),
        ("empty", "POST", "/v1/next_token", b'{"tokens": []}'),
        ("too long", "POST", "/v1/next_token",
         json.dumps({"tokens": [1] * (seq_len + 1)}).encode()),
        ("id = vocab", "POST", "/v1/next_token",
         json.dumps({"tokens": [1, vocab]}).encode()),
        ("negative id", "POST", "/v1/next_token", b'{"tokens": [-1]}'),
        ("unknown field", "POST", "/v1/next_token",
         b'{"tokens": [1], "temperature": 0.5}'),
        ("logits without a logits output", "POST", "/v1/next_token",
         b'{"tokens": [1], "logits": true}'),
        ("no max_new_tokens", "POST", "/v1/generate", b'{"tokens": [1]}'),
        ("max_new_tokens 0", "POST", "/v1/generate",
         b'{"tokens": [1], "max_new_tokens": 0}'),
        ("prompt + new tokens too long", "POST", "/v1/generate",
         json.dumps({"tokens": [1] * (seq_len - 2),
                     "max_new_tokens": 3}).encode()),
        ("unknown path", "GET", "/v2/next_token", None),
        ("wrong method", "GET", "/v1/next_token", None),
        ("body too large", "POST", "/v1/next_token",
         b'{"tokens": [' + b"1, " * 40000 + b"1]}"),
    ]
    for name, method, path, data in cases:
        answer = server.request(method, path, data=data)
        try:
            message = answer.json()["error"]
        except (ValueError, KeyError):
            fail(f"{name}: no JSON error in {answer.status} {answer.body!r}")
        if not 400 <= answer.status < 500:
            fail(f"{name}: status {answer.status}, expected 4xx ({message})")
        extra = ""
        if answer.status == 405:
            extra = f" [Allow: {answer.headers.get('Allow')}]"
        print(f"bad request ({name}): {answer.status} {message}{extra}")
    after = steps(server)
    if after != before:
        fail(f"bad requests ran {after - before} steps")
    metrics = server.metrics()
    refused = sum(v for k, v in metrics.items()
                  if k.startswith("dtensor_server_requests_total") and
                  ('code="4' in k))
    if refused < len(cases):
        fail(f"the metrics count {refused} 4xx answers, expected {len(cases)}")
    print(f"bad requests: {len(cases)} refused, no step run "
          f"(steps_total stays {int(after)})")


def check_port_in_use(args, port):
    """A second server on the same port: rank 0 cannot listen, tells the
    other rank to leave, and the job exits non-zero without hanging."""
    command = (shlex.split(args.mpirun) +
               ["-n", str(args.ranks), args.server, args.artifact,
                "--weights", args.weights, "--port", str(port)])
    code, output = run_bounded(command, 60)
    if code is None:
        fail(f"a server on a port in use did not exit within 60 s:\n{output}")
    lines = [line.split("]: ", 1)[1] for line in output.splitlines()
             if line.startswith("dtensor-server[")]
    if code == 0 or not lines:
        fail(f"a server on a port in use exited {code}:\n{output}")
    print(f"port in use: exit status {code}, "
          f"{lines[0].replace(str(port), 'PORT')}")


def percentile(sorted_values, fraction):
    index = min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    return sorted_values[index]


def check_load(server, reference, total, concurrency):
    cases = ([("/v1/next_token", {"tokens": c["tokens"]},
               {"next_token": c["next_token"], "argmax": c["argmax"]})
              for c in reference["next_token"]] +
             [("/v1/generate", {"tokens": c["tokens"],
                                "max_new_tokens": c["max_new_tokens"]},
               {"generated": c["generated"],
                "tokens": c["tokens"] + c["generated"]})
              for c in reference["generate"]])
    # Mostly next_token; every 10th request a generation.
    plan = []
    for i in range(total):
        if i % 10 == 9:
            plan.append(cases[len(reference["next_token"]) +
                              (i // 10) % len(reference["generate"])])
        else:
            plan.append(cases[i % len(reference["next_token"])])
    before = server.metrics()

    def one(item):
        path, body, expected = item
        start = time.monotonic()
        try:
            answer = server.request("POST", path, body, timeout=60)
        except OSError as error:
            return time.monotonic() - start, f"{path}: {error}"
        elapsed = time.monotonic() - start
        if answer.status != 200:
            return elapsed, f"{path}: {answer.status} {answer.body}"
        if answer.json() != expected:
            return elapsed, f"{path} {body}: got {answer.body}, expected {expected}"
        return elapsed, None

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, plan))
    wall = time.monotonic() - start
    errors = [error for _, error in results if error]
    latencies = sorted(elapsed for elapsed, _ in results)
    after = server.metrics()
    steps_run = after["dtensor_server_steps_total"] - before["dtensor_server_steps_total"]
    rows = after["dtensor_server_batch_rows_sum"] - before["dtensor_server_batch_rows_sum"]
    step_time = (after["dtensor_server_step_seconds_sum"] -
                 before["dtensor_server_step_seconds_sum"])
    average = rows / steps_run if steps_run else 0
    print(f"load: {total} requests, {concurrency} concurrent, "
          f"{len(errors)} errors")
    print(f"load: latency p50 {1000 * percentile(latencies, 0.5):.1f} ms, "
          f"p90 {1000 * percentile(latencies, 0.9):.1f} ms, "
          f"p99 {1000 * percentile(latencies, 0.99):.1f} ms, "
          f"max {1000 * latencies[-1]:.1f} ms; {total / wall:.0f} requests/s "
          f"over {wall:.2f} s")
    print(f"load: {int(steps_run)} steps, average batch {average:.2f} of "
          f"{reference['batch']} rows, mean step {1000 * step_time / max(steps_run, 1):.2f} ms")
    for error in errors[:5]:
        print(f"load error: {error}")
    if errors:
        fail(f"{len(errors)} of {total} requests failed")
    if average <= 1:
        fail(f"no batching: average batch {average:.2f}")


def check_sigterm(server, reference):
    """SIGTERM to rank 0 with generations in progress: they finish, new
    requests are refused, and every rank exits 0."""
    pid = server.request("GET", "/health").json()["pid"]
    case = reference["generate"][0]
    body = {"tokens": case["tokens"], "max_new_tokens": case["max_new_tokens"]}
    pool = concurrent.futures.ThreadPoolExecutor(4)
    futures = [pool.submit(server.request, "POST", "/v1/generate", body)
               for _ in range(4)]
    # Signal once all four are in (queued or in a row).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        metrics = server.metrics()
        if (metrics["dtensor_server_queue_depth"] +
                metrics["dtensor_server_active_rows"] >= 4 or
                all(f.done() for f in futures)):
            break
        time.sleep(0.001)
    os.kill(pid, signal.SIGTERM)
    # The signal is taken on a thread of its own: wait until /health says
    # the server is shutting down (or it has gone), then a new request must
    # be refused.
    deadline = time.monotonic() + 10
    try:
        while server.request("GET", "/health").status == 200:
            if time.monotonic() > deadline:
                fail("/health still answers 200 10 s after SIGTERM")
            time.sleep(0.001)
        late = server.request("POST", "/v1/next_token", {"tokens": [1]},
                              timeout=10)
        if late.status != 503:
            fail(f"a request after SIGTERM got {late.status} {late.body}")
    except OSError:
        pass  # the server has finished and stopped listening: refused too
    finished = [f.result(timeout=60) for f in futures]
    pool.shutdown()
    for answer in finished:
        if answer.status != 200 or answer.json()["generated"] != case["generated"]:
            fail(f"a generation in progress at SIGTERM got {answer.status} "
                 f"{answer.body}")
    code = server.wait_exit(30)
    if code is None:
        fail("mpirun still runs 30 s after SIGTERM")
    print(f"SIGTERM: 4 generations in progress finished (200), a new request "
          f"was refused, mpirun exited {code}")
    if code != 0:
        fail(f"mpirun exited {code} after SIGTERM:\n{server.log_text()}")


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with open(args.reference) as f:
        reference = json.load(f)

    with ServerProcess(args.mpirun, args.ranks, args.server, args.artifact,
                       ["--weights", args.weights, "--max-batch-wait-ms", "2"],
                       args.work) as server:
        health = server.request("GET", "/health")
        print(f"health: {health.status} {health.json()['status']}, "
              f"{health.json()['ranks']} ranks")
        check_answers(server, reference)
        check_generate(server, reference)
        check_bad_requests(server, reference)
        check_port_in_use(args, server.port)
        check_load(server, reference, args.requests, args.concurrency)
        check_sigterm(server, reference)


if __name__ == "__main__":
    main()
