import sys

def run(cmd):
    sys.modules["os"].system(cmd)  # expect: command-injection
