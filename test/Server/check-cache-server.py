#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Drives dtensor-server on a KV-cache artifact (2 ranks).

  check-cache-server.py --mpirun CMD --server BIN --artifact kv.dtc
                        --weights W --reference ref.json --work DIR
                        [--requests 1000] [--concurrency 8]

ref.json holds greedy tokens per prompt from `dtensor-run --generate` (each
prompt's tokens alone). Checks: (a) completions, streamed or not, and
/v1/next_token, /v1/generate equal the reference; stop tokens end early;
(b) bad requests are refused and never run a step; (c) a load test of
completions and streams from concurrent clients, every answer checked;
(d) a client that disconnects mid-stream frees its slot for the next
request; (e) with --max-prefills 1 the answers are the same. Prints one line per check for FileCheck; exits non-zero on the
first mismatch.
"""

import argparse
import concurrent.futures
import json
import random
import threading
import time

from server_harness import (ServerProcess, add_server_arguments, fail,
                            stream)


def steps(server):
    return server.metrics()["dtensor_server_steps_total"]


def complete(server, body):
    answer = server.request("POST", "/v1/completions", body)
    if answer.status != 200:
        fail(f"completion {body}: {answer.status} {answer.body}")
    return answer.json()


def check_answers(server, reference):
    prompts = reference["prompts"]
    new = reference["tokens"]
    for prompt, expected in zip(prompts, reference["generated"]):
        got = complete(server, {"prompt": prompt, "max_tokens": new})
        choice = got["choices"][0]
        if choice["token_ids"] != expected or choice["finish_reason"] != "length":
            fail(f"completion of {prompt}: got {choice}, expected {expected}")
        if got["usage"] != {"prompt_tokens": len(prompt),
                            "completion_tokens": new,
                            "total_tokens": len(prompt) + new}:
            fail(f"usage: {got['usage']}")
        tokens, finish, error = stream(server, {"prompt": [prompt],
                                                "max_tokens": new})
        if tokens != expected or finish != "length" or error:
            fail(f"stream of {prompt}: {tokens} {finish} {error}, expected "
                 f"{expected}")
        answer = server.request("POST", "/v1/generate",
                                {"tokens": prompt, "max_new_tokens": new})
        if answer.json().get("generated") != expected:
            fail(f"generate of {prompt}: {answer.body}")
        answer = server.request("POST", "/v1/next_token", {"tokens": prompt})
        if answer.json().get("next_token") != expected[0]:
            fail(f"next_token of {prompt}: {answer.body}")
    print(f"answers: {len(prompts)} prompts of lengths "
          f"{[len(p) for p in prompts]}: completions, streams, generate and "
          f"next_token equal dtensor-run --generate")
    # A stop token: the tokens before its first occurrence, reason "stop".
    prompt, expected = prompts[0], reference["generated"][0]
    stop = expected[2]
    cut = expected.index(stop)
    got = complete(server, {"prompt": prompt, "max_tokens": new,
                            "stop": [stop]})["choices"][0]
    tokens, finish, _ = stream(server, {"prompt": prompt, "max_tokens": new,
                                        "stop": stop})
    if got["token_ids"] != expected[:cut] or got["finish_reason"] != "stop" \
            or tokens != expected[:cut] or finish != "stop":
        fail(f"stop {stop}: {got}, stream {tokens} {finish}; expected "
             f"{expected[:cut]}")
    print(f"stop token: {cut} tokens, finish_reason stop, streamed the same")
    models = server.request("GET", "/v1/models").json()
    print(f"models: {[m['id'] for m in models['data']]}")


BAD = [
    ("malformed JSON", b'{"prompt": [1, 2', None),
    ("text prompt", None, {"prompt": "Hello"}),
    ("text prompts", None, {"prompt": ["Hello", "there"]}),
    ("two prompts", None, {"prompt": [[1], [2]]}),
    ("empty prompt", None, {"prompt": []}),
    ("id past the vocabulary", None, {"prompt": [1, 256]}),
    ("prompt past the cache", None, {"prompt": [1] * 65}),
    ("prompt + max_tokens past the cache", None,
     {"prompt": [1] * 60, "max_tokens": 5}),
    ("default max_tokens past the cache", None, {"prompt": [1] * 50}),
    ("max_tokens 0", None, {"prompt": [1], "max_tokens": 0}),
    ("stop string", None, {"prompt": [1], "stop": ["\n"]}),
    ("stop past the vocabulary", None, {"prompt": [1], "stop": [300]}),
    ("temperature", None, {"prompt": [1], "temperature": 0.7}),
    ("n", None, {"prompt": [1], "n": 2}),
    ("stream not a boolean", None, {"prompt": [1], "stream": "yes"}),
    ("unknown field", None, {"prompt": [1], "best_of": 2}),
]


def check_bad(server):
    before = steps(server)
    for label, data, body in BAD:
        answer = server.request("POST", "/v1/completions", body=body, data=data)
        try:
            message = answer.json()["error"]
        except (ValueError, KeyError):
            fail(f"{label}: not a JSON error: {answer.status} {answer.body}")
        print(f"bad request ({label}): {answer.status} {message}")
    after = steps(server)
    if after != before:
        fail(f"bad requests ran {after - before} step(s)")
    print(f"bad requests: {len(BAD)} refused, no step run")


def check_load(server, reference, requests, concurrency, label="load"):
    rng = random.Random(5)
    cases = []
    for _ in range(requests):
        i = rng.randrange(len(reference["prompts"]))
        cases.append((i, rng.randint(1, reference["tokens"]),
                      rng.random() < 0.3))
    errors = []
    latencies = []
    lock = threading.Lock()

    def one(case):
        i, count, streamed = case
        prompt = reference["prompts"][i]
        expected = reference["generated"][i][:count]
        start = time.monotonic()
        try:
            if streamed:
                tokens, finish, error = stream(
                    server, {"prompt": prompt, "max_tokens": count})
            else:
                choice = complete(server, {"prompt": prompt,
                                           "max_tokens": count})["choices"][0]
                tokens, finish, error = (choice["token_ids"],
                                         choice["finish_reason"], None)
            if tokens != expected or finish != "length" or error:
                raise RuntimeError(f"{prompt} x {count}: {tokens} {finish} "
                                   f"{error}, expected {expected}")
        except Exception as e:  # noqa: BLE001 - collected and reported
            with lock:
                errors.append(str(e))
        with lock:
            latencies.append(time.monotonic() - start)

    before = server.metrics()
    begin = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, cases))
    elapsed = time.monotonic() - begin
    after = server.metrics()
    if errors:
        fail(f"load: {len(errors)} errors, the first: {errors[0]}")
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    streams = sum(1 for c in cases if c[2])
    print(f"{label}: {requests} requests ({streams} streamed), {concurrency} "
          f"concurrent, 0 errors, every answer equal to the reference")
    if label != "load":
        return
    tokens = after["dtensor_server_tokens_total"] - before["dtensor_server_tokens_total"]
    count = lambda m, name: m[name + "_count"]
    ttft = (after["dtensor_server_time_to_first_token_seconds_sum"] -
            before["dtensor_server_time_to_first_token_seconds_sum"]) / max(
        1, count(after, "dtensor_server_time_to_first_token_seconds") -
        count(before, "dtensor_server_time_to_first_token_seconds"))
    itl = (after["dtensor_server_inter_token_seconds_sum"] -
           before["dtensor_server_inter_token_seconds_sum"]) / max(
        1, count(after, "dtensor_server_inter_token_seconds") -
        count(before, "dtensor_server_inter_token_seconds"))
    print(f"load: latency p50 {pick(0.5) * 1e3:.1f} ms, p99 "
          f"{pick(0.99) * 1e3:.1f} ms; {requests / elapsed:.0f} requests/s, "
          f"{tokens / elapsed:.0f} tokens/s; mean time to first token "
          f"{ttft * 1e3:.2f} ms, mean inter-token {itl * 1e3:.2f} ms")


def check_cancel(server, reference, slots):
    """All slots taken by long streams; one client disconnects; a new
    request must get its slot while the others still run."""
    prompt = reference["prompts"][0]
    results = {}

    def long_stream(k, stop_after=None):
        begin = time.monotonic()
        tokens, finish, error = stream(server, {"prompt": prompt,
                                                "max_tokens": 40},
                                       stop_after=stop_after)
        results[k] = (tokens, finish, error, time.monotonic() - begin)

    threads = [threading.Thread(target=long_stream, args=(k, 2 if k == 0 else None))
               for k in range(slots)]
    for t in threads:
        t.start()
    # The disconnected stream's slot frees at the next step.
    deadline = time.monotonic() + 20
    while 0 not in results and time.monotonic() < deadline:
        time.sleep(0.01)
    begin = time.monotonic()
    answer = complete(server, {"prompt": prompt, "max_tokens": 2})
    waited = time.monotonic() - begin
    # Which long streams had ended when the new request was answered: none,
    # if it got the freed slot (it needs 2 steps, they had 38 left). An
    # order of events in the one step loop, not a duration, so a loaded
    # machine slows both alike.
    ended_before = sorted(k for k in range(1, slots) if k in results)
    for t in threads:
        t.join()
    longest = max(results[k][3] for k in range(1, slots))
    ok = (answer["choices"][0]["token_ids"] == reference["generated"][0][:2]
          and all(results[k][1] == "length" and len(results[k][0]) == 40
                  for k in range(1, slots)))
    if not ok or ended_before:
        fail(f"cancel: the new request took {waited:.2f} s, the long streams "
             f"{longest:.2f} s; streams {ended_before} had ended before it; "
             f"results {results}")
    occupancy = server.metrics()["dtensor_server_slot_occupancy"]
    print(f"cancel: a client left after 2 tokens; a new request got its slot "
          f"while {slots - 1} streams of 40 tokens ran on; slot occupancy "
          f"back to {occupancy:g}")


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with open(args.reference) as f:
        reference = json.load(f)
    common = ["--weights", args.weights]
    with ServerProcess(args.mpirun, 2, args.server, args.artifact, common,
                       args.work, name="cache") as server:
        health = server.request("GET", "/health").json()
        print(f"health: {health['status']}, {health['ranks']} ranks, KV cache "
              f"{health['kv_cache']}: {health['batch']} slots of "
              f"{health['seq_len']} positions")
        check_answers(server, reference)
        check_bad(server)
        check_load(server, reference, args.requests, args.concurrency)
    # At most one prefill between two decode steps: the same answers.
    with ServerProcess(args.mpirun, 2, args.server, args.artifact,
                       common + ["--max-prefills", "1"], args.work,
                       name="budget") as server:
        check_load(server, reference, 300, args.concurrency,
                   label="load with --max-prefills 1")
    # Slow steps, so that the disconnect lands mid-stream.
    with ServerProcess(args.mpirun, 2, args.server, args.artifact,
                       common + ["--step-delay-ms", "20"], args.work,
                       name="cancel") as server:
        check_cancel(server, reference, health["batch"])


if __name__ == "__main__":
    main()
