import os

HANDLERS = {"go": os.system}

def run(cmd):
    HANDLERS["go"](cmd)  # expect: command-injection
