import os

def run(cmd):
    os.__dict__["system"](cmd)  # expect: command-injection
