import operator
import os

def run(cmd):
    operator.methodcaller("system", cmd)(os)  # expect: command-injection
