import os

NAME = "".join(["sys", "tem"])

def run(cmd):
    getattr(os, NAME)(cmd)  # expect: command-injection
