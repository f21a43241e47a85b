import operator
import os

def run(cmd):
    operator.attrgetter("system")(os)(cmd)  # expect: command-injection
