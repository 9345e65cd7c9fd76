#!/usr/bin/env python3
"""A second, independent model provider for Warren's end-to-end tests (cmd/host/provider_test.go).

It is written apart from internal/fakellm on purpose, the way a Python server (vLLM, llama.cpp's
Python bindings, a proxy) writes JSON: with Python's spacing ("a": 1, "b": 2), fields in another
order than the Go SDKs write them, indentation in some answers, non-ASCII text escaped, and tool
call arguments streamed in odd chunks, split inside keys, escapes and numbers. Only the standard
library is used (no pip).

It speaks both wire formats on one port:
  POST /v1/chat/completions   OpenAI Chat Completions, streamed ("stream": true) or not
  POST /v1/messages           Anthropic Messages, streamed or not

What it answers depends only on the request: the N-th answer of a conversation (N = 1 + the
assistant messages in it) follows SCRIPT below. Every request body is appended, base64 encoded,
to the --log file, so a test can check what a recording hashed against what was sent.

Usage: pyprovider.py --log FILE [--port N]. It prints "http://127.0.0.1:PORT" on its first line of standard
output once it listens, and serves until it is killed.
"""

import argparse
import base64
import http.server
import json
import sys
import threading

# The answers of a conversation, in order: a turn is (text, [(tool name, arguments, how the
# arguments' JSON is written)]). "spaced" is json.dumps's default, "indented" json.dumps with
# indent=2 (new lines inside the arguments), "keys_last" the keys in another order.
SCRIPT = [
    ("Writing the list.", [
        ("write_file", {"path": "items.md", "content": "item 1\nitem 2 \u00e9\n"}, "spaced"),
        ("write_file", {"content": "x = 1.50e+2\ttab \"q\" \\ back\n", "path": "more.md"}, "indented"),
    ]),
    ("", [("read_file", {"path": "items.md"}, "spaced")]),
    ("Done: items.md holds item 1 and item 2 \u00e9.", []),
]


def args_text(args, style):
    if style == "indented":
        return json.dumps(args, indent=2)
    return json.dumps(args)  # Python's default spacing: {"path": "items.md", "content": ...}


