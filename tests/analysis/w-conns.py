#!/usr/bin/env python3
"""w-conns N SIZE: N TCP connections over loopback, one after the other; on
each the client sends SIZE bytes and the server answers SIZE/2. Prints what
each side itself counted, one line per side and connection:
  client|server LOCAL_PORT PEER_PORT BYTES_SENT BYTES_RECEIVED"""
import socket
import sys
import threading

n, size = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
lines = []


def recv_n(s, want):
    got = 0
    while got < want:
        b = s.recv(65536)
        if not b:
            break
        got += len(b)
    return got


def serve():
    for _ in range(n):
        c, peer = srv.accept()
        got = recv_n(c, size)
        c.sendall(b"x" * (size // 2))
        lines.append("server %d %d %d %d" % (c.getsockname()[1], peer[1], size // 2, got))
        c.close()


t = threading.Thread(target=serve)
t.start()
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", srv.getsockname()[1]))
    s.sendall(b"y" * size)
    got = recv_n(s, size // 2)
    lines.append("client %d %d %d %d" % (s.getsockname()[1], s.getpeername()[1], size, got))
    s.close()
t.join()
print("\n".join(lines))
