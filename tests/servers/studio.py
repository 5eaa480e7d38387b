#!/usr/bin/env python3
"""Loopback gProfiler Performance Studio agent API for gp-upload's tests.

Follows reference/upload-apis.md §1.8: health check, POST /api/v2/profiles with 411/413,
gunzip, 422 for missing headers/fields, 400 for a bad token or bad metadata, gpid handling,
storage under products/<svc>/stacks/. Fault knobs: --fail N (first N POSTs answer 500, or
--fail-status, e.g. 429 with --retry-after SECONDS as the Retry-After header),
--delay S (first --delay-count POSTs sleep S before answering), --max-content BYTES.
POST /api/v1/logs is the Studio's agents-logs backend (gprofiler_logging: 411 without a
Content-Length, 413 above 4 MiB, gunzip, 201 {"status": "ok"}); --logs-fail N answers the first
N log batches with 500. Log batches do not count as POSTs for --fail and --delay.
POST /api/metrics/heartbeat and /api/metrics/command_completion are the Studio's dynamic
profiling API (metrics_routes.py): plain JSON, 422 when a required field is missing or a
completion's status is not completed/failed. The commands come from --commands FILE (re-read at
every heartbeat): a JSON list of {"command_id", "command_type", "combined_config"}; each
heartbeat answers with the first one this host has not reported complete, as the Studio keeps
answering with a host's current command until it completes.
Every request is appended to --log as one JSON line (method, path, query, headers, body).
Writes its port to --port-file once listening (port 0 = pick a free one).
"""
import argparse
import gzip
import hashlib
import http.server
import json
import os
import re
import ssl
import threading
import time
import urllib.parse
import uuid
from datetime import datetime

REQUIRED = ["current_time", "spawn_time", "spawn_uptime_ms", "private_ip", "hostname",
            "cloud_provider", "processors", "memory_capacity_mb", "system_name", "os_name",
            "os_release", "kernel_release", "kernel_version", "hardware_type", "pid",
            "mac_address", "agent_version", "libc_type", "libc_version", "python_version",
            "run_mode", "deployment_type", "run_arguments"]
MAC = re.compile(r"^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$")
VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(-.*)?$")


class MetadataError(Exception):
    pass


def parse_dt(v):
    if not isinstance(v, str):
        raise MetadataError("datetime")
    return datetime.fromisoformat(v.replace("Z", "+00:00"))


