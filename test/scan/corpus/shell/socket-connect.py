import socket

s = socket.socket()
s.connect(("example.invalid", 4444))  # expect: network-at-import
