#!/usr/bin/env python3
"""A tiny HTTP proxy (CONNECT tunnels and absolute-form requests) that records each use
in --log, so tests can check that gp-upload went through https_proxy/HTTPS_PROXY."""
import argparse
import http.server
import os
import select
import socket
import threading
import urllib.parse


class Proxy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def note(self, what):
        with self.server.lock, open(self.server.log, "a") as f:
            f.write(what + "\n")

    def do_CONNECT(self):
        self.note("CONNECT " + self.path)
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        self.send_response(200, "Connection established")
        self.end_headers()
        conns = [self.connection, upstream]
        while True:
            ready, _, _ = select.select(conns, [], [], 30)
            if not ready:
                break
            for s in ready:
                data = s.recv(65536)
                if not data:
                    upstream.close()
                    return
                (upstream if s is self.connection else self.connection).sendall(data)

    def forward(self):
        self.note(self.command + " " + self.path)
        u = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        upstream = socket.create_connection((u.hostname, u.port or 80))
        target = u.path + ("?" + u.query if u.query else "")
        head = "%s %s HTTP/1.0\r\n" % (self.command, target)
        for k, v in self.headers.items():
            if k.lower() not in ("proxy-connection", "connection"):
                head += "%s: %s\r\n" % (k, v)
        upstream.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
        while True:
            data = upstream.recv(65536)
            if not data:
                break
            self.wfile.write(data)
        upstream.close()
        self.close_connection = True

    do_GET = forward
    do_POST = forward


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    srv.daemon_threads = True
    srv.log = args.log
    srv.lock = threading.Lock()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
