from importlib import import_module

def run(cmd):
    import_module("o" + "s").system(cmd)  # expect: command-injection
