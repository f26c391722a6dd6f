"""Starts dtensor-server under mpirun for a test and always cleans up.

Standard library only. ServerProcess is a context manager: it starts
`mpirun -n RANKS dtensor-server ARTIFACT --port 0 --port-file F ...` in a
session of its own, waits (bounded) for the port file, and on exit shuts the
server down (POST /admin/shutdown), then SIGTERM, then SIGKILL to mpirun and
every process below it, so no test leaves a rank behind.
"""

import http.client
import json
import os
import shlex
import signal
import subprocess
import time
import urllib.error
import urllib.request


def add_server_arguments(parser):
    """The arguments every driver needs to start a server: the launcher, the
    server binary, the artifact, its weights and a work folder."""
    for name in ("--mpirun", "--server", "--artifact", "--weights", "--work"):
        parser.add_argument(name, required=True)


def fail(message):
    raise SystemExit("FAIL: " + message)


def descendants(root):
    """Pids of every process below `root` (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # A zombie has exited; only its parent has not reaped it yet.
            if fields[0] == "Z":
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run_bounded(command, timeout):
    """Runs `command` (an mpirun line) to completion: (exit status, output),
    or (None, output) after killing it and every process below it when it
    runs past `timeout` seconds."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               stdin=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        for pid in descendants(process.pid) + [process.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        output, _ = process.communicate()
        return None, output


def stream(server, body, stop_after=None):
    """POSTs a streamed completion; returns (token ids, finish reason, error
    event or None). With `stop_after`, closes the connection after that many
    token events."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port,
                                            timeout=60)
    connection.request("POST", "/v1/completions",
                       json.dumps(dict(body, stream=True)),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        fail(f"stream {body}: {response.status} {response.read()}")
    if response.getheader("Content-Type", "").split(";")[0] != \
            "text/event-stream":
        fail(f"stream: Content-Type {response.getheader('Content-Type')}")
    tokens, finish, error, done = [], None, None, False
    for raw in response:
        line = raw.decode().rstrip("\n")
        if not line.startswith("data: "):
            continue
        data = line[len("data: "):]
        if data == "[DONE]":
            done = True
            break
        event = json.loads(data)
        if "error" in event:
            error = event["error"]
            break
        choice = event["choices"][0]
        tokens += choice["token_ids"]
        if choice["finish_reason"] is not None:
            finish = choice["finish_reason"]
        if stop_after is not None and len(tokens) >= stop_after:
            connection.close()
            return tokens, "disconnected", None
    connection.close()
    if error is None and not done:
        fail(f"stream {body}: ended without [DONE]")
    return tokens, finish, error


class Response:
    def __init__(self, status, body, headers):
        self.status = status
        self.body = body
        self.headers = headers

    def json(self):
        return json.loads(self.body)


class ServerProcess:
    def __init__(self, mpirun, ranks, server, artifact, args, workdir,
                 name="server", start_timeout=90):
        os.makedirs(workdir, exist_ok=True)
        self.port_file = os.path.join(workdir, name + ".port")
        self.log_path = os.path.join(workdir, name + ".log")
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        self.command = (shlex.split(mpirun) + ["-n", str(ranks), server,
                        artifact, "--port", "0", "--port-file",
                        self.port_file] + list(args))
        self.start_timeout = start_timeout
        self.process = None
        self.port = None

    def __enter__(self):
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(self.command, stdout=self.log,
                                        stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    return self
            if self.process.poll() is not None:
                self._cleanup()
                fail(f"the server exited ({self.process.returncode}) before "
                     f"it was ready:\n{self.log_text()}")
            time.sleep(0.05)
        self._cleanup()
        fail(f"no port file after {self.start_timeout} s:\n{self.log_text()}")

    def __exit__(self, *exc):
        self._cleanup()
        return False

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def request(self, method, path, body=None, data=None, timeout=60,
                headers=None):
        """One HTTP request; `body` is sent as JSON, `data` as raw bytes.
        Returns a Response for any status; connection errors raise."""
        if body is not None:
            data = json.dumps(body).encode()
        request = urllib.request.Request(self.url(path), data=data,
                                         method=method,
                                         headers=headers or {})
        if data is not None and not request.has_header("Content-type"):
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return Response(answer.status, answer.read().decode(),
                                dict(answer.headers))
        except urllib.error.HTTPError as error:
            return Response(error.code, error.read().decode(),
                            dict(error.headers))

    def metrics(self):
        """GET /metrics as {"name{labels}": value}."""
        answer = self.request("GET", "/metrics")
        if answer.status != 200:
            fail(f"GET /metrics: {answer.status} {answer.body}")
        values = {}
        for line in answer.body.splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                values[key] = float(value)
        return values

    def wait_exit(self, timeout):
        """mpirun's exit status, or None if it is still running."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _cleanup(self):
        if self.process is None:
            return
        if self.process.poll() is None and self.port is not None:
            try:
                self.request("POST", "/admin/shutdown", data=b"", timeout=5)
            except OSError:
                pass
            self.wait_exit(20)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.wait_exit(5)
        below = descendants(self.process.pid)
        if self.process.poll() is None:
            self.process.kill()
            self.wait_exit(5)
        for pid in below + descendants(self.process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.log.close()
