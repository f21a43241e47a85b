import requests
import socket

def latest(version=None):
    s = socket.socket()
    s.connect(("example.invalid", 80))
    return version or requests.get("https://example.invalid/v").text
