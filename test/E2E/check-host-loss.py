#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A host is lost in the middle of a step: its ranks die; every other process
of the job must be gone within --exit-timeout seconds, and the launcher must
say which peer it lost.

  check-host-loss.py --host NS --kill all|ranks --rank R --step K
                     --point collective|compute [--figures FILE]
                     -- COMMAND...

COMMAND starts the job (mpirun, or dtensor-run -n, in one of the namespaces
of scripts/netns-hosts.sh). Rank R, which must run on host NS, kills itself
through the runtime's DTENSOR_TEST_FAULT at step K (docs/runtime.md, rank
failures), so the moment is the same on every run; as soon as it announces
it, this script SIGKILLs the host's other processes (by pid, from `ip netns
pids NS`): with --kill all every one of them (its ranks and its MPI daemon:
the host is gone), with --kill ranks only the ranks (COMMAND's program: the
host's launcher survives). It follows every process below COMMAND
(check-rank-kill.py's Job) and prints, for FileCheck, what happened and the
launcher's message naming the lost peer; the times go to --figures as JSON.
Whatever is left after the bound is killed and the script fails.
"""

import argparse
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time

from server_harness import fail

_spec = importlib.util.spec_from_file_location(
    "check_rank_kill", os.path.join(os.path.dirname(__file__),
                                    "check-rank-kill.py"))
check_rank_kill = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_rank_kill)
Job, kill_event = check_rank_kill.Job, check_rank_kill.kill_event

# What OpenMPI's mpirun says when a rank dies or a daemon is lost.
LOST = [re.compile(r"mpirun noticed that process rank (\d+) with PID \d+ "
                   r"on node (\S+) exited on signal (\d+)"),
        re.compile(r"ORTE has lost communication with a remote daemon")]
REMOTE_DAEMON = re.compile(r"Remote daemon: \S+ on node (\S+)")


def host_pids(host):
    out = subprocess.run(["ip", "netns", "pids", host], capture_output=True,
                         text=True, timeout=10).stdout
    return [int(p) for p in out.split()]


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--kill", choices=["all", "ranks"], required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--step", type=int, required=True)
    parser.add_argument("--point", choices=["collective", "compute"],
                        required=True)
    parser.add_argument("--work", default=".")
    parser.add_argument("--exit-timeout", type=float, default=30)
    parser.add_argument("--figures", help="append one JSON line here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        fail("no command after --")
    program = comm_name = None
    for word in command:
        if os.path.basename(word).startswith("dtensor-"):
            program = word
            break
    if program is None:
        fail("COMMAND runs no dtensor- program")
    comm_name = os.path.basename(program)[:15]

    os.makedirs(args.work, exist_ok=True)
    name = f"host-loss-{args.host}-{args.point}"
    env = dict(os.environ, DTENSOR_TEST_FAULT=
               f"rank={args.rank},step={args.step},point={args.point}")
    job = Job(command, env, os.path.join(args.work, name + ".log"))
    try:
        deadline = time.monotonic() + 120
        event = None
        while event is None and time.monotonic() < deadline:
            event = kill_event(job)
            if event is None and job.last_gone is not None:
                break
            time.sleep(0.005)
        if event is None:
            fail(f"no rank killed itself:\n{job.text()}")
        # The rest of the host, by pid; bounded: 50 rounds.
        killed = set()
        for _ in range(50):
            victims = [p for p in host_pids(args.host) if p not in killed and
                       (args.kill == "all" or comm(p) == comm_name)]
            if not victims:
                break
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
                except OSError:
                    pass
            time.sleep(0.01)
        print(f"host {args.host} lost: rank {event['rank']} killed at step "
              f"{event['step']} in {event['op']} ({event['point']}), "
              f"{'every process' if args.kill == 'all' else 'every rank'} "
              f"of the host with it")
        if not job.wait(event["at"] + args.exit_timeout):
            left = [p for p in job.seen if check_rank_kill.alive(p)]
            fail(f"{len(left)} process(es) left {args.exit_timeout} s after "
                 f"the kill:\n{job.text()}")
        code = job.process.returncode
        print(f"launcher exited with status {code} "
              f"({'non-zero' if code else 'ZERO'}); "
              f"{len(job.seen)} process(es) below it, none left within "
              f"{args.exit_timeout:g} s")
        # Which of mpirun's messages comes first (a rank's death or its
        # daemon's) is a race when the whole host goes: either names the node.
        text = job.text()
        nodes = sorted({m.group(2) for m in LOST[0].finditer(text)} |
                       {m.group(1) for m in REMOTE_DAEMON.finditer(text)})
        if not nodes:
            fail(f"the launcher named no lost peer:\n{text}")
        print(f"launcher named the lost node: {' '.join(nodes)}")
        for r in LOST:
            for m in r.finditer(text):
                print(f"launcher: {m.group(0)}")
        figures = {"host": args.host, "kill": args.kill, "rank": args.rank,
                   "point": args.point,
                   "last_process_exit_s": round(job.last_gone - event["at"], 3),
                   "launcher_exit_s": round(job.exited_at - event["at"], 3)}
        with open(args.figures or os.devnull, "a") as f:
            f.write(json.dumps(figures) + "\n")
        print("figures: " + json.dumps(figures), file=sys.stderr)
    finally:
        job.stop()


if __name__ == "__main__":
    main()
