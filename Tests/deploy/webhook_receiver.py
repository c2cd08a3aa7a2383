#!/usr/bin/env python3
"""A stand-in webhook receiver for Alertmanager: appends every POSTed JSON
body, as one line, to a file. Usage: webhook_receiver.py PORT FILE"""
import http.server
import json
import sys

port, path = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        body["receiver_path"] = self.path
        with open(path, "a") as f:
            f.write(json.dumps(body) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
