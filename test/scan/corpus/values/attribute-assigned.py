import os

class Runner:
    def __init__(self):
        self.go = os.system

    def run(self, cmd):
        self.go(cmd)  # expect: command-injection
