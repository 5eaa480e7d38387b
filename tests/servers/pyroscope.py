#!/usr/bin/env python3
"""Loopback Pyroscope legacy ingestion endpoint (POST /ingest) for gp-upload's tests.

Follows reference/upload-apis.md §2.5 and §2.1: name parsed as app{k=v,...} (400), unknown
profile type suffix (400), folded lines split at the last space with integer counts (422),
from older than 1 h (400), body over --max-body (413), --tenant-required → 401 without
X-Scope-OrgID, --auth 'Basic …'/'Bearer …' → 401 unless the Authorization header matches.
Success is 200 with an empty body. Every request is logged as a JSON line in --log.
"""
import argparse
import http.server
import json
import os
import re
import threading
import time
import urllib.parse

APP = re.compile(r"^[A-Za-z0-9_./-]+$")
KEY = re.compile(r"^[A-Za-z0-9_.]+$")
TYPES = {"cpu", "itimer", "wall", "inuse_objects", "inuse_space", "alloc_objects", "alloc_space",
         "goroutines", "mutex_count", "mutex_duration", "block_count", "block_duration",
         "lock_count", "lock_duration", "live", "exceptions", "seconds", "bytes"}


def parse_name(name):
    name = name.strip()
    labels = {}
    if "{" in name:
        app, rest = name.split("{", 1)
        if not rest.endswith("}"):
            raise ValueError("unclosed labels")
        for pair in filter(None, rest[:-1].split(",")):
            k, _, v = pair.partition("=")
            if not KEY.match(k.strip()) or "}" in v:
                raise ValueError("bad label")
            labels[k.strip()] = v.strip()
    else:
        app = name
    app = app.strip()
    if not app or not APP.match(app):
        raise ValueError("service name is required")
    return app, labels


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, obj=None):
        data = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        if data:
            self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        a = self.server.args
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        entry = {"path": url.path, "query": q, "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": body.decode("utf-8", "replace")}
        with self.server.lock, open(a.log, "a") as f:
            f.write(json.dumps(entry) + "\n")
        if url.path not in ("/ingest", "/pyroscope/ingest"):
            return self.reply(404)
        if a.tenant_required and not self.headers.get("X-Scope-OrgID"):
            return self.reply(401, {"code": "unauthenticated", "message": "no org id"})
        if a.auth and self.headers.get("Authorization") != a.auth:
            return self.reply(401, {"code": "unauthenticated", "message": "bad credentials"})
        if length > a.max_body:
            return self.reply(413, {"code": "resource_exhausted", "message": "request body too large"})
        try:
            app, _ = parse_name(q["name"])
        except Exception as e:
            return self.reply(400, {"code": "invalid_argument", "message": "name: %s" % e})
        kind = app.rsplit(".", 1)[1] if "." in app else "cpu"
        if kind not in TYPES and not kind.endswith("seconds"):
            return self.reply(400, {"code": "invalid_argument", "message": "unknown profile type"})
        start = int(q.get("from", time.time()))
        if start < time.time() - 3600:
            return self.reply(400, {"code": "invalid_argument", "message": "profile too old"})
        if q.get("format", "folded") in ("", "folded"):
            for line in body.decode().split("\n"):
                if " " not in line:
                    continue
                try:
                    int(line.rsplit(" ", 1)[1])
                except ValueError:
                    return self.reply(422, {"code": "unknown", "message": "bad count"})
        self.reply(200)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--max-body", type=int, default=256 * 1024 * 1024)
    p.add_argument("--tenant-required", action="store_true")
    p.add_argument("--auth", default="")
    args = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.args = args
    srv.lock = threading.Lock()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
