#!/usr/bin/env python3
"""Tests of `accel-info serve` (docs/dashboard.md), one check per ctest:

  api        every endpoint against `accel-info --json` and `topo --json`
  idle       without --demo: no watched objects, zero counters; --duration ends it
  prometheus /metrics passes `promtool check metrics` and matches /api/metrics
  refusals   unknown path 404, other methods 405, oversized requests 4xx, and
             the server still answers; SIGINT stops it cleanly
  bind       a non-loopback or malformed --bind, a port in use: refused with a message
  browser    headless Chromium: a screenshot, and the DOM after the page's script
             ran has one row per device and the topology's nodes and edges

The server runs with the environment the test gives it (ctest sets
ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8); Chromium runs without the
sanitizer variables and LD_PRELOAD (only accel-info is sanitized).
"""
import argparse
import html.parser
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

SKIP = 77
MiB = 1024 * 1024


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Serve:
    """`accel-info serve --port 0 ...` running; stop() checks it ends cleanly."""

    def __init__(self, accel_info, *args):
        self.proc = subprocess.Popen([accel_info, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().strip() if ready else ""
        if not re.fullmatch(r"http://127\.0\.0\.1:\d+/", line):
            self.proc.kill()
            _, err = self.proc.communicate()
            fail(f"serve printed {line!r} instead of its URL; stderr:\n{err}")
        self.url = line
        parsed = urllib.parse.urlparse(line)
        self.host, self.port = parsed.hostname, parsed.port

    def request(self, method="GET", path="/", headers=None, body=None):
        """(status, headers, body bytes)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            if body is not None:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body.encode() if body is not None else None)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def get_json(self, path):
        status, headers, body = self.request("GET", path)
        check(status == 200, f"GET {path}: status {status}: {body[:300]!r}")
        check(headers.get("Content-Type") == "application/json", f"GET {path}: Content-Type {headers}")
        return json.loads(body)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail(f"serve did not stop within 30 s of {sig.name}")
        check(self.proc.returncode == 0, f"serve exited with {self.proc.returncode} after {sig.name}; stderr:\n{err}")
        check(f"{sig.name}: stopped" in err, f"serve's stderr does not say it stopped on {sig.name}:\n{err}")
        check("Sanitizer" not in err, f"sanitizer report:\n{err}")


def run_json(accel_info, *args):
    out = subprocess.run([accel_info, *args], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, f"accel-info {' '.join(args)}: {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def wait_for_demo(server):
    """Polls /api/metrics until the demo's tenants hold memory and tasks have finished."""
    deadline = time.monotonic() + 20
    while True:
        metrics = server.get_json("/api/metrics")
        used = [t["memory"]["used_bytes"] for t in metrics["tenants"]]
        if metrics["scheduler"]["finished"] > 0 and len(used) == 2 and all(used):
            return metrics
        if time.monotonic() > deadline:
            fail(f"the demo's figures did not move within 20 s: {json.dumps(metrics)[:2000]}")
        time.sleep(0.2)


def check_api(args):
    report = run_json(args.accel_info, "--json")
    topo = run_json(args.accel_info, "topo", "--json")
    check(len(report["physical_devices"]) == 8, f"expected the 8 devices of h100-sxm-8, got {report}")
    server = Serve(args.accel_info, "--demo")
    devices = server.get_json("/api/devices")
    check(devices == report, "/api/devices differs from `accel-info --json`")
    check(server.get_json("/api/topology") == topo, "/api/topology differs from `accel-info topo --json`")

    status, headers, body = server.request("GET", "/")
    check(status == 200 and headers["Content-Type"].startswith("text/html"), f"GET /: {status} {headers}")
    check(b"<svg id=\"topology\"" in body and b"/api/metrics" in body, "GET /: not the dashboard page")
    check(b"http://" not in body.replace(b"http://www.w3.org/2000/svg", b""),
          "the page refers to another site (it must work without network)")
    status, headers, body = server.request("HEAD", "/api/devices")
    check(status == 200 and body == b"" and int(headers["Content-Length"]) > 0, f"HEAD: {status} {headers} {body!r}")

    metrics = wait_for_demo(server)
    by_id = {d["stable_id"]: d for d in report["physical_devices"]}
    check([d["stable_id"] for d in metrics["devices"]] == [d["stable_id"] for d in report["physical_devices"]],
          "/api/metrics lists other devices than `accel-info --json`")
    for d in metrics["devices"]:
        check(d["memory_total_bytes"] == by_id[d["stable_id"]]["memory_total"], f"memory_total of {d}")
        check(d["memory"]["limit_bytes"] is None, f"no ACCEL_MEMORY_LIMIT, yet a limit: {d}")
        check(d["scheduler"] is not None and 0 <= d["scheduler"]["share_free"] <= 1, f"scheduler figures: {d}")
    tenants = {t["tenant"]: t for t in metrics["tenants"]}
    check(sorted(tenants) == ["demo-a", "demo-b"], f"tenants: {metrics['tenants']}")
    for name, device in (("demo-a", 0), ("demo-b", 1)):
        t = tenants[name]
        check(t["device"] == device and t["stable_id"] == metrics["devices"][device]["stable_id"], f"{t}")
        check(t["memory"]["limit_bytes"] == 256 * MiB, f"tenant limit: {t}")
        check(0 < t["memory"]["used_bytes"] <= t["memory"]["limit_bytes"], f"tenant usage: {t}")
        # The process account holds at least what the tenant holds on that device.
        check(metrics["devices"][device]["memory"]["used_bytes"] >= t["memory"]["used_bytes"],
              f"device {device} holds less than tenant {name}")
    check(sorted(q["queue"] for q in metrics["queues"]) == ["demo-a", "demo-b"], f"queues: {metrics['queues']}")
    check(sum(q["finished"] for q in metrics["queues"]) > 0, f"no task of the demo's queues ended: {metrics}")
    streams = {s["stream"]: s for s in metrics["streams"]}
    check(sorted(streams) == ["demo-a", "demo-b"], f"streams: {metrics['streams']}")
    for s in streams.values():
        check(s["error"] == "" and s["copies"]["device_to_host"]["copies"] > 0, f"stream: {s}")
    sched = metrics["scheduler"]
    check(sched["submitted"] >= sched["placed"] >= sched["finished"] > 0 and sched["failed"] == 0, f"{sched}")
    # The runtime's last decisions (its event log): in order, of known kinds, and the demo's tasks among them.
    decisions = metrics["decisions"]
    check(0 < len(decisions) <= 20, f"decisions: {len(decisions)}")
    seqs = [e["sequence"] for e in decisions]
    check(seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"decision sequence numbers {seqs}")
    kinds = {"submitted", "placed", "started", "finished", "failed", "cancelled", "retried", "preempted",
             "device_lost", "group_created", "group_refused", "actor_created", "actor_restarted", "actor_died"}
    check(all(e["kind"] in kinds for e in decisions), f"decision kinds {[e['kind'] for e in decisions]}")
    check(all(e["device"] is None or 0 <= e["device"] < 8 for e in decisions), f"decision devices {decisions}")
    check(any(e["kind"] == "placed" and e["device"] is not None for e in decisions)
          or any(e["kind"] == "finished" for e in decisions), f"no demo task among the decisions: {decisions}")
    check(metrics["errors"] == [], f"errors: {metrics['errors']}")
    server.stop()
    print("PASS: api")


def check_idle(args):
    server = Serve(args.accel_info, "--duration", "4")
    metrics = server.get_json("/api/metrics")
    check(metrics["tenants"] == [] and metrics["queues"] == [] and metrics["streams"] == [], f"{metrics}")
    check(all(d["memory"]["used_bytes"] == 0 for d in metrics["devices"]), f"an idle server holds memory: {metrics}")
    check(metrics["scheduler"]["submitted"] == 0 and metrics["decisions"] == [], f"{metrics['scheduler']}")
    try:
        _, err = server.proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        fail("--duration 4 did not stop the server within 30 s of it")
    check(server.proc.returncode == 0 and "Sanitizer" not in err, f"{server.proc.returncode}: {err}")
    print("PASS: idle")


SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")


def parse_prometheus(text):
    """{family: type}, [(name, {label: value}, value)]."""
    types, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            check(m is not None, f"unparsable sample line {line!r}")
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            samples.append((m.group(1), labels, float(m.group(4))))
    return types, samples


def check_prometheus(args):
    promtool = shutil.which("promtool")
    if promtool is None:
        print("SKIP: promtool not found (Debian's prometheus package; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    report = run_json(args.accel_info, "--json")
    server = Serve(args.accel_info, "--demo")
    wait_for_demo(server)
    status, headers, body = server.request("GET", "/metrics")
    check(status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"), f"{status} {headers}")
    text = body.decode()
    lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    check(lint.returncode == 0 and lint.stdout.strip() == "" and lint.stderr.strip() == "",
          f"promtool check metrics: {lint.returncode}\n{lint.stdout}{lint.stderr}")
    types, samples = parse_prometheus(text)
    for name, kind in types.items():
        check(name.startswith("accel_"), f"metric {name} is not named accel_...")
        check(name.endswith("_total") == (kind == "counter"), f"{name} is a {kind}: only counters end in _total")
        check(f"# HELP {name} " in text, f"{name} has no HELP line")
    totals = {labels["stable_id"]: value
              for name, labels, value in samples if name == "accel_device_memory_total_bytes"}
    check(totals == {d["stable_id"]: float(d["memory_total"]) for d in report["physical_devices"]},
          f"accel_device_memory_total_bytes {totals} differs from `accel-info --json`")
    used = {(l["tenant"], l["device"]) for n, l, v in samples if n == "accel_tenant_memory_used_bytes" and v > 0}
    check(used == {("demo-a", "0"), ("demo-b", "1")}, f"accel_tenant_memory_used_bytes: {used}")
    queues = {l["queue"] for n, l, _ in samples if n == "accel_queue_tasks_finished_total"}
    check(queues == {"demo-a", "demo-b"}, f"accel_queue_tasks_finished_total: {queues}")
    streams = {(l["stream"], l["direction"]) for n, l, _ in samples if n == "accel_stream_copies_total"}
    check(("demo-a", "device_to_host") in streams, f"accel_stream_copies_total: {streams}")
    submitted = [v for n, _, v in samples if n == "accel_scheduler_tasks_submitted_total"]
    check(len(submitted) == 1 and submitted[0] > 0, f"accel_scheduler_tasks_submitted_total: {submitted}")
    server.stop()
    print(f"PASS: prometheus ({len(types)} families, {len(samples)} samples, promtool clean)")


def refusal(server, method, path, status, message, headers=None, body=None):
    got, got_headers, data = server.request(method, path, headers, body)
    check(got == status, f"{method} {path[:60]}: status {got}, expected {status}: {data[:300]!r}")
    doc = json.loads(data)
    check(doc["status"] == status and message in doc["error"], f"{method} {path[:60]}: message {doc['error']!r}")
    return got_headers


def check_refusals(args):
    server = Serve(args.accel_info)
    refusal(server, "GET", "/no/such/page", 404, "no such path: '/no/such/page'")
    refusal(server, "GET", "/api", 404, "(the paths are /, /api/devices, /api/topology, /api/metrics, /metrics)")
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        headers = refusal(server, method, "/api/metrics", 405, f"method {method} not allowed: this dashboard is "
                          "read-only", body="x=1")
        check(headers.get("Allow") == "GET, HEAD", f"{method}: Allow header {headers}")
    refusal(server, "GET", "/api/metrics", 400, "a header line longer than 8192 bytes", {"X-Big": "a" * 20000})
    refusal(server, "GET", "/api/metrics", 431, "request header fields too large",
            {f"X-Many-{i}": "v" * 20 for i in range(200)})
    refusal(server, "GET", "/" + "a" * 10000, 414, "request target too long")
    refusal(server, "POST", "/api/metrics", 405, "read-only", body="b" * 100000)
    # Still serving after every refusal.
    check(len(server.get_json("/api/metrics")["devices"]) == 8, "no answer after the refusals")
    server.stop(signal.SIGINT)
    print("PASS: refusals")


def check_bind(args):
    def refused(bind_args, status, *messages):
        out = subprocess.run([args.accel_info, "serve", "--port", "0", "--duration", "5", *bind_args],
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == status, f"serve {bind_args}: exit {out.returncode}, expected {status}: {out.stderr}")
        check(out.stdout == "", f"serve {bind_args} printed a URL: {out.stdout!r}")
        for m in messages:
            check(m in out.stderr, f"serve {bind_args}: {m!r} not in {out.stderr!r}")

    refused(["--bind", "0.0.0.0"], 1, "--bind 0.0.0.0: not a loopback address", "--allow-remote")
    refused(["--bind", "::"], 1, "--bind ::: not a loopback address", "--allow-remote")
    refused(["--bind", "192.168.1.5"], 1, "not a loopback address")
    refused(["--bind", "example.com"], 1, "--bind 'example.com': not an IP address")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run([args.accel_info, "serve", "--port", str(port), "--duration", "5"],
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in out.stderr,
              f"a port in use: {out.returncode} {out.stderr!r}")
    env = dict(os.environ, ACCEL_VISIBLE_DEVICES="99")
    out = subprocess.run([args.accel_info, "serve", "--port", "0", "--demo"], capture_output=True, text=True,
                         timeout=60, env=env)
    check(out.returncode == 2 and "--demo needs at least one device; none is visible" in out.stderr
          and "ACCEL_VISIBLE_DEVICES" in out.stderr and out.stdout == "",
          f"--demo without devices: {out.returncode} {out.stderr!r}")
    out = subprocess.run([args.accel_info, "serve", "--port", "70000"], capture_output=True, text=True, timeout=60)
    check(out.returncode == 1 and "70000" in out.stderr, f"--port 70000: {out.returncode} {out.stderr!r}")
    # A duration that is no number of seconds is refused (NaN passed the range check and meant "forever"; 1e19
    # overflowed the deadline and stopped the server at once).
    for duration in ("nan", "1e19", "-1", "inf"):
        out = subprocess.run([args.accel_info, "serve", "--port", "0", "--duration", duration], capture_output=True,
                             text=True, timeout=60)
        check(out.returncode == 1 and f"'{duration}' is not a number of seconds from 0 to 1e9" in out.stderr
              and out.stdout == "", f"--duration {duration}: {out.returncode} {out.stderr!r}")
    print("PASS: bind")


class Dom(html.parser.HTMLParser):
    """The elements of the dumped DOM, each as (tag, attributes)."""

    def __init__(self):
        super().__init__()
        self.elements = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def find(self, tag, cls):
        return [a for t, a in self.elements if t == tag and cls in (a.get("class") or "").split()]


def chromium_env(home):
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.endswith("SAN_OPTIONS") and not k.startswith("ACCEL_")}
    env["HOME"] = home
    return env


def check_browser(args):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("SKIP: chromium not found (Debian's chromium package; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    topo = run_json(args.accel_info, "topo", "--json")
    report = run_json(args.accel_info, "--json")
    server = Serve(args.accel_info, "--demo")
    wait_for_demo(server)
    os.makedirs(args.artifacts, exist_ok=True)
    screenshot = os.path.join(args.artifacts, "dashboard.png")
    if os.path.exists(screenshot):
        os.remove(screenshot)
    with tempfile.TemporaryDirectory() as home:
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--user-data-dir=" + os.path.join(home, "profile"), "--window-size=1280,900",
                  "--virtual-time-budget=5000"]
        shot = subprocess.run([*common, f"--screenshot={screenshot}", server.url], capture_output=True, text=True,
                              timeout=120, env=chromium_env(home))
        check(shot.returncode == 0, f"chromium --screenshot: {shot.returncode}: {shot.stderr[-2000:]}")
        dom = subprocess.run([*common, "--dump-dom", server.url], capture_output=True, text=True, timeout=120,
                             env=chromium_env(home))
        check(dom.returncode == 0, f"chromium --dump-dom: {dom.returncode}: {dom.stderr[-2000:]}")
    with open(screenshot, "rb") as f:
        png = f.read()
    check(png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000, f"{screenshot} is not a PNG of the page")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    check((width, height) == (1280, 900), f"screenshot is {width}x{height}, expected 1280x900")

    parsed = Dom()
    parsed.feed(dom.stdout)
    rows = parsed.find("tr", "device")
    check([r.get("data-stable-id") for r in rows] == [d["stable_id"] for d in report["physical_devices"]],
          f"device rows {rows} differ from `accel-info --json`")
    nodes = parsed.find("g", "node")
    check([n.get("data-stable-id") for n in nodes] == [d["stable_id"] for d in topo["devices"]],
          f"topology nodes {nodes} differ from `accel-info topo --json`")
    n = len(topo["devices"])
    expected = {(i, j) for i in range(n) for j in range(i + 1, n)
                if topo["links"][i][j]["short"] not in ("X", "-", "?")}
    edges = {(int(e["data-a"]), int(e["data-b"])) for e in parsed.find("line", "edge")}
    check(len(parsed.find("line", "edge")) == len(expected) and edges == expected,
          f"topology edges {sorted(edges)}, expected {sorted(expected)}")
    body = [a for t, a in parsed.elements if t == "body"]
    check(body and int(body[0].get("data-metrics-updates", "0")) >= 1, "the page never drew /api/metrics")
    check("demo-a" in dom.stdout and "demo-b" in dom.stdout, "the tenants' rows are missing from the page")
    check(len(parsed.find("tr", "decision")) >= 1, "the page shows no recent decision")
    server.stop()
    print(f"PASS: browser ({len(rows)} device rows, {len(nodes)} nodes, {len(edges)} edges; {screenshot})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accel-info", required=True)
    parser.add_argument("--artifacts", default=".", help="where the browser check leaves its screenshot")
    parser.add_argument("check", choices=["api", "idle", "prometheus", "refusals", "bind", "browser"])
    args = parser.parse_args()
    {"api": check_api, "idle": check_idle, "prometheus": check_prometheus, "refusals": check_refusals,
     "bind": check_bind, "browser": check_browser}[args.check](args)


if __name__ == "__main__":
    main()
