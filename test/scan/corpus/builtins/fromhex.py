import os

def run(cmd):
    getattr(os, bytes.fromhex("73797374656d").decode())(cmd)  # expect: command-injection
