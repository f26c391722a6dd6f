#!/usr/bin/env python3
"""One rank is SIGKILLed in the middle of a step; the rest of the job must
end: every process of it exits within --exit-timeout seconds of the kill,
mpirun exits non-zero, and (with the server) every HTTP client gets an
answer or a closed connection, never a hang.

  check-rank-kill.py --launch run --mpirun CMD --ranks N --point P
                     --step K --rank R -- DTENSOR-RUN ARTIFACT ARGS...
  check-rank-kill.py --launch server --mpirun CMD --ranks N --point P
                     --step K --rank R --work DIR -- DTENSOR-SERVER ARTIFACT ARGS...

The rank kills itself through the runtime's DTENSOR_TEST_FAULT
(docs/runtime.md, rank failures) at step K, on entering the step's first
collective (--point collective) or its first matrix product (compute), so
the point is the same on every run. The script follows every process below
mpirun from /proc every 5 ms and prints, for FileCheck, what happened; the
times (kill to the last rank gone, kill to mpirun's exit, the clients'
waits) go to --figures as JSON, one line per run. Whatever is left after the
bound is killed and the script fails.
"""

import argparse
import concurrent.futures
import json
import os
import re
import signal
import shlex
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

# The process-tree helpers of the server tests (this script drives the
# server's rank-kill test too), test/Server/server_harness.py: PYTHONPATH
# names test/Server (test/lit.cfg.py).
from server_harness import descendants, fail

