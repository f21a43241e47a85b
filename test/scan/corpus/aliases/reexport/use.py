from . import shell

def go(cmd):
    return shell(cmd)  # expect: command-injection
