import os

def run(cmd):
    os.execv("/bin/sh", ["sh", "-c", cmd])  # expect: command-injection