KILL_LINE = re.compile(r"DTENSOR_TEST_FAULT: rank (\d+) kills itself \(SIGKILL\) "
                       r"at step (\d+) in (\w+) \((\w+)\) at monotonic "
                       r"([0-9.]+) s")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_tree(process):
    for pid in descendants(process.pid) + [process.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Job:
    """mpirun and the processes below it, followed from a thread: the pids
    ever seen below it and when the last of them was gone."""

    def __init__(self, command, env, log_path):
        self.log = open(log_path, "w")
        self.log_path = log_path
        self.process = subprocess.Popen(command, stdout=self.log,
                                        stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env,
                                        start_new_session=True)
        self.seen = set()
        self.last_gone = None
        self.exited_at = None
        self._stop = False
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self):
        while not self._stop:
            below = descendants(self.process.pid)
            self.seen.update(below)
            code = self.process.poll()
            now = time.monotonic()
            if code is not None and self.exited_at is None:
                self.exited_at = now
            if code is not None and not any(alive(p) for p in self.seen):
                self.last_gone = now
                return
            time.sleep(0.005)

    def wait(self, deadline):
        """True when mpirun and everything below it are gone by `deadline`
        (time.monotonic())."""
        self._thread.join(max(0.0, deadline - time.monotonic()))
        return self.last_gone is not None

    def stop(self):
        self._stop = True
        self._thread.join(5)
        if self.process.poll() is None or any(alive(p) for p in self.seen):
            kill_tree(self.process)
            for pid in self.seen:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.process.wait(10)
        self.log.close()

    def text(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()


def kill_event(job):
    match = KILL_LINE.search(job.text())
    if not match:
        return None
    rank, step, op, point, at = match.groups()
    return {"rank": int(rank), "step": int(step), "op": op, "point": point,
            "at": float(at)}


def read_port(job, path, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        if job.process.poll() is not None:
            fail(f"the server exited before it was ready:\n{job.text()}")
        time.sleep(0.05)
    fail(f"no port file after {timeout} s:\n{job.text()}")


def post(port, tokens, timeout):
    """(status, error text or None, seconds), or ("closed", reason, seconds)
    when the connection was refused, reset or closed without an answer."""
    start = time.monotonic()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/next_token",
        data=json.dumps({"tokens": tokens}).encode(), method="POST",
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            answer.read()
            return answer.status, None, time.monotonic() - start
    except urllib.error.HTTPError as error:
        body = error.read().decode(errors="replace")
        try:
            body = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            pass
        return error.code, body, time.monotonic() - start
    except (OSError, urllib.error.URLError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, (TimeoutError, )) or "timed out" in str(reason):
            return "timeout", str(reason), time.monotonic() - start
        return "closed", type(reason).__name__, time.monotonic() - start


def client(port, index, stop, timeout):
    """Sends requests one after another until one is not answered 200:
    returns how many were, and the last outcome."""
    ok = 0
    while not stop.is_set():
        status, error, seconds = post(port, [index + 1, ok % 7 + 2, 3],
                                      timeout)
        if status != 200:
            return ok, (status, error, seconds)
        ok += 1
    return ok, (None, None, 0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launch", choices=["run", "server"], required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--step", type=int, required=True)
    parser.add_argument("--point", choices=["collective", "compute"],
                        required=True)
    parser.add_argument("--work", default=".")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--exit-timeout", type=float, default=30)
    parser.add_argument("--figures", help="append one JSON line here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        fail("no command after --")

    os.makedirs(args.work, exist_ok=True)
    name = f"{args.launch}-n{args.ranks}-{args.point}"
    env = dict(os.environ, DTENSOR_TEST_FAULT=
               f"rank={args.rank},step={args.step},point={args.point}")
    line = shlex.split(args.mpirun) + ["-n", str(args.ranks)] + command
    port_file = os.path.join(args.work, name + ".port")
    if args.launch == "server":
        if os.path.exists(port_file):
            os.remove(port_file)
        line += ["--port", "0", "--port-file", port_file]
    job = Job(line, env, os.path.join(args.work, name + ".log"))
    figures = {"launch": args.launch, "ranks": args.ranks,
               "killed_rank": args.rank, "point": args.point}
    try:
        outcomes = []
        if args.launch == "server":
            port = read_port(job, port_file, 90)
            stop = threading.Event()
            with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
                futures = [pool.submit(client, port, i, stop,
                                       args.exit_timeout + 30)
                           for i in range(args.clients)]
                deadline = time.monotonic() + 120
                for future in futures:
                    try:
                        outcomes.append(future.result(
                            max(0.0, deadline - time.monotonic())))
                    except concurrent.futures.TimeoutError:
                        stop.set()
                        fail(f"a client still waits:\n{job.text()}")
        # The kill is announced on the rank's stderr just before it.
        deadline = time.monotonic() + 120
        event = None
        while event is None and time.monotonic() < deadline:
            event = kill_event(job)
            if event is None and job.last_gone is not None:
                break
            time.sleep(0.01)
        if event is None:
            fail(f"no rank killed itself:\n{job.text()}")
        print(f"rank {event['rank']} killed at step {event['step']} in "
              f"{event['op']} ({event['point']})")
        if not job.wait(event["at"] + args.exit_timeout):
            left = [p for p in job.seen if alive(p)]
            fail(f"{len(left)} process(es) left {args.exit_timeout} s after "
                 f"the kill (mpirun "
                 f"{'running' if job.process.poll() is None else 'exited'})"
                 f":\n{job.text()}")
        code = job.process.returncode
        print(f"mpirun exited with status {code} "
              f"({'non-zero' if code else 'ZERO'}); "
              f"{len(job.seen)} process(es) below it, none left")
        figures["last_rank_exit_s"] = round(job.last_gone - event["at"], 3)
        figures["mpirun_exit_s"] = round(job.exited_at - event["at"], 3)
        if args.launch == "server":
            answered = sum(ok for ok, _ in outcomes)
            kinds = {}
            for _, (status, error, seconds) in outcomes:
                key = str(status) if status != 503 else f"503 {error}"
                kinds[key] = kinds.get(key, 0) + 1
            worst = max(seconds for _, (_, _, seconds) in outcomes)
            print(f"clients: {answered} requests answered 200 before the "
                  f"kill; then " + "; ".join(f"{n} x {k}"
                                             for k, n in sorted(kinds.items())))
            if "timeout" in kinds:
                fail("a client timed out")
            figures["clients"] = kinds
            figures["client_wait_s"] = round(worst, 3)
        with open(args.figures or os.devnull, "a") as f:
            f.write(json.dumps(figures) + "\n")
        print("figures: " + json.dumps(figures), file=sys.stderr)
    finally:
        job.stop()


if __name__ == "__main__":
    main()