def pieces(text, sizes=(3, 1, 7, 2, 5, 11)):
    """Cuts text into chunks of odd sizes, cycling through sizes."""
    out, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        out.append(text[i:i + n])
        i, k = i + n, k + 1
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_lock = threading.Lock()
    log_path = None

    def log_message(self, *args):  # quiet: the test reads stdout
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with Handler.log_lock, open(Handler.log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "body": base64.b64encode(body).decode()}) + "\n")
        req = json.loads(body)
        if self.path.endswith("/chat/completions"):
            self.openai(req, body)
        elif self.path.endswith("/v1/messages"):
            self.anthropic(req, body)
        else:
            self.send_json(404, {"error": {"message": "no such path " + self.path}})

    def turn_of(self, messages):
        n = sum(1 for m in messages if m.get("role") == "assistant")
        return SCRIPT[min(n, len(SCRIPT) - 1)], n

    def send_json(self, status, obj, indent=None):
        data = json.dumps(obj, indent=indent).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # OpenAI Chat Completions.
    def openai(self, req, body):
        (text, calls), n = self.turn_of(req.get("messages", []))
        usage = {"total_tokens": len(body) // 4 + 9, "completion_tokens": 9, "prompt_tokens": len(body) // 4}
        finish = "tool_calls" if calls else "stop"
        ids = ["py_%d_%d" % (n, i) for i in range(len(calls))]
        if not req.get("stream"):
            message = {"tool_calls": [
                {"function": {"arguments": args_text(a, s), "name": name}, "type": "function", "id": ids[i]}
                for i, (name, a, s) in enumerate(calls)] or None,
                "content": text or None, "role": "assistant"}
            self.send_json(200, {"usage": usage, "choices": [{"finish_reason": finish, "message": message, "index": 0}],
                                 "model": req.get("model"), "object": "chat.completion", "created": 0, "id": "py-%d" % n},
                           indent=2 if n % 2 else None)
            return
        self.start_stream()

        def event(obj, sep=": "):
            self.chunk("data" + sep + json.dumps(obj) + "\n\n")

        def delta(d, finish_reason=None):
            return {"choices": [{"delta": d, "finish_reason": finish_reason, "index": 0}],
                    "model": req.get("model"), "object": "chat.completion.chunk", "created": 0, "id": "py-%d" % n}

        self.chunk(": a comment line, which a client skips\n\n")
        event(delta({"content": "", "role": "assistant"}), sep=":")
        for p in pieces(text):
            event(delta({"content": p}))
        for i, (name, a, s) in enumerate(calls):
            event(delta({"tool_calls": [{"function": {"arguments": "", "name": name}, "type": "function", "id": ids[i], "index": i}]}))
            for p in pieces(args_text(a, s)):
                event(delta({"tool_calls": [{"function": {"arguments": p}, "index": i}]}), sep=":")
        event(delta({}, finish))
        event({"usage": usage, "choices": [], "model": req.get("model"), "object": "chat.completion.chunk", "created": 0, "id": "py-%d" % n})
        self.chunk("data: [DONE]\n\n")
        self.end_stream()

    # Anthropic Messages.
    def anthropic(self, req, body):
        (text, calls), n = self.turn_of(req.get("messages", []))
        usage = {"output_tokens": 9, "input_tokens": len(body) // 4}
        stop = "tool_use" if calls else "end_turn"
        ids = ["toolu_py_%d_%d" % (n, i) for i in range(len(calls))]
        if not req.get("stream"):
            content = ([{"text": text, "type": "text"}] if text else []) + [
                {"input": a, "name": name, "id": ids[i], "type": "tool_use"} for i, (name, a, s) in enumerate(calls)]
            self.send_json(200, {"usage": usage, "stop_sequence": None, "stop_reason": stop, "content": content,
                                 "model": req.get("model"), "role": "assistant", "type": "message", "id": "msg_py_%d" % n},
                           indent=None if n % 2 else 2)
            return
        self.start_stream()

        def event(name, obj):
            self.chunk("event: %s\ndata: %s\n\n" % (name, json.dumps(obj)))

        event("message_start", {"message": {"usage": {"output_tokens": 0, "input_tokens": usage["input_tokens"]}, "content": [],
                                            "model": req.get("model"), "role": "assistant", "type": "message", "id": "msg_py_%d" % n},
                                "type": "message_start"})
        self.chunk("event: ping\ndata: {\"type\": \"ping\"}\n\n")
        block = 0
        if text:
            event("content_block_start", {"content_block": {"text": "", "type": "text"}, "index": block, "type": "content_block_start"})
            for p in pieces(text):
                event("content_block_delta", {"delta": {"text": p, "type": "text_delta"}, "index": block, "type": "content_block_delta"})
            event("content_block_stop", {"index": block, "type": "content_block_stop"})
            block += 1
        for i, (name, a, s) in enumerate(calls):
            event("content_block_start", {"content_block": {"input": {}, "name": name, "id": ids[i], "type": "tool_use"},
                                          "index": block, "type": "content_block_start"})
            for p in pieces(args_text(a, s)):
                event("content_block_delta", {"delta": {"partial_json": p, "type": "input_json_delta"}, "index": block,
                                              "type": "content_block_delta"})
            event("content_block_stop", {"index": block, "type": "content_block_stop"})
            block += 1
        event("message_delta", {"usage": {"output_tokens": usage["output_tokens"]},
                                "delta": {"stop_sequence": None, "stop_reason": stop}, "type": "message_delta"})
        event("message_stop", {"type": "message_stop"})
        self.end_stream()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    opts = ap.parse_args()
    Handler.log_path = opts.log
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", opts.port), Handler)
    print("http://127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
