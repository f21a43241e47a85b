import base64
import os

def run(cmd):
    getattr(os, base64.b64decode("c3lzdGVt").decode())(cmd)  # expect: command-injection
