#!/usr/bin/env python3
"""A rank fails (or hangs) at a given step: the server answers 503 and the
whole job exits non-zero within a bound, with no rank left behind.

  check-failure.py --mpirun CMD --server BIN --artifact l2.dtc
                   --weights W --work DIR --kind error|hang [--at-step K]

--kind error: rank 1 passes a wrong shape to dtensor_program_set at step K
(--fail-at-step); the runtime reports it on every rank. --kind hang: rank 1
stops answering at step K; rank 0's --step-timeout-s ends the job.
"""

import argparse
import concurrent.futures
import time

from server_harness import ServerProcess, add_server_arguments, fail


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--kind", choices=["error", "hang"], required=True)
    parser.add_argument("--at-step", type=int, default=3)
    parser.add_argument("--step-timeout", type=float, default=3)
    parser.add_argument("--exit-timeout", type=float, default=30)
    args = parser.parse_args()

    flags = ["--weights", args.weights, "--fail-at-step", str(args.at_step),
             "--fail-rank", "1", "--fail-kind", args.kind,
             "--step-timeout-s", str(args.step_timeout)]
    with ServerProcess(args.mpirun, 2, args.server, args.artifact, flags,
                       args.work, name="fail-" + args.kind) as server:
        # Steps before K run: one request, one step.
        for step in range(args.at_step):
            answer = server.request("POST", "/v1/next_token",
                                    {"tokens": [step + 1, 2, 3]})
            if answer.status != 200:
                fail(f"step {step}: {answer.status} {answer.body}")
        print(f"{args.at_step} steps answered 200")

        # Step K breaks; requests sent with it get 503 with the cause, or,
        # once the server has stopped listening, no connection at all.
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(server.request, "POST", "/v1/next_token",
                                   {"tokens": [7, i]}, timeout=60)
                       for i in range(4)]
            outcomes = []
            for future in futures:
                try:
                    outcomes.append(future.result())
                except OSError as error:
                    outcomes.append(error)
        answered = [o for o in outcomes if not isinstance(o, OSError)]
        if not answered:
            fail("no request got an answer")
        for answer in answered:
            if answer.status != 503:
                fail(f"a request at the failing step got {answer.status} "
                     f"{answer.body}")
        first = answered[0].json()["error"]
        print(f"failing step: {len(answered)} of 4 answered 503, "
              f"{len(outcomes) - len(answered)} refused; error: {first}")

        try:
            health = server.request("GET", "/health", timeout=5)
            print(f"health after the failure: {health.status}")
            if health.status != 503:
                fail(f"/health answers {health.status} after the failure")
        except OSError:
            print("health after the failure: the server is gone")

        code = server.wait_exit(args.exit_timeout)
        elapsed = time.monotonic() - start
        if code is None:
            fail(f"mpirun still runs {args.exit_timeout} s after the "
                 f"failure:\n{server.log_text()}")
        print(f"mpirun exited with status {code} "
              f"({'non-zero' if code else 'ZERO'}) "
              f"{elapsed:.1f} s after the failing step")
        if code == 0:
            fail("mpirun exited 0 after a failed step")
        log = server.log_text()
        for line in log.splitlines():
            if "dtensor-server[" in line:
                print("log: " + line.split("]: ", 1)[-1])


if __name__ == "__main__":
    main()