def validate_metadata(profile):
    """The Studio's header checks (profiles_routes.py) and AgentMetadata (pydantic v1)."""
    if not profile.startswith("#"):
        raise MetadataError("no header")
    header = json.loads(profile.split("\n", 1)[0][1:])
    md = header["metadata"]
    for k in REQUIRED:
        if k not in md or md[k] is None:
            raise MetadataError("missing " + k)
    parse_dt(md["current_time"]), parse_dt(md["spawn_time"])
    int(md["spawn_uptime_ms"]), int(md["pid"])
    for k in ["private_ip", "hostname", "system_name", "os_name", "os_release", "kernel_release",
              "kernel_version", "hardware_type", "libc_type", "libc_version", "python_version",
              "deployment_type"]:
        if not isinstance(md[k], str):
            raise MetadataError(k)
    if str(md["cloud_provider"]).lower() not in ("aws", "gcp", "azure", "unknown"):
        raise MetadataError("cloud_provider")
    if int(md["processors"]) <= 0 or int(md["memory_capacity_mb"]) <= 0:
        raise MetadataError("counts")
    if not MAC.match(str(md["mac_address"])):
        raise MetadataError("mac_address")
    m = VERSION.match(str(md["agent_version"]))
    if not m:
        raise MetadataError("agent_version")
    if md["run_mode"] not in ("k8s", "container", "standalone_executable", "local_python"):
        raise MetadataError("run_mode")
    if not isinstance(md["run_arguments"], dict):
        raise MetadataError("run_arguments")
    return header, tuple(int(x) for x in m.groups()[:3])


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.posts = 0
        self.log_posts = 0
        self.completed = set()
        self.next_gpid = 1000


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, obj, headers=()):
        data = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body, raw=None):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        entry = {"method": self.command, "path": url.path,
                 "query": dict(urllib.parse.parse_qsl(url.query)),
                 "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": body, "time": time.time()}
        if raw is not None:
            entry["raw"] = raw
        with st.lock, open(st.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def token_ok(self):
        return self.headers.get("GPROFILER-API-KEY") == self.server.state.args.token

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        self.record(None)
        if path not in ("/api/v1/health_check", "/api/v2/health_check"):
            return self.reply(404, {"detail": "Not Found"})
        both = "GPROFILER-API-KEY" in self.headers and "GPROFILER-SERVICE-NAME" in self.headers
        if both and not self.token_ok():
            return self.reply(400, {"message": "Invalid API key"})
        self.reply(200, {"message": "ok"})

    def do_POST(self):
        st = self.server.state
        path = urllib.parse.urlsplit(self.path).path
        if path == "/api/v1/logs":
            return self.handle_logs()
        if path in ("/api/metrics/heartbeat", "/api/metrics/command_completion"):
            return self.handle_metrics(path)
        with st.lock:
            st.posts += 1
            n = st.posts
        if "Content-Length" not in self.headers:
            self.record(None)
            self.close_connection = True
            return self.reply(411, {"detail": "Length Required"})
        length = int(self.headers["Content-Length"])
        raw = self.rfile.read(length)
        if n <= st.args.delay_count:
            time.sleep(st.args.delay)
        if path != "/api/v2/profiles":
            self.record(None)
            return self.reply(404, {"detail": "Not Found"})
        if length > st.args.max_content:
            self.record(None)
            return self.reply(413, {"message": "Request Entity Too Large"})
        encodings = [e.strip() for e in self.headers.get("Content-Encoding", "").split(",")]
        try:
            body = gzip.decompress(raw) if "gzip" in encodings else raw
            doc = json.loads(body.decode("utf-8"))
        except Exception:
            self.record(None)
            return self.reply(500, {"message": "Internal Server Error"})
        self.record(doc)
        if n <= st.args.fail:
            code = st.args.fail_status
            headers = [("Retry-After", str(st.args.retry_after))] if st.args.retry_after else []
            msg = "Too Many Requests" if code == 429 else "Failed to store profile data"
            return self.reply(code, {"message": msg}, headers)
        self.handle_profile(doc)

    def handle_logs(self):
        """gprofiler_logging's save_logs (GzipRoute: length checks, then gunzip)."""
        st = self.server.state
        if "Content-Length" not in self.headers:
            self.record(None)
            self.close_connection = True
            return self.reply(411, {"detail": "Length Required"})
        length = int(self.headers["Content-Length"])
        raw = self.rfile.read(length)
        if length > 4 * 1024 * 1024:
            self.record(None)
            return self.reply(413, {"detail": "Request Entity Too Large"})
        try:
            body = gzip.decompress(raw) if "gzip" in self.headers.get_all("Content-Encoding", []) else raw
            doc = json.loads(body)
        except Exception:
            self.record(None)
            return self.reply(500, {"detail": "Internal Server Error"})
        self.record(doc, body.decode("utf-8"))
        with st.lock:
            st.log_posts += 1
            n = st.log_posts
        if n <= st.args.logs_fail:
            return self.reply(500, {"detail": "Internal Server Error"})
        if "metadata" not in doc:
            return self.reply(400, {"detail": "Invalid GPROFILER_SERVICE_NAME header None"})
        self.reply(201, {"status": "ok"})

    def handle_metrics(self, path):
        st = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            doc = json.loads(raw)
        except Exception:
            self.record(None)
            return self.reply(422, {"detail": "invalid JSON"})
        self.record(doc, raw.decode("utf-8"))
        if path.endswith("/heartbeat"):
            missing = [k for k in ("ip_address", "hostname", "service_name")
                       if not isinstance(doc.get(k), str)]
            if missing:
                return self.reply(422, {"detail": [{"loc": ["body", k]} for k in missing]})
            commands = []
            if st.args.commands and os.path.exists(st.args.commands):
                with open(st.args.commands) as f:
                    commands = json.load(f)
            with st.lock:
                pending = [c for c in commands if (doc["hostname"], c["command_id"]) not in st.completed]
            if not pending:
                return self.reply(200, {"success": True, "message": "Heartbeat received. No profiling commands.",
                                        "profiling_command": None, "command_id": None})
            c = pending[0]
            return self.reply(200, {"success": True,
                                    "message": "Heartbeat received. New profiling command available.",
                                    "profiling_command": {"command_type": c["command_type"],
                                                          "combined_config": c.get("combined_config", {})},
                                    "command_id": c["command_id"]})
        missing = [k for k in ("command_id", "hostname", "status") if not isinstance(doc.get(k), str)]
        if missing or doc["status"] not in ("completed", "failed"):
            return self.reply(422, {"detail": "invalid completion"})
        with st.lock:
            st.completed.add((doc["hostname"], doc["command_id"]))
        self.reply(200, {"success": True, "message": "Command completion recorded for " + doc["command_id"]})

    def handle_profile(self, doc):
        st = self.server.state
        missing = [k for k in ("start_time", "profile", "gpid") if k not in doc]
        hdrs = [h for h in ("GPROFILER-API-KEY", "GPROFILER-SERVICE-NAME") if h not in self.headers]
        if missing or hdrs:
            return self.reply(422, {"detail": [{"loc": ["body", k], "msg": "field required"}
                                               for k in missing + hdrs]})
        service = re.sub(r"[^A-Za-z0-9_.-]", "", self.headers["GPROFILER-SERVICE-NAME"]).lstrip("_")
        if not self.token_ok() or not service:
            return self.reply(400, {"message": "Invalid GPROFILER-SERVICE-NAME header"})
        try:
            start = parse_dt(doc["start_time"])
            header, version = validate_metadata(doc["profile"])
        except Exception:
            return self.reply(400, {"message": "Failed to parse v2 metadata"})
        gpid = 0
        if version >= (1, 2, 3):
            if doc["gpid"] is None:
                return self.reply(400, {"message": "Failed to parse v2 metadata"})
            if doc["gpid"] == "":
                with st.lock:
                    st.next_gpid += 1
                    gpid = st.next_gpid
            else:
                gpid = int(doc["gpid"])
        host = header["metadata"]["hostname"]
        name = "%s_%s_%s.gz" % (start.replace(microsecond=0).isoformat(), uuid.uuid4().hex,
                                hashlib.md5(host.encode()).hexdigest())
        d = os.path.join(st.args.store, "products", service, "stacks")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(gzip.compress(doc["profile"].encode("utf-8")))
        self.reply(200, {"message": "ok", "gpid": gpid})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--store", required=True)
    p.add_argument("--token", default="good-token")
    p.add_argument("--fail", type=int, default=0)
    p.add_argument("--fail-status", type=int, default=500)
    p.add_argument("--retry-after", type=int, default=0)
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--delay-count", type=int, default=0)
    p.add_argument("--max-content", type=int, default=4 * 1024 * 1024)
    p.add_argument("--logs-fail", type=int, default=0)
    p.add_argument("--commands")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    args = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.state = State(args)
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
