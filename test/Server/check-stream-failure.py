#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A rank fails mid-decode while streams are open (KV-cache server).

  check-stream-failure.py --mpirun CMD --server BIN --artifact kv.dtc
                          --weights W --work DIR --at-step K

Starts the server with --fail-at-step K (rank 1 breaks step K) and slow
steps, opens --streams streams of 30 tokens at once, and checks that each
gets its first tokens, then an error event naming the failed step (no
[DONE]), and that mpirun exits non-zero. Every wait is bounded.
"""

import argparse
import concurrent.futures

from server_harness import (ServerProcess, add_server_arguments, fail,
                            stream)


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--at-step", type=int, required=True)
    parser.add_argument("--streams", type=int, default=3)
    args = parser.parse_args()
    flags = ["--weights", args.weights, "--fail-at-step", str(args.at_step),
             "--step-delay-ms", "30"]
    with ServerProcess(args.mpirun, 2, args.server, args.artifact, flags,
                       args.work, name="stream-failure") as server:
        with concurrent.futures.ThreadPoolExecutor(args.streams) as pool:
            results = list(pool.map(
                lambda k: stream(server, {"prompt": [1 + k, 2, 3],
                                          "max_tokens": 30}),
                range(args.streams)))
        for tokens, finish, error in results:
            if error is None or finish is not None:
                fail(f"a stream ended without an error event: {tokens} "
                     f"{finish}")
        messages = {e["message"] for _, _, e in results}
        codes = {e["code"] for _, _, e in results}
        counts = sorted(len(t) for t, _, _ in results)
        print(f"streams: {args.streams} open, {counts} tokens each before an "
              f"error event (code {sorted(codes)})")
        for message in sorted(messages):
            print(f"error event: {message}")
        status = server.wait_exit(60)
        if status is None:
            fail("mpirun did not exit within 60 s of the failure")
        print(f"mpirun exited with status {status} "
              f"({'non-zero' if status else 'zero'})")
        print("\n".join("log: " + line for line in
                        server.log_text().splitlines()
                        if "step" in line and "fail" in line))


if __name__ == "__main__":
    main()
