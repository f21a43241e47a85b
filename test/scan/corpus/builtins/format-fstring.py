import os

A = "sys"

def run(cmd):
    getattr(os, f"{A}tem")(cmd)  # expect: command-injection
    getattr(os, "{}{}".format("sys", "tem"))(cmd)  # expect: command-injection
